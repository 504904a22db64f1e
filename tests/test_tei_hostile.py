"""Hostile and damaged TEI (issue 15): long papers, bad coordinates, missing namespace,
duplicate ids, wide encodings with a DTD, and inputs whose cost used to grow quadratically.

Every file is generated in the test; the long paper repeats a real paper's paragraphs.
"""

from __future__ import annotations

import copy
import random
import time
import warnings

import pytest
from lxml import etree

import scholarly_nlp
from scholarly_nlp import MalformedInputError, UnsafeInputError
from scholarly_nlp.doc.serialize import doc_from_json, doc_to_json
from scholarly_nlp.doc.tokenize import LONGEST_RUN, long_run_cuts, tokenize
from scholarly_nlp.readers.tei import NS, TEI_NS, parse_tei, read_tei
from scholarly_nlp.text.mentions import FigureLabels, resolve_mention

from conftest import shared

HEADER = (
    "<teiHeader><fileDesc><titleStmt><title level='a' type='main'>A hostile paper</title></titleStmt>"
    "</fileDesc></teiHeader>"
)


def tei(body: str = "<p>Some body text.</p>", *, floats: str = "", namespace: str = f" xmlns='{TEI_NS}'",
        prolog: str = "") -> str:
    """A small TEI document: a title, one body div with ``body`` and ``floats``."""
    return (f"{prolog}<TEI{namespace}>{HEADER}<text><body><div><head n='1'>Results</head>{body}</div>"
            f"{floats}</body></text></TEI>")


def figure(fig_id: str, coords: str = "", label: str = "1") -> str:
    attribute = f" coords='{coords}'" if coords else ""
    return (f"<figure xml:id='{fig_id}'{attribute}><head>Figure {label}:</head><label>{label}</label>"
            f"<figDesc>A caption.</figDesc></figure>")


# --------------------------------------------------------------------------- long papers


def long_tei(source_path, min_chars: int) -> bytes:
    """The real TEI at ``source_path`` with its body paragraphs repeated until the body has
    at least ``min_chars`` characters of text."""
    root = etree.parse(str(source_path)).getroot()
    body = root.find("t:text/t:body", NS)
    paragraphs = [p for p in body.iter(f"{{{TEI_NS}}}p")]
    chars = sum(len("".join(p.itertext())) for p in paragraphs)
    copies = min_chars // chars + 1
    extra = etree.SubElement(body, f"{{{TEI_NS}}}div")
    for _ in range(copies):
        for p in paragraphs:
            extra.append(copy.deepcopy(p))
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


@pytest.mark.needs_data("tei/acl")
def test_tei_over_a_million_characters_is_read_and_the_pipeline_is_left_alone(tmp_path, nlp):
    path = tmp_path / "long.tei.xml"
    path.write_bytes(long_tei(shared("tei", "acl", "D14-1003.tei.xml"), 1_050_000))
    limit = nlp.max_length
    doc = scholarly_nlp.read(path, nlp=nlp, format="tei")
    assert len(doc.text) > max(1_000_000, limit)
    assert nlp.max_length == limit  # the caller's pipeline is not changed
    assert len(doc.spans["paragraphs"]) > 25 * 40
    assert doc[-1].idx + len(doc[-1].text_with_ws) == len(doc.text)


def test_builder_ignores_max_length_without_changing_it():
    # The same path as a long paper, with a tiny limit: fast, and independent of the data.
    nlp = scholarly_nlp.blank()
    nlp.max_length = 50
    paper = parse_tei(tei("<p>" + "A sentence of the body. " * 20 + "</p>"), source="short.tei.xml")
    doc = scholarly_nlp.paper_to_doc(paper, nlp)
    assert len(doc.text) > 50 and nlp.max_length == 50


# --------------------------------------------------------------------------- coordinates


@pytest.mark.parametrize("coords", [
    "inf,0,0,1,1", "1,inf,0,1,1", "nan,0,0,1,1", "1,0,nan,1,1", "1e400,0,0,1,1", "1,0,0,1e400,1",
    "1e30,0,0,1,1", "1,0,0,1e30,1", "-1,0,0,1,1", "0,0,0,1,1", "1,0,0,-5,1", "1.5,0,0,1,1",
    "1,2,3", "1,2,3,4", "", "x,0,0,1,1", "1,0,0,1,",
])
def test_a_bad_coordinate_is_dropped_and_the_paper_is_read(coords):
    floats = figure("fig_0", coords, "1") + figure("fig_1", "3,10,20,30,40", "2")
    paper = parse_tei(tei("<p>See <ref type='figure'>Figure 1</ref>.</p>", floats=floats), source="coords.tei.xml")
    bad, good = paper.figures
    assert (bad.page, bad.bbox) == (None, None)
    assert (good.page, good.bbox) == (3, (10.0, 20.0, 40.0, 60.0))


