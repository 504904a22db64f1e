"""What a page shares with the paper's other pages: its column gutter (``layout._usual_split``)
and its folio.

Journals with mirrored margins set odd and even pages with gutters tens of points apart, and
their folios at different heights; a page whose own text hides its gutter must take its own
side's, scattered gutters give none at all, and a folio is furniture at either height.
"""

from __future__ import annotations

from scholarly_nlp.readers.pdf import layout


def usual_splits(splits):
    return [layout._usual_split(splits, index) for index in range(len(splits))]


def test_most_pages_sharing_one_gutter_give_it_to_every_page():
    assert usual_splits([297, 297, None, 297, 298, 297]) == [297] * 6


def test_mirrored_margins_give_each_page_its_own_sides_gutter():
    # ten pages: the even ones alone are half of them, which must not give their gutter to all
    splits = [290, 330, None, 330, 290, 330, 290, 330, 290, 330]
    assert usual_splits(splits) == [290, 330] * 5
    # Zoologia: three of six pages find a gutter, one odd and two even
    assert usual_splits([None, 291.5, 319.5, None, 320.5, None]) == [320.5, 291.5] * 3


def test_scattered_gutters_or_too_few_give_none():
    assert usual_splits([100, None, 300, None, 150, None, 250, None]) == [None] * 8
    assert usual_splits([297, None, None, None]) == [None] * 4
    assert usual_splits([297]) == [None]


def test_a_folio_alone_just_below_the_top_tenth_stays_furniture(tmp_path):
    """Odd pages set their folio beside the running head at the very top, even pages alone
    a little lower (10.7% down the page): the lone folio is still furniture, as page numbers
    repeated on every page are."""
    from pdf_samples import pdf_bytes, text_page
    from scholarly_nlp.readers.pdf import reader
    from scholarly_nlp.readers.pdf.document import PdfHandle, open_document

    body = [(72, 650 - 14 * i, 10, "The reader recovers paragraphs from this page of plain body text")
            for i in range(30)]
    pages = []
    for number in range(1, 7):
        if number % 2:
            margin = [(72, 770, 9, "Journal of Things"), (500, 770, 9, str(1620 + number))]
        else:
            margin = [(300, 707, 9, str(1620 + number))]
        pages.append(text_page(612, 792, margin + body))
    path = tmp_path / "folios.pdf"
    path.write_bytes(pdf_bytes(pages))
    pdf = PdfHandle(open_document(path), path)
    read = [reader._read_and_release(pdf, index) for index in range(len(pdf.document))]
    reader.assign_sizes(read)
    reader.mark_furniture(read)
    roles = {line.text: line.role for page in read for line in page.lines if not line.text.startswith("The reader")}
    assert roles == {**{str(1620 + n): "furniture" for n in range(1, 7)}, "Journal of Things": "furniture"}
