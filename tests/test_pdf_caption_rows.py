"""A PDF caption keeps all its lines: a line cut into pieces (an accent set above its letter,
a footnote mark, a formula's subscript, spaces widened by justification) is the caption's text,
not a table's header row; the rest of a caption cut off by a change of font, band or column
joins it; a table's header under its caption and a heading of the next column do not.

Each case is a real PDF of ``pdf-pairs``, ``tei/with-pdf`` or the ACL set, and a few rows are
built by hand.
"""

from __future__ import annotations

import warnings

import pytest

from conftest import data_path, need
from test_pdf_hostile import line

from scholarly_nlp.readers import read_pdf
from scholarly_nlp.readers.pdf.captions import _split_off_table_rows
from scholarly_nlp.readers.pdf.model import Page, VBlock

PAIRS = data_path("pdf-pairs")
ACL = data_path("pdfs", "acl")
WITH_PDF = data_path("tei", "with-pdf")


def read(path):
    """The reader's Paper of one PDF (skipped where its folder is missing), its warnings about
    unlinked markers silenced."""
    need(path.parent)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return read_pdf(path)


def caption(paper, label: str) -> str:
    """The text of the caption that opens with ``label``."""
    return next(b.text for b in paper.blocks_of("caption") if b.text.startswith(label))


def paragraphs(paper) -> list[str]:
    return [b.text for b in paper.blocks_of("paragraph")]


@pytest.mark.needs_data("pdf-pairs")
def test_an_accent_set_above_its_letter_does_not_cut_a_caption():
    """"SDO/AIA 193 Å": the ring over the A is a piece of its own on the caption's second row."""
    paper = read(PAIRS / "grozescu_2010.02462v1.pdf")
    fig_7 = caption(paper, "Fig. 7:")
    assert "tornado studied by Yang et al. (2018). Right panel:" in fig_7
    assert fig_7.endswith("Bak-Stęślicka et al. (2013).")
    assert not any(p.startswith("by Yang et al. (2018). Right panel") for p in paragraphs(paper))


@pytest.mark.needs_data("pdf-pairs")
@pytest.mark.parametrize(
    "name, label, rest",
    [
        # a footnote mark cuts the line a word space from the next piece
        ("upmchk_paper4", "Figure 1.", "processing software ImageJ as recommended by the software documentation"),
        # "GCN-64∗ corresponds ...": the asterisk's piece
        ("osai_paper04", "Table 2:", "GCN-64∗ corresponds to the best GCN result computing 64 hidden features"),
        # a formula's subscript overlaps the words before it
        ("mauricio_CSRAUCL", "Fig. 3.", "the current task space error ei = xtask i − xi, and outputs the actuation τi."),
        # justified in a narrow column, its spaces are one and a half ems wide
        ("mauricio_AIPNAFLDF", "Figure 2", "The second-harmonic generation (SHG)/ two-photon excitation fluorescence"),
    ],
)
def test_a_caption_line_in_pieces_is_not_a_table_row(name, label, rest):
    paper = read(PAIRS / f"{name}.pdf")
    assert rest in caption(paper, label)
    assert not any(p.startswith(rest[:30]) for p in paragraphs(paper))


@pytest.mark.needs_data("tei/with-pdf")
def test_a_table_header_under_its_caption_is_still_cut_off():
    """PLOS ONE's table header ("Variable  Estimate  S.E.  Z  P-value") right under its caption
    is the table's, not the caption's."""
    paper = read(WITH_PDF / "journal.pone.0319315.pdf")
    table_2 = caption(paper, "Table 2.")
    assert table_2.startswith("Table 2. Results of the comparison of ap")
    assert "Estimate" not in table_2 and "P-value" not in table_2


@pytest.mark.needs_data("pdfs/acl")
def test_a_heading_of_the_next_column_stays_out_of_a_caption():
    """C02-1050's "3.3 Bidirectional Decoding" in the right column stands level with a line of
    Figure 4's caption in the left one: the caption is whole, the heading a section."""
    paper = read(ACL / "C02-1050.pdf")
    fig_4 = caption(paper, "Figure 4:")
    assert fig_4.endswith("and the first word in e 0 was aligned from fj .")
    assert "Bidirectional" not in fig_4
    assert any(s.title == "Bidirectional Decoding" for s in paper.sections)


