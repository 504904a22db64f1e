"""Accents printed as glyphs of their own (old TeX fonts): put on the letter under them by their
box (:mod:`scholarly_nlp.readers.pdf.accents`) or, left beside their letter, composed with it
(``compose_accents``). Boxes here are those pdfium gives on real ACL papers (D13-1032)."""

from __future__ import annotations

import pytest

from conftest import data_path, need
from scholarly_nlp.readers.pdf import read_pdf
from scholarly_nlp.readers.pdf.accents import mark_for, place_accent, place_inner_accents, runs_on
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


def boxes(edges: list[float]) -> list[tuple[float, float]]:
    """Character boxes from their edges, one box a character."""
    return list(zip(edges, edges[1:]))


def test_an_accent_inside_a_word_goes_on_the_letter_its_glyph_is_over():
    """pdfium gives "Schr\u00a8odinger" with the diaeresis' box over the o after it, and ApJ's
    "Universita\u00a8t" with it over the a before it: each goes on the letter under it."""
    schrodinger = word("Schr\u00a8odinger", 100.0, 150.0)
    # S c h r, then the diaeresis set over the o (its box inside the o's), then o d i n g e r
    edges = [(100.0, 105.0), (105.0, 110.0), (110.0, 115.0), (115.0, 119.0), (120.5, 123.5),
             (119.0, 125.0), (125.0, 130.0), (130.0, 133.0), (133.0, 138.0), (138.0, 143.0),
             (143.0, 147.0), (147.0, 150.0)]
    assert place_inner_accents(schrodinger, edges)
    assert schrodinger.text == "Schr\u00f6dinger"
    universitat = word("Universita\u00a8t", 100.0, 150.0)
    edges = boxes([100.0 + 5 * i for i in range(11)])  # U n i v e r s i t a: 100-150
    edges.append((146.0, 149.0))  # the diaeresis, over the a
    edges.append((150.0, 153.0))  # t
    assert place_inner_accents(universitat, edges)
    assert universitat.text == "Universit\u00e4t"


def test_an_accent_over_no_letter_or_with_boxes_that_do_not_match_stays():
    """A backtick opening quoted code sits beside its letters; boxes of another text are no
    guide."""
    code = word("`softwareRequirements`", 100.0, 200.0)
    edges = [(100.0, 103.0)] + boxes([103.0 + 4.5 * i for i in range(21)]) + [(197.5, 200.0)]
    assert not place_inner_accents(code, edges)
    assert code.text == "`softwareRequirements`"
    assert not place_inner_accents(word("Ko\u00a8ln", 100.0, 120.0), [(100.0, 105.0)])


def test_a_circumflex_a_modifier_letter_to_python_lands_on_its_letter():
    """U+02C6 is a letter to ``str.isalpha``: it must not take itself ("t\u02c61" is t\u0302 1)."""
    hat = word("t\u02c61,", 100.0, 112.0)
    assert place_inner_accents(hat, [(100.0, 104.0), (100.5, 103.5), (104.0, 108.0), (108.0, 112.0)])
    assert hat.text == "t\u03021,"


@pytest.mark.parametrize("accent, letter, mark", [
    ("\u02d8", "s", "\u030c"),  # TeX's caron drawn as a breve: Ure\u0161
    ("\u02d8", "g", "\u0306"),  # a real breve: \u011f
    ("\u00b8", "e", "\u0328"),  # Polish's ogonek drawn as a cedilla: \u0119
    ("\u00b8", "c", "\u0327"),  # a real cedilla: \u00e7
    ("\u00b4", "e", "\u0301"),
])
def test_an_accent_glyph_drawn_for_another_mark(accent, letter, mark):
    assert mark_for(accent, letter) == mark


@pytest.mark.needs_data("pdfs/acl", "pdf-pairs")
def test_accents_inside_words_on_real_papers():
    """Names and places whose accents pdfium gives inside the word or cut it at: ACL's
    T\u00dcB\u0130TAK-B\u0130LGEM (cut at the diaeresis) and Ure\u0161 (caron as breve), ApJ's K\u00f6ln."""
    acl = need(data_path("pdfs", "acl"))
    turkish = read_pdf(acl / "W13-2211.pdf")
    assert turkish.authors[0].affiliations[0] == "T\u00dcB\u0130TAK-B\u0130LGEM"
    candide = next(e for e in read_pdf(acl / "J04-4002.pdf").bibliography.values()
                   if e.title == "The Candide system for machine translation")
    assert candide.authors[-1] == "Lubos Ure\u0161"
    pairs = need(data_path("pdf-pairs"))
    apj = read_pdf(pairs / "mauricio_BUFCRAOGRS.pdf")
    assert any("Universit\u00e4t zu K\u00f6ln, Z\u00fclpicher Strasse" in b.text for b in apj.blocks)
