"""Turning a reader-neutral :class:`~scholarly_nlp.paper.Paper` into a spaCy ``Doc``.

``doc.text`` is the blocks in reading order (title, abstract, the body's headings,
paragraphs and formulas, back matter, footnotes, captions) joined by a blank line, so no
sentence crosses blocks. Tokens are split wherever a span starts or ends (GROBID often
glues two citation markers, ``</ref><ref>``), so every span covers exactly its characters.
Sentence boundaries come from the source's ``<s>`` when given, else from the scientific
segmenter, and are written as ``Token.is_sent_start`` so they survive ``DocBin``.

The text is tokenised by :func:`~scholarly_nlp.doc.tokenize.tokenize` (the pipeline's
tokenizer, called directly): a paper longer than ``nlp.max_length`` is built all the same,
and hostile whitespace-free runs cost linear time.
"""

from __future__ import annotations

from typing import Optional

import numpy
from spacy.attrs import IDX, IS_SPACE, SENT_START
from spacy.language import Language
from spacy.tokens import Doc, Span

from ..errors import MalformedInputError
from ..paper import Block, Paper, Section
from ..text.segmenter import split_sentences
from .extensions import SPAN_GROUPS, install_extensions
from .tokenize import tokenize

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
    doc = _tokenize_with_boundaries(nlp, text, _span_edges(blocks, starts))
    _set_sentence_starts(doc, blocks, starts)
    groups: dict[str, list[Span]] = {name: [] for name in SPAN_GROUPS}
    _check_reconstruction(doc, paper, text, blocks, starts)
    figure_kinds = _figure_kinds(paper)
    for block, start in zip(blocks, starts):
        _add_block_spans(doc, paper, block, start, groups, figure_kinds)
    groups["sections"], section_order = _section_spans(doc, paper, blocks, starts)
    for name, spans in groups.items():
        doc.spans[name] = spans
    doc._.paper_meta = _meta(paper, section_order)
    return doc


_READING_ORDER = {"title": 0, "abstract": 1, "heading": 2, "paragraph": 2, "formula": 2, "footnote": 4, "caption": 5}
_BACK_MATTER_ORDER = 3


def _section_of(paper: Paper, block: Block) -> Optional[Section]:
    if block.section is None or not (0 <= block.section < len(paper.sections)):
        return None
    return paper.sections[block.section]


def _is_back_matter(paper: Paper, block: Block) -> bool:
    section = _section_of(paper, block)
    return section is not None and section.is_back_matter and block.kind in ("heading", "paragraph", "formula")


def _reading_order(paper: Paper) -> list[Block]:
    def rank(block: Block) -> int:
        return _BACK_MATTER_ORDER if _is_back_matter(paper, block) else _READING_ORDER[block.kind]

    return sorted(paper.blocks, key=rank)  # stable: keeps the source order within a rank


def _span_edges(blocks: list[Block], starts: list[int]) -> list[int]:
    """Character offsets where a span starts or ends: block edges and inline reference edges."""
    edges = []
    for block, start in zip(blocks, starts):
        edges.extend((start, start + len(block.text)))
        for ref in block.refs:
            edges.extend((start + ref.start, start + ref.end))
    return edges


def _tokenize_with_boundaries(nlp: Language, text: str, edges: list[int]) -> Doc:
    """Tokenise ``text`` and split any token that a span edge falls inside.

    ``"2013;Liu"`` from two glued markers is one token to spaCy; split at the markers' edges it
    becomes ``"2013;"`` + ``"Liu"`` (no whitespace between), so each marker is a span of its own.
    """
    # Not nlp.make_doc: it refuses texts over nlp.max_length, and a long paper is no error.
    doc = tokenize(nlp.tokenizer, text)
    if not len(doc) or not edges:
        return doc
    token_starts = doc.to_array(IDX).astype("int64")
    token_ends = token_starts + numpy.fromiter((len(t) for t in doc), dtype="int64", count=len(doc))
    cuts = numpy.unique(numpy.asarray(edges, dtype="int64"))
    owner = numpy.searchsorted(token_starts, cuts, side="right") - 1
    inside = (owner >= 0) & (cuts > token_starts[owner.clip(0)]) & (cuts < token_ends[owner.clip(0)])
    if not inside.any():
        return doc
    splits: dict[int, list[int]] = {}
    for cut, index in zip(cuts[inside].tolist(), owner[inside].tolist()):
        splits.setdefault(index, []).append(cut)
    words, spaces = [], []
    for token in doc:
        pieces = splits.get(token.i)
        if not pieces:
            words.append(token.text)
            spaces.append(bool(token.whitespace_))
            continue
        bounds = [token.idx, *pieces, token.idx + len(token)]
        for a, b in zip(bounds, bounds[1:]):
            words.append(text[a:b])
            spaces.append(False)
        spaces[-1] = bool(token.whitespace_)
    return Doc(nlp.vocab, words=words, spaces=spaces)


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

