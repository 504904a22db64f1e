"""Pass 3, furniture: running headers and footers, page numbers and review line numbers.

Consumes sized pages; marks those lines ``role = "furniture"`` so later passes skip them.
"""

from __future__ import annotations

import re
from collections import Counter

from .model import Line, Page


_PAGE_NUMBER_RE = re.compile(
    r"^[\W_]*(?:page\s*)?(?:\d{1,4}|[ivxlc]{1,6})(?:\s*(?:/|of)\s*\d{1,4})?[\W_]*$", re.IGNORECASE
)
_LINE_NUMBER_RE = re.compile(r"^\d{1,4}$")


def mark_furniture(pages: list[Page]) -> None:
    """Mark running headers/footers, page numbers and review line numbers as furniture."""
    repeated = _repeated_margin_texts(pages)
    for page in pages:
        for line in page.lines:
            if not _in_margin(line, page):
                continue
            key = _margin_key(line.text)
            if (key in repeated or _PAGE_NUMBER_RE.match(line.text)) and not _has_row_mate(
                line, page.lines
            ):
                line.role = "furniture"
        _mark_line_numbers(page)


def _has_row_mate(line: Line, lines: list[Line]) -> bool:
    """Whether text sits close beside a line on its row (a heading's number, not a folio)."""
    reach = 3 * max(line.size, 1.0)
    return any(
        other is not line
        and abs(other.base - line.base) <= 0.3 * max(line.size, 1.0)
        and max(other.x0 - line.x1, line.x0 - other.x1) < reach
        for other in lines
    )


def _in_margin(line: Line, page: Page) -> bool:
    return line.y1 < 0.1 * page.height or line.y0 > 0.9 * page.height


def _margin_key(text: str) -> str:
    return re.sub(r"\d+", "#", text.lower()).strip()


def _repeated_margin_texts(pages: list[Page]) -> set[str]:
    """Texts (digits ignored) found in the top or bottom margin of at least two pages."""
    seen: Counter = Counter()
    for page in pages:
        seen.update(
            {_margin_key(l.text) for l in page.lines if _in_margin(l, page) and len(l.text) > 3}
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
    text = [l for l in page.lines if len(l.text) >= 20]
    for line in numbers:
        if round(line.x1 / 6) in stacked and not any(
            t.x0 <= line.x0 and line.x1 <= t.x1 for t in text
        ):
            line.role = "furniture"
