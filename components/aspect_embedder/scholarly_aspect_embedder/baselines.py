"""Retrieval baselines for faceted paper similarity (CSFCube).

A ranker is prepared once on the whole abstract collection and then ranks pools::

    ranker.prepare(records)                       # corpus statistics only, no relevance labels
    ranker.rank(query, candidates, facet)         # -> [(cand_pid, distance), ...], smallest first

* :class:`TfidfFacetRanker`: cosine of TF-IDF vectors (the settings of
  :class:`scholarly_nlp.retrieval.TfidfRanker`), IDF from the collection.
* :class:`BM25FacetRanker`: BM25 (:class:`scholarly_nlp.retrieval.BM25Ranker`'s
  tokenisation and bm25s index), IDF and average length from the collection.
* :class:`MiniLMRanker`: zero-shot cosine of mean-pooled all-MiniLM-L6-v2 embeddings of the
  whole title + abstract (:class:`scholarly_nlp.ml.sentence_encoder.SentenceEncoder`).

The lexical rankers work "on the facet's sentences": the query text is the query's sentences
whose role maps to the facet (:func:`scholarly_nlp.doc.roles.aspect_of_role`; ``objective``
counts as background), or the whole title + abstract when it has none. Two candidate-text
rules were compared on the CSFCube dev queries (``fold1_dev``: 8 queries per facet, 24 in
``all``; MAP / NDCG%20 of the ``all`` row, percent, collection = the 1946 CSFCube abstracts):

======  =========================================  ==========================================
ranker  (a) candidate's same-facet sentences       (b) candidate's whole title + abstract
======  =========================================  ==========================================
TF-IDF  MAP 33.85 / NDCG%20 52.79                  MAP 31.40 / NDCG%20 50.00
BM25    MAP 35.80 / NDCG%20 52.72                  MAP 32.89 / NDCG%20 50.33
======  =========================================  ==========================================

Rule (a), the candidate's same-facet sentences (whole text when it has none), is better for
both and is the default (``candidate_text="facet"``); rule (b) stays available as
``candidate_text="whole"``. The IDF statistics come from the collection of candidate texts
under the rule (per facet for (a)); no relevance label is used. For reference, MiniLM on the
whole texts gives MAP 40.97 / NDCG%20 57.50 on the same queries. (The CSFCube copy these were
measured on holds only the ``fold1_dev`` queries, so "dev" and "all queries" coincide here.)

Distances are negative scores (``1 - cosine`` for MiniLM); ties keep the pool's order.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Protocol, Sequence, Tuple

import numpy as np

from scholarly_nlp import FACETS, aspect_of_role, check_facet
from scholarly_nlp.readers import AbstractRecord
from scholarly_nlp.retrieval import BM25Ranker, TfidfRanker, order_by_scores

__all__ = ["CANDIDATE_TEXT_RULES", "FacetRanker", "BM25FacetRanker", "MiniLMRanker", "TfidfFacetRanker",
           "SIMILARITY_BASELINES", "facet_text", "whole_text"]

CANDIDATE_TEXT_RULES = ("facet", "whole")
"""Candidate texts of the lexical rankers: the facet's sentences (default), or the whole title + abstract."""


class FacetRanker(Protocol):
    """What the CSFCube harness needs of a ranker."""

    def prepare(self, records: Sequence[AbstractRecord]) -> None:
        """Fit corpus statistics / caches on the whole abstract collection."""

    def rank(self, query: AbstractRecord, candidates: Sequence[AbstractRecord],
             facet: str) -> List[Tuple[str, float]]:
        """All candidates as ``(pid, distance)``, smallest distance (most similar) first."""


def whole_text(record: AbstractRecord) -> str:
    """The title and all abstract sentences, joined by spaces."""
    return " ".join(part.strip() for part in [record.title, *record.sentences] if part and part.strip())


def facet_text(record: AbstractRecord, facet: str) -> str:
    """The record's sentences whose role maps to ``facet``; the whole text when it has none."""
    roles = record.roles or []
    picked = [s.strip() for s, r in zip(record.sentences, roles) if aspect_of_role(r) == facet and s.strip()]
    return " ".join(picked) if picked else whole_text(record)


