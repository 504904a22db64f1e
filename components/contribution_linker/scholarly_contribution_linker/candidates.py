"""Queries and candidates of the contribution linker, and the BM25 half of its score.

Kept apart from the pipe so that inference, training and the benchmark share one definition
of "the contribution sentences of a paper" and "its candidate paragraphs":

* candidates: the body paragraphs of
  :func:`scholarly_nlp.introduction_and_body` (paragraphs after the
  introduction, related work / conclusions / references excluded);
* queries: the introduction sentences of the same function that state a contribution
  (:func:`contribution_sentences`).

The BM25 index of a Doc's body (:class:`PaperIndex`, :class:`~scholarly_nlp.retrieval.BM25Ranker`
tokenisation) is built once per Doc and cached.
"""

from __future__ import annotations

import hashlib
import re
import warnings
from typing import Optional, Sequence

import numpy

from scholarly_nlp import introduction_and_body
from scholarly_nlp.retrieval import BM25Ranker, DocIndex

__all__ = ["CONTRIBUTION_CUE", "PaperIndex", "contribution_sentences", "fuse", "scaled"]

#: The fallback rule without detector scores: a first-person-plural cue ("we", "our", "us").
CONTRIBUTION_CUE = re.compile(r"\b(?:we|our|ours|us)\b", re.IGNORECASE)


class PaperIndex(DocIndex):
    """A paper's introduction sentences, body paragraphs and the BM25 index over the body.

    Build it with :meth:`for_doc` (cached weakly per Doc, rebuilt when the Doc's text,
    sentences or paragraphs change). Attributes: ``doc``, ``sentences`` (introduction
    sentence Spans), ``paragraphs`` (body paragraph Spans), ``texts`` (their texts).
    """

    def __init__(self, doc):
        super().__init__(doc)
        sentences, paragraphs = introduction_and_body(doc)
        self._sentences = self.span_keys(sentences)
        self._paragraphs = self.span_keys(paragraphs)
        self.texts = [p.text for p in paragraphs]
        self._bm25 = BM25Ranker()

    @classmethod
    def doc_key(cls, doc) -> str:
        """Text and sentence starts (:class:`DocIndex`), plus the paragraph boundaries."""
        digest = hashlib.blake2b(super().doc_key(doc).encode(), digest_size=16)
        for para in doc.spans["paragraphs"] if "paragraphs" in doc.spans else []:
            digest.update(f"#{para.start}:{para.end}".encode())
        return digest.hexdigest()

    @property
    def sentences(self) -> list:
        """Introduction sentence Spans (made on each access; bind it in loops)."""
        return self.spans(self._sentences)

    @property
    def paragraphs(self) -> list:
        """Body paragraph Spans (made on each access; bind it in loops)."""
        return self.spans(self._paragraphs)

    def bm25(self, text: str) -> numpy.ndarray:
        """BM25 score of every body paragraph for ``text`` (zeros when nothing is shared)."""
        if not self.texts:
            return numpy.zeros(0)
        return self._bm25.scores(text, self.texts)


def scaled(bm25_scores: Sequence[float]) -> numpy.ndarray:
    """BM25 scores divided by their maximum over the paper's paragraphs (all 0 when the max is 0)."""
    values = numpy.asarray(bm25_scores, dtype=numpy.float64)
    top = float(values.max()) if values.size else 0.0
    return values / top if top > 0 else numpy.zeros_like(values)


def fuse(model_scores: Sequence[float], bm25_scores: Sequence[float], bm25_weight: float) -> list[float]:
    """Final scores: pair-scorer score + ``bm25_weight`` x BM25 scaled to [0, 1] by its max."""
    return [float(m) + bm25_weight * float(b) for m, b in zip(model_scores, scaled(bm25_scores))]


def contribution_sentences(doc, threshold: float, sentences: Optional[list] = None) -> list[tuple[int, Optional[float]]]:
    """``(introduction sentence index, detection probability or None)`` of the contribution sentences.

    With ``doc._.contribution_scores`` set (one probability per introduction sentence of
    :func:`introduction_and_body`, as the ``contribution_detector`` pipe writes them) the
    sentences with probability >= ``threshold`` are taken. Otherwise, or when the scores do
    not have one value per introduction sentence (warned), the rule decides: sentences with a
    first-person-plural cue (:data:`CONTRIBUTION_CUE`: we / our / ours / us), probability None.
    """
    if sentences is None:
        sentences = PaperIndex.for_doc(doc).sentences
    scores = doc._.contribution_scores if doc.has_extension("contribution_scores") else None
    if scores is not None:
        scores = list(scores)
        if len(scores) == len(sentences):
            return [(i, float(p)) for i, p in enumerate(scores) if p is not None and float(p) >= threshold]
        warnings.warn(f"doc._.contribution_scores has {len(scores)} values but the introduction has "
                      f"{len(sentences)} sentences; using the first-person-plural rule instead", stacklevel=2)
    return [(i, None) for i, s in enumerate(sentences) if CONTRIBUTION_CUE.search(s.text)]
