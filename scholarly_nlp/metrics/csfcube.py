"""CSFCube's official ranking evaluation, re-implemented.

Reference: ``eval_scripts/ranking_eval.py`` of iesl/CSFCube (function ``compute_metrics``
and ``aggregate_metrics_crossval``), which calls the ``rank_metrics`` helpers of
https://gist.github.com/bwhite/3726239 (``ndcg_at_k`` with its default ``method=0``).
The conventions matched here, per query, from the candidates' gold grades listed in the
order the system ranked them (``n`` = number of ranked candidates = the pool size):

* **NDCG** uses the raw grade (0-3, ``relevance_adju``) as gain and the discount
  ``log2(max(rank, 2))``: ranks 1 and 2 both have weight 1, rank 3 has 1/log2(3), rank 4
  1/2, ... The ideal DCG sorts the *ranked* grades in decreasing order (for a run that
  ranks the whole pool this is the ideal ordering of the pool). Ideal DCG 0 -> 0.0.
  Three cut-offs: ``ndcg`` (whole list), ``ndcg@20`` and ``ndcg%20`` = NDCG at
  ``int(0.20 * n)`` (20 % of the pool, rounded down; 0 -> 0.0).
* **Binary metrics** count a candidate as relevant when ``grade >= 2``
  (``threshold_grade=2`` in the script): ``map`` (average precision, the mean of
  precision@rank over the relevant positions, i.e. normalised by the number of relevant
  candidates in the ranked list; 0.0 when there is none), ``mrr`` (1/rank of the first
  relevant, 0.0 if none), ``recall@20`` (relevant in the top 20 / all relevant, 0.0 if
  none), ``precision@20``, ``f1@20`` (per-query harmonic mean of the two, 0.0 if both 0)
  and ``r_precision`` *as the script defines it*: precision at the rank of the **last**
  relevant candidate (not TREC's precision at R).
* **Aggregation**: the mean over queries; with ``folds`` given, the mean over folds of
  each fold's mean over its queries (the script's test score averages ``fold1_test`` and
  ``fold2_test`` this way; its dev score is ``fold1_dev`` alone).

Deliberate differences: precision@20 of a list shorter than 20 divides by 20 (the gist
raises ``ValueError``); with ``strict=True`` (default) a ranking must be a permutation of
the query's pool, so a run cannot silently be scored against a partial pool.

The metrics read no file: CSFCube's relevance and split files are read by
:mod:`scholarly_nlp.readers.csfcube` (``read_csfcube_qrels``, ``load_csfcube_qrels``,
``read_csfcube_folds``).
"""

from __future__ import annotations

import math
from typing import Dict, Hashable, List, Mapping, Optional, Sequence, Union

RELEVANCE_THRESHOLD = 2
"""Grade from which a CSFCube candidate counts as relevant for the binary metrics."""

CUTOFF = 20
"""The @K of the script's ``ndcg@20``, ``precision`` and ``recall``."""

POOL_FRACTION = 0.20
"""``ndcg%20`` cuts the ranking at ``int(POOL_FRACTION * pool size)``."""

__all__ = [
    "RELEVANCE_THRESHOLD",
    "CUTOFF",
    "POOL_FRACTION",
    "csfcube_dcg",
    "csfcube_ndcg",
    "csfcube_query_metrics",
    "ranked_grades",
    "csfcube_per_query",
    "evaluate_csfcube",
]


# --------------------------------------------------------------------------- per query


def csfcube_dcg(grades: Sequence[float], k: int) -> float:
    """DCG of the first ``k`` grades with gain = grade and discount ``log2(max(rank, 2))``."""
    return sum(g / math.log2(max(rank, 2)) for rank, g in enumerate(list(grades)[: max(k, 0)], start=1))


def csfcube_ndcg(grades: Sequence[float], k: int) -> float:
    """CSFCube NDCG@k of grades in ranked order; ideal = the same grades sorted, cut at k.

    Returns 0.0 when ``k <= 0`` or the ideal DCG is 0 (no positive grade in the top k
    of the ideal ordering).
    """
    ideal = csfcube_dcg(sorted(grades, reverse=True), k)
    return csfcube_dcg(grades, k) / ideal if ideal > 0 else 0.0


