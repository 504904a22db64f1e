"""Pass 6, captions: the blocks that open with "Figure 3:" / "Table 2.".

Consumes ``page.blocks``; produces :class:`Caption` records in reading order, marks their lines
``role = "caption"`` and splits a table header row off a caption block.
"""

from __future__ import annotations

from typing import Optional

from .blocks import caption_match
from .model import Caption, Line, Page, Stats, VBlock, same_row
from .patterns import CONTENTS_ENTRY_RE, TERMINAL_PUNCT


def find_captions(pages: list[Page], stats: Optional[Stats] = None) -> list[Caption]:
    """Caption blocks in reading order, with their kind and printed label."""
    captions = []
    for page in pages:
        for block in list(page.blocks):
            match = caption_match(block.lines[0].text)
            if match is None or block not in page.blocks or CONTENTS_ENTRY_RE.search(block.lines[0].text.strip()):
                continue  # "Table 1. Functions ... (p. 15)": an entry of a list of tables, no caption
            _split_off_table_rows(page, block)
            if not block.lines[0].text[match.end():].strip() and len(block.lines) == 1:
                _take_title_below(page, block, stats)
            elif stats is not None:
                _take_rest(page, block, stats)
            kind = "table" if match.group("word").lower().startswith("tab") else "figure"
            captions.append(Caption(block, kind, match.group("label")))
            for line in block.lines:
                line.role = "caption"
    return captions


def _take_rest(page: Page, block: VBlock, stats: Stats) -> None:
    """The rest of a caption cut off from it: the block under it, the pieces of its rows, and
    again, as long as it grows."""
    size = -1
    while len(block.lines) != size:
        size = len(block.lines)
        _take_rest_below(page, block, stats)
        _take_row_rest(page, block)


def _take_row_rest(page: Page, block: VBlock) -> None:
    """A caption's row cut at glyphless symbols (a legend's coloured marks: "(b) time series
    ( , Cr; , Hb;" | ", PLT; , PT; ...") into a block of its own, in the caption's size,
    joins the caption right after the piece it goes on from."""
    size = max(block.size, 1.0)
    for other in list(page.blocks):
        if other is block or abs(other.size - block.size) > 0.05 * size or caption_match(other.lines[0].text):
            continue
        first = other.lines[0]
        host = next((l for l in block.lines if same_row(l, first) and 0 <= first.x0 - l.x1 <= 3 * size), None)
        if host is not None:
            at = block.lines.index(host) + 1
            block.lines[at:at] = other.lines
            page.blocks.remove(other)


def _take_rest_below(page: Page, block: VBlock, stats: Stats) -> None:
    """A caption in small type that stops mid-sentence takes the block right under it in the
    same type (the rest of the caption, cut off by a change of line spacing or font)."""
    index = page.blocks.index(block)
    if index + 1 >= len(page.blocks) or block.size > 0.92 * stats.body_size:
        return  # a caption in the body's own size: text below it may be the body going on
    below = page.blocks[index + 1]
    last, first = block.lines[-1], below.lines[0]
    gap = first.y0 - last.y1
    if (
        not last.text.rstrip().endswith(TERMINAL_PUNCT)
        and abs(below.size - block.size) <= 0.05 * block.size
        and 0 <= gap <= 0.8 * block.size
        and block.bbox[0] - 2 <= first.x0 <= block.bbox[2]
        and caption_match(first.text) is None
        # a caption's remnant is short, or runs on as prose (not the rows of a table under it)
        and (len(below.lines) <= 4 or _prose(below, block.bbox[2] - block.bbox[0]))
    ):
        block.lines.extend(below.lines)
        page.blocks.remove(below)


def _prose(block: VBlock, width: float) -> bool:
    """Whether a block reads as running lines across ``width``: every row but the last spans
    most of it, and the pieces of a row (cut where a symbol has no glyph) sit close, where a
    table's cells stand apart."""
    rows: list[list[Line]] = []
    for line in block.lines:
        if rows and same_row(rows[-1][-1], line):
            rows[-1].append(line)
        else:
            rows.append([line])
    for i, row in enumerate(rows):
        pieces = sorted(row, key=lambda l: l.x0)
        if any(b.x0 - a.x1 > 2.5 * max(a.size, 1.0) for a, b in zip(pieces, pieces[1:])):
            return False
        if i < len(rows) - 1 and pieces[-1].x1 - pieces[0].x0 < 0.7 * width:
            return False
    return True


def _take_title_below(page: Page, block: VBlock, stats: Optional[Stats] = None) -> None:
    """A label alone on its line ("TABLE 1", centred over its title) takes the block right
    under it, when that block is no caption of its own. The block is looked for by place, not
    by reading order: a label in one column can sit over a title set across both; in a
    double-spaced manuscript (APA's "Table 2" over its italic title) the gap is wider."""
    label = block.lines[-1]
    reach = max(1.2, stats.lead_ratio if stats else 0.0)
    below, best_gap = None, None
    for other in page.blocks:
        first = other.lines[0]
        gap = first.y0 - label.y1
        overlaps = first.x0 < label.x1 + 50 and first.x1 > label.x0 - 50
        if (other is not block and 0 <= gap <= reach * max(label.size, first.size, 1.0) and overlaps
                and first.role != "caption" and (best_gap is None or gap < best_gap)):
            below, best_gap = other, gap
    if below is not None and caption_match(below.lines[0].text) is None:
        block.lines.extend(below.lines)
        page.blocks.remove(below)


def _split_off_table_rows(page: Page, block: VBlock) -> None:
    """Cut a caption block before the first row of side-by-side segments (a table header
    right under a caption above its table); the rest becomes a block of its own. Segments
    on the label's own row are the caption's text."""
    lines = block.lines
    for i in range(1, len(lines)):
        if same_row(lines[0], lines[i]):
            continue  # the caption's text set apart from its label ("Fig. 1." | "(a) A single ...")
        in_row = (i + 1 < len(lines) and same_row(lines[i], lines[i + 1])) or same_row(
            lines[i - 1], lines[i]
        )
        if in_row:
            rest = VBlock(lines[i:], block.page)
            block.lines = lines[:i]
            page.blocks.insert(page.blocks.index(block) + 1, rest)
            return