def test_a_paper_with_an_infinite_coordinate_becomes_a_doc_and_json(tmp_path, nlp):
    path = tmp_path / "inf.tei.xml"
    path.write_text(tei("<p>See <ref type='figure'>Figure 1</ref>.</p>", floats=figure("fig_0", "inf,0,0,1,1")))
    doc = scholarly_nlp.read(path, nlp=nlp, format="tei")
    assert doc._.figures[0].page is None and doc._.figures[0].mentions[0].text == "Figure 1"
    rebuilt = doc_from_json(doc_to_json(doc), nlp)
    assert rebuilt._.paper_meta["figures"][0]["bbox"] is None


# --------------------------------------------------------------------------- namespace, ids, encodings


def test_tei_without_the_tei_namespace_says_so(tmp_path):
    path = tmp_path / "plain.tei.xml"
    path.write_text(tei(namespace=""))
    with pytest.raises(MalformedInputError) as info:
        read_tei(path)
    assert str(path) in str(info.value) and "has no TEI namespace" in str(info.value)


def test_tei_in_another_namespace_names_it():
    with pytest.raises(MalformedInputError) as info:
        parse_tei(tei(namespace=" xmlns='http://example.org/not-tei'"), source="other.tei.xml")
    assert "has no TEI namespace" in str(info.value) and "http://example.org/not-tei" in str(info.value)


def test_a_duplicate_xml_id_is_a_warning_not_a_rejected_paper(tmp_path):
    path = tmp_path / "dup.tei.xml"
    body = "<p>See <ref type='figure' target='#fig_0'>Figure 1</ref>.</p>"
    path.write_text(tei(body, floats=figure("fig_0", label="1") + figure("fig_0", label="2")))
    with pytest.warns(UserWarning, match=r"duplicate xml:id 'fig_0'") as caught:
        paper = read_tei(path)
    assert str(path) in str(caught[0].message)
    assert [f.id for f in paper.figures] == ["fig_0", "fig_0"]
    ref = paper.blocks_of("paragraph")[0].refs[0]
    assert ref.target == "fig_0"


def test_unique_ids_give_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parse_tei(tei(floats=figure("fig_0") + figure("fig_1", label="2")), source="ok.tei.xml")


DTD = '<!DOCTYPE TEI [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>'


def encoded(text: str, codec: str, bom: bytes = b"") -> bytes:
    return bom + text.encode(codec)


@pytest.mark.parametrize("codec, bom, declared", [
    ("utf-16-le", b"\xff\xfe", "UTF-16"),
    ("utf-16-be", b"\xfe\xff", "UTF-16"),
    ("utf-16-le", b"", "UTF-16LE"),
    ("utf-16-be", b"", "UTF-16BE"),
    ("utf-32-le", b"\xff\xfe\x00\x00", "UTF-32"),
    ("utf-32-be", b"\x00\x00\xfe\xff", "UTF-32"),
    ("utf-32-be", b"", "UTF-32BE"),
    ("utf-8", b"\xef\xbb\xbf", "UTF-8"),
])
def test_a_dtd_with_entities_is_refused_in_any_encoding(tmp_path, codec, bom, declared):
    text = tei(prolog=f'<?xml version="1.0" encoding="{declared}"?>{DTD}')
    path = tmp_path / "wide.tei.xml"
    path.write_bytes(encoded(text, codec, bom))
    with pytest.raises(UnsafeInputError) as info:
        read_tei(path)
    assert str(path) in str(info.value) and "entities" in str(info.value)


@pytest.mark.parametrize("codec, bom, declared", [("utf-16-le", b"\xff\xfe", "UTF-16"),
                                                   ("utf-32-be", b"\x00\x00\xfe\xff", "UTF-32")])
def test_wide_encodings_without_a_dtd_are_read(tmp_path, codec, bom, declared):
    path = tmp_path / "wide.tei.xml"
    path.write_bytes(encoded(tei(prolog=f'<?xml version="1.0" encoding="{declared}"?>'), codec, bom))
    assert read_tei(path).title == "A hostile paper"


# --------------------------------------------------------------------------- costs that grew quadratically


def test_many_untargeted_figure_refs_resolve_to_their_figures(nlp):
    n = 2000
    body = "".join(f"<p>As <ref type='figure'>Figure {k}</ref> and <ref type='table'>Table {k}</ref> show.</p>"
                   for k in range(1, n + 1))
    floats = "".join(figure(f"fig_{k}", label=str(k)) for k in range(1, n + 1))
    floats += "".join(f"<figure type='table' xml:id='tab_{k}'><head>Table {k}:</head><figDesc>Cells.</figDesc></figure>"
                      for k in range(1, n + 1))
    started = time.perf_counter()
    doc = scholarly_nlp.paper_to_doc(parse_tei(tei(body, floats=floats), source="many.tei.xml"), nlp)
    assert time.perf_counter() - started < 60  # a guard against a hang; the speed is in bench_scaling.py
    targets = [(span.text, span.kb_id_) for span in doc.spans["figure_refs"]]
    assert targets[:2] == [("Figure 1", "fig_1"), ("Table 1", "tab_1")]
    assert targets[-1] == (f"Table {n}", f"tab_{n}")
    assert all(kb == f"{'fig' if text.startswith('Figure') else 'tab'}_{text.split()[1]}" for text, kb in targets)
    assert {span.label_ for span in doc.spans["captions"]} == {"figure", "table"}


