"""The GROBID TEI reader on real GROBID output (0.5.1, 0.5.6 with <s>, 0.6.1, 0.8.1)."""

from __future__ import annotations

import re

import pytest
from lxml import etree

from scholarly_nlp import MalformedInputError, EmptyDocumentError, UnsafeInputError
from scholarly_nlp.readers.tei import NS, parse_tei, read_tei, tei_stem

from conftest import shared


def test_acl_grobid_051_header_sections_figures_bibliography(acl_tei_dir):
    paper = read_tei(acl_tei_dir / "D14-1003.tei.xml")
    assert paper.paper_id == "D14-1003"
    assert paper.title == "Translation Modeling with Bidirectional Recurrent Neural Networks"
    abstract = paper.blocks_of("abstract")
    assert abstract[0].text.startswith("This work presents two different translation models")
    numbered = [(s.number, s.title) for s in paper.sections if s.number]
    assert numbered[0] == ("1", "Introduction")
    assert ("4.1", "Resolving Alignment Ambiguities") in numbered
    assert next(s for s in paper.sections if s.number == "4.1").level == 2
    figures = {f.id: f for f in paper.figures}
    assert figures["fig_1"].kind == "figure" and figures["fig_1"].label == "1"
    assert figures["tab_2"].kind == "table"
    captions = {b.figure_id: b.text for b in paper.blocks_of("caption")}
    assert captions["fig_1"].startswith("Figure 1: Example sentence from the German→English IWSLT data.")
    b0 = paper.bibliography["b0"]
    assert b0.title == "Deep neural network language models"
    assert b0.authors[:2] == ["Ebru Arisoy", "Tara N Sainath"]
    assert b0.year == "2012"
    assert b0.venue.startswith("Proceedings of the NAACLHLT 2012 Workshop")


def test_citation_and_figure_refs_carry_offsets_and_targets(acl_tei_dir):
    paper = read_tei(acl_tei_dir / "D14-1003.tei.xml")
    first = paper.blocks_of("paragraph")[0]
    cites = [(first.text[r.start : r.end], r.target) for r in first.refs if r.kind == "bibr"]
    assert cites[0] == ("Schwenk et al., 2006;", "b31")
    figure_refs = [(b.text[r.start : r.end], r.target) for b in paper.blocks for r in b.refs if r.kind == "figure"]
    assert ("Fig. 3", "fig_4") in figure_refs


def test_figure_refs_without_target_resolve_by_label(acl_tei_dir):
    # D14-1010 has <ref type="figure">Figure 1</ref> without target; fig_0 is labelled 1.
    paper = read_tei(acl_tei_dir / "D14-1010.tei.xml")
    root = etree.parse(str(acl_tei_dir / "D14-1010.tei.xml"))
    untargeted = [r for r in root.iterfind(".//t:body//t:ref[@type='figure']", NS) if not r.get("target")]
    assert untargeted, "fixture must contain untargeted figure refs"
    refs = {b.text[r.start : r.end]: r.target for b in paper.blocks for r in b.refs if r.kind == "figure"}
    assert refs["Figure 1"] == "fig_0"
    # "Figure 5" names no figure GROBID found: it stays unresolved rather than guessed.
    assert refs["Figure 5"] is None


def test_biomed_sentences_come_from_tei_s_elements(biomed_tei_dir):
    path = sorted(biomed_tei_dir.glob("*.tei.xml"))[0]
    paper = read_tei(path)
    root = etree.parse(str(path))
    first_p = root.find(".//t:body//t:p", NS)
    expected = [re.sub(r"\s+", " ", "".join(s.itertext())).strip() for s in first_p.iterfind("t:s", NS)]
    block = paper.blocks_of("paragraph")[0]
    assert [block.text[a:b] for a, b in block.sentences] == [e for e in expected if e]


def test_grobid_06_and_08_output(with_pdf_dir):
    paper = read_tei(with_pdf_dir / "2020.acl-main.207.tei.xml")
    assert paper.title.startswith("SPECTER")
    tables = {f.id: f for f in paper.figures if f.kind == "table"}
    # GROBID 0.6.1 puts the caption of tab_3 in <note>, not <figDesc>.
    caption = {b.figure_id: b.text for b in paper.blocks_of("caption")}
    assert caption["tab_3"].startswith("Ablations: Numbers are averages")
    assert tables["tab_1"].label == "1"
    plos = read_tei(with_pdf_dir / "journal.pone.0319315.tei.xml")
    assert plos.title and plos.blocks_of("abstract") and len(plos.sections) >= 3


def test_coords_become_page_and_box(with_pdf_dir):
    paper = read_tei(with_pdf_dir / "journal.pone.0319315.tei.xml")
    boxed = [f for f in paper.figures if f.page is not None]
    if not boxed:
        pytest.skip("this TEI carries no coords")
    x0, y0, x1, y1 = boxed[0].bbox
    assert boxed[0].page >= 1 and x1 > x0 and y1 > y0


