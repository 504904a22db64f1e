"""Assembly (last pass): units and captions to the :class:`Paper`.

Consumes the classification's units and sections and the captions; produces the Paper's
blocks (dehyphenated text; paragraphs with their figure mentions and citation markers) and
one :class:`FigureInfo` per caption.
"""

from __future__ import annotations

import re

from ...paper import Block, FigureInfo, InlineRef, Paper, Section
from .bibliography import numbered_bibliography
from .citations import citation_refs
from .dehyphenation import Dehyphenator
from .figure_mentions import figure_refs
from .model import Caption, Page, Unit


def assemble_paper(
    paper_id: str,
    source: str,
    pages: list[Page],
    units: list[Unit],
    sections: list[Section],
    reference_lines: list[str],
    captions: list[Caption],
) -> Paper:
    """The Paper: text blocks from the units (empty ones dropped), then one caption block
    and one FigureInfo per caption; paragraphs carry their inline references."""
    dehyphenator = Dehyphenator(pages)
    paper = Paper(paper_id=paper_id, source=source, reader="pdf", sections=sections)
    targets = _add_figures(paper, captions)
    numeric = numbered_bibliography(reference_lines)
    text_blocks = [_unit_block(u, dehyphenator, targets, numeric) for u in units]
    caption_blocks = [
        Block("caption", _clean_text(dehyphenator.join(c.block.lines)), figure_id=f.id)
        for c, f in zip(captions, paper.figures)
    ]
    paper.blocks = [b for b in text_blocks if b.text] + caption_blocks
    return paper


def _add_figures(paper: Paper, captions: list[Caption]) -> dict[tuple[str, str], str]:
    """One FigureInfo per caption (fig_N / tab_N in caption order); returns (kind, label) -> id."""
    counters = {"figure": 0, "table": 0}
    targets: dict[tuple[str, str], str] = {}
    for caption in captions:
        prefix = "fig" if caption.kind == "figure" else "tab"
        fig_id = f"{prefix}_{counters[caption.kind]}"
        counters[caption.kind] += 1
        head = f"{'Figure' if caption.kind == 'figure' else 'Table'} {caption.label}"
        paper.figures.append(
            FigureInfo(
                id=fig_id,
                kind=caption.kind,
                label=caption.label,
                head=head,
                page=caption.block.page + 1,
                bbox=caption.bbox,
            )
        )
        targets.setdefault((caption.kind, caption.label.lower()), fig_id)
    return targets


def _unit_block(unit: Unit, dehyphenator: Dehyphenator, targets: dict, numeric: bool) -> Block:
    """A Block from a unit; paragraphs get their figure and citation references."""
    text = _clean_text(dehyphenator.join(unit.lines))
    block = Block(unit.kind, text, section=unit.section)
    if unit.kind == "paragraph":
        block.refs = _without_overlaps(figure_refs(text, targets) + citation_refs(text, numeric))
    return block


def _without_overlaps(refs: list[InlineRef]) -> list[InlineRef]:
    """Refs sorted by position; of overlapping ones the earlier (then longer) is kept."""
    kept: list[InlineRef] = []
    for ref in sorted(refs, key=lambda r: (r.start, -(r.end - r.start))):
        if not kept or ref.start >= kept[-1].end:
            kept.append(ref)
    return kept


def _clean_text(text: str) -> str:
    """Runs of white space folded to one space, ends stripped."""
    return re.sub(r"\s+", " ", text).strip()
