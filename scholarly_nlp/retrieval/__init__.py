"""Generic retrieval over spans: which sentences or paragraphs of a paper best match a query?

* :mod:`.sentences`: BM25 over the sentences of one Doc with a position prior
  (:class:`SentenceIndex`, cached per Doc; :func:`top_sentences`), and the query cleaning
  (:func:`query_text`, :func:`strip_citation_markers`). Stage 1 of the citance linker.
* :mod:`.doc_index`: :class:`DocIndex`, the base of per-Doc indexes cached weakly by their
  Doc (the sentence index here, the contribution linker's paragraph index).
* :mod:`.rankers`: rankers over a list of texts or Spans (:class:`BM25Ranker`,
  :class:`TfidfRanker`, :class:`EmbeddingRanker`), each ``rank(query, candidates)``;
  the contribution linker's BM25 candidate scores and its baselines.

Names are loaded on first access, so importing this package does not import bm25s,
scikit-learn or torch.
"""

from __future__ import annotations

from ..lazy_exports import lazy_exports

_EXPORTS = {
    "DEFAULT_K": "sentences",
    "POSITION_BOOST": "sentences",
    "PRIOR_FRACTION": "sentences",
    "SentenceIndex": "sentences",
    "query_text": "sentences",
    "strip_citation_markers": "sentences",
    "tokenize": "sentences",
    "top_sentences": "sentences",
    "DocIndex": "doc_index",
    "BM25Ranker": "rankers",
    "EmbeddingRanker": "rankers",
    "TfidfRanker": "rankers",
    "order_by_scores": "rankers",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
