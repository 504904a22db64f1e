"""``example_precision_at_1``: mean precision at rank 1 over a run."""

from __future__ import annotations

from typing import Collection, Hashable, Mapping, Sequence, Union

Relevance = Union[Collection[Hashable], Mapping[Hashable, float]]


def _relevant(relevant: Relevance, threshold: float) -> set:
    if isinstance(relevant, Mapping):
        return {item for item, grade in relevant.items() if grade >= threshold}
    return set(relevant)


def precision_at_1(rankings: Mapping[Hashable, Sequence[Hashable]], qrels: Mapping[Hashable, Relevance],
                   *, threshold: float = 1) -> float:
    """Fraction of the judged queries whose top-ranked id is relevant.

    ``rankings = {query: [id, ...]}`` best first; ``qrels = {query: {id: grade}}`` (relevant
    when ``grade >= threshold``) or ``{query: {id, ...}}``. Queries with nothing relevant
    are skipped; a query without a ranking scores 0. Returns 0.0 when no query is judged.
    """
    scores = []
    for query, relevant in qrels.items():
        relevant_ids = _relevant(relevant, threshold)
        if not relevant_ids:
            continue
        ranking = rankings.get(query) or ()
        scores.append(1.0 if len(ranking) and ranking[0] in relevant_ids else 0.0)
    return sum(scores) / len(scores) if scores else 0.0
