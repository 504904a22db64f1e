"""Drop caps (``readers/pdf/drop_caps.py``): an enlarged first letter, a line of its own in the
text layer, goes back to its word; on a real Nature-style PDF and on pages built line by line."""

from __future__ import annotations

import pytest
from test_pdf_hostile import line

from scholarly_nlp import read_paper
from scholarly_nlp.readers.pdf.drop_caps import join_drop_caps
from scholarly_nlp.readers.pdf.model import Page

from conftest import data_path


def page_with(cap_text: str, first_words: str, later: str = "the study of populations") -> Page:
    """A 40-point letter at the top left of a paragraph whose first three lines are indented."""
    cap = line(cap_text, 44, 50, 40)
    lines = [line(first_words, 72.5, 50, 9.5), line("goal of biology and has", 72.5, 61, 9.5),
             line("implications for understanding", 72.5, 72, 9.5), line(later, 44, 83, 9.5)]
    return Page(0, 612.0, 792.0, [cap, *lines])


def test_a_drop_cap_joins_the_word_beside_its_top():
    page = page_with("U", "nravelling the histories of species")
    assert join_drop_caps([page]) == 1
    assert [l.text for l in page.lines][:2] == ["Unravelling the histories of species", "goal of biology and has"]


@pytest.mark.parametrize("cap, first, later", [
    ("A", "novel goal of the study", "the study of populations"),  # "A" is a word: no "anovel" in the paper
    ("T", "cells respond to the study", "many cells divide"),  # "cells" is a word of the paper
    ("K", "j=1 of the sum", "the study of populations"),  # a summation's index, not a word
])
def test_a_large_letter_that_is_no_drop_cap_stays(cap, first, later):
    page = page_with(cap, first, later)
    assert join_drop_caps([page]) == 0
    assert page.lines[0].text == cap


def test_a_letter_beside_a_lower_line_stays():
    page = page_with("U", "nravelling the histories of species")
    page.lines[0] = line("U", 44, 75, 40)  # its top level with the third line: not the paragraph's start
    assert join_drop_caps([page]) == 0


@pytest.mark.needs_data("pdf-pairs")
def test_a_nature_paper_keeps_its_first_word():
    paper = read_paper(data_path("pdf-pairs", "ser763_demographic-histories-and.pdf"))
    first = next(b for b in paper.blocks if b.kind == "paragraph")
    assert first.text.startswith("Unravelling the demographic histories of species")
