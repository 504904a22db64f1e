"""Pass 7, floats: each caption's figure or table region.

Consumes captions, page blocks and the page's graphics; sets ``Caption.bbox`` to the graphics
and non-body text between the caption and the nearest body text, and marks that text
``role = "float"`` so it stays out of the paragraphs.
"""

from __future__ import annotations

from typing import Optional

from .document import PdfHandle
from .graphics import graphic_boxes
from .model import Caption, Line, Page, Stats
from .patterns import NUMBERED_HEAD_RE
from .typography import is_body_like


def locate_floats(
    pdf: PdfHandle, pages: list[Page], captions: list[Caption], stats: Stats
) -> None:
    """Find each caption's figure region and mark the text inside it as float content.

    Figures claim first (their content is almost always above the caption), then tables take
    the side with more unclaimed content, so a table caption between a table and a figure does
    not steal the figure.
    """
    by_page: dict[int, list[Caption]] = {}
    for caption in captions:
        by_page.setdefault(caption.block.page, []).append(caption)
    cache: dict[int, list[tuple[float, float, float, float]]] = {}
    for page_index, page_captions in by_page.items():
        page = pages[page_index]
        graphics = _content_graphics(pdf, pages, page_index, cache)
        barriers = _barrier_lines(page, stats)
        boxes = {id(c): _text_box(c.block.lines) for c in page_captions}  # once: a box walks its lines
        sides = {
            id(c): _float_sides(page, c, page_captions, boxes, graphics, barriers)
            for c in page_captions
        }
        claimed: set[int] = set()
        ordered = sorted(page_captions, key=lambda c: c.kind != "figure")
        for caption in ordered:
            options = {
                side: (
                    [l for l in lines if id(l) not in claimed],
                    [g for g in boxes if id(g) not in claimed],
                )
                for side, (lines, boxes) in sides[id(caption)].items()
            }
            side = _choose_side(caption.kind, options)
            if side is None:
                continue
            lines, boxes = options[side]
            claimed.update(id(x) for x in lines + boxes)
            caption.bbox = _region_bbox(page, lines, boxes)
            for line in lines:
                line.role = "float"


def _barrier_lines(page: Page, stats: Stats) -> set[int]:
    """ids of lines that belong to body text blocks or headings: a float region stops there."""
    out: set[int] = set()
    for block in page.blocks:
        if block.lines[0].role == "caption":
            continue
        body_like = [l for l in block.lines if is_body_like(l, page, stats)]
        heading_like = (
            len(block.lines) <= 2 and block.lines[0].bold and NUMBERED_HEAD_RE.match(block.text)
        )
        if len(body_like) >= 2 or (body_like and len(block.lines) <= 2) or heading_like:
            out.update(id(l) for l in block.lines)
    return out


def _text_box(lines: list[Line]) -> tuple[float, float, float, float]:
    """(x0, y0, x1, y1) around the lines' text. A line's height is taken from its baseline and
    size: one glyph with a box far taller than the text (a stretched delimiter, a broken font's
    subscript) would otherwise stretch a caption over the table under it."""
    return (min(l.x0 for l in lines), min(max(l.y0, l.base - 1.5 * max(l.size, 1.0)) for l in lines),
            max(l.x1 for l in lines), max(min(l.y1, l.base + 0.5 * max(l.size, 1.0)) for l in lines))


def _caption_span(page: Page, caption: Caption) -> tuple[float, float]:
    """The horizontal span a caption's float may occupy: its column, or the page."""
    col = caption.block.lines[0].col
    if page.split is None or col == "F":
        return 0.0, page.width
    return (0.0, page.split) if col == "L" else (page.split, page.width)


def _overlaps_span(x0: float, x1: float, span: tuple[float, float]) -> bool:
    inside = min(x1, span[1]) - max(x0, span[0])
    return inside > 0.5 * max(x1 - x0, 0.1)


