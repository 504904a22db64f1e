"""Cutting spans out of a block's text while keeping its inline refs and sentences in place."""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from ..paper import Block

__all__ = ["cut_block", "cut_text"]


def _kept_pieces(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int, int]]:
    """(old start, old end, new start) of each piece of ``text`` that survives the cuts.

    Whitespace at a cut's edges goes with the cut; the pieces on either side of it are
    joined by one space, so "was SCIENTIFIC REPORTS | ... midgut" reads "was midgut".
    """
    pieces = []
    position, new_length = 0, 0
    for start, end in sorted(spans) + [(len(text), len(text))]:
        piece_start, piece_end = position, max(position, start)
        if position > 0:  # after a cut
            while piece_start < piece_end and text[piece_start].isspace():
                piece_start += 1
        if start < len(text):  # before a cut
            while piece_end > piece_start and text[piece_end - 1].isspace():
                piece_end -= 1
        if piece_end > piece_start:
            if pieces:
                new_length += 1  # the joining space
            pieces.append((piece_start, piece_end, new_length))
            new_length += piece_end - piece_start
        position = max(position, end)
    return pieces


def cut_text(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` without the (start, end) ``spans``, the pieces joined by single spaces."""
    return " ".join(text[start:end] for start, end, _ in _kept_pieces(text, spans))


def cut_block(block: Block, spans: list[tuple[int, int]]) -> Optional[Block]:
    """A copy of ``block`` without the text of ``spans``; None when nothing is left.

    An inline ref that starts or ends inside a cut is dropped (GROBID makes citation refs of a
    running head's volume digits); one around a cut closes over it ("(Rollins, Barton, [cut]
    Bergin and Lee, 2014)"); refs and sentence offsets move with their text. A sentence keeps
    what is left of it and goes when nothing is; when no sentence is left but text is,
    ``sentences`` is None (the Doc builder segments the text itself).
    """
    if not spans:
        return block
    pieces = _kept_pieces(block.text, spans)
    if not pieces:
        return None

    def moved(offset: int) -> Optional[int]:
        piece = next((p for p in pieces if p[0] <= offset < p[1]), None)
        return None if piece is None else offset + piece[2] - piece[0]

    refs = []
    for ref in block.refs:
        start, last = moved(ref.start), moved(ref.end - 1)
        if start is not None and last is not None:
            refs.append(replace(ref, start=start, end=last + 1))
    sentences = None
    if block.sentences is not None:
        sentences = []
        for start, end in block.sentences:
            inside = [(a, b, new) for a, b, new in pieces if a < end and start < b]
            if inside:
                (a, _, new), (last_a, last_b, last_new) = inside[0], inside[-1]
                sentences.append((new + max(start, a) - a, last_new + min(end, last_b) - last_a))
    text = " ".join(block.text[a:b] for a, b, _ in pieces)
    if sentences:
        sentences = _rejoin_sentences(text, sentences, {new for _, _, new in pieces[1:]})
    return replace(block, text=text, refs=refs, sentences=sentences or None)


def _rejoin_sentences(text: str, sentences: list[tuple[int, int]], joins: set[int]) -> list[tuple[int, int]]:
    """Merge two sentences that met only because of a cut: GROBID ends a sentence at a running
    head it runs through ("... arrive to larvae" | "midgut they germinate ..."). A heuristic:
    the first must end without ".!?:;" and the second start with a lower-case letter."""
    merged = [sentences[0]]
    for start, end in sentences[1:]:
        last_start, last_end = merged[-1]
        if (start in joins and last_end == start - 1 and text[last_end - 1] not in ".!?:;"
                and text[start].islower()):
            merged[-1] = (last_start, end)
        else:
            merged.append((start, end))
    return merged

