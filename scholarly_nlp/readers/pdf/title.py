"""Pass 8, title: the biggest text in the top half of page one (else its first bold block),
with the blocks right below it in nearly the same size.

Consumes ``pages[0].blocks``; produces the title's :class:`VBlock` list.
"""

from __future__ import annotations

from typing import Optional

from .model import Page, Stats, VBlock
from .patterns import ABSTRACT_RE


def find_title(pages: list[Page], stats: Stats) -> list[VBlock]:
    """The title's blocks: the biggest text in the top half of page one (else its first bold
    block), with the blocks right below it in nearly the same size (a title in two fonts)."""
    first = _title_block(pages, stats)
    if first is None:
        return []
    blocks = pages[0].blocks
    title = [first]
    for block in blocks[blocks.index(first) + 1 :]:
        last = title[-1].bbox
        if (
            abs(block.size - first.size) > 0.08 * first.size
            or block.bbox[1] - last[3] > 0.8 * first.size
        ):
            break
        if block.bbox[1] < last[1] or len(title) >= 3:
            break
        title.append(block)
    return title


def _title_block(pages: list[Page], stats: Stats) -> Optional[VBlock]:
    """The title's first block."""
    page = pages[0]
    candidates = [
        b
        for b in page.blocks
        if b.bbox[1] < 0.5 * page.height
        and sum(c.isalpha() for c in b.text) >= 8
        and len(b.text.split()) >= 2
        and not b.lines[0].role
        and ABSTRACT_RE.match(b.text) is None
    ]
    if not candidates:
        return None
    biggest = max(candidates, key=lambda b: b.size)
    if biggest.size >= 1.12 * stats.body_size:
        return biggest
    bold = [b for b in candidates if all(l.bold for l in b.lines) and len(b.lines) <= 3]
    return bold[0] if bold else None
