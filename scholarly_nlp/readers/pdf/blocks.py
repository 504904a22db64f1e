"""Pass 5, visual blocks: a page's ordered lines grouped by spacing, size and weight.

Consumes laid-out pages and the document :class:`Stats`; produces ``page.blocks`` (a
:class:`VBlock` per block; a caption opener always starts one).
"""

from __future__ import annotations

import re
from typing import Optional

from .model import Line, Page, Stats, VBlock, same_row
from .patterns import CAPTION_RE, TERMINAL_PUNCT


_STRONG_DELIMS = (":", ".", "|", "\u2014", "\u2013")


def visual_blocks(page: Page, stats: Stats) -> list[VBlock]:
    """Group a page's ordered lines into visual blocks."""
    blocks: list[VBlock] = []
    for line in page.lines:
        if line.role == "furniture":
            continue
        if blocks and not _starts_block(blocks[-1], line, stats, page):
            blocks[-1].lines.append(line)
        else:
            blocks.append(VBlock([line], page.index))
    return blocks


def _starts_block(block: VBlock, line: Line, stats: Stats, page: Page) -> bool:
    """Whether ``line`` starts a new visual block after ``block``."""
    prev = block.lines[-1]
    if (prev.band, prev.col) != (line.band, line.col):
        return True
    size = max(prev.size, line.size, 1.0)
    if same_row(prev, line):
        # side text beside a title (SAGE's "©The Author(s) 2022" box in 7 pt by an 18 pt
        # title) shares its row, not its block; in running text a formula's big and small
        # pieces do share one
        return (
            abs(prev.size - line.size) > 0.3 * size
            and size >= 1.4 * stats.body_size
            and max(line.x0 - prev.x1, prev.x0 - line.x1) > 2.5 * size
        )
    lead = line.base - prev.base
    if lead < 0 or (lead > 1.3 * stats.lead_ratio * size and not _own_leading(block, line, lead, page)):
        return True
    if abs(prev.size - line.size) > 0.07 * size:
        return True
    # a change of weight ends a heading, but a caption's bold title flows on into its text
    # (a bold line after a caption's text is a heading under it)
    weight_change = prev.bold != line.bold and len(prev.text) > 1 and len(line.text) > 1
    if weight_change and (line.bold or caption_match(block.lines[0].text) is None):
        return True
    if line.x0 > prev.x1 or line.x1 < prev.x0:
        return True
    return _caption_start(prev, line, page) is not None


_LIST_ITEM_RE = re.compile(r"^\s*(?:\d{1,2}[.)]|\(?[a-z]\)|[\u2022\u2023\u25e6\u2013-])\s")


def _own_leading(block: VBlock, line: Line, lead: float, page: Page) -> bool:
    """Whether ``line`` goes on a paragraph set with more leading than the body's (Nature
    Communications' abstract): full lines of running text in one font and size from one left
    edge, at most 1.8 line heights apart, each as far below the last as the lines before."""
    prev = block.lines[-1]
    left, right = page.edge(prev)
    size = max(prev.size, 1.0)
    if (
        lead > 1.8 * size
        or prev.font != line.font
        or abs(prev.size - line.size) > 0.05 * size
        or abs(prev.x0 - line.x0) > 1.0
        or not all(len(l.text) >= 40 and l.x1 - l.x0 >= 0.6 * (right - left) for l in (prev, line))
        or _LIST_ITEM_RE.match(line.text)  # the next item of a list starts a block of its own
    ):
        return False
    if len(block.lines) < 2:
        return True
    before = block.lines[-2]
    return abs((prev.base - before.base) - lead) <= 0.1 * size


def caption_match(text: str) -> Optional[re.Match]:
    """The caption-opener match at the start of ``text`` ("Figure 3:", "Table 2."), else None."""
    return CAPTION_RE.match(text)


def _caption_start(prev: Optional[Line], line: Line, page: Page) -> Optional[re.Match]:
    """The caption match of a line that opens a caption ("Figure 3:", "Table 2."), else None.

    A line that merely wraps inside a paragraph ("... shown in / Table 2. The ...") is not one:
    a strong delimiter is required unless something else already starts a block there, and the
    line before must end a sentence or stop short of the column's right edge.
    """
    match = caption_match(line.text)
    if match is None or prev is None:
        return match
    if match.group("delim").strip() not in _STRONG_DELIMS:
        return None
    right = page.edge(prev)[1]
    ends_sentence = prev.text.rstrip().endswith(TERMINAL_PUNCT + (")",))
    short = prev.x1 < right - 2 * max(prev.size, 1.0)
    return match if (ends_sentence or short) else None
