"""Paper similarity on one query aspect, with explanations: :func:`similar`.

Candidates are ranked by the Euclidean distance of their aspect search vectors (see
:mod:`.vectors`); each hit carries its per-aspect cosines and the pair of sentences (a query
sentence of the query aspect, any candidate sentence) whose vectors are most similar.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Optional, Sequence, Union

import numpy
from spacy.tokens import Doc

from scholarly_nlp import ScholarlyNLPError, aspect_sentences, check_aspect
from .index import AspectIndex, doc_rows
from .vectors import (ASPECT_WEIGHT, aspect_cosines_of_rows, aspect_matrix, aspect_search_vectors,
                      doc_aspect_vectors, doc_sentence_vectors, normalise_rows)


@dataclass
class SentenceMatch:
    """The query sentence and candidate sentence whose vectors have the highest cosine."""

    query_sentence: str
    query_aspect: Optional[str]
    candidate_sentence: str
    candidate_aspect: Optional[str]
    similarity: float


@dataclass
class SimilarPaper:
    """One ranked hit: smaller ``distance`` is more similar; ``aspect_scores`` are cosines."""

    rank: int
    paper_id: Optional[str]
    title: str
    distance: float
    aspect_scores: dict[str, float] = field(default_factory=dict)
    explanation: Optional[SentenceMatch] = None

    def to_dict(self) -> dict:
        """A JSON-able dict (the explanation as a nested dict or None)."""
        return asdict(self)


def similar(query_doc: Doc, candidates: Union[Sequence[Doc], AspectIndex], aspect: str = "method", k: int = 10, *,
            aspect_weight: float = ASPECT_WEIGHT) -> list[SimilarPaper]:
    """The ``k`` candidates most similar to ``query_doc`` on ``aspect``, most similar first.

    ``candidates`` is a list of Docs processed by the aspect embedder, or an
    :class:`AspectIndex`. The query paper itself (same ``paper_id``) is left out. An empty
    candidate list gives ``[]``; fewer than ``k`` candidates gives all of them.
    UnknownNameError for an unknown aspect, ValueError for ``k < 1``,
    MissingAspectVectorsError when the query (or a candidate Doc) has no aspect vectors.
    """
    check_aspect(aspect)
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k}")
    query_aspects = aspect_matrix(doc_aspect_vectors(query_doc, "query paper"))
    query_vector = aspect_search_vectors(query_aspects[None], aspect, aspect_weight)[0]
    query_sents = _query_sentences(query_doc, aspect)
    if isinstance(candidates, AspectIndex):
        return _similar_in_index(query_doc, query_aspects, query_vector, query_sents, candidates, aspect, k,
                                 aspect_weight)
    return _similar_in_docs(query_doc, query_aspects, query_vector, query_sents, list(candidates), aspect, k,
                            aspect_weight)


def _similar_in_docs(query_doc, query_aspects, query_vector, query_sents, docs, aspect, k, aspect_weight):
    """Rank candidate Docs by brute force."""
    docs = [d for d in docs if query_doc._.paper_id is None or d._.paper_id != query_doc._.paper_id]
    if not docs:
        return []
    rows = [doc_rows(d) for d in docs]
    aspects = [a for _p, a, _v, _s in rows]
    _check_widths(query_aspects, aspects)
    vectors = aspect_search_vectors(numpy.stack(aspects), aspect, aspect_weight)
    distances = numpy.linalg.norm(vectors - query_vector, axis=1)
    order = numpy.lexsort((numpy.arange(len(docs)), distances))[:k]
    hits = []
    for rank, i in enumerate(order, start=1):
        paper, _a, sentence_vectors, sentences = rows[i]
        hits.append(SimilarPaper(rank, paper["paper_id"], paper["title"], float(distances[i]),
                                 aspect_cosines_of_rows(query_aspects, aspects[i]),
                                 explain(query_sents, sentences, sentence_vectors)))
    return hits


def _similar_in_index(query_doc, query_aspects, query_vector, query_sents, index, aspect, k, aspect_weight):
    """Rank an index's papers with its chunked exact search."""
    if len(index) == 0:
        return []
    if abs(index.aspect_weight - aspect_weight) > 1e-9:
        raise ValueError(f"the index was built with aspect_weight={index.aspect_weight}, not {aspect_weight}; "
                         "rebuild it")
    if index.width != query_aspects.shape[1]:
        raise ScholarlyNLPError(f"the query's aspect vectors have width {query_aspects.shape[1]} but the index "
                                f"{index.path} has width {index.width}: embed both with the same model")
    exclude = index.rows_for(query_doc._.paper_id) if query_doc._.paper_id is not None else []
    hits = []
    for rank, (row, distance) in enumerate(index.search(query_vector, aspect, k, exclude=exclude), start=1):
        paper = index.papers[row]
        hits.append(SimilarPaper(rank, paper["paper_id"], paper.get("title") or "", distance,
                                 aspect_cosines_of_rows(query_aspects, index.paper_aspects(row)),
                                 explain(query_sents, *index.paper_sentences(row))))
    return hits


def _check_widths(query_aspects: numpy.ndarray, aspects: list[numpy.ndarray]) -> None:
    """ScholarlyNLPError when candidate aspect widths differ from the query's."""
    widths = {a.shape[1] for a in aspects}
    if widths != {query_aspects.shape[1]}:
        raise ScholarlyNLPError(f"aspect vectors of widths {sorted(widths)} for a query of width "
                                f"{query_aspects.shape[1]}: embed all papers with the same model")


def _query_sentences(doc: Doc, aspect: str) -> Optional[tuple[list[dict], numpy.ndarray]]:
    """The query's explanation sentences and vectors: those of ``aspect``, else all
    abstract sentences, else the title; None without sentence vectors."""
    vectors = doc_sentence_vectors(doc)
    if vectors is None or not len(vectors):
        return None
    items = aspect_sentences(doc)
    if len(items) != len(vectors):
        raise ScholarlyNLPError(f"paper {doc._.paper_id}: {len(vectors)} sentence vectors for {len(items)} "
                                "sentences; rerun the aspect_embedder")
    for wanted in (lambda a: a == aspect, lambda a: a != "title", lambda a: a == "title"):
        rows = [i for i, (_s, a) in enumerate(items) if wanted(a)]
        if rows:
            return [{"text": items[i][0].text, "aspect": items[i][1]} for i in rows], vectors[rows]
    return None


def explain(query: Optional[tuple[list[dict], numpy.ndarray]], candidate_rows: list[dict],
            candidate_vectors: Optional[numpy.ndarray]) -> Optional[SentenceMatch]:
    """The (query sentence, candidate sentence) pair with the highest cosine, or None when
    either side has no sentence vectors.

    ``query`` is (sentence rows, vectors); a sentence row is ``{"text", "aspect"}``.
    """
    if query is None or candidate_vectors is None or not len(candidate_vectors) or not candidate_rows:
        return None
    query_rows, query_vectors = query
    cosines = normalise_rows(query_vectors) @ normalise_rows(candidate_vectors).T
    qi, ci = numpy.unravel_index(int(numpy.argmax(cosines)), cosines.shape)
    return SentenceMatch(query_rows[qi]["text"], query_rows[qi]["aspect"], candidate_rows[ci]["text"],
                         candidate_rows[ci]["aspect"], float(cosines[qi, ci]))
