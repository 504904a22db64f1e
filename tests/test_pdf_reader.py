"""The built-in PDF reader on real papers (checked against GROBID's TEI) and on bad input.

Real files: the three GROBID input/output pairs of ``shared/data/tei/with-pdf`` (two ACL
papers in two columns, one single-column PLOS journal paper) and a few of the ACL
Anthology PDFs in ``shared/data/pdfs/acl`` (LaTeX, Word and Ghostscript-era producers).
Bad files are made in ``tmp_path``.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from lxml import etree
from PIL import Image

from scholarly_nlp.errors import (
    EmptyDocumentError,
    EncryptedPDFError,
    InputError,
    MalformedInputError,
)
from scholarly_nlp.paper import Paper
from scholarly_nlp.readers.pdf import read_pdf

from conftest import data_path, need

WITH_PDF = data_path("tei", "with-pdf")
ACL_PDFS = data_path("pdfs", "acl")
STEMS = ["2020.acl-main.207", "N18-3011", "journal.pone.0319315"]
TEI = {"t": "http://www.tei-c.org/ns/1.0"}

# Checked at test time by tests/conftest.py (skip, or fail under SCHOLARLY_NLP_REQUIRE_DATA=1).
needs_data = pytest.mark.needs_data("tei/with-pdf", "pdfs/acl")


def words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text.lower())


def tei_text(path: Path, xpath: str) -> list[str]:
    tree = etree.parse(str(path))
    return [" ".join("".join(e.itertext()).split()) for e in tree.findall(xpath, TEI)]


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def image_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("figures")


@pytest.fixture(scope="module")
def paired(image_dir) -> dict[str, Paper]:
    """The three with-pdf papers, read once, figures rendered."""
    need(WITH_PDF)
    return {stem: read_pdf(WITH_PDF / f"{stem}.pdf", image_dir=image_dir) for stem in STEMS}


@pytest.fixture(scope="module")
def acl(image_dir) -> dict[str, Paper]:
    """A few ACL Anthology PDFs of different producers and eras, read once."""
    need(ACL_PDFS)
    stems = ["P13-1062", "C90-2039", "J13-1007", "D12-1133", "P06-1011"]
    return {stem: read_pdf(ACL_PDFS / f"{stem}.pdf", image_dir=image_dir) for stem in stems}


# --------------------------------------------------------------------------- vs GROBID


@needs_data
@pytest.mark.parametrize("stem", STEMS)
def test_paper_identity_and_offsets(paired, stem):
    paper = paired[stem]
    assert paper.reader == "pdf"
    assert paper.paper_id == stem
    assert paper.source == str(WITH_PDF / f"{stem}.pdf")
    paper.check()
    kinds = [b.kind for b in paper.blocks]
    assert kinds[0] == "title" and kinds.count("title") == 1
    # the model's order: title, abstract paragraphs, headings and paragraphs, then captions
    first_caption = kinds.index("caption") if "caption" in kinds else len(kinds)
    assert all(k == "caption" for k in kinds[first_caption:])
    assert all(k in ("title", "abstract") for k in kinds[: kinds.index("heading")])


@needs_data
@pytest.mark.parametrize("stem", STEMS)
def test_title_matches_tei(paired, stem):
    (title,) = tei_text(WITH_PDF / f"{stem}.tei.xml", ".//t:teiHeader//t:titleStmt/t:title")
    assert words(paired[stem].title) == words(title)


@needs_data
@pytest.mark.parametrize("stem", STEMS)
def test_abstract_starts_like_tei(paired, stem):
    (abstract,) = tei_text(WITH_PDF / f"{stem}.tei.xml", ".//t:profileDesc/t:abstract")
    found = " ".join(b.text for b in paired[stem].blocks_of("abstract"))
    assert words(found)[:12] == words(abstract)[:12]
    assert 0.8 < len(words(found)) / len(words(abstract)) < 1.25


@needs_data
@pytest.mark.parametrize("stem", STEMS)
def test_section_heads_found(paired, stem):
    heads = tei_text(WITH_PDF / f"{stem}.tei.xml", ".//t:body/t:div/t:head")
    titles = [Counter(words(s.title)) for s in paired[stem].sections]

    def f1(head: Counter, title: Counter) -> float:
        common = sum((head & title).values())
        return 2 * common / (sum(head.values()) + sum(title.values()))

    found = [h for h in heads if max(f1(Counter(words(h)), t) for t in titles) >= 0.8]
    # GROBID glues or cuts a few heads ("Model 2.1 Overview", a run-in head cut mid-line)
    assert len(found) >= 0.8 * len(heads)


@needs_data
def test_section_numbers_levels_and_parents(paired):
    paper = paired["N18-3011"]
    by_number = {s.number: (i, s) for i, s in enumerate(paper.sections)}
    assert [n for n in by_number if n] == [
        "1",
        "2",
        "2.1",
        "2.2",
        "3",
        "4",
        "4.1",
        "4.2",
        "4.3",
        "4.4",
        "5",
        "6",
    ]
    index_2, _ = by_number["2"]
    _, node_types = by_number["2.1"]
    assert (
        node_types.title == "Node Types" and node_types.level == 2 and node_types.parent == index_2
    )
    assert by_number["4"][1].level == 1 and by_number["4"][1].parent is None
    # every heading and body paragraph points at a section; headings at their own
    for block in paper.blocks:
        if block.kind == "heading":
            assert paper.sections[block.section].title in block.text
    intro = by_number["1"][0]
    paragraphs = [b for b in paper.blocks_of("paragraph") if b.section == intro]
    assert paragraphs and paragraphs[0].text.startswith("The goal of this work is to facilitate")


@needs_data
def test_unnumbered_headings_get_levels_from_size(paired):
    sections = paired["journal.pone.0319315"].sections
    by_title = {s.title: s for s in sections}
    assert by_title["Materiel and methods"].level == 1
    ethics = by_title["Ethics statement"]
    assert ethics.level == 2 and sections[ethics.parent].title == "Materiel and methods"
    assert by_title["Discussion"].level == 1


@needs_data
@pytest.mark.parametrize("stem", STEMS)
def test_body_text_agrees_with_grobid(paired, stem):
    gold = Counter(
        w for p in tei_text(WITH_PDF / f"{stem}.tei.xml", ".//t:body/t:div/t:p") for w in words(p)
    )
    found = Counter(w for b in paired[stem].blocks_of("paragraph") for w in words(b.text))
    common = sum((gold & found).values())
    recall, precision = common / sum(gold.values()), common / sum(found.values())
    assert recall > 0.9 and precision > 0.9


@needs_data
def test_captions_match_grobid_and_number_figures(paired):
    paper = paired["2020.acl-main.207"]
    assert [(f.id, f.kind, f.label, f.head, f.page) for f in paper.figures] == [
        ("fig_0", "figure", "1", "Figure 1", 2),
        ("tab_0", "table", "1", "Table 1", 7),
        ("tab_1", "table", "2", "Table 2", 7),
        ("fig_1", "figure", "2", "Figure 2", 8),
        ("tab_2", "table", "3", "Table 3", 8),
    ]
    captions = {b.figure_id: b.text for b in paper.blocks_of("caption")}
    assert captions["fig_1"] == (
        "Figure 2: t-SNE visualization of paper embeddings and their corresponding MAG topics."
    )
    for desc in tei_text(WITH_PDF / "2020.acl-main.207.tei.xml", ".//t:figure/t:figDesc"):
        if desc.startswith(("Table", "t-SNE")):  # GROBID's other figDescs are table cells
            assert any(set(words(desc)) <= set(words(text)) for text in captions.values()), desc


@needs_data
def test_journal_captions(paired):
    paper = paired["journal.pone.0319315"]
    heads = [f.head for f in paper.figures]
    assert heads[:2] == ["Figure 1", "Figure 2"] and "Table 5" in heads
    assert len([f for f in paper.figures if f.kind == "figure"]) == 5
    first = paper.blocks_of("caption")[0]
    assert first.text.startswith("Fig 1. Schematic representation of the experimental protocol")


@needs_data
@pytest.mark.parametrize("stem", STEMS)
def test_figure_bboxes_are_on_the_page(paired, stem):
    for figure in paired[stem].figures:
        if figure.bbox is None:
            continue
        x0, y0, x1, y1 = figure.bbox
        assert 0 <= x0 < x1 <= 612 and 0 <= y0 < y1 <= 842, figure
        assert x1 - x0 > 30 and y1 - y0 > 20, figure


@needs_data
@pytest.mark.parametrize("stem", STEMS)
def test_figure_refs_resolve_to_existing_ids(paired, stem):
    paper = paired[stem]
    ids = {f.id for f in paper.figures}
    refs = [(b.text[r.start : r.end], r) for b in paper.blocks_of("paragraph") for r in b.refs]
    figure_refs = [(text, r) for text, r in refs if r.kind in ("figure", "table")]
    assert figure_refs
    assert all(r.target in ids for _, r in figure_refs if r.target is not None)
    resolved = [r for _, r in figure_refs if r.target]
    assert len(resolved) >= 0.9 * len(figure_refs)
    for text, ref in figure_refs:
        if ref.target:
            figure = next(f for f in paper.figures if f.id == ref.target)
            assert figure.label in text or re.fullmatch(r"\d+[a-z]?", text)


@needs_data
def test_inline_reference_spans(paired):
    paper = paired["N18-3011"]
    refs = {
        (b.text[r.start : r.end], r.kind, r.target)
        for b in paper.blocks_of("paragraph")
        for r in b.refs
    }
    wu = [target for text, kind, target in refs if text == "Wu et al., 2014"]
    assert wu and wu[0] is not None, "the author-year marker is linked to its entry"
    entry = paper.bibliography[wu[0]]
    assert entry.year == "2014" and entry.authors[0].endswith("Wu")
    assert ("Fig. 1", "figure", "fig_0") in refs
    plos = paired["journal.pone.0319315"]
    plos_refs = {
        (b.text[r.start : r.end], r.kind, r.target)
        for b in plos.blocks_of("paragraph")
        for r in b.refs
    }
    assert ("Fig 2A", "figure", "fig_1") in plos_refs
    # a range cites each entry it spans, all three on the marker's text
    assert {target for text, kind, target in plos_refs if text == "[1–3]"} == {"b0", "b1", "b2"}
    # "(European Union Directive 2010/63/EU)" is not a citation
    assert not any(text.startswith("European Union") for text, _, _ in plos_refs)


@needs_data
def test_figure_images_written(paired, image_dir):
    paper = paired["2020.acl-main.207"]
    for figure in paper.figures:
        if figure.kind == "table":
            assert figure.image_path is None
            continue
        path = Path(figure.image_path)
        assert path == image_dir / f"2020.acl-main.207_{figure.id}.png"
        with Image.open(path) as image:
            image.load()
            width, height = image.size
            x0, y0, x1, y1 = figure.bbox
            assert abs(width - 2 * (x1 - x0)) <= 3 and abs(height - 2 * (y1 - y0)) <= 3
            assert 100 < width < 1300 and 60 < height < 1700
            gray = image.convert("L")
            assert gray.getextrema()[0] < 128  # something is drawn, not a blank crop


@needs_data
def test_no_page_furniture_or_broken_words(paired, acl):
    for paper in list(paired.values()) + list(acl.values()):
        for block in paper.blocks_of("paragraph"):
            assert "\ufffe" not in block.text
            assert not re.fullmatch(r"\d{1,4}", block.text), (paper.paper_id, block.text)
            assert "Proceedings of" not in block.text, (paper.paper_id, block.text[:80])
            assert "PLOS One | https://doi.org" not in block.text
    abstract = " ".join(b.text for b in acl["P13-1062"].blocks_of("abstract"))
    # "compara-ble", "asymme-try", "rela-tions" are broken across lines in the PDF
    assert (
        "comparable corpora" in abstract
        and "asymmetry often" in abstract
        and "relations of entity" in abstract
    )
    body = " ".join(b.text for b in acl["P13-1062"].blocks_of("paragraph"))
    assert "transliteration-based" in body  # a real hyphen, kept


# --------------------------------------------------------------------------- ACL corpus


@needs_data
def test_two_column_reading_order(acl):
    paper = acl["P13-1062"]
    intro = [b.text for b in paper.blocks_of("paragraph") if b.section == 0]
    # the paragraph that starts at the bottom of the left column ends at the top of the right one
    joined = next(t for t in intro if t.startswith("Identifying and understanding entities"))
    assert "There are many approaches that deal with some of these challenges" in joined
    # the table between the columns is not body text
    assert not any("ShiJieMaoYiZuZhi" in t for t in intro)
    assert [s.title for s in paper.sections][:3] == [
        "Introduction",
        "Related Work",
        "Entity translation",
    ]


@needs_data
def test_acl_captions_and_refs(acl):
    paper = acl["P13-1062"]
    assert [f.head for f in paper.figures if f.kind == "figure"] == [
        f"Figure {i}" for i in (1, 2, 3, 4, 6, 5)
    ]
    assert all(f.bbox is not None and f.image_path for f in paper.figures if f.kind == "figure")
    targets = {r.target for b in paper.blocks_of("paragraph") for r in b.refs if r.kind == "figure"}
    assert {"fig_0", "fig_1", "fig_2", "fig_3"} <= targets


@needs_data
def test_older_and_journal_layouts(acl):
    old = acl["C90-2039"]  # a 1990 Ghostscript PDF
    assert old.title == "Strategic Lazy Incremental Copy Graph Unification"
    assert old.blocks_of("abstract") and len(old.figures) >= 5
    journal = acl["J13-1007"]  # single-column journal with run-in numbered headings
    numbers = {s.number for s in journal.sections}
    assert {"1", "2", "2.1", "2.1.6", "12"} <= numbers
    assert (
        next(s for s in journal.sections if s.number == "2.1.6").title == "Verbless Constructions"
    )
    assert journal.blocks_of("abstract")[0].text.startswith(
        "We present a constituency parsing system"
    )


@needs_data
def test_float_text_stays_out_of_paragraphs(acl):
    paper = acl["D12-1133"]
    assert not any(s.title in ("SWAP", "Transition", "Condition") for s in paper.sections)
    assert not any(b.text.startswith("LEFT-ARC") for b in paper.blocks_of("paragraph"))


@needs_data
def test_paper_id_override(tmp_path):
    paper = read_pdf(ACL_PDFS / "P06-1011.pdf", paper_id="custom", image_dir=tmp_path)
    assert paper.paper_id == "custom"
    assert all(
        Path(f.image_path).name.startswith("custom_fig_") for f in paper.figures if f.image_path
    )


# --------------------------------------------------------------------------- bad input


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        read_pdf(tmp_path / "nope.pdf")


def test_text_file_renamed_pdf(tmp_path):
    path = tmp_path / "notes.pdf"
    path.write_text("These are plain-text notes, not a PDF.\n" * 20)
    with pytest.raises(MalformedInputError) as info:
        read_pdf(path)
    assert str(path) in str(info.value) and "not a PDF" in str(info.value)


def test_empty_file(tmp_path):
    path = tmp_path / "empty.pdf"
    path.write_bytes(b"")
    with pytest.raises(EmptyDocumentError) as info:
        read_pdf(path)
    assert str(path) in str(info.value) and "empty" in str(info.value)


@needs_data
def test_truncated_pdf(tmp_path):
    data = (WITH_PDF / "N18-3011.pdf").read_bytes()
    path = tmp_path / "truncated.pdf"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(MalformedInputError) as info:
        read_pdf(path)
    assert str(path) in str(info.value) and "truncated" in str(info.value)


def test_garbage_after_pdf_header(tmp_path):
    path = tmp_path / "garbage.pdf"
    path.write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 40 + b"\n%%EOF\n")
    with pytest.raises(MalformedInputError) as info:
        read_pdf(path)
    assert str(path) in str(info.value)


def test_image_only_pdf_needs_ocr(tmp_path):
    path = tmp_path / "scan.pdf"
    image = Image.new("RGB", (600, 800), "white")
    image.paste((0, 0, 0), (100, 100, 500, 140))  # a "line of text" with no text layer
    image.save(path)
    with pytest.raises(EmptyDocumentError) as info:
        read_pdf(path)
    message = str(info.value)
    assert str(path) in message and "no text layer" in message and "OCR" in message


@needs_data
def test_encrypted_pdf(tmp_path):
    pypdf = pytest.importorskip("pypdf")
    writer = pypdf.PdfWriter(clone_from=str(WITH_PDF / "N18-3011.pdf"))
    writer.encrypt(user_password="secret", owner_password="owner")
    path = tmp_path / "locked.pdf"
    with path.open("wb") as handle:
        writer.write(handle)
    with pytest.raises(EncryptedPDFError) as info:
        read_pdf(path)
    assert str(path) in str(info.value) and "password" in str(info.value)


@needs_data
def test_undecodable_text_layer():
    # a 2001 Ghostscript PDF whose Type 3 fonts map no glyph to Unicode
    with pytest.raises(EmptyDocumentError, match="no Unicode mapping"):
        read_pdf(ACL_PDFS / "W01-0505.pdf")


@needs_data
def test_a_lead_in_line_in_another_font_is_no_heading():
    """C02-1025 has "The local feature groups are:" on a line of its own over a list, and an
    indented italic example sentence: neither is a section."""
    need(ACL_PDFS)
    paper = read_pdf(ACL_PDFS / "C02-1025.pdf")
    titles = [s.title for s in paper.sections]
    assert "Local Features" in titles
    assert not any(t.startswith(("The local feature groups", "The McCann family")) for t in titles)


def test_line_after_chars_cuts_a_run_in_label_off_even_inside_a_word():
    from scholarly_nlp.readers.pdf.model import Line, Word

    words = [Word("Abstract\u2014This", 10.0, 0.0, 80.0, 10.0, 10.0, 10.0, index=0, sup=-1),
             Word("paper1", 84.0, 0.0, 114.0, 10.0, 10.0, 10.0, index=14, sup=5)]
    line = Line(words, page=0, bold=False, font="F", last_font="F", size=10.0)
    line.band, line.role = 2, ""
    rest = line.after_chars(len("Abstract\u2014"))
    assert rest.text == "This paper1" and rest.x0 == pytest.approx(10.0 + 70.0 * 9 / 13)
    assert (rest.words[0].index, rest.band, rest.words[1].sup) == (9, 2, 5)
    assert line.text == "Abstract\u2014This paper1"  # the original is not changed
    assert line.after_chars(len("Abstract\u2014This")).text == "paper1"
    assert line.after_chars(0).text == line.text
    assert line.after_chars(19) is None