def test_nested_divs_become_subsections(acl_tei_dir):
    data = (acl_tei_dir / "D14-1003.tei.xml").read_bytes()
    root = etree.fromstring(data)
    body = root.find(".//t:body", NS)
    divs = body.findall("t:div", NS)
    divs[0].append(divs[1])  # nest the second section inside the first
    paper = parse_tei(etree.tostring(root), source="nested.tei.xml")
    child = next(s for s in paper.sections if s.parent is not None)
    assert paper.sections[child.parent].title == "Introduction"


def test_every_real_tei_file_parses():
    root = shared("tei")
    files = sorted(root.glob("*/*.tei.xml"))
    assert len(files) > 500
    failures = []
    for path in files:
        try:
            read_tei(path)
        except Exception as exc:  # noqa: BLE001 - collect and report every failure
            failures.append((path.name, exc))
    assert failures == []


def test_tei_stem():
    assert tei_stem("x/D14-1003.tei.xml") == "D14-1003"
    assert tei_stem("paper.xml") == "paper"


@pytest.mark.parametrize(
    "payload, error, words",
    [
        (b"", EmptyDocumentError, "empty"),
        (b"<TEI xmlns='http://www.tei-c.org/ns/1.0'><text><body>", MalformedInputError, "not well-formed"),
        (b"<html><body/></html>", MalformedInputError, "not TEI"),
        (b"<TEI xmlns='http://www.tei-c.org/ns/1.0'><teiHeader/><text><body/></text></TEI>", EmptyDocumentError, "no title"),
    ],
)
def test_bad_tei_gets_one_clear_error(payload, error, words):
    with pytest.raises(error) as info:
        parse_tei(payload, source="bad.tei.xml")
    assert "bad.tei.xml" in str(info.value) and words in str(info.value)


def test_external_entity_is_refused_without_touching_the_file(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET")
    payload = (
        f'<?xml version="1.0"?><!DOCTYPE TEI [<!ENTITY xxe SYSTEM "file://{secret}">]>'
        "<TEI xmlns='http://www.tei-c.org/ns/1.0'><teiHeader><fileDesc><titleStmt><title>&xxe;</title>"
        "</titleStmt></fileDesc></teiHeader></TEI>"
    ).encode()
    with pytest.raises(UnsafeInputError) as info:
        parse_tei(payload, source="xxe.tei.xml")
    assert "xxe.tei.xml" in str(info.value) and "TOP SECRET" not in str(info.value)


def test_entity_expansion_bomb_is_refused():
    lol = "".join(f'<!ENTITY lol{i} "{"&lol%d;" % (i - 1) * 10}">' for i in range(1, 10))
    payload = (f'<?xml version="1.0"?><!DOCTYPE TEI [<!ENTITY lol0 "lol">{lol}]>'
               "<TEI xmlns='http://www.tei-c.org/ns/1.0'><teiHeader><fileDesc><titleStmt><title>&lol9;</title>"
               "</titleStmt></fileDesc></teiHeader></TEI>").encode()
    with pytest.raises(UnsafeInputError):
        parse_tei(payload, source="bomb.tei.xml")


@pytest.mark.parametrize("name, start", [
    ("10.1038%2Fs41467-019-08302-1.tei.xml", "Replication of the mammalian genome"),  # "replication" elsewhere
    ("10.1038%2Fs41467-018-08281-9.tei.xml", "Recent efforts to realize"),  # "ecent" nowhere else
    ("10.1038%2Fs41467-018-08104-x.tei.xml", "In 1998, Carl M. Bender"),  # "I n": "in" is common, "n" is not
])
def test_a_split_drop_cap_joins_its_word(biomed_tei_dir, name, start):
    """Nature Communications opens with a drop cap; GROBID 0.5.6 writes "R eplication"."""
    first = next(b for b in read_tei(biomed_tei_dir / name).blocks if b.kind == "paragraph")
    assert first.text.startswith(start)
    # the text is joined before it is flattened: GROBID's sentences and refs point into the joined text
    assert first.sentences[0][0] == 0 and first.text[slice(*first.sentences[0])].startswith(start.split()[0])
    body = etree.parse(str(biomed_tei_dir / name)).getroot().find("t:text/t:body", NS)
    printed = ["".join(r.itertext()).strip() for r in next(body.iter(f"{{{NS['t']}}}p")).iter(f"{{{NS['t']}}}ref")]
    assert first.refs and [first.text[r.start:r.end].strip() for r in first.refs] == printed


@pytest.mark.parametrize("opening, joined", [
    ("T cells respond. T cells divide.", "T cells respond."),  # "cells" elsewhere: a T cell, no drop cap
    ("A novel model.", "A novel model."),  # "A" is a word and the paper never writes "anovel"
    ("A ll models work. All is well.", "All models work."),
    ("X chromosomes pair. Both chromosomes move.", "X chromosomes pair."),  # the fragment is a word of the paper
    ("R ecent work.", "Recent work."),  # a letter that is no word, a fragment used nowhere else
])
def test_split_drop_cap_rule(opening, joined):
    from scholarly_nlp.readers.tei_parts import join_split_drop_cap
    from scholarly_nlp.text.drop_caps import word_counts

    p = etree.fromstring(f'<p xmlns="{NS["t"]}"><s>{opening}</s></p>')
    join_split_drop_cap(p, lambda: word_counts(opening))
    assert "".join(p.itertext()).startswith(joined)
