"""Unheaded introductions: GROBID's abstract overflow and the introduction before the first head.

Nature's journals (Scientific Reports, Nature Communications) print no "Introduction" head.
GROBID then keeps the introduction's first paragraphs in ``<abstract>`` (53 of the 243
biomedical TEI files here) and starts the body with a headless div; the structure helper
took "Results" as the introduction. Tested on the real files.
"""

from __future__ import annotations

import glob

import pytest
from lxml import etree

import scholarly_nlp
from scholarly_nlp import introduction_and_body, paper_to_doc, read_paper
from scholarly_nlp.readers.tei import NS
from scholarly_nlp.readers.tei_parts import introduction_in_abstract

from conftest import data_path

BIOMED = data_path("tei", "biomed")
PAIRS = data_path("pdf-pairs")
pytestmark = pytest.mark.needs_data("tei/biomed", "pdf-pairs")


@pytest.fixture(scope="module")
def nlp():
    return scholarly_nlp.blank()


def _abstract_and_body(path):
    root = etree.parse(str(path)).getroot()
    return root.find("t:teiHeader/t:profileDesc/t:abstract", NS), root.find("t:text/t:body", NS)


def _introduction(path, nlp) -> list[str]:
    doc = paper_to_doc(read_paper(path), nlp)
    return [s.text.strip() for s in introduction_and_body(doc)[0]]


def test_introduction_paragraphs_leave_the_abstract_and_open_the_body(nlp):
    paper = read_paper(BIOMED / "10.1038%2Fs41598-018-36872-5.tei.xml")
    abstract = [b.text for b in paper.blocks_of("abstract")]
    assert len(abstract) == 1
    assert abstract[0].startswith("A reflective outcoupler is demonstrated")
    assert abstract[0].endswith("independent of wavelength.")
    body = [b for b in paper.blocks if b.kind in ("heading", "paragraph")]
    # the five paragraphs GROBID kept in <abstract>, then its headless first body div, in one untitled section
    assert body[0].text.startswith("Mid-wave infrared (MWIR) and long-wave infrared (LWIR) semiconductor lasers")
    assert body[5].text.startswith("facet-limited to produce a 55° angle")
    assert {b.section for b in body[:6]} == {body[0].section} and paper.sections[body[0].section].title == ""
    assert body[6].kind == "heading" and body[6].text == "Results"
    intro = _introduction(BIOMED / "10.1038%2Fs41598-018-36872-5.tei.xml", nlp)
    assert intro[0].startswith("Mid-wave infrared") and not any(s.startswith("Reflective outcoupler formation") for s in intro)


def test_text_before_results_is_the_introduction_of_a_nature_paper(nlp):
    """The abstract is whole; the body's headless first div is the introduction, not "Results"."""
    path = BIOMED / "10.1038%2Fs41467-019-08302-1.tei.xml"
    assert introduction_in_abstract(*_abstract_and_body(path)) is None
    intro = _introduction(path, nlp)
    assert "eplication of the mammalian genome is an essential process" in intro[0]  # GROBID: "R eplication"
    assert not any(s.startswith("We plotted a heatmap") for s in intro)  # a Results sentence


def test_a_head_without_letters_or_digits_starts_no_section(nlp):
    """GROBID heads a div of this introduction "." (17 of the 654 TEI files have such heads:
    "•", "-", "= ="); the introduction runs on through it."""
    path = BIOMED / "10.1038%2Fs41467-019-08369-w.tei.xml"
    assert [s.title for s in read_paper(path).sections][:2] == ["", "Results"]
    intro = _introduction(path, nlp)
    assert intro[0].startswith("Over the past decades, silicon integrated photonics")
    assert any(s.startswith("Here, we report ultra-high on-chip optical gain") for s in intro)


@pytest.mark.needs_data("tei/acl")
def test_an_introduction_head_run_into_the_first_paragraph_becomes_its_head(nlp):
    """GROBID 0.5 gives PLOS's first head as the first word of the first paragraph (8 papers)."""
    path = BIOMED / "10.1371%2Fjournal.pone.0206079.tei.xml"
    paper = read_paper(path)
    assert paper.sections[0].title == "Introduction"
    heading, first = [b for b in paper.blocks if b.kind in ("heading", "paragraph")][:2]
    assert (heading.kind, heading.text) == ("heading", "Introduction")
    assert first.text.startswith("Basement reservoirs are a subset of naturally fractured reservoirs")
    intro = _introduction(path, nlp)
    assert intro[0].startswith("Basement reservoirs are")
    assert intro[-1].startswith("The aim of this work is to perform comprehensive seismic")
    # A paragraph's run-in head elsewhere is the paper's own text ("Results Table 2 summarizes ...").
    acl = read_paper(data_path("tei", "acl", "D18-1523.tei.xml"))
    assert any(b.text.startswith("Results Table 2 summarizes the results.") for b in acl.blocks)


