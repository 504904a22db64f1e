"""Accents printed as glyphs of their own (old TeX fonts): put on the letter under them by their
box (:mod:`scholarly_nlp.readers.pdf.accents`) or, left beside their letter, composed with it
(``compose_accents``). Boxes here are those pdfium gives on real ACL papers (D13-1032)."""

from __future__ import annotations

import pytest

from scholarly_nlp.readers.pdf.accents import place_accent, runs_on
from scholarly_nlp.readers.pdf.model import Word
from scholarly_nlp.readers.pdf.reference_parser import compose_accents


def word(text: str, x0: float, x1: float, y0: float = 118.8, y1: float = 129.3) -> Word:
    return Word(text, x0, y0, x1, y1, 12.0, y1 - y0)


def test_a_detached_accent_goes_on_the_vowel_under_it():
    """D13-1032's "Thomas Muller \u00a8": the diaeresis at x 220.3-224.3 is over the u."""
    words = [word("Thomas", 167.7, 205.9), word("Muller", 208.8, 241.1)]
    assert place_accent(word("\u00a8", 220.3, 224.3, 118.7), words) is words[1]
    assert [w.text for w in words] == ["Thomas", "M\u00fcller"]


def test_the_letter_under_the_accent_wins_over_a_vowel_beside_it():
    """An acute over the n of "Ptaszynski" is \u0144, not \u00fd: a vowel is only pulled a little nearer."""
    target = word("Ptaszynski", 100.0, 150.0)  # ten letters, five points each: the n is the seventh
    assert place_accent(word("\u00b4", 131.0, 134.0), [target]) is target
    assert target.text == "Ptaszy\u0144ski"
    centres = [100.0 + 5 * i + 2.5 for i in range(10)]
    exact = word("Velickovic", 100.0, 150.0)
    assert place_accent(word("\u02c7", 121.0, 124.0), [exact], lambda w: centres) is exact
    assert exact.text == "Veli\u010dkovic"


def test_an_accent_over_no_word_of_its_row_is_left():
    words = [word("Muller", 208.8, 241.1)]
    assert place_accent(word("\u00a8", 260.0, 264.0), words) is None  # beside, not over
    assert place_accent(word("\u00a8", 220.3, 224.3, 140.0, 150.0), words) is None  # the next row
    assert place_accent(word("x", 220.3, 224.3), words) is None  # no accent
    assert words[0].text == "Muller"


def test_a_superscript_start_moves_with_a_mark_that_does_not_compose():
    target = word("Qx12", 100.0, 120.0)
    target.sup = 2
    place_accent(word("\u02d8", 106.0, 109.0), [target])  # a breve over the x: no precomposed letter
    assert target.text == "Qx\u0306" + "12" and target.sup == 3


def test_the_rest_of_a_word_cut_at_its_accent_runs_on():
    """"Gim" and "enez" touch (x1 = x0 = 354.8); "and" after a space does not run on."""
    assert runs_on(word("Gim", 338.0, 354.8), word("enez", 354.8, 372.0))
    assert not runs_on(word("Gim", 338.0, 354.8), word("and", 357.5, 372.0))
    assert not runs_on(word("Gim", 338.0, 354.8), word("enez", 354.8, 372.0, 131.0, 141.5))


@pytest.mark.parametrize("text, composed", [
    ("Be\u00b4langer", "B\u00e9langer"),
    ("Schro\u00a8dinger", "Schr\u00f6dinger"),
    ("Co\u02c6te\u00b4", "C\u00f4t\u00e9"),
    ("plain text", "plain text"),
    ("\u02d9Ilknur Durgar", "\u0130lknur Durgar"),  # TeX's \.I prints the dot before its letter
    ("Kv\u02c7eto\u02c7n", "Kv\u011bto\u0148"),
    ("D\u00e9jean, Herve,\u00b4 \u00c9ric", "D\u00e9jean, Herv\u00e9, \u00c9ric"),  # after the name's comma
    ("Ku\u010derova.\u00b4 2005", "Ku\u010derov\u00e1. 2005"),
    ("U.S.\u00b4 policy", "U.S.\u00b4 policy"),  # after a capital's full stop: no name's letter
    ("Llu\u00b4\u0131s", "Llu\u00eds"),  # beside TeX's dotless i, on it
    ("Mart\u0131\u0301", "Mart\u00ed"),
])
def test_spacing_accents_beside_their_letter_are_composed(text, composed):
    assert compose_accents(text) == composed