def _ranked(candidates: Sequence[AbstractRecord], scores: Sequence[float]) -> List[Tuple[str, float]]:
    """``(pid, -score)`` of every candidate, best score first, ties in pool order."""
    return [(candidates[i].paper_id, -float(scores[i])) for i in order_by_scores(scores)]


class _LexicalFacetRanker:
    """Shared logic: one collection of candidate texts per facet, scored by a contributions ranker."""

    name = "lexical"

    def __init__(self, candidate_text: str = "facet") -> None:
        if candidate_text not in CANDIDATE_TEXT_RULES:
            raise ValueError(f"candidate_text must be one of {CANDIDATE_TEXT_RULES}, got {candidate_text!r}")
        self.candidate_text = candidate_text
        self._index: Dict[str, int] = {}
        self._texts: Dict[str, List[str]] = {}
        self._scorers: Dict[str, Any] = {}

    def _make_scorer(self) -> Any:  # pragma: no cover - overridden
        raise NotImplementedError

    def prepare(self, records: Sequence[AbstractRecord]) -> None:
        """Index the collection: the candidate text of every record, per facet.

        A scorer caches the index of the last text list it saw, so each distinct list (one
        per facet for rule (a), one shared by the facets for rule (b)) gets its own scorer.
        """
        self._index = {r.paper_id: i for i, r in enumerate(records)}
        if self.candidate_text == "whole":
            whole, scorer = [whole_text(r) for r in records], self._make_scorer()
            self._texts = {facet: whole for facet in FACETS}
            self._scorers = {facet: scorer for facet in FACETS}
        else:
            self._texts = {facet: [facet_text(r, facet) for r in records] for facet in FACETS}
            self._scorers = {facet: self._make_scorer() for facet in FACETS}

    def rank(self, query: AbstractRecord, candidates: Sequence[AbstractRecord],
             facet: str) -> List[Tuple[str, float]]:
        """Candidates by similarity of their text to the query's facet text, best first.

        Prepares on the query and candidates alone when :meth:`prepare` was not called;
        ValueError when a candidate is not in the prepared collection.
        """
        check_facet(facet)
        if not self._index:
            self.prepare([query, *[c for c in candidates if c.paper_id != query.paper_id]])
        unknown = [c.paper_id for c in candidates if c.paper_id not in self._index]
        if unknown:
            raise ValueError(f"{len(unknown)} candidate(s) not in the prepared collection, e.g. {unknown[0]!r}")
        if not candidates:
            return []
        scores = self._scorers[facet].scores(facet_text(query, facet), self._texts[facet])
        return _ranked(candidates, [scores[self._index[c.paper_id]] for c in candidates])


class TfidfFacetRanker(_LexicalFacetRanker):
    """TF-IDF cosine of the query's facet sentences with each candidate's text (rule (a) by default)."""

    name = "tfidf"

    def _make_scorer(self) -> Any:
        """A :class:`TfidfRanker` (fitted on the collection on first use)."""
        return TfidfRanker()


class BM25FacetRanker(_LexicalFacetRanker):
    """BM25 of the query's facet sentences against each candidate's text (rule (a) by default)."""

    name = "bm25"

    def __init__(self, candidate_text: str = "facet", k1: float = 1.5, b: float = 0.75) -> None:
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
             facet: str) -> List[Tuple[str, float]]:
        """Candidates by cosine with the query (the facet does not change the embedding)."""
        from scholarly_nlp.ml import cosine_matrix

        check_facet(facet)
        if not candidates:
            return []
        vectors = self.embed([query, *candidates])
        cosines = cosine_matrix(vectors[:1], vectors[1:])[0].astype(np.float64)
        order = order_by_scores(cosines)
        return [(candidates[i].paper_id, 1.0 - float(cosines[i])) for i in order]


#: Name -> factory of every CSFCube baseline (the benchmark runs them all).
SIMILARITY_BASELINES = {"tfidf": TfidfFacetRanker, "bm25": BM25FacetRanker, "minilm": MiniLMRanker}
