"""Turning a reader-neutral :class:`~scholarly_nlp.paper.Paper` into a spaCy ``Doc``.

``doc.text`` is the blocks in reading order (title, abstract, headings and body
paragraphs, captions) joined by a blank line, so no sentence crosses blocks. Sentence
boundaries come from the source's ``<s>`` when given, else from the scientific segmenter,
and are written as ``Token.is_sent_start`` so they survive ``DocBin``.
"""

from __future__ import annotations

from typing import Optional

import numpy
from spacy.attrs import IDX, IS_SPACE, SENT_START
from spacy.language import Language
from spacy.tokens import Doc, Span

from ..errors import MalformedInputError
from ..paper import Block, Paper
from ..text.segmenter import split_sentences
from .extensions import SPAN_GROUPS, install_extensions

BLOCK_SEPARATOR = "\n\n"


def paper_to_doc(paper: Paper, nlp: Language) -> Doc:
    """Build the paper Doc with span groups, sentence boundaries and ``doc._.paper_meta``.

    Raises MalformedInputError (naming the paper's source) when an offset does not
    reconstruct the text it claims to cover.
    """
    install_extensions()
    paper.check()
    blocks = [b for b in _reading_order(paper) if b.text]
    text, starts = _join_blocks(blocks)
    doc = nlp.make_doc(text)
    _set_sentence_starts(doc, blocks, starts)
    groups: dict[str, list[Span]] = {name: [] for name in SPAN_GROUPS}
    _check_reconstruction(doc, paper, text, blocks, starts)
    for block, start in zip(blocks, starts):
        _add_block_spans(doc, paper, block, start, groups)
    groups["sections"], section_order = _section_spans(doc, paper, blocks, starts)
    for name, spans in groups.items():
        doc.spans[name] = spans
    doc._.paper_meta = _meta(paper, section_order)
    return doc


def _reading_order(paper: Paper) -> list[Block]:
    order = {"title": 0, "abstract": 1, "heading": 2, "paragraph": 2, "caption": 3}
    return sorted(paper.blocks, key=lambda b: order[b.kind])  # stable: keeps body order


def _join_blocks(blocks: list[Block]) -> tuple[str, list[int]]:
    starts, pos = [], 0
    for block in blocks:
        starts.append(pos)
        pos += len(block.text) + len(BLOCK_SEPARATOR)
    return BLOCK_SEPARATOR.join(b.text for b in blocks), starts


def _set_sentence_starts(doc: Doc, blocks: list[Block], starts: list[int]) -> None:
    if not len(doc):
        return
    # Offsets and space flags as arrays: creating a Python Token per token just to read its
    # offset was the builder's main cost after tokenisation.
    token_starts = doc.to_array(IDX).astype("int64")
    is_space = doc.to_array(IS_SPACE).astype(bool)
    offsets = []
    for block, offset in zip(blocks, starts):
        sentences = block.sentences or split_sentences(block.text) or [(0, len(block.text))]
        # The block's first token always starts a sentence, even if the source's first <s>
        # began after some stray text.
        offsets.append(offset)
        offsets.extend(offset + start for start, _ in sentences)
    indices = numpy.searchsorted(token_starts, numpy.asarray(offsets, dtype="int64"), side="right") - 1
    indices = indices[(indices >= 0) & (indices < len(doc))]
    indices = indices[~is_space[indices]]
    flags = numpy.full(len(doc), -1, dtype="int64")
    flags[indices] = 1
    flags[0] = 1
    # One bulk write: setting Token.is_sent_start one by one re-checks annotations each time.
    doc.from_array([SENT_START], flags.astype("uint64").reshape(-1, 1))

def _span(doc: Doc, start: int, end: int, label: str, kb_id: str = "") -> Optional[Span]:
    return doc.char_span(start, end, label=label, kb_id=kb_id, alignment_mode="expand")


def _check_reconstruction(doc: Doc, paper: Paper, text: str, blocks: list[Block], starts: list[int]) -> None:
    """Assert that the tokens cover the text exactly and every block sits at its offset."""
    covered = doc[-1].idx + len(doc[-1].text_with_ws) if len(doc) else 0
    if covered != len(text):
        raise MalformedInputError(paper.source, "tokens do not reconstruct the document text")
    for block, start in zip(blocks, starts):
        if text[start : start + len(block.text)] != block.text:
            raise MalformedInputError(paper.source, f"{block.kind} block text does not reconstruct from its offsets")


def _add_block_spans(doc: Doc, paper: Paper, block: Block, start: int, groups: dict[str, list[Span]]) -> None:
    end = start + len(block.text)
    number = ""
    if block.section is not None and block.section < len(paper.sections):
        number = paper.sections[block.section].number or ""
    if block.kind == "title":
        groups["title"].append(_span(doc, start, end, "title"))
    elif block.kind == "abstract":
        groups["abstract"].append(_span(doc, start, end, "abstract"))
    elif block.kind == "heading":
        groups["section_heads"].append(_span(doc, start, end, "heading", number))
    elif block.kind == "paragraph":
        groups["paragraphs"].append(_span(doc, start, end, "paragraph", number))
    elif block.kind == "caption":
        kind = next((f.kind for f in paper.figures if f.id == block.figure_id), "figure")
        groups["captions"].append(_span(doc, start, end, kind, block.figure_id or ""))
    for ref in block.refs:
        if ref.kind == "bibr":
            groups["citations"].append(_span(doc, start + ref.start, start + ref.end, "bibr", ref.target or ""))
        elif ref.kind in ("figure", "table"):
            groups["figure_refs"].append(_span(doc, start + ref.start, start + ref.end, ref.kind, ref.target or ""))


def _section_spans(doc: Doc, paper: Paper, blocks: list[Block], starts: list[int]) -> tuple[list[Span], list[int]]:
    """One span per section, from its first block to the last block of it or its subsections.

    Returns the spans in document order and the section indices in that same order.
    """
    extent: dict[int, list[int]] = {}
    for block, start in zip(blocks, starts):
        if block.kind not in ("heading", "paragraph") or block.section is None:
            continue
        end = start + len(block.text)
        section: Optional[int] = block.section
        while section is not None:
            lo_hi = extent.setdefault(section, [start, end])
            lo_hi[0], lo_hi[1] = min(lo_hi[0], start), max(lo_hi[1], end)
            section = paper.sections[section].parent
    order = sorted(extent, key=lambda i: (extent[i][0], i))
    spans = []
    for index in order:
        section = paper.sections[index]
        spans.append(_span(doc, extent[index][0], extent[index][1], section.title, section.number or ""))
    return spans, order


def _meta(paper: Paper, section_order: list[int]) -> dict:
    return {
        "paper_id": paper.paper_id,
        "source": paper.source,
        "reader": paper.reader,
        "figures": [
            {
                "id": f.id,
                "kind": f.kind,
                "label": f.label,
                "head": f.head,
                "image_path": f.image_path,
                "page": f.page,
                "bbox": list(f.bbox) if f.bbox else None,
            }
            for f in paper.figures
        ],
        "sections": [
            {"title": paper.sections[i].title, "number": paper.sections[i].number, "level": paper.sections[i].level}
            for i in section_order
        ],
        "bibliography": {key: entry.to_dict() for key, entry in paper.bibliography.items()},
    }