@pytest.mark.needs_data("pdf-pairs")
@pytest.mark.parametrize(
    "name, label, whole",
    [
        # in the body's size, its last line ends the page's full-width band and the rest
        # falls in the next band's left column
        ("srgarcia_prodadmin__joh-1-7-v2", "Figure 6:",
         "(dark green pairs are similar, light green are dissimilar)."),
        # a caption in the margin beside its table: the table's rows come first in reading order
        ("srgarcia_prodadmin__joh-6-28", "Table 3",
         "Table 3 Typology of pulsers described in the literature, grouped by technical approach."),
        # the label's line in a larger font than the rest of the caption
        ("ser763_demographic-histories-and", "Fig. 4", "with the grey line representing the model prediction. b Shows"),
    ],
)
def test_the_rest_of_a_caption_under_it_joins_it(name, label, whole):
    paper = read(PAIRS / f"{name}.pdf")
    assert whole in caption(paper, label)


@pytest.mark.needs_data("pdfs/acl")
def test_a_glyph_taller_than_its_line_does_not_stretch_a_caption_over_its_table():
    """P01-1027's Table 3 caption has a line whose box reaches 68 pt down over the table: the
    table's rows stay out of the body text."""
    paper = read(ACL / "P01-1027.pdf")
    assert caption(paper, "Table 3:").endswith("values for the English word “which”.")
    assert not any(p.startswith(("Category 1 (0,was,)", "Alig. word", "word “which”")) for p in paragraphs(paper))


# -- on lines built by hand: which pieces of a row under a caption's first line are its text ----


def caption_block(rows: list[list[tuple[str, float]]], size: float = 9.0) -> tuple[Page, VBlock]:
    """A page with one caption block: each row a list of (text, x0) pieces, 12 pt apart."""
    lines = [line(text, x0, 100 + 12 * r, size) for r, row in enumerate(rows) for text, x0 in row]
    block = VBlock(lines, 0)
    page = Page(0, 612.0, 792.0, lines)
    page.blocks = [block]
    return page, block


def test_a_justified_row_cut_at_wide_spaces_stays_caption_text():
    """Three pieces about two ems apart running from the caption's left edge to its right one."""
    first, rest = "Figure 2. Examples of image analysis in a study", "excitation fluorescence imaging of slides"
    pieces = ["The", "second-harmonic", "generation (SHG)/"]
    right = line(first, 72, 0, 9.0).x1
    widths = [line(p, 0, 0, 9.0).x1 for p in pieces]
    gap = (right - 72 - sum(widths)) / 2
    assert 9.0 < gap < 2.5 * 9.0  # wider than a word space, narrower than table cells
    page, block = caption_block([
        [(first, 72)],
        [(pieces[0], 72), (pieces[1], 72 + widths[0] + gap), (pieces[2], right - widths[2])],
        [(rest, 72)],
    ])
    _split_off_table_rows(page, block)
    assert len(block.lines) == 5 and page.blocks == [block]


def test_a_table_header_row_is_cut_off_even_with_a_mark_beside_a_cell():
    """"Model  P†  R  F1" under its caption: the dagger touches its cell, the cells stand
    ems apart, so the row and what follows are the table's."""
    page, block = caption_block([
        [("Table 1. Results on the test set of the corpus", 72)],
        [("Model", 72), ("P", 160), ("†", 164.5), ("R", 220), ("F1", 280)],
        [("Ours", 72), ("81.2", 160), ("79.0", 220), ("80.1", 280)],
    ])
    _split_off_table_rows(page, block)
    assert [l.text for l in block.lines] == ["Table 1. Results on the test set of the corpus"]
    assert page.blocks[1].lines[0].text == "Model"


def test_a_dense_table_under_a_short_caption_is_not_read_as_justified_text():
    """A short centred caption over rows whose cells are 1.5 ems apart: the rows do not span
    the caption's own line, so they are cut off."""
    page, block = caption_block([
        [("Table 2. Ablations", 150)],
        [("Base", 100), ("71.0", 140), ("70.2", 180), ("69.9", 220)],
        [("Full", 100), ("74.3", 140), ("73.1", 180), ("72.8", 220)],
    ])
    _split_off_table_rows(page, block)
    assert [l.text for l in block.lines] == ["Table 2. Ablations"]
