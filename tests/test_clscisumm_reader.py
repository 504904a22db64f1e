"""CL-SciSumm readers on the real published files (../shared/data/clscisumm) and on bad input."""

from __future__ import annotations

import csv
import re
import warnings
from pathlib import Path

import pytest

import scholarly_nlp

from scholarly_nlp.errors import EmptyDocumentError, MalformedInputError, UnsafeInputError
from scholarly_nlp.readers.clscisumm import (
    ANNOTATION_FIELDS,
    read_annotations,
    read_citing_sentences,
    read_reference_xml,
    read_task1_csv,
    reference_doc,
    reference_paper,
)
from scholarly_nlp.metrics.clscisumm import FACET_LABELS
from scholarly_nlp.readers.clscisumm_cells import parse_facets, parse_reference_offsets

from conftest import data_path, need

DATA = data_path("clscisumm")
MANUAL = DATA / "train-manual"
SCISUMMNET = DATA / "train-scisummnet"

CSV_HEADER = [
    "Citance Number", "Reference Article", "Citing Article", "Citation Marker Offset", "Citation Marker",
    "Citation Offset", "Citation Text", "Citation Text Clean", "Reference Offset", "Reference Text",
    "Discourse Facet",
]


def _need(path: Path) -> Path:
    return need(path)  # skips at test time without the data (fails under SCHOLARLY_NLP_REQUIRE_DATA=1)


def _reference(rp: str) -> Path:
    return _need(MANUAL / rp / "Reference_XML" / f"{rp}.xml")


def _s_elements(path: Path) -> list[tuple[str, str]]:
    """(sid, whitespace-collapsed text) of every <S> in the raw file, by regex (independent of the reader)."""
    text = path.read_bytes().decode("utf-8", errors="replace")
    found = re.findall(r'<S\s+sid\s*=\s*"([^"]*)"[^>]*>(.*?)</S>', text, flags=re.DOTALL)
    return [(sid.strip(), " ".join(body.split())) for sid, body in found]