def _float_sides(
    page: Page,
    caption: Caption,
    page_captions: list[Caption],
    boxes: dict[int, tuple[float, float, float, float]],
    graphics: list[tuple[float, float, float, float]],
    barriers: set[int],
) -> dict[str, tuple[list[Line], list[tuple]]]:
    """The non-body lines and graphics above and below a caption, up to body text or another
    caption (``boxes``: each caption's bbox by id)."""
    span = _caption_span(page, caption)
    col = caption.block.lines[0].col
    _, cy0, _, cy1 = boxes[id(caption)]
    lines = [
        l
        for l in page.lines
        if not l.role and _overlaps_span(l.x0, l.x1, span) and (col == "F" or l.col == col)
    ]
    stops = [(l.y0, l.y1) for l in lines if id(l) in barriers]
    stops += [
        (boxes[id(c)][1], boxes[id(c)][3])
        for c in page_captions
        if c is not caption and _overlaps_span(boxes[id(c)][0], boxes[id(c)][2], span)
    ]
    top_limit = max((y1 for y0, y1 in stops if y1 <= cy0 + 1), default=0.0)
    bottom_limit = min((y0 for y0, y1 in stops if y0 >= cy1 - 1), default=page.height)
    sides = {}
    for side, (lo, hi) in (("above", (top_limit, cy0)), ("below", (cy1, bottom_limit))):
        side_lines = [
            l for l in lines if id(l) not in barriers and l.y0 >= lo - 1 and l.y1 <= hi + 1
        ]
        side_graphics = [
            g
            for g in graphics
            if g[1] >= lo - 1 and g[3] <= hi + 1 and _overlaps_span(g[0], g[2], span)
        ]
        sides[side] = (side_lines, side_graphics)
    return sides


def _region_bbox(
    page: Page, lines: list[Line], boxes: list[tuple]
) -> Optional[tuple[float, float, float, float]]:
    """The padded union of a float's lines and graphics, or None when it is too small."""
    all_boxes = [(l.x0, l.y0, l.x1, l.y1) for l in lines] + list(boxes)
    if not all_boxes:
        return None
    x0 = max(0.0, min(b[0] for b in all_boxes) - 2)
    y0 = max(0.0, min(b[1] for b in all_boxes) - 2)
    x1 = min(page.width, max(b[2] for b in all_boxes) + 2)
    y1 = min(page.height, max(b[3] for b in all_boxes) + 2)
    if x1 - x0 < 8 or y1 - y0 < 8:
        return None
    return (round(x0, 2), round(y0, 2), round(x1, 2), round(y1, 2))


def _choose_side(kind: str, sides: dict) -> Optional[str]:
    """Figures sit above their caption unless only the side below has content; tables
    take the side with more content."""
    above_lines, above_graphics = sides["above"]
    below_lines, below_graphics = sides["below"]
    if not (above_lines or above_graphics or below_lines or below_graphics):
        return None
    if kind == "figure":
        if above_graphics or below_graphics:
            return "above" if above_graphics else "below"
        return "above" if above_lines else "below"
    above = len(above_lines) + (2 if above_graphics else 0)
    below = len(below_lines) + (2 if below_graphics else 0)
    return "below" if below > above else "above"


def _content_graphics(
    pdf: PdfHandle, pages: list[Page], index: int, cache: dict
) -> list[tuple[float, float, float, float]]:
    """A page's graphics without furniture: a logo or rule in the top or bottom margin that
    sits at the same place on a neighbouring page is dropped."""

    def graphics_of(i: int) -> list[tuple[float, float, float, float]]:
        """Page ``i``'s graphic boxes, cached."""
        if i not in cache:
            cache[i] = graphic_boxes(pdf, pages[i])
        return cache[i]

    page = pages[index]
    boxes = graphics_of(index)
    margin = [b for b in boxes if b[3] < 0.12 * page.height or b[1] > 0.88 * page.height]
    if not margin or len(pages) < 2:
        return boxes
    neighbour = index - 1 if index > 0 else index + 1
    seen = {tuple(round(v) for v in b) for b in graphics_of(neighbour)}
    repeated = {id(b) for b in margin if tuple(round(v) for v in b) in seen}
    return [b for b in boxes if id(b) not in repeated]
