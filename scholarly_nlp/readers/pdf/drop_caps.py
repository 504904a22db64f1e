"""Drop caps: an enlarged first letter, which the text layer gives as a line of its own.

Nature's journals open the body with a letter three lines tall. pdfium returns it as a line
("U") beside the paragraph's first lines ("nravelling the demographic ..."); left alone the
letter is dropped with the other oversized lines and the paper's first word is broken. A
one-letter line at least twice the size of the line beside it, whose top it shares and whose
first word is lower case, is joined to that word when the paper's own words say it is one
(:func:`scholarly_nlp.text.drop_caps.joins_drop_cap`).
"""

from __future__ import annotations

import re
from typing import Optional

from ...text.drop_caps import joins_drop_cap, word_counts
from .model import Line, Page

# The lower-case start of the word a drop cap belongs to.
_FRAGMENT = re.compile(r"[a-z][a-z-]*")


def join_drop_caps(pages: list[Page]) -> int:
    """Join each drop cap to the word beside it, in place (needs line sizes); returns how many."""
    vocabulary = None  # the paper's words, counted only when a drop cap is in question
    joined = 0
    for page in pages:
        for cap in [line for line in page.lines if len(line.words) == 1 and re.fullmatch(r"[A-Z]", line.text)]:
            beside = _first_line_beside(cap, page.lines)
            fragment = _FRAGMENT.match(beside.words[0].text) if beside is not None else None
            if fragment is None:
                continue
            if vocabulary is None:
                vocabulary = word_counts(" ".join(line.text for each in pages for line in each.lines))
            if not joins_drop_cap(cap.text, fragment.group(0), vocabulary):
                continue
            page.lines[page.lines.index(beside)] = beside.prefixed(cap.text)
            page.lines.remove(cap)
            joined += 1
    return joined


def _first_line_beside(cap: Line, lines: list[Line]) -> Optional[Line]:
    """The line that starts right of ``cap`` at its top, in at most half its size, and opens a
    paragraph (no line of its indent just above it)."""
    for line in lines:
        if line is cap or not line.size or cap.size < 2 * line.size:
            continue
        if -1.0 <= line.x0 - cap.x1 <= 2 * line.size and abs(line.y0 - cap.y0) <= 0.6 * line.size:
            return None if _continues_a_line_above(line, lines) else line
    return None


def _continues_a_line_above(line: Line, lines: list[Line]) -> bool:
    return any(
        other is not line and abs(other.x0 - line.x0) <= 2.0 and 0.3 * line.size < line.y0 - other.y0 <= 1.6 * line.size
        for other in lines
    )