def _span(doc: Doc, start: int, end: int, label: str, kb_id: str = "") -> Span:
    span = doc.char_span(start, end, label=label, kb_id=kb_id, alignment_mode="strict")
    if span is None:  # cannot happen: tokens are split at every span edge
        raise ValueError(f"span {start}-{end} does not fall on token boundaries")
    return span


def _check_reconstruction(doc: Doc, paper: Paper, text: str, blocks: list[Block], starts: list[int]) -> None:
    """Assert that the tokens cover the text exactly and every block sits at its offset."""
    covered = doc[-1].idx + len(doc[-1].text_with_ws) if len(doc) else 0
    if covered != len(text):
        raise MalformedInputError(paper.source, "tokens do not reconstruct the document text")
    for block, start in zip(blocks, starts):
        if text[start : start + len(block.text)] != block.text:
            raise MalformedInputError(paper.source, f"{block.kind} block text does not reconstruct from its offsets")


_REF_GROUPS = {"bibr": "citations", "figure": "figure_refs", "table": "figure_refs", "formula": "formula_refs",
               "footnote": "footnote_refs"}


def _figure_kinds(paper: Paper) -> dict[str, str]:
    """Figure id -> kind ("figure" or "table"), the first figure winning for a repeated id."""
    kinds: dict[str, str] = {}
    for figure in paper.figures:
        kinds.setdefault(figure.id, figure.kind)
    return kinds


def _add_block_spans(doc: Doc, paper: Paper, block: Block, start: int, groups: dict[str, list[Span]],
                     figure_kinds: dict[str, str]) -> None:
    end = start + len(block.text)
    section = _section_of(paper, block)
    number = (section.number or "") if section is not None else ""
    if _is_back_matter(paper, block) and block.kind != "heading":
        groups["back_matter"].append(_span(doc, start, end, section.kind, f"bm{block.section}"))
    elif block.kind == "title":
        groups["title"].append(_span(doc, start, end, "title"))
    elif block.kind == "abstract":
        groups["abstract"].append(_span(doc, start, end, "abstract"))
    elif block.kind == "heading":
        groups["section_heads"].append(_span(doc, start, end, "heading", number))
    elif block.kind == "paragraph":
        groups["paragraphs"].append(_span(doc, start, end, "paragraph", number))
    elif block.kind == "formula":
        groups["formulas"].append(_span(doc, start, end, "formula", block.id or ""))
    elif block.kind == "footnote":
        groups["footnotes"].append(_span(doc, start, end, "footnote", block.id or ""))
    elif block.kind == "caption":
        kind = figure_kinds.get(block.figure_id, "figure")
        groups["captions"].append(_span(doc, start, end, kind, block.figure_id or ""))
    for ref in block.refs:
        group = _REF_GROUPS.get(ref.kind)
        if group is not None:
            label = "bibr" if ref.kind == "bibr" else ref.kind
            groups[group].append(_span(doc, start + ref.start, start + ref.end, label, ref.target or ""))


def _section_spans(doc: Doc, paper: Paper, blocks: list[Block], starts: list[int]) -> tuple[list[Span], list[int]]:
    """One span per section, from its first block to the last block of it or its subsections.

    Returns the spans in document order and the section indices in that same order.
    """
    extent: dict[int, list[int]] = {}
    for block, start in zip(blocks, starts):
        if block.kind not in ("heading", "paragraph", "formula") or block.section is None:
            continue
        if _is_back_matter(paper, block):
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
        **paper.meta,
        "paper_id": paper.paper_id,
        "source": paper.source,
        "reader": paper.reader,
        "authors": [author.to_dict() for author in paper.authors],
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
        "formulas": [{"id": b.id, "label": b.label} for b in paper.blocks if b.kind == "formula"],
        "footnotes": [{"id": b.id, "number": b.label} for b in paper.blocks if b.kind == "footnote"],
        "back_matter": [
            {"id": f"bm{i}", "title": s.title, "type": s.kind} for i, s in enumerate(paper.sections) if s.is_back_matter
        ],
    }
