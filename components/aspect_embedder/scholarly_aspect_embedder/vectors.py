"""The one scoring definition of aspect-based (CSFCube: "faceted") paper similarity.

A paper is a set of L2-normalised *aspect* vectors (title, background, method, result). Its
*paper vector* is the normalised mean of those it has. For a query aspect (one of
:data:`scholarly_nlp.QUERY_ASPECTS`), a paper becomes

    aspect_search_vector = [paper_vector, sqrt(w) * normalise(aspect_vectors[aspect])]

(the paper vector stands in for a missing aspect), and the Euclidean distance between
two such vectors ranks candidates: ``d² = 2 + 2w - 2 (cos(paper) + w cos(aspect))``, so a
smaller distance means a larger ``cos(paper) + w * cos(aspect)``. ``w = 0.5`` measured best on
CSFCube dev. :func:`aspect_search_vectors` is the batched form the index uses; the
single-paper functions call it, so both agree exactly.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

import numpy

from scholarly_nlp import ASPECTS, ScholarlyNLPError, check_aspect

ASPECT_WEIGHT = 0.5
"""Weight of the query aspect's cosine next to the paper vector's (CSFCube dev best)."""

_EPS = 1e-12


class MissingAspectVectorsError(ScholarlyNLPError):
    """A paper Doc has no ``doc._.aspect_vectors`` (the aspect embedder did not run on it)."""

    def __init__(self, paper_id: Optional[str], what: str = "paper"):
        self.paper_id = paper_id
        super().__init__(f"{what} {paper_id or '(no paper id)'} has no aspect vectors; "
                         "run the aspect_embedder first (a pipeline that sets doc._.aspect_vectors)")


def as_vector(value: Any) -> numpy.ndarray:
    """A float32 1-D array from a vector or list (DocBin round-trips give lists)."""
    return numpy.asarray(value, dtype=numpy.float32).reshape(-1)


def normalise_rows(matrix: numpy.ndarray) -> numpy.ndarray:
    """Rows scaled to unit L2 norm (zero rows stay zero), float32."""
    matrix = numpy.asarray(matrix, dtype=numpy.float32)
    norms = numpy.linalg.norm(matrix, axis=-1, keepdims=True)
    return matrix / numpy.maximum(norms, _EPS)


def aspect_matrix(aspect_vectors: Mapping[str, Any], width: Optional[int] = None) -> numpy.ndarray:
    """A (4, width) float32 matrix in :data:`ASPECTS` order, NaN rows for missing aspects.

    ValueError when the aspects have different widths (or not ``width``) or none is given.
    """
    vectors = {a: as_vector(v) for a, v in (aspect_vectors or {}).items() if a in ASPECTS and v is not None}
    widths = {v.shape[0] for v in vectors.values()} | ({width} if width is not None else set())
    if not widths:
        raise ValueError("no aspect vectors given")
    if len(widths) > 1:
        raise ValueError(f"aspect vectors of different widths {sorted(widths)}")
    out = numpy.full((len(ASPECTS), widths.pop()), numpy.nan, dtype=numpy.float32)
    for i, aspect in enumerate(ASPECTS):
        if aspect in vectors:
            out[i] = vectors[aspect]
    return out


def paper_vectors(aspects: numpy.ndarray) -> numpy.ndarray:
    """Paper vectors of a (n, 4, width) aspect array with NaN rows: (n, width) float32."""
    aspects = numpy.asarray(aspects, dtype=numpy.float32)
    present = ~numpy.isnan(aspects).any(axis=-1)  # (n, 4)
    unit = normalise_rows(numpy.where(present[..., None], aspects, 0.0))
    mean = unit.sum(axis=1) / numpy.maximum(present.sum(axis=1), 1)[:, None]
    return normalise_rows(mean)


def aspect_search_vectors(aspects: numpy.ndarray, aspect: str, aspect_weight: float = ASPECT_WEIGHT) -> numpy.ndarray:
    """Aspect search vectors of a (n, 4, width) aspect array with NaN rows: (n, 2*width) float32."""
    check_aspect(aspect)
    aspects = numpy.asarray(aspects, dtype=numpy.float32)
    papers = paper_vectors(aspects)
    column = aspects[:, ASPECTS.index(aspect)]
    has_aspect = ~numpy.isnan(column).any(axis=-1)
    aspect_part = numpy.where(has_aspect[:, None], normalise_rows(numpy.nan_to_num(column)), papers)
    return numpy.concatenate([papers, numpy.float32(numpy.sqrt(aspect_weight)) * aspect_part], axis=1)


def paper_vector(aspect_vectors: Mapping[str, Any]) -> numpy.ndarray:
    """The L2-normalised mean of the L2-normalised available aspect vectors (float32)."""
    return paper_vectors(aspect_matrix(aspect_vectors)[None])[0]


def aspect_search_vector(aspect_vectors: Mapping[str, Any], aspect: str,
                         aspect_weight: float = ASPECT_WEIGHT) -> numpy.ndarray:
    """``[paper_vector, sqrt(aspect_weight) * normalise(aspect_vectors[aspect])]`` (paper vector if missing).

    Euclidean distance between two of these is the ranking distance for ``aspect``.
    """
    return aspect_search_vectors(aspect_matrix(aspect_vectors)[None], aspect, aspect_weight)[0]


def aspect_cosines(q_aspects: Mapping[str, Any], c_aspects: Mapping[str, Any]) -> dict[str, float]:
    """Cosine per aspect both papers have, plus ``"paper"`` (cosine of the paper vectors)."""
    q, c = aspect_matrix(q_aspects), aspect_matrix(c_aspects)
    return aspect_cosines_of_rows(q, c)


def aspect_cosines_of_rows(q: numpy.ndarray, c: numpy.ndarray) -> dict[str, float]:
    """:func:`aspect_cosines` for two (4, width) aspect matrices with NaN rows."""
    scores = {"paper": float(paper_vectors(q[None])[0] @ paper_vectors(c[None])[0])}
    for i, aspect in enumerate(ASPECTS):
        if not (numpy.isnan(q[i]).any() or numpy.isnan(c[i]).any()):
            scores[aspect] = float(normalise_rows(q[i]) @ normalise_rows(c[i]))
    return scores


def doc_aspect_vectors(doc, what: str = "paper") -> dict[str, numpy.ndarray]:
    """``doc._.aspect_vectors`` as float32 arrays; MissingAspectVectorsError when unset or empty."""
    vectors = doc._.aspect_vectors
    if not vectors:
        raise MissingAspectVectorsError(doc._.paper_id, what)
    return {a: as_vector(v) for a, v in vectors.items() if v is not None}


def doc_sentence_vectors(doc) -> Optional[numpy.ndarray]:
    """``doc._.sentence_vectors`` as a float32 (n, width) array, or None when unset."""
    vectors = doc._.sentence_vectors
    if vectors is None:
        return None
    vectors = numpy.asarray(vectors, dtype=numpy.float32)
    return vectors.reshape(len(vectors), -1) if vectors.size else vectors.reshape(0, 0)
