"""Standard ranking metrics for one query and averaged over a run.

Conventions shared by every function in this module
----------------------------------------------------
* ``ranking`` is a sequence of item ids, best first. Rank 1 is ``ranking[0]``. Only the
  first occurrence of an id counts: later duplicates are dropped before scoring, so a
  system cannot gain recall by repeating an id.
* ``relevant`` is either a collection of relevant ids (binary relevance: every member
  is relevant) or a mapping ``id -> grade`` (graded relevance). With a mapping, the
  binary metrics (precision, recall, hit, reciprocal rank, average precision) count an
  id as relevant when ``grade >= threshold`` (default 1, i.e. any positive grade), so
  items judged 0 are *not* relevant. Ids absent from ``relevant`` are non-relevant.
* ``k`` must be a positive integer; a ``k`` larger than the ranking simply uses the
  whole ranking (missing positions are non-relevant, so precision@k still divides by k).
* An empty ranking scores 0.0 on every metric.
* A query with no relevant item scores 0.0 on every per-query metric (the values are
  undefined; 0.0 is returned so that callers never see NaN). The run-level ``mean_*``
  functions instead *skip* such queries by default (``skip_no_relevant=True``, the
  trec_eval convention of averaging only over queries that have relevance judgements
  marking something relevant); pass ``skip_no_relevant=False`` to average them in as 0.

NDCG uses the linear gain ``gain = grade`` (``gain="exponential"`` gives
``2**grade - 1``) and the discount ``log2(rank + 1)``, so rank 1 has weight 1,
rank 2 weight 1/log2(3), and so on. Negative grades are clipped to 0. The ideal DCG is
computed from *all* judged grades of the query, not only the ranked ones.
"""

from __future__ import annotations

import math
from typing import Callable, Collection, Dict, Hashable, List, Mapping, Optional, Sequence, Set, Union

Relevance = Union[Collection[Hashable], Mapping[Hashable, float]]
Rankings = Mapping[Hashable, Sequence[Hashable]]
Qrels = Mapping[Hashable, Relevance]

__all__ = [
    "precision_at_k",
    "recall_at_k",
    "hit_at_k",
    "reciprocal_rank",
    "average_precision",
    "dcg_at_k",
    "ndcg_at_k",
    "accuracy_at_k",
    "mean_precision_at_k",
    "mean_recall_at_k",
    "mean_hit_at_k",
    "mean_reciprocal_rank",
    "mean_average_precision",
    "mean_ndcg_at_k",
]


# --------------------------------------------------------------------------- helpers


def _dedupe(ranking: Sequence[Hashable]) -> List[Hashable]:
    """Return ``ranking`` with later duplicates removed, order kept."""
    seen: Set[Hashable] = set()
    out: List[Hashable] = []
    for item in ranking:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


def _relevant_ids(relevant: Relevance, threshold: float = 1) -> Set[Hashable]:
    """The ids counted as relevant: all members of a collection, or grade >= threshold."""
    if isinstance(relevant, Mapping):
        return {item for item, grade in relevant.items() if grade >= threshold}
    return set(relevant)


def _grades(relevant: Relevance) -> Dict[Hashable, float]:
    """A mapping id -> grade; members of a plain collection get grade 1."""
    if isinstance(relevant, Mapping):
        return {item: float(grade) for item, grade in relevant.items()}
    return {item: 1.0 for item in relevant}


