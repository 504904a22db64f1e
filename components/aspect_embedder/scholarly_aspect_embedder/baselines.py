"""Retrieval baselines for paper similarity on one query aspect (CSFCube's faceted similarity).

A ranker is prepared once on the whole abstract collection and then ranks pools::

    ranker.prepare(records)                       # corpus statistics only, no relevance labels
    ranker.rank(query, candidates, aspect)        # -> [(cand_pid, distance), ...], smallest first

* :class:`TfidfAspectRanker`: cosine of TF-IDF vectors (the settings of
  :class:`scholarly_nlp.retrieval.TfidfRanker`), IDF from the collection.
* :class:`BM25AspectRanker`: BM25 (:class:`scholarly_nlp.retrieval.BM25Ranker`'s
  tokenisation and bm25s index), IDF and average length from the collection.
* :class:`MiniLMRanker`: zero-shot cosine of mean-pooled all-MiniLM-L6-v2 embeddings of the
  whole title + abstract (:class:`scholarly_nlp.ml.sentence_encoder.SentenceEncoder`).

The lexical rankers work "on the aspect's sentences": the query text is the query's sentences
whose role maps to the aspect (:func:`scholarly_nlp.doc.roles.aspect_of_role`; ``objective``
counts as background), or the whole title + abstract when it has none. Two candidate-text
rules were compared on the CSFCube dev queries (``fold1_dev``: 8 queries per aspect, 24 in
``all``; MAP / NDCG%20 of the ``all`` row, percent, collection = the 1946 CSFCube abstracts):

======  =========================================  ==========================================
ranker  (a) candidate's same-aspect sentences      (b) candidate's whole title + abstract
======  =========================================  ==========================================
TF-IDF  MAP 33.85 / NDCG%20 52.79                  MAP 31.40 / NDCG%20 50.00
BM25    MAP 35.80 / NDCG%20 52.72                  MAP 32.89 / NDCG%20 50.33
======  =========================================  ==========================================

Rule (a), the candidate's same-aspect sentences (whole text when it has none), is better for
both and is the default (``candidate_text="aspect"``); rule (b) stays available as
``candidate_text="whole"``. The IDF statistics come from the collection of candidate texts
under the rule (per aspect for (a)); no relevance label is used. For reference, MiniLM on the
whole texts gives MAP 40.97 / NDCG%20 57.50 on the same queries. (The CSFCube copy these were
measured on holds only the ``fold1_dev`` queries, so "dev" and "all queries" coincide here.)

Distances are negative scores (``1 - cosine`` for MiniLM); ties keep the pool's order.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Protocol, Sequence, Tuple

import numpy as np

from scholarly_nlp import QUERY_ASPECTS, aspect_of_role, check_aspect
from scholarly_nlp.readers import AbstractRecord
from scholarly_nlp.retrieval import BM25Ranker, TfidfRanker, order_by_scores

__all__ = ["CANDIDATE_TEXT_RULES", "AspectRanker", "BM25AspectRanker", "MiniLMRanker", "TfidfAspectRanker",
           "SIMILARITY_BASELINES", "aspect_text", "whole_text"]

CANDIDATE_TEXT_RULES = ("aspect", "whole")
"""Candidate texts of the lexical rankers: the aspect's sentences (default), or the whole title + abstract."""


class AspectRanker(Protocol):
    """What the CSFCube harness needs of a ranker."""

    def prepare(self, records: Sequence[AbstractRecord]) -> None:
        """Fit corpus statistics / caches on the whole abstract collection."""

    def rank(self, query: AbstractRecord, candidates: Sequence[AbstractRecord],
             aspect: str) -> List[Tuple[str, float]]:
        """All candidates as ``(pid, distance)``, smallest distance (most similar) first."""


def whole_text(record: AbstractRecord) -> str:
    """The title and all abstract sentences, joined by spaces."""
    return " ".join(part.strip() for part in [record.title, *record.sentences] if part and part.strip())


def aspect_text(record: AbstractRecord, aspect: str) -> str:
    """The record's sentences whose role maps to ``aspect``; the whole text when it has none."""
    roles = record.roles or []
    picked = [s.strip() for s, r in zip(record.sentences, roles) if aspect_of_role(r) == aspect and s.strip()]
    return " ".join(picked) if picked else whole_text(record)


def _ranked(candidates: Sequence[AbstractRecord], scores: Sequence[float]) -> List[Tuple[str, float]]:
    """``(pid, -score)`` of every candidate, best score first, ties in pool order."""
    return [(candidates[i].paper_id, -float(scores[i])) for i in order_by_scores(scores)]


