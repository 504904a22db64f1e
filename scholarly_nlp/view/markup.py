"""Inline markup of a stretch of a Doc's text: escaped text with elements around char ranges.

A paragraph's HTML is its text, escaped, with elements opened and closed at character
offsets (a citation marker, a figure mention, a contribution sentence). Elements may nest
(a marker inside a sentence) but never cross: one that would cross an element already
placed is left out, so the HTML is always well formed.
"""

from __future__ import annotations

import html
from dataclasses import dataclass


@dataclass(frozen=True)
class Inline:
    """An element around the doc characters ``start:end``: ``open`` and ``close`` are HTML
    the caller built (from escaped values); ``after`` is HTML placed right after ``close``."""

    start: int
    end: int
    open: str
    close: str
    after: str = ""


def mark_up(text: str, offset: int, inlines: list[Inline]) -> str:
    """``text`` (the doc's characters from ``offset``), escaped, with the ``inlines`` inside
    it placed; an inline outside the text, empty, or crossing one placed before (longer
    ones first) is left out."""
    end_of_text = offset + len(text)
    placed: list[Inline] = []
    for inline in sorted(inlines, key=lambda i: (i.start, -(i.end - i.start))):
        if not offset <= inline.start < inline.end <= end_of_text:
            continue
        if any(_crosses(inline, other) for other in placed):
            continue
        placed.append(inline)
    events: list[tuple[int, int, int, str]] = []  # (position, order, tie-break, html)
    for inline in placed:
        length = inline.end - inline.start
        events.append((inline.start, 1, -length, inline.open))
        events.append((inline.end, 0, length, inline.close + inline.after))
    events.sort()
    out: list[str] = []
    cursor = offset
    for position, _, _, piece in events:
        out.append(html.escape(text[cursor - offset:position - offset]))
        out.append(piece)
        cursor = position
    out.append(html.escape(text[cursor - offset:]))
    return "".join(out)


def _crosses(a: Inline, b: Inline) -> bool:
    """Whether two char ranges overlap without one holding the other."""
    overlap = a.start < b.end and b.start < a.end
    nested = (a.start <= b.start and b.end <= a.end) or (b.start <= a.start and a.end <= b.end)
    return overlap and not nested
