"""Faceted paper similarity: aspect vectors, a saved vector index, and explained search.

See :mod:`.vectors` for the one scoring definition, :mod:`.index` for the on-disk index and
:mod:`.search` for :func:`similar`.
"""

from .index import AspectIndex, corpus_fingerprint, index_path_for
from .search import SentenceMatch, SimilarPaper, similar
from .vectors import FACET_WEIGHT, MissingAspectVectorsError, aspect_cosines, facet_search_vector, paper_vector

__all__ = [
    "FACET_WEIGHT",
    "AspectIndex",
    "MissingAspectVectorsError",
    "SentenceMatch",
    "SimilarPaper",
    "aspect_cosines",
    "corpus_fingerprint",
    "facet_search_vector",
    "index_path_for",
    "paper_vector",
    "similar",
]