def _average_precision(binary: Sequence[int]) -> float:
    """Mean precision@rank over relevant positions (0.0 without relevant positions)."""
    precisions = []
    for rank, rel in enumerate(binary, start=1):
        if rel:
            precisions.append((len(precisions) + 1) / rank)
    return sum(precisions) / len(precisions) if precisions else 0.0


def _last_relevant_precision(binary: Sequence[int]) -> float:
    """The script's ``r_precision``: precision at the rank of the last relevant item."""
    last = max((rank for rank, rel in enumerate(binary, start=1) if rel), default=0)
    return sum(binary[:last]) / last if last else 0.0


def csfcube_query_metrics(
    grades: Sequence[float], *, k: int = CUTOFF, threshold: float = RELEVANCE_THRESHOLD
) -> Dict[str, float]:
    """All CSFCube metrics of one query from its candidates' grades in ranked order.

    Keys: ``ndcg``, ``ndcg@{k}``, ``ndcg%20``, ``map``, ``mrr``, ``recall@{k}``,
    ``precision@{k}``, ``f1@{k}``, ``r_precision`` (definitions in the module docstring).
    """
    grades = [float(g) for g in grades]
    binary = [1 if g >= threshold else 0 for g in grades]
    n_relevant = sum(binary)
    first = next((rank for rank, rel in enumerate(binary, start=1) if rel), None)
    rel_at_k = sum(binary[:k])
    precision = rel_at_k / k
    recall = rel_at_k / n_relevant if n_relevant else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return {
        "ndcg": csfcube_ndcg(grades, len(grades)),
        f"ndcg@{k}": csfcube_ndcg(grades, k),
        "ndcg%20": csfcube_ndcg(grades, int(POOL_FRACTION * len(grades))),
        "map": _average_precision(binary),
        "mrr": 1.0 / first if first else 0.0,
        f"recall@{k}": recall,
        f"precision@{k}": precision,
        f"f1@{k}": f1,
        "r_precision": _last_relevant_precision(binary),
    }


# --------------------------------------------------------------------------- a whole run


def _cand_id(entry: Union[Hashable, Sequence]) -> str:
    """A candidate id from a bare id or an official ``[pid, score]`` pair."""
    if isinstance(entry, (list, tuple)):
        entry = entry[0]
    return str(entry)


def ranked_grades(
    ranking: Sequence[Union[Hashable, Sequence]], judgements: Mapping[Hashable, float], *, strict: bool = True
) -> List[float]:
    """The gold grades of ``ranking``'s candidates, in ranked order.

    ``ranking`` holds candidate ids or ``[pid, score]`` pairs (the official ranked-file
    format). With ``strict`` a ValueError is raised unless the ranking is a permutation of
    the judged pool (no duplicate, no unjudged candidate, none missing). Without it,
    later duplicates are dropped, unjudged candidates get grade 0 and missing ones are
    simply absent (the pool size used by ``ndcg%20`` is then the ranking's length).
    """
    judged = {str(c): float(g) for c, g in judgements.items()}
    ids = [_cand_id(e) for e in ranking]
    if strict:
        problems = []
        if len(set(ids)) != len(ids):
            problems.append(f"{len(ids) - len(set(ids))} duplicate candidate(s)")
        unjudged = [c for c in ids if c not in judged]
        if unjudged:
            problems.append(f"{len(unjudged)} unjudged candidate(s), e.g. {unjudged[0]!r}")
        missing = set(judged) - set(ids)
        if missing:
            problems.append(f"{len(missing)} pool candidate(s) not ranked, e.g. {sorted(missing)[0]!r}")
        if problems:
            raise ValueError("ranking is not a permutation of the judged pool: " + "; ".join(problems))
    seen: set = set()
    out = []
    for c in ids:
        if c not in seen:
            seen.add(c)
            out.append(judged.get(c, 0.0))
    return out


