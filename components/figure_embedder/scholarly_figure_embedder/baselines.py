"""The TF-IDF cosine between figure texts: the baseline, and the recommender's first stage.

A figure's text is its caption (label removed) plus its context sentences
(:meth:`FigureText.joined`). The vectorizer is fitted on the texts of the figure pool being
compared (English stop words removed, sublinear term frequencies); rows are L2-normalised,
so a dot product is the cosine. Texts without any usable word get a zero vector (cosine 0).
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy


def tfidf_vectorizer():
    """The TF-IDF settings shared by the baseline and the recommender."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(lowercase=True, stop_words="english", sublinear_tf=True)


class TfidfSimilarity:
    """TF-IDF cosine between texts, with the IDF of a fitted pool of texts."""

    def __init__(self, corpus: Sequence[str]):
        self._vectorizer = tfidf_vectorizer()
        try:
            self._vectorizer.fit(list(corpus))
            self.fitted = True
        except ValueError:  # empty vocabulary: no text with a usable word
            self.fitted = False

    def matrix(self, texts: Sequence[str]):
        """Sparse (len(texts), vocabulary) matrix of unit rows (zero rows for wordless texts); None if unfitted."""
        return self._vectorizer.transform(list(texts)) if self.fitted else None

    def cosine_to(self, query: str, texts: Sequence[str]) -> numpy.ndarray:
        """Cosine of ``query`` with each text (zeros when nothing could be fitted)."""
        if not self.fitted or not texts:
            return numpy.zeros(len(texts), dtype=numpy.float32)
        rows = self.matrix([query] + list(texts))
        return numpy.asarray((rows[1:] @ rows[0].T).toarray()).ravel().astype(numpy.float32)

    def pair_scores(self, left: Sequence[str], right: Sequence[str]) -> numpy.ndarray:
        """Cosine of ``left[i]`` and ``right[i]`` for each i."""
        if not self.fitted or not left:
            return numpy.zeros(len(left), dtype=numpy.float32)
        a, b = self.matrix(left), self.matrix(right)
        return numpy.asarray(a.multiply(b).sum(axis=1)).ravel().astype(numpy.float32)


def top_indices(scores: numpy.ndarray, n: int, exclude: Optional[set[int]] = None) -> list[int]:
    """Indices of the ``n`` highest scores, best first; ties keep index order."""
    exclude = exclude or set()
    order = numpy.argsort(-numpy.asarray(scores), kind="stable")
    return [int(i) for i in order if int(i) not in exclude][:n]
