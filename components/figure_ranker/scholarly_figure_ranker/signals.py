"""What a paper's own text says about each figure, beside the cross-encoder's caption score.

The central-figure literature ranks with how much a paper discusses a figure as well as with
what its caption says (Yang et al., 2019, count the references to a figure and compare the
referring text with the abstract). Two such signals need no training:

* ``mentions``: how many times the body refers to the figure ("Figure 3 shows ...");
* ``context``: TF-IDF cosine between the abstract and the paragraphs that refer to the
  figure, the vectorizer fitted on the paper's own texts so that the IDF says which words are
  specific within this paper.

One more needs no training of its own: ``caption_dense``, the cosine of the abstract (the mean
of its sentences' embeddings) and the caption under a frozen sentence encoder (the packaged
all-MiniLM-L6-v2 by default). The cross-encoder behind ``caption`` was fine-tuned on ACL
papers; the frozen encoder keeps its general reading of other fields' captions (on 100
biomedical selection papers it finds 42 first figures where ``caption`` finds 29). It is
opt-in: added to the default fusion it found no more first figures on 111 fresh papers
(``projects/figure_ranker/selection/README.md``, round 3).

:func:`fuse_ranks` combines any number of signals by reciprocal rank fusion (Cormack et al.,
2009): only ranks count, so signals on unrelated scales combine with no weight to set.

:data:`DEFAULT_SIGNALS` (caption score and mentions) was chosen on a selection set of 63
independently annotated papers, not on the dev gold (``benchmarks/figure_ranker_selection.py``):
it tied the three-signal fusion on Acc@1 there and won the tie on MAP; ``context`` was the
weakest signal on that set. On 100 more papers, biomedical ones, the three-signal fusion leads
by 5 first figures, which is not significant: over the 163 papers the two are level.
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy
from spacy.tokens import Doc

from scholarly_nlp import Figure

from .texts import caption_text

SIGNALS = ("caption", "mentions", "context", "caption_dense")
"""The ranking signals a ``figure_ranker`` can fuse: the cross-encoder's summed (abstract
sentence, caption) score, the number of mentions, the referring paragraphs' similarity and the
frozen encoder's abstract-caption cosine."""

DEFAULT_SIGNALS = ("caption", "mentions")
"""The signals a ``figure_ranker`` fuses unless its config names others: the cross-encoder's
caption score and how often the paper refers to the figure."""

RRF_K = 60
"""Reciprocal rank fusion's constant (Cormack et al.'s value; it damps the top ranks' weight)."""


def mention_counts(figures: Sequence[Figure]) -> dict[str, float]:
    """Figure id -> how many times the paper's text refers to the figure."""
    return {f.id: float(len(f.mentions)) for f in figures}


def referring_paragraphs(doc: Doc, figure: Figure) -> list[str]:
    """The texts of the paragraphs that contain a mention of ``figure``, in document order."""
    starts = [m.start for m in figure.mentions]
    return [p.text for p in doc.spans.get("paragraphs", []) if any(p.start <= s < p.end for s in starts)]


def context_similarity(doc: Doc, figures: Sequence[Figure], query: list[str]) -> dict[str, float]:
    """Figure id -> TF-IDF cosine of the query (the abstract's sentences) and the paragraphs
    that refer to the figure; 0.0 for a figure no paragraph refers to."""
    abstract = " ".join(query)
    contexts = [" ".join(referring_paragraphs(doc, f)) for f in figures]
    vectorizer = fit_on_paper(doc, [abstract] + [caption_text(f) for f in figures])
    return dict(zip([f.id for f in figures], tfidf_cosines(vectorizer, abstract, contexts)))


def abstract_vector(encoder, query: list[str]) -> numpy.ndarray:
    """The abstract under ``encoder`` (a :class:`scholarly_nlp.ml.SentenceEncoder`): the mean of
    its sentences' unit embeddings, renormalised, so that each sentence counts once whatever its
    length."""
    vector = encoder.encode(query).mean(axis=0)
    return vector / max(float(numpy.linalg.norm(vector)), 1e-12)


def caption_dense_similarity(encoder, figures: Sequence[Figure], query: list[str],
                             abstract: Optional[numpy.ndarray] = None) -> dict[str, float]:
    """Figure id -> cosine of the abstract (:func:`abstract_vector`, or ``abstract`` when the
    caller has it) and the caption under ``encoder``."""
    if not figures or not query:
        return {}
    if abstract is None:
        abstract = abstract_vector(encoder, query)
    captions = encoder.encode([caption_text(f) for f in figures])
    return {f.id: float(c @ abstract) for f, c in zip(figures, captions)}


def tfidf_cosines(vectorizer, query: str, texts: list[str]) -> list[float]:
    """Cosine of the TF-IDF vectors of ``query`` and each text; zeros without a vectorizer."""
    if vectorizer is None:
        return [0.0] * len(texts)
    matrix = vectorizer.transform([query] + texts)  # rows are L2-normalised
    return [float(s) for s in (matrix[1:] @ matrix[0].T).toarray().ravel()]


def tfidf_vectorizer():
    """An unfitted TF-IDF vectorizer: English stop words removed, sublinear term frequencies."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(lowercase=True, stop_words="english", sublinear_tf=True)


def fit_on_paper(doc: Doc, texts: list[str]):
    """A vectorizer fitted on ``texts`` and the paper's paragraphs (one document each); None
    when no word is usable."""
    paragraphs = [span.text for span in doc.spans.get("paragraphs", [])]
    try:
        return tfidf_vectorizer().fit(texts + paragraphs)
    except ValueError:  # empty vocabulary: only stop words or punctuation
        return None


def fuse_ranks(signals: dict[str, dict[str, float]], ids: Sequence[str], k: int = RRF_K) -> dict[str, float]:
    """Reciprocal rank fusion: figure id -> sum over signals of 1 / (k + its rank by that signal).

    Higher signal values rank first; tied figures share their average rank, so a signal that
    cannot tell figures apart (all without mentions, say) favours none of them. A NaN value
    ranks last in its signal and leaves the other figures' ranks alone.
    """
    from scipy.stats import rankdata

    fused = numpy.zeros(len(ids))
    for values in signals.values():
        column = numpy.array([values[i] for i in ids], dtype=float)
        fused += 1.0 / (k + rankdata(-numpy.nan_to_num(column, nan=-numpy.inf), method="average"))
    return {i: float(v) for i, v in zip(ids, fused)}


def signal_values(doc: Doc, figures: Sequence[Figure], query: list[str], names: Sequence[str],
                  caption_scores: Optional[dict[str, float]] = None, encoder=None) -> dict[str, dict[str, float]]:
    """Signal name -> (figure id -> value) for the named signals of :data:`SIGNALS`;
    ``caption_scores`` are the cross-encoder's, computed by the caller, and ``encoder`` is the
    frozen sentence encoder that ``caption_dense`` needs (a ValueError without one)."""
    if "caption_dense" in names and encoder is None:
        raise ValueError("the caption_dense signal needs a sentence encoder")
    compute = {"caption": lambda: dict(caption_scores or {}), "mentions": lambda: mention_counts(figures),
               "context": lambda: context_similarity(doc, figures, query),
               "caption_dense": lambda: caption_dense_similarity(encoder, figures, query)}
    return {name: compute[name]() for name in names}

