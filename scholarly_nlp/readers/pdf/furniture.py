"""Pass 3, furniture: running headers and footers, page numbers and review line numbers.

Consumes sized pages; marks those lines ``role = "furniture"`` so later passes skip them.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Iterable
from itertools import accumulate

from .model import Line, Page
from .nearby import SortedLines
from .patterns import CAPTION_RE
from .typography import body_size


_PAGE_NUMBER_RE = re.compile(
    r"^[\W_]*(?:page\s*)?(?:\d{1,4}|[ivxlc]{1,6})(?:\s*(?:/|of)\s*\d{1,4})?[\W_]*$", re.IGNORECASE
)
_LINE_NUMBER_RE = re.compile(r"^\d{1,4}$")
#: Text at an angle is furniture on a page where it carries at most this share of the
#: characters (a download stamp, arXiv's id up the margin); on a landscape float page it is
#: the page's content.
_ANGLED_SHARE = 0.25
#: How far down a page a running head, at most a little bigger than the body, may sit.
_WIDE_TOP_MARGIN = 0.12
#: How much bigger than the body's a running head or folio there may be.
_RUNNING_HEAD_SIZE = 1.15


def mark_furniture(pages: list[Page]) -> None:
    """Mark running headers/footers, page numbers and review line numbers as furniture."""
    body = body_size(pages)  # no line is furniture yet
    repeated = _repeated_margin_texts(pages, body)
    for page in pages:
        _mark_angled_text(page)
        kinds = [_margin_furniture_kind(line, page, body, repeated) for line in page.lines]
        if "folio?" in kinds:
            heads = SortedLines([l for l, kind in zip(page.lines, kinds) if kind == "head"], key=lambda l: l.base)
            kinds = [("number" if _has_row_mate(line, heads, reach=page.width) else "") if kind == "folio?" else kind
                     for line, kind in zip(page.lines, kinds)]
        if any(kinds):
            mates = _row_mates_by_kind(page.lines, kinds)
            for line, kind in zip(page.lines, kinds):
                if kind and not _has_row_mate(line, mates[kind]):
                    line.role = "furniture"
        _mark_line_numbers(page)


def _margin_furniture_kind(line: Line, page: Page, body: float, repeated: set[str]) -> str:
    """``"head"`` for a running head or foot (a margin text repeated across pages), ``"number"``
    for a page number in the margin, ``"folio?"`` for a number just below the top tenth (a
    folio when a running head shares its row), ``""`` for any other line, before its row is
    looked at."""
    margin = _in_margin(line, page)
    if not (margin or _in_wide_top_margin(line, page, body)):
        return ""
    key = _margin_key(line.text)
    if _PAGE_NUMBER_RE.match(line.text):
        if margin:
            return "number"  # before the repeated texts: with digits ignored, "1626" on every page repeats
        if key not in repeated:
            return "folio?"  # below the top tenth, a folio only beside a running head
    return "head" if key in repeated else ""


def _row_mates_by_kind(lines: list[Line], kinds: list[str]) -> dict[str, SortedLines]:
    """Per kind of candidate, the lines whose presence beside it on its row keeps it (a
    heading's number beside its words, the cells of a table's header row). A running head
    and its folio side by side ("626  The American Naturalist") do not keep each other: a
    page number is not kept by a running head, nor a running head by a page number that
    sits beside one. Page-number-like lines with no running head on their row (a table's
    row of numbers low on the page) keep each other, and running heads keep each other."""
    heads = [line for line, kind in zip(lines, kinds) if kind == "head"]
    if not heads:
        rows = SortedLines(lines, key=lambda l: l.base)
        return {"head": rows, "number": rows}
    head_rows = SortedLines(heads, key=lambda l: l.base)
    return {
        "number": SortedLines([line for line, kind in zip(lines, kinds) if kind != "head"], key=lambda l: l.base),
        "head": SortedLines([line for line, kind in zip(lines, kinds)
                             if kind != "number" or not _has_row_mate(line, head_rows)], key=lambda l: l.base),
    }


def _mark_angled_text(page: Page) -> None:
    """Mark lines set at an angle as furniture where upright text makes the page."""
    angled = [line for line in page.lines if not line.upright]
    if angled and sum(len(l.text) for l in angled) <= _ANGLED_SHARE * sum(len(l.text) for l in page.lines):
        for line in angled:
            line.role = "furniture"


def _has_row_mate(line: Line, rows: SortedLines, reach: float | None = None) -> bool:
    """Whether text sits close beside a line on its row (a heading's number, not a folio):
    within ``reach`` along the row, three times the line's size unless given."""
    reach = 3 * max(line.size, 1.0) if reach is None else reach
    tolerance = 0.3 * max(line.size, 1.0)
    window = 1.001 * tolerance + 1e-6  # a hair wider: the exact test is the one below
    return any(
        other is not line
        and abs(other.base - line.base) <= tolerance
        and max(other.x0 - line.x1, line.x0 - other.x1) < reach
        for other in map(rows.lines.__getitem__, rows.around(line.base, window, window))
    )


def _in_margin(line: Line, page: Page) -> bool:
    """Whether ``line`` lies in the page's top or bottom tenth."""
    return line.y1 < 0.1 * page.height or line.y0 > 0.9 * page.height


def _in_wide_top_margin(line: Line, page: Page, body: float) -> bool:
    """Whether ``line`` is text at most a little bigger than the body's just below the page's
    top tenth, where a page with wide margins (Springer's book chapters, Zoologia's 9-pt head
    over an 8-pt body) sets its running head; a title there is bigger, and only a text
    repeated on many pages (or a folio beside it) counts there."""
    return line.y1 < _WIDE_TOP_MARGIN * page.height and line.size <= _RUNNING_HEAD_SIZE * body


def _margin_key(text: str) -> str:
    return re.sub(r"\d+", "#", text.lower()).strip()


def _repeated_margin_texts(pages: list[Page], body: float) -> set[str]:
    """Texts (digits ignored) found in the top or bottom margin of at least two pages.

    Caption labels are never furniture: with digits ignored, "Table 1" and "Table 6" over
    tables at the top of two pages would read as one running head.
    """
    seen: Counter = Counter()
    for page in pages:
        seen.update(
            {_margin_key(l.text) for l in page.lines
             if (_in_margin(l, page) or _in_wide_top_margin(l, page, body)) and len(l.text) > 3 and not CAPTION_RE.match(l.text)}
        )
    return {key for key, n in seen.items() if n >= 2 and n >= 0.3 * len(pages)}


def _mark_line_numbers(page: Page) -> None:
    """Review copies number their lines: many bare numbers stacked at one x position, in a
    margin or the gutter (where no running text passes; a table's number column has text
    above or below it)."""
    numbers = [l for l in page.lines if not l.role and _LINE_NUMBER_RE.match(l.text)]
    if len(numbers) < 10:
        return
    by_x: Counter = Counter(round(l.x1 / 6) for l in numbers)
    stacked = {x for x, n in by_x.items() if n >= 10}
    covered = _Spans((l.x0, l.x1) for l in page.lines if len(l.text) >= 20)
    for line in numbers:
        if round(line.x1 / 6) in stacked and not covered.covers(line.x0, line.x1):
            line.role = "furniture"


class _Spans:
    """Horizontal spans of text lines, asked whether any one covers a given span."""

    def __init__(self, spans: Iterable[tuple[float, float]]) -> None:
        ordered = sorted(spans)
        self.starts = [x0 for x0, _ in ordered]
        self.reach = list(accumulate((x1 for _, x1 in ordered), max))  # furthest end so far

    def covers(self, x0: float, x1: float) -> bool:
        """Whether some span starts at or before ``x0`` and ends at or after ``x1``."""
        count = bisect.bisect_right(self.starts, x0)
        return count > 0 and self.reach[count - 1] >= x1
