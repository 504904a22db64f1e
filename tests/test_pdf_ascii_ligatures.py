"""f-ligatures a font keeps at printable ASCII codes (ACM's Libertine fonts: "signi!cant",
"di"erent"): the fonts' ``/Differences`` name them, and a character is put back only where its
own font could not map it, so real quotes and dollars of another font of the same name stay
(:mod:`scholarly_nlp.readers.pdf.ascii_ligatures`)."""

from __future__ import annotations

import warnings

import pytest

from conftest import data_path, need
from scholarly_nlp.readers import read_pdf
from scholarly_nlp.readers.pdf.ascii_ligatures import AMID_LETTERS_RE, put_back_ligatures
from scholarly_nlp.readers.pdf.document import PdfHandle, open_document
from scholarly_nlp.readers.pdf.extraction import read_page
from scholarly_nlp.readers.pdf.glyph_names import ascii_code_ligatures, document_fonts

TABLES = {"LinLibertineT": {33: "\ufb01", 34: "\ufb00", 36: "\ufb02"}}


def test_a_code_is_put_back_only_where_its_own_font_could_not_map_it():
    text = 'signi!cant di"erent "key": $5'
    unmapped = {5, 13}  # the ligatures' own font; the quotes and the dollar are another font's
    put = put_back_ligatures(text, TABLES, lambda at: "LinLibertineT", lambda at: at in unmapped)
    assert put == 'signi\ufb01cant di\ufb00erent "key": $5'
    other_font = put_back_ligatures(text, TABLES, lambda at: "Times", lambda at: True)
    assert other_font == text


def test_punctuation_between_letters_asks_for_the_fonts_names():
    assert AMID_LETTERS_RE.search("signi!cant")
    assert not AMID_LETTERS_RE.search('a "quote" and 100% and $5')


@pytest.mark.needs_data("pdf-pairs", "pdfs/acl")
def test_acm_libertine_ligatures_are_read_and_real_quotes_and_dollars_kept():
    """juansta_paper7 (ACM, 2019) prints every fi, ff, ffi, fl and ffl at '!' to '%' in one
    LinLibertineT, and real quotes, dollars and percent signs in others of that name."""
    path = need(data_path("pdf-pairs", "juansta_paper7.pdf"))
    tables = ascii_code_ligatures(document_fonts(path))
    assert tables["LinLibertineT"] == {33: "\ufb01", 34: "\ufb00", 35: "\ufb03", 36: "\ufb02", 37: "\ufb04"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        acm = read_pdf(path)
        ocr = read_pdf(need(data_path("pdfs", "acl", "C92-2068.pdf")))
    text = " ".join(b.text for b in acm.blocks)
    assert "significant" in text and "different" in text and "difficult" in text and "briefly" in text
    assert " first " in text and not any(c in text for c in '!"#$')
    assert "90%" in text, "a percent sign of another LinLibertineT stays"
    titles = [s.title for s in acm.sections]
    assert titles[0] == "INTRODUCTION", "CCS concepts and keywords are no sections"
    assert "MPI Features Classification" in titles
    handle = PdfHandle(open_document(path), path)
    try:
        read_page(handle, 0)  # the first page tells the document's fonts
        listing = " ".join(line.text for line in read_page(handle, 12).lines)
    finally:
        handle.close()
    assert '{ "MPI_COMM_SIZE": 3,' in listing and "$ ./mpiusage.py" in listing
    assert any('"The argutnent' in b.text for b in ocr.blocks), "an OCR'd paper keeps its quotes"
