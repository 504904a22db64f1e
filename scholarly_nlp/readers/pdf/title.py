"""Pass 8, title: the biggest text in the top half of the first page (else its first bold
block), with the lines of the same size right above and below it.

Consumes the pages' blocks; produces the title's :class:`VBlock` list. The first page is
the paper's own: a repository's cover page (Cronfa, Edinburgh Research Explorer,
ResearchGate, JSTOR ...) is passed over, and so is a journal banner (Elsevier's "Contents
lists available at ... journal homepage").
"""

from __future__ import annotations

import re
from typing import Optional

from .formulas import is_math
from .model import Page, Stats, VBlock
from .patterns import ABSTRACT_RE

#: Text of a repository's or an aggregator's cover page, printed before the paper.
COVER_PAGE_RE = re.compile(
    r"research explorer|open access repository|researchgate|\bjstor\b|digitalcommons|"
    r"citation for published version|this is the (?:accepted|author'?s?|peer reviewed) (?:manuscript|version)|"
    r"downloaded from .*repository|\beprints\b|cronfa",
    re.IGNORECASE,
)
#: A numbered section head, or a bare usual one, is no title even in bold.
_SECTION_HEAD_RE = re.compile(
    r"^(?:(?:\d{1,2}(?:\.\d{1,2})*\.?|[IVX]{1,4}\.)\s+\S"
    r"|(?:introduction|background|related work|methods?|results|discussion|conclusions?)$)",
    re.IGNORECASE,
)
_RELATION_RE = re.compile(r"[=<>\u2264\u2265\u2248\u2211\u220f\u222b]")
#: A journal banner line; the journal's name printed near it is not the paper's title.
_BANNER_RE = re.compile(r"journal homepage|contents lists available at|www\.elsevier\.com", re.IGNORECASE)


def title_page(pages: list[Page]) -> int:
    """The index of the paper's first page: 1 after a cover page, else 0."""
    if len(pages) > 1:
        text = " ".join(line.text for line in pages[0].lines[:80])
        if COVER_PAGE_RE.search(text) and len(pages[0].lines) < 45:
            return 1
    return 0


def find_title(pages: list[Page], stats: Stats, first_page: int = 0) -> list[VBlock]:
    """The title's blocks on the paper's first page (``first_page``, 1 after a cover page:
    :func:`title_page`): its biggest text in the top half (else its first bold block, else
    the top of a manuscript's centred title page), with the blocks of nearly that size right
    above and below it (a title over two lines, or in two fonts); side text beside it and tiny
    watermarks are passed over. A preprint with no title of its own after a repository's
    cover page takes the cover's."""
    title = _title_on(pages[first_page], stats)
    if not title and first_page > 0:
        title = _title_on(pages[first_page - 1], stats, cover=True)
    return title


def _title_on(page: Page, stats: Stats, cover: bool = False) -> list[VBlock]:
    """The title's blocks on one page (``cover``: a cover page, whose own branding is passed over)."""
    found = _title_block(page, stats, cover)
    if found is None:
        return []
    first, reach = found
    blocks = page.blocks
    index = blocks.index(first)
    title = [first]
    for block in reversed(blocks[:index]):
        if _beside(block, title) or block.size < 0.6 * first.size:
            continue
        if not _continues(first, block, above=title[0], reach=reach) or len(title) >= 3:
            break
        title.insert(0, block)
    for block in blocks[index + 1:]:
        if _beside(block, title) or block.size < 0.6 * first.size:
            continue
        if not _continues(first, title[-1], below=block, reach=reach) or len(title) >= 3:
            break
        title.append(block)
    return title


def _beside(block: VBlock, title: list[VBlock]) -> bool:
    """Whether ``block`` shares no horizontal extent with the title (a side column)."""
    x0 = min(b.bbox[0] for b in title)
    x1 = max(b.bbox[2] for b in title)
    return block.bbox[2] <= x0 or block.bbox[0] >= x1


def _continues(first: VBlock, upper: VBlock, above: Optional[VBlock] = None,
               below: Optional[VBlock] = None, reach: float = 1.0) -> bool:
    """Whether two blocks, one right above the other, are lines of one title: nearly the same
    size, a gap of at most ``reach`` line heights (one; more on a double-spaced manuscript)."""
    top, bottom = (upper, above) if above is not None else (upper, below)
    if abs(top.size - first.size) > 0.08 * first.size or abs(bottom.size - first.size) > 0.08 * first.size:
        return False
    gap = bottom.bbox[1] - top.bbox[3]
    return -0.2 * first.size <= gap <= reach * first.size


def _title_block(page: Page, stats: Stats, cover: bool = False) -> Optional[tuple[VBlock, float]]:
    """The title's first block, and how many line heights apart the title's lines may be."""
    banner = max((line.y1 for line in page.lines if _BANNER_RE.search(line.text)), default=None)
    candidates = [
        b
        for b in page.blocks
        if b.bbox[1] < 0.5 * page.height
        and sum(c.isalpha() for c in b.text) >= 8
        and len(b.text.split()) >= 2
        and not b.lines[0].role
        and ABSTRACT_RE.match(b.text) is None
        # a display formula set big ("= arg maxTrp(lr).") is no title; is_math alone would
        # also take an upper-case title for one
        and not (_RELATION_RE.search(b.text) and is_math(b.text))
        and (banner is None or b.bbox[1] > banner)
        and not (cover and COVER_PAGE_RE.search(b.text))
    ]
    if not candidates:
        return None
    biggest = max(candidates, key=lambda b: b.size)
    if biggest.size >= 1.12 * stats.body_size:
        return biggest, 1.0
    # a title barely bigger than the text, high on the page ("Genome Informatics" style)
    if biggest.size >= 1.07 * stats.body_size and biggest.bbox[1] < 0.3 * page.height and len(biggest.lines) <= 4:
        return biggest, 1.0
    # a bold block, but no section head ("1. Introduction" opening a page without a title)
    bold = [b for b in candidates if all(l.bold for l in b.lines) and len(b.lines) <= 3
            and not _SECTION_HEAD_RE.match(b.text.strip())]
    if bold:
        return bold[0], 1.0
    # a manuscript's title page (APA): everything in the top half centred, in the body's
    # type and double-spaced; the title is on top
    if len(candidates) >= 2 and all(_centred(b, page) for b in candidates):
        return min(candidates, key=lambda b: b.bbox[1]), 1.5
    return None


def _centred(block: VBlock, page: Page) -> bool:
    """Whether a block sits centred on the page, clear of its left margin (its two margins
    within two line heights of each other)."""
    left, right = block.bbox[0], page.width - block.bbox[2]
    return abs(left - right) <= 2 * max(block.size, 1.0) and left > 0.12 * page.width
