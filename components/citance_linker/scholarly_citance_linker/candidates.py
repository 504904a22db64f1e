"""Stage-1 candidates of the citance linker and the gold sentence indices of a citance.

Kept apart from the pipe so that training, inference and the project's cross-validation
share one definition of "the candidates of a citance".
"""

from __future__ import annotations

from collections import defaultdict
from typing import Optional

from scholarly_nlp.retrieval import SentenceIndex, strip_citation_markers


def sentence_sids(doc) -> list[str]:
    """The CL-SciSumm sid of each sentence of ``doc`` (its index as a string when it has none)."""
    meta = doc._.paper_meta or {}
    sids = meta.get("sids")
    n = len(SentenceIndex.for_doc(doc))
    if sids and len(sids) == n:
        return [str(s) for s in sids]
    return [str(i) for i in range(n)]


def sid_positions(doc) -> dict[str, list[int]]:
    """sid -> the sentence indices carrying it (a few published papers repeat sids)."""
    positions: dict[str, list[int]] = defaultdict(list)
    for index, sid in enumerate(sentence_sids(doc)):
        positions[sid].append(index)
    return dict(positions)


def gold_indices(doc, citance: dict) -> list[int]:
    """Sentence indices of a citance's gold sids (unknown sids are ignored)."""
    positions = sid_positions(doc)
    return sorted({i for sid in citance.get("sids") or [] for i in positions.get(str(sid), [])})


def bm25_candidates(doc, citance_text: str, n: int, *, position_boost: float,
                    prior_fraction: float) -> list[tuple[int, float]]:
    """The ``n`` best ``(sentence index, BM25 x prior score)`` pairs of ``doc`` for a citance."""
    index = SentenceIndex.for_doc(doc)
    return index.search(citance_text, min(n, len(index)), position_boost=position_boost,
                        prior_fraction=prior_fraction)


def encoder_query(citance_text: str) -> str:
    """The citance as the cross-encoder sees it: citation markers removed, the rest kept."""
    return strip_citation_markers(citance_text) or citance_text


def sentence_texts(doc) -> list[str]:
    """The text of each sentence of ``doc``, from the cached index."""
    return [s.text for s in SentenceIndex.for_doc(doc).sentences]


def fuse(ce_scores, bm25_scores, bm25_weight: float) -> list[float]:
    """Final scores: cross-encoder score + ``bm25_weight`` x BM25 score scaled to [0, 1] by its max."""
    top = max(bm25_scores) if len(bm25_scores) else 0.0
    scale = 1.0 / top if top > 0 else 0.0
    return [float(c) + bm25_weight * float(b) * scale for c, b in zip(ce_scores, bm25_scores)]


def select(ranked: list[tuple[int, float]], k: int, threshold: Optional[float]) -> list[tuple[int, float]]:
    """The best ``k`` of a best-first list; with ``threshold``, those scoring below it are dropped
    (but the best one is always kept, so every citance is answered)."""
    chosen = ranked[:k]
    if threshold is not None:
        chosen = chosen[:1] + [item for item in chosen[1:] if item[1] >= threshold]
    return chosen