def csfcube_per_query(
    ranked: Mapping[Hashable, Sequence],
    qrels: Mapping[Hashable, Mapping[Hashable, float]],
    *,
    k: int = CUTOFF,
    threshold: float = RELEVANCE_THRESHOLD,
    strict: bool = True,
) -> Dict[str, Dict[str, float]]:
    """Metrics of every query of ``qrels``: ``{query id: csfcube_query_metrics(...)}``.

    With ``strict`` every query of ``qrels`` must be ranked and every ranked query must be
    in ``qrels`` (ValueError otherwise, naming the first offender). Without it, a query
    missing from ``ranked`` scores as an empty ranking (all 0.0) and extra ranked queries
    are ignored. Query ids are compared as strings.
    """
    ranked_s = {str(q): r for q, r in ranked.items()}
    qrels_s = {str(q): j for q, j in qrels.items()}
    if strict:
        unranked = [q for q in qrels_s if q not in ranked_s]
        if unranked:
            raise ValueError(f"{len(unranked)} query(ies) of qrels not ranked, e.g. {unranked[0]!r}")
        unknown = [q for q in ranked_s if q not in qrels_s]
        if unknown:
            raise ValueError(f"{len(unknown)} ranked query(ies) not in qrels, e.g. {unknown[0]!r}")
    return {
        q: csfcube_query_metrics(
            ranked_grades(ranked_s.get(q, ()), judgements, strict=strict and q in ranked_s),
            k=k,
            threshold=threshold,
        )
        for q, judgements in qrels_s.items()
    }


def _mean_metrics(rows: Sequence[Mapping[str, float]]) -> Dict[str, float]:
    """Key-wise mean of metric dicts (all with the same keys)."""
    return {key: sum(row[key] for row in rows) / len(rows) for key in rows[0]}


def evaluate_csfcube(
    ranked: Mapping[Hashable, Sequence],
    qrels: Mapping[Hashable, Mapping[Hashable, float]],
    *,
    k: int = CUTOFF,
    threshold: float = RELEVANCE_THRESHOLD,
    folds: Optional[Mapping[str, Sequence[Hashable]]] = None,
    strict: bool = True,
) -> Dict[str, float]:
    """Evaluate a run the way CSFCube's ``ranking_eval.py`` does.

    ``ranked`` maps a query pid to its candidate pids best first (bare ids or ``[pid,
    score]`` pairs); ``qrels`` maps a query pid to ``{candidate pid: grade}`` (see
    :func:`scholarly_nlp.readers.read_csfcube_qrels`). Returns the metrics of
    :func:`csfcube_query_metrics` averaged over queries, plus ``num_queries``. With
    ``folds`` (fold name -> query ids, e.g. from
    :func:`scholarly_nlp.readers.read_csfcube_folds`) only those queries are evaluated and
    the result is the mean of the per-fold means, as the official cross-validated aggregation.
    Raises ValueError for an empty ``qrels`` or a fold query absent from ``qrels``.
    """
    if not qrels:
        raise ValueError("qrels is empty: nothing to evaluate")
    if folds is None:
        per_query = csfcube_per_query(ranked, qrels, k=k, threshold=threshold, strict=strict)
        result = _mean_metrics(list(per_query.values()))
        result["num_queries"] = len(per_query)
        return result
    qrels_s = {str(q): j for q, j in qrels.items()}
    wanted = {str(q) for fold in folds.values() for q in fold}
    absent = sorted(wanted - set(qrels_s))
    if absent:
        raise ValueError(f"{len(absent)} fold query(ies) not in qrels, e.g. {absent[0]!r}")
    subset_qrels = {q: qrels_s[q] for q in qrels_s if q in wanted}
    subset_ranked = {str(q): r for q, r in ranked.items() if str(q) in wanted}
    per_query = csfcube_per_query(subset_ranked, subset_qrels, k=k, threshold=threshold, strict=strict)
    fold_means = [_mean_metrics([per_query[str(q)] for q in fold]) for fold in folds.values() if fold]
    if not fold_means:
        raise ValueError("every fold is empty: nothing to evaluate")
    result = _mean_metrics(fold_means)
    result["num_queries"] = len(per_query)
    return result