def _check_k(k: int) -> int:
    """Raise ValueError unless ``k`` is a positive integer; return it."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    return k


def _gain(grade: float, gain: str) -> float:
    """Gain of one grade: ``grade`` (linear) or ``2**grade - 1`` (exponential); <0 -> 0."""
    grade = max(grade, 0.0)
    if gain == "linear":
        return grade
    if gain == "exponential":
        return 2.0**grade - 1.0
    raise ValueError(f"gain must be 'linear' or 'exponential', got {gain!r}")


# --------------------------------------------------------------------------- per query


def precision_at_k(ranking: Sequence[Hashable], relevant: Relevance, k: int, *, threshold: float = 1) -> float:
    """Fraction of the first ``k`` positions that hold a relevant id.

    Always divides by ``k``: positions beyond the end of a short ranking count as
    non-relevant. Returns 0.0 for an empty ranking.
    """
    _check_k(k)
    rel = _relevant_ids(relevant, threshold)
    return sum(1 for item in _dedupe(ranking)[:k] if item in rel) / k


def recall_at_k(ranking: Sequence[Hashable], relevant: Relevance, k: int, *, threshold: float = 1) -> float:
    """Fraction of all relevant ids that appear in the first ``k`` positions.

    Returns 0.0 when the query has no relevant id.
    """
    _check_k(k)
    rel = _relevant_ids(relevant, threshold)
    if not rel:
        return 0.0
    return sum(1 for item in _dedupe(ranking)[:k] if item in rel) / len(rel)


def hit_at_k(ranking: Sequence[Hashable], relevant: Relevance, k: int, *, threshold: float = 1) -> float:
    """1.0 when any relevant id is among the first ``k`` positions, else 0.0."""
    _check_k(k)
    rel = _relevant_ids(relevant, threshold)
    return 1.0 if any(item in rel for item in _dedupe(ranking)[:k]) else 0.0


def reciprocal_rank(ranking: Sequence[Hashable], relevant: Relevance, *, threshold: float = 1) -> float:
    """``1 / rank`` of the first relevant id; 0.0 when none is ranked."""
    rel = _relevant_ids(relevant, threshold)
    for rank, item in enumerate(_dedupe(ranking), start=1):
        if item in rel:
            return 1.0 / rank
    return 0.0


def average_precision(ranking: Sequence[Hashable], relevant: Relevance, *, threshold: float = 1) -> float:
    """Average precision (TREC definition).

    Sum of precision@rank over the ranks that hold a relevant id, divided by the number
    of relevant ids of the query (ranked or not), so relevant ids the system never
    ranked contribute 0. Returns 0.0 when the query has no relevant id.
    """
    rel = _relevant_ids(relevant, threshold)
    if not rel:
        return 0.0
    hits = 0
    total = 0.0
    for rank, item in enumerate(_dedupe(ranking), start=1):
        if item in rel:
            hits += 1
            total += hits / rank
    return total / len(rel)


def dcg_at_k(
    ranking: Sequence[Hashable], relevant: Relevance, k: Optional[int] = None, *, gain: str = "linear"
) -> float:
    """Discounted cumulative gain of the first ``k`` positions (all when ``k`` is None).

    ``sum_{rank=1..k} gain(grade) / log2(rank + 1)``; unjudged ids have grade 0.
    """
    grades = _grades(relevant)
    items = _dedupe(ranking)
    if k is not None:
        items = items[: _check_k(k)]
    return sum(_gain(grades.get(item, 0.0), gain) / math.log2(rank + 1) for rank, item in enumerate(items, start=1))


def ndcg_at_k(
    ranking: Sequence[Hashable], relevant: Relevance, k: Optional[int] = None, *, gain: str = "linear"
) -> float:
    """Normalised DCG: ``dcg_at_k`` divided by the DCG of the ideal ordering.

    The ideal ordering sorts every judged id of the query by grade, best first, and is
    cut at the same ``k``. Returns 0.0 when no id has a positive grade.
    """
    grades = _grades(relevant)
    ideal = sorted(grades, key=lambda item: grades[item], reverse=True)
    ideal_dcg = dcg_at_k(ideal, grades, k, gain=gain)
    if ideal_dcg <= 0.0:
        return 0.0
    return dcg_at_k(ranking, grades, k, gain=gain) / ideal_dcg


# --------------------------------------------------------------------------- over a run


def accuracy_at_k(rankings: Rankings, targets: Mapping[Hashable, Hashable], k: int) -> float:
    """Fraction of queries whose single gold target is among the first ``k`` ranked ids.

    ``targets`` maps each query to its one correct id (single-answer protocols such as
    "the paper's central figure"). A query of ``targets`` missing from ``rankings``
    counts as a miss; queries not in ``targets`` are ignored. Returns 0.0 for no
    targets. For several gold ids per query use :func:`mean_hit_at_k`.
    """
    _check_k(k)
    if not targets:
        return 0.0
    hits = sum(1 for qid, target in targets.items() if target in _dedupe(rankings.get(qid, ()))[:k])
    return hits / len(targets)


def _mean_over_queries(
    per_query: Callable[[Sequence[Hashable], Relevance], float],
    rankings: Rankings,
    qrels: Qrels,
    has_relevant: Callable[[Relevance], bool],
    skip_no_relevant: bool,
) -> float:
    """Average ``per_query`` over the queries of ``qrels`` (missing rankings count as empty)."""
    scores = [
        per_query(rankings.get(qid, ()), relevant)
        for qid, relevant in qrels.items()
        if not skip_no_relevant or has_relevant(relevant)
    ]
    return sum(scores) / len(scores) if scores else 0.0


def _has_binary(threshold: float) -> Callable[[Relevance], bool]:
    return lambda relevant: bool(_relevant_ids(relevant, threshold))


def _has_positive_grade(relevant: Relevance) -> bool:
    return any(grade > 0 for grade in _grades(relevant).values())


def mean_precision_at_k(
    rankings: Rankings, qrels: Qrels, k: int, *, threshold: float = 1, skip_no_relevant: bool = True
) -> float:
    """Mean of :func:`precision_at_k` over the queries of ``qrels`` (see module conventions)."""
    _check_k(k)
    return _mean_over_queries(
        lambda r, rel: precision_at_k(r, rel, k, threshold=threshold),
        rankings, qrels, _has_binary(threshold), skip_no_relevant,
    )


def mean_recall_at_k(
    rankings: Rankings, qrels: Qrels, k: int, *, threshold: float = 1, skip_no_relevant: bool = True
) -> float:
    """Mean of :func:`recall_at_k` over the queries of ``qrels`` (see module conventions)."""
    _check_k(k)
    return _mean_over_queries(
        lambda r, rel: recall_at_k(r, rel, k, threshold=threshold),
        rankings, qrels, _has_binary(threshold), skip_no_relevant,
    )


def mean_hit_at_k(
    rankings: Rankings, qrels: Qrels, k: int, *, threshold: float = 1, skip_no_relevant: bool = True
) -> float:
    """Mean of :func:`hit_at_k` (hit rate / success@k) over the queries of ``qrels``."""
    _check_k(k)
    return _mean_over_queries(
        lambda r, rel: hit_at_k(r, rel, k, threshold=threshold),
        rankings, qrels, _has_binary(threshold), skip_no_relevant,
    )


def mean_reciprocal_rank(
    rankings: Rankings, qrels: Qrels, *, threshold: float = 1, skip_no_relevant: bool = True
) -> float:
    """MRR: mean of :func:`reciprocal_rank` over the queries of ``qrels``."""
    return _mean_over_queries(
        lambda r, rel: reciprocal_rank(r, rel, threshold=threshold),
        rankings, qrels, _has_binary(threshold), skip_no_relevant,
    )


def mean_average_precision(
    rankings: Rankings, qrels: Qrels, *, threshold: float = 1, skip_no_relevant: bool = True
) -> float:
    """MAP: mean of :func:`average_precision` over the queries of ``qrels``."""
    return _mean_over_queries(
        lambda r, rel: average_precision(r, rel, threshold=threshold),
        rankings, qrels, _has_binary(threshold), skip_no_relevant,
    )


def mean_ndcg_at_k(
    rankings: Rankings,
    qrels: Qrels,
    k: Optional[int] = None,
    *,
    gain: str = "linear",
    skip_no_relevant: bool = True,
) -> float:
    """Mean of :func:`ndcg_at_k` over the queries of ``qrels``.

    With ``skip_no_relevant`` a query is skipped when no judged id has a positive grade.
    """
    if k is not None:
        _check_k(k)
    return _mean_over_queries(
        lambda r, rel: ndcg_at_k(r, rel, k, gain=gain),
        rankings, qrels, _has_positive_grade, skip_no_relevant,
    )
