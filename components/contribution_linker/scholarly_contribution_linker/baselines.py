"""Baseline rankers for contribution linking: introduction sentence -> body paragraphs.

Every ranker has ``rank(sentence_text, paragraphs) -> list[int]``: all paragraph indices, best
first (``paragraphs`` are strings or Spans; an empty list gives ``[]``). Ties keep document
order. Each ranker caches the index/embeddings of the last paragraph list it saw, so ranking
the many contribution sentences of one paper indexes its body once.

* :class:`~scholarly_nlp.retrieval.BM25Ranker`, :class:`~scholarly_nlp.retrieval.TfidfRanker`,
  :class:`~scholarly_nlp.retrieval.EmbeddingRanker`: the generic rankers of
  :mod:`scholarly_nlp.retrieval` (BM25, TF-IDF cosine, zero-shot embedding cosine).
* :class:`FirstParagraphRanker`: document order (the first body paragraph first).
* :class:`RandomRanker`: a seeded random order; its exact expectation is
  :func:`.evaluation.expected_random_metrics`.
"""

from __future__ import annotations

import random
from typing import Any, Sequence

from scholarly_nlp.retrieval import BM25Ranker, EmbeddingRanker, TfidfRanker, order_by_scores

__all__ = ["BASELINES", "BM25Ranker", "EmbeddingRanker", "FirstParagraphRanker", "RandomRanker",
           "TfidfRanker", "order_by_scores"]


class FirstParagraphRanker:
    """Reference: document order, i.e. always the first body paragraph first."""

    name = "first_paragraph"

    def rank(self, sentence_text: str, paragraphs: Sequence[Any]) -> list[int]:
        """``[0, 1, ..., n-1]`` whatever the sentence."""
        return list(range(len(paragraphs)))


class RandomRanker:
    """Reference: a uniformly random order from a seeded generator (reproducible per seed)."""

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self._rng = random.Random(seed)

    def rank(self, sentence_text: str, paragraphs: Sequence[Any]) -> list[int]:
        """A random permutation of the paragraph indices."""
        order = list(range(len(paragraphs)))
        self._rng.shuffle(order)
        return order


#: Name -> factory of every baseline ranker (the benchmark runs them all).
BASELINES = {
    "bm25": BM25Ranker,
    "tfidf": TfidfRanker,
    "minilm": EmbeddingRanker,
    "first_paragraph": FirstParagraphRanker,
    "random": RandomRanker,
}