def test_scientific_reports_abstracts_are_abstract_sized():
    """Scientific Reports allows 200 words: before, 56 of the 60 papers read 260 or more."""
    papers = sorted(glob.glob(str(BIOMED / "10.1038*s41598*.tei.xml")))
    assert len(papers) == 60
    words = [sum(len(b.text.split()) for b in read_paper(p).blocks_of("abstract")) for p in papers]
    assert sum(w > 260 for w in words) <= 5  # measured 5: GROBID split their abstract into heads and divs
    assert min(words) > 50


@pytest.mark.parametrize("name, paragraphs", [
    ("srgarcia_prodadmin__joh-6-28.tei.xml", 3),  # a review's abstract of three short paragraphs, 211 words
    ("mauricio_BSCA.tei.xml", 4),  # four paragraphs, but the body has its "Introduction"
])
def test_a_real_multi_paragraph_abstract_stays(name, paragraphs):
    assert introduction_in_abstract(*_abstract_and_body(PAIRS / name)) is None
    assert len(read_paper(PAIRS / name).blocks_of("abstract")) == paragraphs


def test_structured_abstracts_stay():
    for name in ("10.1186%2Fs12936-019-2663-8.tei.xml", "10.1371%2Fjournal.pone.0204260.tei.xml"):
        assert introduction_in_abstract(*_abstract_and_body(BIOMED / name)) is None


def test_an_article_without_abstract_opens_its_body(nlp):
    """A news article: GROBID took its opening, which cites ten works, for the abstract."""
    path = PAIRS / "srgarcia_1-s2.0-S2095809925001183-main.tei.xml"
    assert introduction_in_abstract(*_abstract_and_body(path)) == 0
    paper = read_paper(path)
    assert paper.blocks_of("abstract") == []
    first = next(b for b in paper.blocks if b.kind == "paragraph")
    assert first.text.startswith("In May 2024, scientists were excited but disappointed")
    assert any(r.kind == "bibr" for r in first.refs)


def test_the_pdf_reader_gets_the_unheaded_introduction_too(nlp):
    intro = _introduction(PAIRS / "ser763_demographic-histories-and.pdf", nlp)
    assert any(s.startswith("Here, we conducted a broad-scale comparative analysis") for s in intro)
    assert not any(s.startswith("Genetic data.") for s in intro)  # the first Results paragraph


def _tei(abstract: str, body: str):
    root = etree.fromstring(
        f'<TEI xmlns="{NS["t"]}"><teiHeader><profileDesc><abstract><div>{abstract}</div></abstract></profileDesc>'
        f"</teiHeader><text><body>{body}</body></text></TEI>")
    return root.find("t:teiHeader/t:profileDesc/t:abstract", NS), root.find("t:text/t:body", NS)


CITE = '<ref type="bibr">[1]</ref>'
RESULTS = "<div><head>Results</head><p>It works.</p></div>"


@pytest.mark.parametrize("abstract, body, expected", [
    (f"<p>We study parsing.</p><p>Parsing is old {CITE}.</p>", RESULTS, 1),  # cites after its first paragraph
    ("<p>We study parsing.</p><p>It is fast.</p>", RESULTS, None),  # short and uncited: an abstract
    (f"<p>{'word ' * 200}</p><p>{'word ' * 60}</p>", RESULTS, 1),  # longer than an abstract
    (f"<p>{'word ' * 200}</p><p>{'word ' * 60}</p>", "<div><head>1 Introduction</head><p>x</p></div>", None),
    (f"<p>{'word ' * 200}</p><p>{'word ' * 60}</p>", "<div><head>Background</head><p>x</p></div>", None),
    (f"<p>Parsing {CITE} is old {CITE}.</p>", RESULTS, 0),  # an opening that cites two works
    (f"<p>Parsing is old {CITE}.</p>", RESULTS, None),  # one citation is not enough
    (f"<head>Methods</head><p>Parsing {CITE} is old {CITE}.</p>", RESULTS, None),  # a labelled part
])
def test_introduction_in_abstract_needs_both_signs(abstract, body, expected):
    assert introduction_in_abstract(*_tei(abstract, body)) == expected
