"""Threshold-free scores of figure embeddings over all pairs of held-out figures (dev metric).

``figure_same_auc``: ROC AUC of the embedding cosine separating pairs of figures of the
same paper from pairs of figures of different papers. ``figure_citing_auc``: the same for
pairs of different, citation-related papers against pairs of different, unrelated papers.
Each is None when one of its two classes has no pair.
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy

from .relations import RelationTable


def roc_auc(positive: numpy.ndarray, negative: numpy.ndarray) -> Optional[float]:
    """ROC AUC of scores of positive items against scores of negative ones (None when either is empty)."""
    if not len(positive) or not len(negative):
        return None
    from sklearn.metrics import roc_auc_score

    labels = numpy.concatenate([numpy.ones(len(positive)), numpy.zeros(len(negative))])
    return float(roc_auc_score(labels, numpy.concatenate([positive, negative])))


def embedding_aucs(matrix: numpy.ndarray, paper_ids: Sequence[str], relations: RelationTable,
                   related_kinds: Optional[Sequence[str]] = None) -> dict[str, Optional[float]]:
    """``{"figure_same_auc", "figure_citing_auc"}`` of unit-row embeddings ``matrix`` (one row per figure)."""
    n = len(paper_ids)
    if n < 2:
        return {"figure_same_auc": None, "figure_citing_auc": None}
    similarities = matrix @ matrix.T
    upper = numpy.triu_indices(n, k=1)
    papers = numpy.asarray(paper_ids, dtype=object)
    same = papers[upper[0]] == papers[upper[1]]
    wanted = set(related_kinds) if related_kinds is not None else None
    related = numpy.array([
        (not s) and (relations.kind(a, b) is not None and (wanted is None or relations.kind(a, b) in wanted))
        for a, b, s in zip(papers[upper[0]], papers[upper[1]], same)
    ], dtype=bool)
    scores = similarities[upper]
    return {
        "figure_same_auc": roc_auc(scores[same], scores[~same]),
        "figure_citing_auc": roc_auc(scores[related], scores[~same & ~related]),
    }
