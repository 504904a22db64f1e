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
        host = next((l for l in block.lines if same_row(l, first) and 0 <= first.x0 - l.x1 <= 3 * size
                     and not _across_gutter(page, l, first)), None)
        if host is not None:
            at = block.lines.index(host) + 1
            block.lines[at:at] = other.lines
            page.blocks.remove(other)


def _across_gutter(page: Page, line: Line, other: Line) -> bool:
    """Whether ``other`` is text of another column than ``line``'s, starting at that column's
    left edge (a heading of the right column level with a caption's line in the left one);
    a legend's piece cut off past the column's edge stays the caption's."""
    return other.col != line.col and other.x0 >= page.edge(other)[0] - 1


def _take_rest_below(page: Page, block: VBlock, stats: Stats) -> None:
    """A caption that stops mid-sentence takes the block right under it (the rest of the
    caption, cut off by a change of line spacing, font or column). A caption in small type
    takes text in its own size; one in the body's size only when its last line runs to the
    caption's right edge (the sentence wraps on) and the rest is a few lines at its left edge,
    since under a caption of the body's size the body may go on."""
    last = block.lines[-1]
    if last.text.rstrip().endswith(TERMINAL_PUNCT):
        return
    small = block.size <= 0.92 * stats.body_size
    if not small and not _wraps(page, block):
        return
    below = _block_under(page, block)
    if below is None:
        return
    first = below.lines[0]
    size = max(block.size, 1.0)
    if small:
        fits = abs(below.size - block.size) <= 0.05 * size and (
            len(below.lines) <= 4 or _prose(below, block.bbox[2] - block.bbox[0]))
    else:
        fits = below.size <= 1.05 * size and abs(first.x0 - block.bbox[0]) <= size and len(below.lines) <= 4
    if fits and first.y0 - last.y1 <= 0.8 * size and caption_match(first.text) is None:
        block.lines.extend(below.lines)
        page.blocks.remove(below)


def _wraps(page: Page, block: VBlock) -> bool:
    """Whether a caption's last line runs to its right edge: that of its other lines, or of
    its column when it has one line."""
    last = block.lines[-1]
    others = [line for line in block.lines if not same_row(line, last)]
    right = max(line.x1 for line in others) if others else page.edge(last)[1]
    return last.x1 >= right - max(last.size, 1.0)


def _block_under(page: Page, block: VBlock) -> Optional[VBlock]:
    """The block whose first line starts closest under a caption's last line (by baseline: a
    bold line's box can reach into the next), within the caption's width, or starting up to
    two sizes left of it (ApJ indents a caption's first row). It is found by place, not as the
    next block in reading order: beside a table, the table's rows come first there."""
    last = block.lines[-1]
    left, right = block.bbox[0], block.bbox[2]
    under = [other for other in page.blocks
             if other is not block and other.lines[0].base > last.base + 0.5 * last.size
             and left - max(2.0, 2 * last.size) <= other.lines[0].x0 <= right
             and sum(c.isalpha() for c in other.text) >= 2]  # not a formula's stray "∗"
    return min(under, key=lambda other: other.lines[0].y0, default=None)


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
        if same_row(lines[0], lines[i]) or same_row(lines[i - 1], lines[i]):
            continue  # the caption's text set apart from its label ("Fig. 1." | "(a) A single ..."),
            # or a later piece of a row already judged whole
        row = [line for line in lines[i:] if same_row(lines[i], line)]
        if len(row) > 1 and _table_row(row, *_caption_edges(lines, row)):
            rest = VBlock(lines[i:], block.page)
            block.lines = lines[:i]
            page.blocks.insert(page.blocks.index(block) + 1, rest)
            return


def _table_row(row: list[Line], left: float, right: float) -> bool:
    """Whether the pieces of one row are a table's cells rather than one line of the caption
    cut into pieces. A caption's line is cut where a glyph has no text (a footnote mark, an
    accent set above its letter, a formula's sub- and superscripts): its pieces touch, overlap
    or stand a word space apart. Justified in a narrow column, its spaces widen to about one and
    a half ems, but then the row runs from the left to the right edge of the caption's other
    rows (``left``, ``right``); a piece beyond them is text of another column."""
    pieces = sorted(row, key=lambda line: line.x0)
    size = max(max(line.size for line in pieces), 1.0)
    end = max(line.x1 for line in pieces)
    if end > right + size:
        return True
    # each gap from the furthest right edge so far: a subscript's piece inside a formula's span
    gaps, reach = [], pieces[0].x1
    for piece in pieces[1:]:
        gaps.append(piece.x0 - reach)
        reach = max(reach, piece.x1)
    if max(gaps) < size:
        return False
    spans_caption = pieces[0].x0 <= left + size and end >= right - 2 * size
    return not (spans_caption and max(gaps) < 2.5 * size)


def _caption_edges(lines: list[Line], row: list[Line]) -> tuple[float, float]:
    """The left and right edges of a caption's own lines: the rows of one piece besides
    ``row`` (a dense table's rows under it would widen them), else all the other lines."""
    others = [line for line in lines if line not in row]
    single = [line for line in others if sum(1 for other in lines if same_row(line, other)) == 1]
    edges = single or others
    return min(line.x0 for line in edges), max(line.x1 for line in edges)