class _LexicalAspectRanker:
    """Shared logic: one collection of candidate texts per aspect, scored by a contributions ranker."""

    name = "lexical"

    def __init__(self, candidate_text: str = "aspect") -> None:
        if candidate_text not in CANDIDATE_TEXT_RULES:
            raise ValueError(f"candidate_text must be one of {CANDIDATE_TEXT_RULES}, got {candidate_text!r}")
        self.candidate_text = candidate_text
        self._index: Dict[str, int] = {}
        self._texts: Dict[str, List[str]] = {}
        self._scorers: Dict[str, Any] = {}

    def _make_scorer(self) -> Any:  # pragma: no cover - overridden
        raise NotImplementedError

    def prepare(self, records: Sequence[AbstractRecord]) -> None:
        """Index the collection: the candidate text of every record, per aspect.

        A scorer caches the index of the last text list it saw, so each distinct list (one
        per aspect for rule (a), one shared by the aspects for rule (b)) gets its own scorer.
        """
        self._index = {r.paper_id: i for i, r in enumerate(records)}
        if self.candidate_text == "whole":
            whole, scorer = [whole_text(r) for r in records], self._make_scorer()
            self._texts = {aspect: whole for aspect in QUERY_ASPECTS}
            self._scorers = {aspect: scorer for aspect in QUERY_ASPECTS}
        else:
            self._texts = {aspect: [aspect_text(r, aspect) for r in records] for aspect in QUERY_ASPECTS}
            self._scorers = {aspect: self._make_scorer() for aspect in QUERY_ASPECTS}

    def rank(self, query: AbstractRecord, candidates: Sequence[AbstractRecord],
             aspect: str) -> List[Tuple[str, float]]:
        """Candidates by similarity of their text to the query's aspect text, best first.

        Prepares on the query and candidates alone when :meth:`prepare` was not called;
        ValueError when a candidate is not in the prepared collection.
        """
        check_aspect(aspect)
        if not self._index:
            self.prepare([query, *[c for c in candidates if c.paper_id != query.paper_id]])
        unknown = [c.paper_id for c in candidates if c.paper_id not in self._index]
        if unknown:
            raise ValueError(f"{len(unknown)} candidate(s) not in the prepared collection, e.g. {unknown[0]!r}")
        if not candidates:
            return []
        scores = self._scorers[aspect].scores(aspect_text(query, aspect), self._texts[aspect])
        return _ranked(candidates, [scores[self._index[c.paper_id]] for c in candidates])


class TfidfAspectRanker(_LexicalAspectRanker):
    """TF-IDF cosine of the query's aspect sentences with each candidate's text (rule (a) by default)."""

    name = "tfidf"

    def _make_scorer(self) -> Any:
        """A :class:`TfidfRanker` (fitted on the collection on first use)."""
        return TfidfRanker()


class BM25AspectRanker(_LexicalAspectRanker):
    """BM25 of the query's aspect sentences against each candidate's text (rule (a) by default)."""

    name = "bm25"

    def __init__(self, candidate_text: str = "aspect", k1: float = 1.5, b: float = 0.75) -> None:
        super().__init__(candidate_text)
        self.k1 = k1
        self.b = b

    def _make_scorer(self) -> Any:
        """A :class:`BM25Ranker` (indexing the collection on first use)."""
        return BM25Ranker(k1=self.k1, b=self.b)


class MiniLMRanker:
    """Zero-shot cosine of whole title + abstract embeddings; distance ``1 - cosine``.

    ``backbone`` is any :class:`~scholarly_nlp.ml.sentence_encoder.SentenceEncoder` name or
    folder (all-MiniLM-L6-v2 by default; tests pass a tiny random model), or pass a ready
    ``encoder`` (anything with ``encode(texts) -> array``). Embeddings are cached per pid and
    computed lazily, so :meth:`prepare` costs nothing.
    """

    name = "minilm"

    def __init__(self, backbone: Optional[str] = None, encoder: Any = None, batch_size: int = 32) -> None:
        self.backbone = backbone
        self.batch_size = batch_size
        self._encoder = encoder
        self._cache: Dict[str, np.ndarray] = {}

    @property
    def encoder(self) -> Any:
        """The sentence encoder (built on first use)."""
        if self._encoder is None:
            from scholarly_nlp.ml import DEFAULT_BACKBONE, SentenceEncoder

            self._encoder = SentenceEncoder(self.backbone or DEFAULT_BACKBONE, batch_size=self.batch_size)
        return self._encoder

    def prepare(self, records: Sequence[AbstractRecord]) -> None:
        """Nothing to fit: embeddings are computed when a pool first needs them."""

    def embed(self, records: Sequence[AbstractRecord]) -> np.ndarray:
        """Unit embeddings (one row per record) of the whole texts, encoding only uncached pids."""
        todo = {r.paper_id: whole_text(r) for r in records if r.paper_id not in self._cache}
        if todo:
            vectors = np.asarray(self.encoder.encode(list(todo.values())), dtype=np.float32)
            self._cache.update(zip(todo, vectors))
        return np.stack([self._cache[r.paper_id] for r in records]) if records else np.zeros((0, 0), np.float32)

    def rank(self, query: AbstractRecord, candidates: Sequence[AbstractRecord],
             aspect: str) -> List[Tuple[str, float]]:
        """Candidates by cosine with the query (the aspect does not change the embedding)."""
        from scholarly_nlp.ml import cosine_matrix

        check_aspect(aspect)
        if not candidates:
            return []
        vectors = self.embed([query, *candidates])
        cosines = cosine_matrix(vectors[:1], vectors[1:])[0].astype(np.float64)
        order = order_by_scores(cosines)
        return [(candidates[i].paper_id, 1.0 - float(cosines[i])) for i in order]


#: Name -> factory of every CSFCube baseline (the benchmark runs them all).
SIMILARITY_BASELINES = {"tfidf": TfidfAspectRanker, "bm25": BM25AspectRanker, "minilm": MiniLMRanker}
