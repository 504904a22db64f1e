"""Figure recommendation (Kuzi and Zhai): TF-IDF retrieval, then reranking with figure embeddings.

Given a query figure and a pool of candidate papers:

1. every candidate figure's text (caption + context sentences) is scored by TF-IDF cosine
   with the query figure's text, and the best ``n_candidates`` (100) are kept;
2. those are reranked by ``(1 - weight) * tfidf + weight * cosine(embeddings)``, the
   embeddings being ``doc._.figure_vectors``. A figure without a vector counts as
   embedding cosine 0; with ``weight`` 0 (or no vectors at all) the TF-IDF order stays.

The query figure itself is never recommended; its paper's other figures may be. Results are
``(paper_id, fig_id, score)``, best first; ties keep the TF-IDF order, whose own ties keep
candidate order (papers as given, figures in document order).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Optional, Sequence

import numpy
from spacy.tokens import Doc

from scholarly_nlp import ScholarlyNLPError

from .baselines import TfidfSimilarity, top_indices
from .texts import figure_texts

DEFAULT_WEIGHT = 0.1  # chosen on the validation split; see projects/figure_embeddings
DEFAULT_CANDIDATES = 100


@dataclass
class Candidate:
    """A figure that can be recommended: ids, its text, its embedding (or None)."""

    paper_id: str
    fig_id: str
    text: str
    vector: Optional[numpy.ndarray]


def collect_candidates(docs: Iterable[Doc], include_tables: bool = False, window: int = 1, max_mentions: int = 3,
                       vectors: Optional[Sequence[dict]] = None) -> list[Candidate]:
    """The candidate figures of ``docs`` in order; ``vectors`` (per doc) replaces ``doc._.figure_vectors``."""
    found = []
    for d, doc in enumerate(docs):
        doc_vectors = vectors[d] if vectors is not None else (doc._.figure_vectors or {})
        for figure, text in figure_texts(doc, include_tables, window, max_mentions):
            vector = doc_vectors.get(figure.id)
            found.append(Candidate(doc._.paper_id or "", figure.id, text.joined(),
                                   numpy.asarray(vector, dtype=numpy.float32) if vector is not None else None))
    return found


def blend(tfidf: Any, embedding: Any, weight: float) -> Any:
    """The component's figure similarity: ``(1 - weight) * tfidf + weight * embedding`` cosine
    (scalars or arrays); weight 0 is TF-IDF alone, 1 the embeddings alone."""
    return (1.0 - weight) * tfidf + weight * embedding


def rerank(tfidf: numpy.ndarray, query_vector: Optional[numpy.ndarray], candidates: Sequence[Candidate], k: int,
           weight: float = DEFAULT_WEIGHT, n_candidates: int = DEFAULT_CANDIDATES,
           exclude: Optional[set[int]] = None) -> list[tuple[int, float]]:
    """Stage 2 on precomputed TF-IDF cosines ``tfidf`` (one per candidate): (index, score) of the best ``k``."""
    if k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    retrieved = top_indices(tfidf, n_candidates, exclude)
    scored = [(i, float(blend(tfidf[i], _cosine(query_vector, candidates[i].vector), weight))) for i in retrieved]
    order = sorted(range(len(scored)), key=lambda r: (-scored[r][1], r))
    return [scored[r] for r in order[:k]]


def rank_candidates(query: Candidate, candidates: Sequence[Candidate], k: int = 10, weight: float = DEFAULT_WEIGHT,
                    n_candidates: int = DEFAULT_CANDIDATES, same_paper: bool = False) -> list[tuple[int, float]]:
    """(index into ``candidates``, score) of the best ``k``: TF-IDF top ``n_candidates``, reranked.

    The query figure itself is never a neighbour; the other figures of the query's paper are
    left out too unless ``same_paper`` (evaluations of the embedding use them).
    """
    exclude = {i for i, c in enumerate(candidates)
               if c.paper_id == query.paper_id and (not same_paper or c.fig_id == query.fig_id)}
    texts = [c.text for c in candidates]
    tfidf = TfidfSimilarity(texts + [query.text]).cosine_to(query.text, texts)
    return rerank(tfidf, query.vector, candidates, k, weight, n_candidates, exclude)


def _cosine(a: Optional[numpy.ndarray], b: Optional[numpy.ndarray]) -> float:
    if a is None or b is None:
        return 0.0
    norm = float(numpy.linalg.norm(a) * numpy.linalg.norm(b))
    return float(a @ b) / norm if norm > 0 else 0.0


def similar_figures(query_doc: Doc, fig_id: str, candidate_docs: Iterable[Doc], k: int = 10, *,
                    embedder: Any = None, weight: Optional[float] = None, n_candidates: Optional[int] = None,
                    include_tables: Optional[bool] = None, same_paper: bool = False) -> list[tuple[str, str, float]]:
    """The ``k`` figures of ``candidate_docs`` most similar to figure ``fig_id`` of ``query_doc``;
    figures of the query's own paper are not neighbours unless ``same_paper``.

    ``embedder`` (a ``figure_embedder`` pipe) computes embeddings for docs that have no
    ``doc._.figure_vectors`` and supplies the defaults of ``weight``, ``n_candidates`` and
    ``include_tables`` from its config; without it, the docs' stored vectors are used and the
    defaults are 0.1, 100 and False. Raises ScholarlyNLPError when the query figure does not exist.
    """
    cfg = embedder.cfg if embedder is not None else {}
    weight = cfg.get("rerank_weight", DEFAULT_WEIGHT) if weight is None else weight
    n_candidates = cfg.get("n_candidates", DEFAULT_CANDIDATES) if n_candidates is None else n_candidates
    include_tables = cfg.get("include_tables", False) if include_tables is None else include_tables
    text_options = {"window": cfg.get("window", 1), "max_mentions": cfg.get("max_mentions", 3)}
    docs = list(candidate_docs)
    vectors = _vectors(embedder, [query_doc] + docs)
    query = [c for c in collect_candidates([query_doc], True, vectors=vectors[:1], **text_options) if c.fig_id == fig_id]
    if not query:
        known = ", ".join(f.id for f in query_doc._.figures) or "none"
        raise ScholarlyNLPError(f"paper {query_doc._.paper_id!r} has no figure {fig_id!r} (figures: {known})")
    candidates = collect_candidates(docs, include_tables, vectors=vectors[1:], **text_options)
    ranked = rank_candidates(query[0], candidates, k, weight, n_candidates, same_paper)
    return [(candidates[i].paper_id, candidates[i].fig_id, score) for i, score in ranked]


def _vectors(embedder: Any, docs: list[Doc]) -> list[dict]:
    """Each doc's figure vectors: stored ones, else (with an embedder) freshly computed."""
    out = [dict(doc._.figure_vectors or {}) for doc in docs]
    if embedder is None:
        return out
    missing = [i for i, doc in enumerate(docs) if doc._.figure_vectors is None]
    if missing:
        computed = embedder.predict([docs[i] for i in missing])
        for i, vectors in zip(missing, computed):
            out[i] = vectors
    return out
