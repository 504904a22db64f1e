"""Running heads, feet and page numbers (``readers/pdf/furniture.py``) on pages built line by
line: which margin lines are furniture and which stay text, whatever their row mates."""

from __future__ import annotations

from test_pdf_hostile import line

from scholarly_nlp.readers.pdf.furniture import mark_furniture
from scholarly_nlp.readers.pdf.model import Page

HEIGHT = 792.0


def page(index: int, margin_lines: list) -> Page:
    """A page of body text with ``margin_lines`` (built with ``line``) at its top or foot."""
    body = [line("the reader recovers the paragraphs of this page of plain body text", 72, 100 + 14 * i, 10)
            for i in range(40)]
    return Page(index, 612.0, HEIGHT, margin_lines + body)


def furniture(pages: list[Page]) -> list[list[str]]:
    mark_furniture(pages)
    return [[l.text for l in p.lines if l.role == "furniture"] for p in pages]


def test_a_running_head_and_its_folio_side_by_side_are_both_furniture():
    """Even pages "1626  The American Naturalist", odd pages "Split Sex Ratios  1627": a folio
    of four digits repeats too with digits ignored, and still does not keep the head."""
    pages = []
    for i in range(6):
        number = line(str(1626 + i), 72 if i % 2 == 0 else 500, 40, 8)
        head = line("The American Naturalist" if i % 2 == 0 else "Split Sex Ratios in Social Hymenoptera",
                    95 if i % 2 == 0 else 300, 40, 8)
        pages.append(page(i, [number, head]))
    for i, marked in enumerate(furniture(pages)):
        assert sorted(marked) == sorted([str(1626 + i), pages[i].lines[1].text])


def test_margin_lines_that_keep_each_other_stay_text():
    """A heading's number beside its words, a table's header row repeated at the top of two
    pages, and a row of numbers low on a page are no running heads or folios."""
    pages = [
        page(0, [line("3", 72, 40, 12), line("Method", 86, 40, 12)]),  # a section head in the top tenth
        page(1, [line("Precision", 300, 40, 9), line("Recall", 350, 40, 9)]),  # the same table header on two pages
        page(2, [line("Precision", 300, 40, 9), line("Recall", 350, 40, 9),
                 line("1", 300, 760, 9), line("2", 320, 760, 9), line("3", 340, 760, 9)]),  # numbers in a row
        page(3, [line("7", 306, 770, 9)]),  # a folio alone
    ]
    assert furniture(pages) == [[], [], [], ["7"]]
