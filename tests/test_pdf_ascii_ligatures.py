"""f-ligatures a font keeps at ASCII punctuation codes (ACM's Libertine fonts: "signi!cant",
"di"erent"): told by exclamation marks between letters where "fi" is all but absent, and put
back only in that font's family (:mod:`scholarly_nlp.readers.pdf.ascii_ligatures`)."""

from __future__ import annotations

import warnings
from collections import Counter

import pytest

from conftest import data_path, need
from scholarly_nlp.readers import read_pdf
from scholarly_nlp.readers.pdf.ascii_ligatures import (
    family,
    ligature_character,
    ligature_evidence,
    told_families,
)


def test_a_style_suffix_is_not_the_family():
    assert family("LinLibertineTB") == family("LinLibertineTI") == "LinLibertineT"
    assert family("Arial,Bold") == "Arial"
    assert family("Times-Roman") == "Times-Roman"


def test_marks_between_letters_tell_a_font_where_fi_is_absent():
    text = "the !rst de!ned signi!cant speci!c di\"erent finds"  # "!rst": no letter before
    fonts = "A" * 44 + "B" * (len(text) - 44)  # "finds" is in another font
    evidence: Counter = Counter()
    ligature_evidence(text, lambda at: fonts[at], evidence)
    assert evidence[("A", "!")] == 3 and evidence[("A", "fi")] == 0
    assert told_families(evidence) == {"A"}
    assert ligature_character("AB", '"', {"A"}) == "\ufb00"  # the bold of a told family
    assert ligature_character("C", '"', {"A"}) == '"'


def test_misread_letters_in_ocr_text_tell_nothing():
    """An OCR'd page has "!" for misread letters, and "fi" as often as any text."""
    text = "conqth!x gem!rlttioll probh!nl the unification of fine files"
    evidence: Counter = Counter()
    ligature_evidence(text, lambda at: "F", evidence)
    assert evidence[("F", "!")] == 3 and evidence[("F", "fi")] == 3
    assert told_families(evidence) == set()


@pytest.mark.needs_data("pdf-pairs", "pdfs/acl")
def test_acm_libertine_ligatures_are_read_and_ocr_quotes_kept():
    """juansta_paper7 (ACM, 2019) prints every fi, ff, ffi and fl at '!', '"', '#', '$';
    C92-2068 (OCR) has '!' for misread letters and real quotes."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        acm = read_pdf(need(data_path("pdf-pairs", "juansta_paper7.pdf")))
        ocr = read_pdf(need(data_path("pdfs", "acl", "C92-2068.pdf")))
    text = " ".join(b.text for b in acm.blocks)
    assert "significant" in text and "different" in text and "difficult" in text and "briefly" in text
    assert not any(c in text for c in '!"#$')
    titles = [s.title for s in acm.sections]
    assert titles[0] == "INTRODUCTION", "CCS concepts and keywords are no sections"
    assert "MPI Features Classification" in titles
    assert any('"The argutnent' in b.text for b in ocr.blocks)
