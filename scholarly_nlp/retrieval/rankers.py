"""Rankers over a list of texts or Spans (paragraphs, abstracts): which best match a query?

Every ranker has ``rank(query_text, candidates) -> list[int]``: all candidate indices, best
first (``candidates`` are strings or Spans; an empty list gives ``[]``), and ``scores(query_text,
candidates)``, one similarity per candidate. Ties keep document order. Each ranker caches the
index/embeddings of the last candidate list it saw, so ranking many queries against one
paper's paragraphs indexes them once.

* :class:`BM25Ranker`: :mod:`bm25s` over the candidates, tokenised as
  :class:`~scholarly_nlp.retrieval.SentenceIndex` does (:func:`~scholarly_nlp.retrieval.query_text`
  cleaning, lower case, English stop words, no stemmer).
* :class:`TfidfRanker`: cosine of scikit-learn TF-IDF vectors (fitted on the candidates,
  English stop words, sublinear tf, uni- and bigrams).
* :class:`EmbeddingRanker`: zero-shot cosine of mean-pooled sentence embeddings
  (:class:`scholarly_nlp.ml.sentence_encoder.SentenceEncoder`, all-MiniLM-L6-v2 by default).

Heavy imports (bm25s, scikit-learn, the encoder) happen on first use.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

__all__ = ["BM25Ranker", "EmbeddingRanker", "TfidfRanker", "order_by_scores"]


def _texts(paragraphs: Sequence[Any]) -> list[str]:
    """Plain strings of ``paragraphs`` (strings or Spans)."""
    return [p if isinstance(p, str) else str(getattr(p, "text", p)) for p in paragraphs]


def order_by_scores(scores: Sequence[float]) -> list[int]:
    """Indices sorted by descending score; ties keep their original (document) order."""
    return [int(i) for i in np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")]


class _CachedRanker:
    """Base class: keeps the state built for the last paragraph list (by its texts)."""

    name = "base"

    def __init__(self) -> None:
        self._key: Optional[tuple] = None
        self._state: Any = None

    def _state_for(self, texts: list[str]) -> Any:
        """The cached state for ``texts``, built by :meth:`_build` when they changed."""
        key = tuple(texts)
        if key != self._key:
            self._state = self._build(texts)
            self._key = key
        return self._state

    def _build(self, texts: list[str]) -> Any:  # pragma: no cover - overridden
        raise NotImplementedError

    def scores(self, sentence_text: str, paragraphs: Sequence[Any]) -> np.ndarray:
        """One similarity score per paragraph (higher is better)."""
        raise NotImplementedError  # pragma: no cover - overridden

    def rank(self, sentence_text: str, paragraphs: Sequence[Any]) -> list[int]:
        """All paragraph indices, best first (ties in document order)."""
        if not len(paragraphs):
            return []
        return order_by_scores(self.scores(sentence_text, paragraphs))


class BM25Ranker(_CachedRanker):
    """BM25 (:mod:`bm25s`, ``k1``/``b``) of the sentence against each paragraph."""

    name = "bm25"

    def __init__(self, k1: float = 1.5, b: float = 0.75) -> None:
        super().__init__()
        self.k1 = k1
        self.b = b

    @staticmethod
    def tokenize(texts: Sequence[str]) -> list[list[str]]:
        """bm25s tokens of each text after :func:`~scholarly_nlp.retrieval.sentences.query_text`'s
        cleaning (markers, numbers, math), as :class:`~scholarly_nlp.retrieval.SentenceIndex` does."""
        from .sentences import tokenize

        return tokenize(texts)

    def _build(self, texts: list[str]) -> Any:
        """A bm25s index over the paragraphs and its vocabulary."""
        import bm25s

        tokens = self.tokenize(texts)
        # bm25s cannot index a corpus without any token; such a body has no signal.
        if not any(tokens):
            return None, set()
        retriever = bm25s.BM25(k1=self.k1, b=self.b)
        retriever.index(tokens, show_progress=False)
        return retriever, set(retriever.vocab_dict)

    def scores(self, sentence_text: str, paragraphs: Sequence[Any]) -> np.ndarray:
        """BM25 score of each paragraph for the sentence (zeros when nothing is shared)."""
        texts = _texts(paragraphs)
        retriever, vocab = self._state_for(texts)
        tokens = [t for t in self.tokenize([sentence_text])[0] if t in vocab]
        if retriever is None or not tokens:
            return np.zeros(len(texts))
        return np.asarray(retriever.get_scores(tokens), dtype=np.float64)


class TfidfRanker(_CachedRanker):
    """Cosine of TF-IDF vectors fitted on the paper's paragraphs."""

    name = "tfidf"

    def __init__(self, ngram_range: tuple = (1, 2), sublinear_tf: bool = True) -> None:
        super().__init__()
        self.ngram_range = ngram_range
        self.sublinear_tf = sublinear_tf

    def _build(self, texts: list[str]) -> Any:
        """The fitted vectoriser and the paragraph matrix (None when there is no vocabulary)."""
        from sklearn.feature_extraction.text import TfidfVectorizer

        vectorizer = TfidfVectorizer(stop_words="english", sublinear_tf=self.sublinear_tf,
                                     ngram_range=self.ngram_range)
        try:
            matrix = vectorizer.fit_transform(texts)
        except ValueError:  # empty vocabulary: only stop words or no words at all
            return None, None
        return vectorizer, matrix

    def scores(self, sentence_text: str, paragraphs: Sequence[Any]) -> np.ndarray:
        """Cosine of the sentence's TF-IDF vector with each paragraph's (rows are L2-normed)."""
        texts = _texts(paragraphs)
        vectorizer, matrix = self._state_for(texts)
        if vectorizer is None:
            return np.zeros(len(texts))
        query = vectorizer.transform([sentence_text])
        return np.asarray((matrix @ query.T).toarray()).ravel()


class EmbeddingRanker(_CachedRanker):
    """Zero-shot cosine of mean-pooled sentence embeddings (a bi-encoder without training).

    ``encoder`` is a ready :class:`~scholarly_nlp.ml.sentence_encoder.SentenceEncoder` (or any
    object with ``encode(texts) -> array``); otherwise one is built from ``backbone`` (default
    all-MiniLM-L6-v2, the locally packaged copy) on first use.
    """

    name = "minilm"

    def __init__(self, encoder: Any = None, backbone: Optional[str] = None, batch_size: int = 32) -> None:
        super().__init__()
        self._encoder = encoder
        self.backbone = backbone
        self.batch_size = batch_size

    @property
    def encoder(self) -> Any:
        """The sentence encoder (built lazily)."""
        if self._encoder is None:
            from ..ml.backbones import DEFAULT_BACKBONE
            from ..ml.sentence_encoder import SentenceEncoder

            self._encoder = SentenceEncoder(self.backbone or DEFAULT_BACKBONE, batch_size=self.batch_size)
        return self._encoder

    def _build(self, texts: list[str]) -> Any:
        """The paragraph embeddings."""
        return np.asarray(self.encoder.encode(texts), dtype=np.float32)

    def scores(self, sentence_text: str, paragraphs: Sequence[Any]) -> np.ndarray:
        """Cosine of the sentence embedding with each paragraph embedding."""
        from ..ml.sentence_encoder import cosine_matrix

        matrix = self._state_for(_texts(paragraphs))
        query = np.asarray(self.encoder.encode([sentence_text]), dtype=np.float32)
        return cosine_matrix(query, matrix)[0].astype(np.float64)