def _quiet(func, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return func(*args, **kwargs)


# --------------------------------------------------------------------------- Reference_XML


@pytest.mark.parametrize("rp", ["C00-2123", "D09-1023", "W04-0213", "P05-1053", "J96-3004"])
def test_reference_sentences_are_the_s_elements(rp, nlp):
    path = _reference(rp)
    expected = _s_elements(path)
    doc = _quiet(reference_doc, path, nlp)
    sents = list(doc.sents)
    sids = doc._.paper_meta["sids"]
    assert len(sents) == len(expected) == len(sids)
    assert sids == [sid for sid, _ in expected]
    for sent, (_, text) in zip(sents, expected):
        if "&" not in text and "<" not in text:  # raw regex text still has XML escapes
            assert sent.text.strip() == text
    assert doc._.paper_meta["paper_id"] == rp
    assert doc._.paper_meta["reader"] == "clscisumm"


def test_reference_title_abstract_and_sections():
    paper, sids = reference_paper(_reference("C00-2123"))
    assert paper.title == "Word Re-ordering and DP-based Search in Statistical Machine Translation"
    assert sids[:5] == ["0", "1", "2", "3", "4"]
    abstract = paper.blocks_of("abstract")
    assert len(abstract) == 1 and len(abstract[0].sentences) == 4
    assert abstract[0].text.startswith("In this paper, we describe a search procedure")
    assert paper.sections[0].title == "Introduction" and paper.sections[0].number == "1"
    assert not paper.blocks_of("heading")  # titles live in sections, so sentences == <S>


def test_subsection_becomes_child_section(nlp):
    path = _reference("D09-1023")
    paper, _ = reference_paper(path)
    sub = next(s for s in paper.sections if s.title == "6.2 Features.")
    assert sub.level == 2 and paper.sections[sub.parent].level == 1
    doc = reference_doc(path, nlp)
    titles = [s["title"] for s in doc._.paper_meta["sections"]]
    assert "Introduction" in titles and "6.2 Features." in titles


def test_non_utf8_reference_recovered_with_warning():
    path = _reference("N01-1011")  # cp1252 bytes (0xC6 for the "ffi" ligature)
    with pytest.warns(UserWarning, match=r"N01-1011\.xml.*not valid UTF-8"):
        paper, sids = reference_paper(path)
    assert len(sids) == len(_s_elements(path))
    assert "\ufffd" not in " ".join(b.text for b in paper.blocks)


def test_mismatched_tags_recovered_with_warning():
    # A stray </SECTION> that libxml2's own recovery reads as the end of <PAPER>.
    path = _need(MANUAL / "C98-1097" / "Citance_XML" / "ICDAR99.xml")
    with pytest.warns(UserWarning, match=r"ICDAR99\.xml.*not well-formed XML"):
        paper, sids = reference_paper(path)
    assert sids == [sid for sid, _ in _s_elements(path)]
    assert paper.sections[-1].title.startswith("A.C. Jobbins and L.J. Evett (1995)")


def test_unclosed_abstract_recovered(tmp_path):
    path = tmp_path / "X.xml"
    path.write_text('<PAPER><S sid="0">T</S><ABSTRACT><S sid="1">A.</S>'
                    '<SECTION title="Intro"><S sid="2">B.</S></SECTION></PAPER>')
    with pytest.warns(UserWarning, match="X.xml"):
        paper, sids = reference_paper(path)
    assert sids == ["0", "1", "2"] and paper.sections[0].title == "Intro"


def test_broken_xml_beyond_recovery_raises(tmp_path):
    path = tmp_path / "broken.xml"
    path.write_bytes(b"this is not XML <<< at all")
    with pytest.raises(MalformedInputError, match=r"broken\.xml.*nothing could be recovered"):
        read_reference_xml(path)


def test_empty_and_unsafe_xml_raise(tmp_path):
    empty = _need(MANUAL / "C04-1089" / "Citance_XML" / "J13-2001.xml")  # <PAPER></PAPER>
    with pytest.raises(EmptyDocumentError, match="J13-2001"):
        read_reference_xml(empty)
    unsafe = tmp_path / "u.xml"
    unsafe.write_text('<!DOCTYPE PAPER [<!ENTITY x "boom">]><PAPER><S sid="0">&x;</S></PAPER>')
    with pytest.raises(UnsafeInputError, match="u.xml"):
        read_reference_xml(unsafe)


# --------------------------------------------------------------------------- annotations


def _annotation_files() -> list[Path]:
    _need(MANUAL)
    return sorted(MANUAL.glob("*/annotation/*.txt"))


def test_all_train_manual_annotations_parse():
    files = _annotation_files()
    assert len(files) == 40
    total = 0
    for path in files:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the published manual files need no skipping
            records = read_annotations(path)
        assert records, path
        rp = path.name.split(".")[0]
        assert all(r["reference_article"] == rp for r in records)
        assert all(r["reference_offsets"] and r["facets"] for r in records)
        total += len(records)
    assert total > 700


def test_annotation_record_fields():
    records = read_annotations(_need(MANUAL / "C00-2123" / "annotation" / "C00-2123.ann.txt"))
    first = records[0]
    assert first["citance_number"] == 1
    assert first["citing_article"] == "C02-1050"
    assert first["citation_offsets"] == ["39", "40", "41"]
    assert first["citation_marker_offsets"] == ["41"]
    assert first["citation_marker"] == "2000"
    assert first["reference_offsets"] == ["179"]
    assert first["facets"] == ["Method"]
    assert first["annotator"] == "Swastika Bhattacharya"
    assert first["reference_text"].startswith("For our demonstration system")
    assert "<S" not in first["citation_text"] and first["citation_text"].endswith("Germann et al.")


def test_reference_offsets_point_at_reference_sentences():
    _, sids = reference_paper(_reference("C00-2123"))
    known = set(sids)
    for record in read_annotations(MANUAL / "C00-2123" / "annotation" / "C00-2123.ann.txt"):
        assert set(record["reference_offsets"]) <= known


def test_scisummnet_annotations_have_no_facets():
    path = _need(SCISUMMNET / "A00-1031" / "annotation" / "A00-1031.ann.txt")
    records = read_annotations(path)
    assert records and all(r["facets"] == [] and r["annotator"] == "Automatic" for r in records)
    assert records[0]["reference_offsets"] == ["0", "36"]


def test_bad_records_skipped_with_warning(tmp_path):
    good = _need(MANUAL / "C00-2123" / "annotation" / "C00-2123.ann.txt").read_text(encoding="utf-8")
    lines = [line for line in good.splitlines() if line.strip()][:2]
    bad_facet = lines[1].replace("Method_Citation", "Banana_Citation")
    path = tmp_path / "bad.ann.txt"
    path.write_text("\n".join([lines[0], "", bad_facet, "", "Citance Number: x | nonsense", ""]), encoding="utf-8")
    with pytest.warns(UserWarning) as caught:
        records = read_annotations(path)
    messages = [str(w.message) for w in caught]
    assert any("bad.ann.txt, line 3" in m and "Banana_Citation" in m for m in messages)
    assert any("bad.ann.txt, line 5" in m for m in messages)
    assert [r["citance_number"] for r in records] == [1]


# --------------------------------------------------------------------------- citing_sentences.json


def test_scisummnet_citing_sentences():
    path = _need(SCISUMMNET / "A00-1031" / "citing_sentences.json")
    rows = read_citing_sentences(path)
    assert len(rows) > 10
    first = rows[0]
    assert first["citance_number"] == 1 and first["citing_paper_id"] == "W00-1326"
    assert first["citing_paper_authors"] == ["David, Martinez", "Eneko, Agirre"]
    assert first["clean_text"].startswith("The sentences in the DSO collection")
    assert first["keep_for_gold"] is False
    assert isinstance(first["citing_paper_authority"], int)


def test_citing_sentences_bad_json(tmp_path):
    path = tmp_path / "citing_sentences.json"
    path.write_text('{"not": "a list"}')
    with pytest.raises(MalformedInputError, match="citing_sentences.json"):
        read_citing_sentences(path)
    path.write_text("[{")
    with pytest.raises(MalformedInputError, match="not valid JSON"):
        read_citing_sentences(path)


# --------------------------------------------------------------------------- Task 1 CSV


def _csv_row(record_line: str, *, answers: bool) -> list[str]:
    """A 2018-layout CSV row from one real ``.ann.txt`` line."""
    cells = dict(part.split(":", 1) for part in record_line.rstrip(" |").split(" | "))
    cells = {k.strip(): v.strip() for k, v in cells.items()}
    text_clean = re.sub(r"<[^>]+>", " ", cells["Citation Text"]).strip()
    row = [cells.get(f, text_clean) for f in CSV_HEADER]
    if not answers:
        for name in ("Reference Offset", "Reference Text", "Discourse Facet"):
            row[CSV_HEADER.index(name)] = ""
    return row


def test_task1_csv(tmp_path):
    ann = _need(MANUAL / "C00-2123" / "annotation" / "C00-2123.ann.txt").read_text(encoding="utf-8")
    line = next(line for line in ann.splitlines() if line.strip())
    path = tmp_path / "C00-2123_Swastika.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(CSV_HEADER)
        writer.writerow(_csv_row(line, answers=True))
        writer.writerow(_csv_row(line, answers=False))
    gold, blank = read_task1_csv(path)
    expected = read_annotations(MANUAL / "C00-2123" / "annotation" / "C00-2123.ann.txt")[0]
    for key in ("citance_number", "reference_article", "citing_article", "citation_offsets",
                "reference_offsets", "facets", "citation_text", "reference_text"):
        assert gold[key] == expected[key], key
    assert gold["citation_text_clean"].startswith("Under this constraint")
    assert gold["annotator"] is None
    assert blank["reference_offsets"] == [] and blank["facets"] == [] and blank["reference_text"] == ""


def test_task1_csv_bad_header_and_facet(tmp_path):
    path = tmp_path / "X.csv"
    path.write_text("a,b\n1,2\n")
    with pytest.raises(MalformedInputError, match="X.csv"):
        read_task1_csv(path)
    path.write_text(",".join(CSV_HEADER) + "\n1,X,Y,NA,m,['3'],t,t,['4'],r,Nonsense_Citation\n")
    with pytest.warns(UserWarning, match=r"X\.csv, line 2.*Nonsense_Citation"):
        assert read_task1_csv(path) == []


def test_annotation_fields_constant():
    assert ANNOTATION_FIELDS[0] == "Citance Number" and ANNOTATION_FIELDS[-1] == "Annotator"


def test_reference_and_citance_xml_are_sniffed_and_read_through_the_public_api():
    from scholarly_nlp import get_registry

    papers = sorted(_need(MANUAL).glob("*/Reference_XML/*.xml"))
    assert len(papers) == 40
    assert {get_registry().sniff(str(p)) for p in papers} == {"clscisumm"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # some published files need recovering; that is tested above
        doc = scholarly_nlp.read(MANUAL / "C00-2123" / "Reference_XML" / "C00-2123.xml")
        citing = scholarly_nlp.read(MANUAL / "C00-2123" / "Citance_XML" / "C02-1050.xml")
    assert doc._.paper_id == "C00-2123" and len(list(doc.sents)) == 204
    assert doc.spans["title"][0].text.startswith("Word Re-ordering and DP-based Search")
    assert len(list(citing.sents)) > 100


# --------------------------------------------------------------------------- annotation cells (readers/clscisumm_cells.py)


@pytest.mark.parametrize(
    "cell, expected",
    [
        ("['17']", ("17",)),
        ("17'", ("17",)),
        ('"17,18"', ("17", "18")),
        ("['17', '18']", ("17", "18")),
        ("['17','18','17']", ("17", "18")),
        (" ['017'] ", ("17",)),
        (17, ("17",)),
        (["17", 18], ("17", "18")),
        ("NA", ()),
        ("", ()),
        ("[]", ()),
    ],
)
def test_parse_reference_offsets(cell, expected):
    assert parse_reference_offsets(cell) == expected


def test_parse_reference_offsets_rejects_non_ids():
    with pytest.raises(ValueError, match=re.escape("'x'")):
        parse_reference_offsets("['17', 'x']")


@pytest.mark.parametrize(
    "cell, expected",
    [
        ("Method Citation", ("Method",)),
        ("Method_Citation", ("Method",)),
        (" Method_Citation ", ("Method",)),
        ("['Method_Citation','Result_Citation']", ("Method", "Results")),
        ("['Aim_Citation', 'Results_Citation']", ("Aim", "Results")),
        ("hypothesis_citation, Implication Citation", ("Hypothesis", "Implication")),
        (["Method", "method_citation"], ("Method",)),
        ("NA", ()),
    ],
)
def test_parse_facets(cell, expected):
    assert parse_facets(cell) == expected


def test_unknown_facet_names_the_value():
    with pytest.raises(ValueError, match="Background_Citation"):
        parse_facets("['Method_Citation','Background_Citation']")


@pytest.mark.needs_data("clscisumm/train-manual")
def test_parsers_accept_every_real_annotation_cell():
    files = sorted(MANUAL.glob("*/annotation/*.ann.txt"))
    assert files
    n = 0
    for path in files:
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if "Citance Number" not in line:
                continue
            cells = dict(
                (part.split(":", 1)[0].strip(), part.split(":", 1)[1].strip())
                for part in line.strip().rstrip("|").split(" | ")
                if ":" in part
            )
            offsets = parse_reference_offsets(cells["Reference Offset"])
            facets = parse_facets(cells["Discourse Facet"])
            assert offsets and all(o.isdigit() for o in offsets)
            assert facets and set(facets) <= set(FACET_LABELS)
            n += 1
    assert n > 100