def test_figure_label_index_resolves_as_the_plain_scan():
    figures = [("fig_a", "figure", "1"), ("tab_a", "table", "1"), ("fig_b", "figure", "1"), ("fig_c", "figure", "A.2"),
               ("fig_d", "figure", "")]
    index = FigureLabels(figures)
    for text, hint in [("Figure 1", None), ("Table 1", None), ("(1)", "table"), ("Fig. a.2", None), ("Figure 9", None),
                       ("see", None), ("Figs. 1 and 2", "figure")]:
        assert index.resolve(text, hint) == resolve_mention(text, figures, kind_hint=hint) == resolve_mention(
            text, index, kind_hint=hint)
    assert index.resolve("Figure 1") == "fig_a"  # the first figure with a label wins


def test_formula_refs_resolve_by_label_and_by_number_printed_in_a_merged_formula():
    body = ("<formula xml:id='formula_0'>a = b<label>(1)</label></formula>"
            "<formula xml:id='formula_1'>c = d (2) e = f<label>(3)</label></formula>"
            "<p>By <ref type='formula'>(3)</ref>, <ref type='formula'>(2)</ref>, <ref type='formula'>(1)</ref> "
            "and <ref type='formula'>(4)</ref>.</p>")
    paper = parse_tei(tei(body), source="formulas.tei.xml")
    refs = [r.target for r in paper.blocks_of("paragraph")[0].refs]
    assert refs == ["formula_1", "formula_1", "formula_0", None]


def test_a_long_run_without_spaces_is_read_in_bounded_time(nlp):
    rng = random.Random(15)
    run = "".join(rng.choice("([)]") for _ in range(40_000))
    started = time.perf_counter()
    doc = scholarly_nlp.paper_to_doc(parse_tei(tei(f"<p>Before. {run} After.</p>"), source="run.tei.xml"), nlp)
    assert time.perf_counter() - started < 60  # whole-run tokenisation took ~10 minutes
    assert run in doc.text and doc[-1].idx + len(doc[-1].text_with_ws) == len(doc.text)
    rebuilt = doc_from_json(doc_to_json(doc), nlp)
    assert [t.idx for t in rebuilt] == [t.idx for t in doc]


def test_ordinary_text_tokenises_exactly_as_the_tokenizer_alone(nlp):
    text = "The model (Smith et al., 2010) improves; see https://example.org/a-b_c and Fig. 3a. " * 50
    assert long_run_cuts(text) == []
    assert [t.text for t in tokenize(nlp.tokenizer, text)] == [t.text for t in nlp.tokenizer(text)]
    glued = "x" * (LONGEST_RUN + 1)
    assert long_run_cuts(f"a {glued} b") != [] and tokenize(nlp.tokenizer, glued).text == glued


def test_an_export_written_before_long_runs_were_cut_still_loads(nlp):
    # A URL of 300 characters: exports written before the cut stored its tokens against the
    # plain tokenizer's, so loading retries with it when the pieces do not match.
    url = "https://example.org/" + "a-b_c.d/" * 35
    doc = scholarly_nlp.paper_to_doc(parse_tei(tei(f"<p>See {url} for the code.</p>"), source="url.tei.xml"), nlp)
    data = doc_to_json(doc)
    plain = nlp.tokenizer(doc.text)
    cut = tokenize(nlp.tokenizer, doc.text)
    assert [t.idx for t in plain] != [t.idx for t in cut]  # the two references differ on this text
    old = copy.deepcopy(data)
    tokens = old["doc"]["tokens"]
    plain_starts = {t.idx for t in plain}
    kept = {t.idx for t in doc}
    tokens["removed"] = sorted(plain_starts - kept)
    tokens["added"] = [[t.idx, t.idx + len(t.text)] for t in doc if t.idx not in plain_starts
                       or len(plain[[p.idx for p in plain].index(t.idx)].text) != len(t.text)]
    tokens["removed"] = sorted(set(tokens["removed"]) | {s for s, _ in tokens["added"] if s in plain_starts})
    rebuilt = doc_from_json(old, nlp)
    assert [(t.idx, t.text) for t in rebuilt] == [(t.idx, t.text) for t in doc]
