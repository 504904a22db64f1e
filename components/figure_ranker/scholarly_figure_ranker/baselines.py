"""Baselines for central-figure ranking, each a ranker with ``rank(doc) -> [figure ids, best first]``.

All rankers see the same candidates as the ``figure_ranker`` component (figures of kind
"figure"; tables too with ``include_tables=True``) and return *every* candidate. A figure
without caption text (after removing its "Figure 3:" label, see :func:`texts.caption_text`)
cannot be compared with anything, so for every method it ranks after the captioned ones, in
document order; ties between scores keep document order (:func:`factory.rank_figures`).

* :class:`RandomBaseline` - chance level. Its :meth:`~RandomBaseline.expected` gives the
  *exact expected* AP, RR, Acc@1 and Acc@3 of a uniformly random order of the captioned
  candidates (uncaptioned ones fixed at the end, as above); see
  :func:`expected_random_metrics` for the method. ``rank`` draws one such order (seeded),
  for callers that need a ranking; evaluation uses the expectation, not a sample.
* :class:`PickFirstBaseline` - document order (the first figure is often the overview).
* :class:`TfidfBaseline` - TF-IDF cosine between the abstract and each caption (Yang et
  al.'s text-only feature). The vectorizer is fitted per paper on the paper's own texts: the
  abstract, every candidate caption and every body paragraph, each one document, so the IDF
  says which words are specific within this paper; pass ``corpus`` to fit once on other texts.
* :class:`MentionCountBaseline` - how many times the paper refers to the figure, and
  :class:`ReferringTextBaseline` - TF-IDF cosine between the abstract and the paragraphs that
  refer to the figure: the two signals (:mod:`.signals`) the component fuses with its
  cross-encoder score, each alone.
* :class:`ZeroShotBiEncoderBaseline` - cosine of :class:`SentenceEncoder` embeddings (MiniLM
  by default, no training) between the abstract and each caption. The abstract is the
  normalised mean of its sentence embeddings (``query="sentences"``, the default: no
  truncation of long abstracts, the same sentences the component uses as queries) or the
  embedding of the whole abstract text (``query="whole"``).

For the text methods, the title is the query when there is no abstract (as in the
component); without either, no figure can be scored and they return the candidates in
document order (captioned first).
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
from itertools import permutations
from typing import Callable, Iterable, Optional, Sequence

import numpy
from spacy.tokens import Doc

from scholarly_nlp import Figure
from scholarly_nlp.metrics import average_precision, reciprocal_rank

from .factory import rank_figures
from .signals import context_similarity, fit_on_paper, mention_counts, tfidf_cosines, tfidf_vectorizer
from .texts import abstract_sentences, caption_text

__all__ = [
    "BASELINES",
    "MentionCountBaseline",
    "PickFirstBaseline",
    "RandomBaseline",
    "ReferringTextBaseline",
    "TfidfBaseline",
    "ZeroShotBiEncoderBaseline",
    "candidate_figures",
    "enumerate_random_metrics",
    "expected_random_metrics",
    "make_baseline",
    "pick_first",
    "random_expected",
    "split_captioned",
    "tfidf_cosine",
    "zero_shot_biencoder",
]


# --------------------------------------------------------------------------- shared helpers


def candidate_figures(doc: Doc, include_tables: bool = False) -> list[Figure]:
    """The ranking candidates of a paper, in document order (same rule as the component)."""
    return [f for f in doc._.figures if f.kind == "figure" or include_tables]


def split_captioned(figures: Sequence[Figure]) -> tuple[list[Figure], list[Figure]]:
    """(figures with caption text, figures without), each in document order."""
    captioned = [f for f in figures if caption_text(f)]
    return captioned, [f for f in figures if not caption_text(f)]


class _Ranker:
    """Common part of the rankers: candidate selection and the no-text fallbacks."""

    name = "ranker"

    def __init__(self, include_tables: bool = False):
        self.include_tables = include_tables

    def candidates(self, doc: Doc) -> list[Figure]:
        """The candidates of ``doc`` (see :func:`candidate_figures`)."""
        return candidate_figures(doc, self.include_tables)

    def __call__(self, doc: Doc) -> list[str]:
        return self.rank(doc)

    def rank(self, doc: Doc) -> list[str]:
        """Every candidate id of ``doc``, best first."""
        figures = self.candidates(doc)
        captioned, _ = split_captioned(figures)
        query = abstract_sentences(doc)
        scores = self.scores(query, captioned, doc) if captioned and query else {}
        # Uncaptioned figures get no score, so rank_figures puts them last in document order.
        return rank_figures([f.id for f in figures], scores)

    def scores(self, query: list[str], captioned: list[Figure], doc: Doc) -> dict[str, float]:
        """Figure id -> score for the captioned candidates (higher is more central)."""
        raise NotImplementedError


# --------------------------------------------------------------------------- random


def _expected_reciprocal_first(n: int, m: int) -> Fraction:
    """E[1 / rank of the best-placed of m marked items] in a uniform random order of n items.

    P(best rank = k) = C(n - k, m - 1) / C(n, m): the other m - 1 marked items lie after k.
    """
    total = math.comb(n, m)
    return sum((Fraction(math.comb(n - k, m - 1), total) / k for k in range(1, n - m + 2)), Fraction(0))


def _expected_precision_sum(n: int, m: int) -> Fraction:
    """E[sum over the m marked items of precision at their rank] in a uniform order of n items.

    One marked item is at position p with probability 1/n; the other m - 1 fill the other
    n - 1 positions uniformly, so on average (m - 1)(p - 1)/(n - 1) of them precede it and
    its precision is (1 + that) / p. Linearity of expectation sums this over the m items.
    """
    if m == 0:
        return Fraction(0)
    per_item = Fraction(0)
    for p in range(1, n + 1):
        before = Fraction((m - 1) * (p - 1), n - 1) if n > 1 else Fraction(0)
        per_item += (1 + before) / p
    return m * per_item / n


def _expected_hit(target: str, random_part: list[str], tail: list[str], k: int) -> float:
    """P(target within the first k ranks): uniform over the random part, fixed in the tail."""
    if target in random_part:
        return min(k, len(random_part)) / len(random_part)
    if target in tail:
        return 1.0 if len(random_part) + tail.index(target) + 1 <= k else 0.0
    return 0.0


def expected_random_metrics(gold: Sequence[str], candidates: Sequence[str],
                            fixed_tail: Sequence[str] = ()) -> dict[str, float]:
    """Exact expected AP, RR, Acc@1 and Acc@3 of a uniformly random ranking of ``candidates``.

    ``gold`` is the gold ranking (best first; all of it is the relevant set, its first id
    the Acc@k target). ``fixed_tail`` are further candidates that always follow the random
    part, in the given order (the uncaptioned figures). Conventions are those of
    :mod:`scholarly_nlp.metrics.ranking`: AP divides by the number of gold ids, including
    gold ids that are not candidates, and such ids are never found.

    Method (closed form, exact in rational arithmetic, O(n)): with n random positions and m
    gold ids among them, Acc@k of the first gold id is min(k, n)/n when it is in the random
    part; RR is E[1/best rank of the m gold positions]; AP sums, by linearity of expectation,
    each gold item's expected precision at its rank. A gold id in the fixed tail has a known
    rank and all m random gold ids precede it, so its precision is deterministic; without
    random gold ids, the first gold id in the tail gives RR. :func:`enumerate_random_metrics`
    computes the same numbers by brute force.
    """
    relevant = list(dict.fromkeys(gold))
    if not relevant:
        return {"ap": 0.0, "rr": 0.0, "acc_at_1": 0.0, "acc_at_3": 0.0}
    tail_set = set(fixed_tail)
    random_part = [c for c in dict.fromkeys(candidates) if c not in tail_set]
    tail = list(dict.fromkeys(fixed_tail))
    n = len(random_part)
    m = sum(1 for g in relevant if g in random_part)
    tail_ranks = [n + i + 1 for i, c in enumerate(tail) if c in relevant]

    precision = _expected_precision_sum(n, m)
    precision += sum((Fraction(m + j + 1, rank) for j, rank in enumerate(tail_ranks)), Fraction(0))
    if m:
        rr = _expected_reciprocal_first(n, m)
    else:
        rr = Fraction(1, tail_ranks[0]) if tail_ranks else Fraction(0)
    return {
        "ap": float(precision / len(relevant)),
        "rr": float(rr),
        "acc_at_1": _expected_hit(relevant[0], random_part, tail, 1),
        "acc_at_3": _expected_hit(relevant[0], random_part, tail, 3),
    }


def enumerate_random_metrics(gold: Sequence[str], candidates: Sequence[str],
                             fixed_tail: Sequence[str] = ()) -> dict[str, float]:
    """The expectation of :func:`expected_random_metrics` by scoring every permutation.

    Factorial cost: a cross-check for small cases, using the project's metric functions.
    """
    tail = list(fixed_tail)
    random_part = [c for c in candidates if c not in set(tail)]
    relevant = list(dict.fromkeys(gold))
    totals = {"ap": 0.0, "rr": 0.0, "acc_at_1": 0.0, "acc_at_3": 0.0}
    count = 0
    for order in permutations(random_part):
        ranking = list(order) + tail
        totals["ap"] += average_precision(ranking, relevant)
        totals["rr"] += reciprocal_rank(ranking, relevant)
        totals["acc_at_1"] += float(bool(relevant) and relevant[0] in ranking[:1])
        totals["acc_at_3"] += float(bool(relevant) and relevant[0] in ranking[:3])
        count += 1
    return {key: value / count for key, value in totals.items()}


class RandomBaseline(_Ranker):
    """Chance level: captioned candidates in a uniformly random order, uncaptioned last."""

    name = "random"

    def __init__(self, include_tables: bool = False, seed: int = 0):
        super().__init__(include_tables)
        self._rng = numpy.random.default_rng(seed)

    def rank(self, doc: Doc) -> list[str]:
        """One random order (seeded); evaluation uses :meth:`expected` instead."""
        captioned, uncaptioned = split_captioned(self.candidates(doc))
        order = [captioned[i].id for i in self._rng.permutation(len(captioned))]
        return order + [f.id for f in uncaptioned]

    def expected(self, doc: Doc, gold: Sequence[str]) -> dict[str, float]:
        """Exact expected AP/RR/Acc@1/Acc@3 of :meth:`rank` against a gold ranking."""
        captioned, uncaptioned = split_captioned(self.candidates(doc))
        return expected_random_metrics(gold, [f.id for f in captioned], [f.id for f in uncaptioned])


# --------------------------------------------------------------------------- pick first


class PickFirstBaseline(_Ranker):
    """Document order (captioned candidates first, then the uncaptioned ones)."""

    name = "pick_first"

    def rank(self, doc: Doc) -> list[str]:
        """Captioned candidates in document order, then uncaptioned ones in document order."""
        captioned, uncaptioned = split_captioned(self.candidates(doc))
        return [f.id for f in captioned + uncaptioned]


# --------------------------------------------------------------------------- TF-IDF


class TfidfBaseline(_Ranker):
    """TF-IDF cosine between the abstract and each caption (label prefix removed).

    ``corpus``: texts to fit the vectorizer on once; None (default) fits it per paper on the
    paper's abstract, candidate captions and body paragraphs (one document each). English
    stop words are removed and term frequencies are sublinear (1 + log tf).
    """

    name = "tfidf"

    def __init__(self, include_tables: bool = False, corpus: Optional[Iterable[str]] = None):
        super().__init__(include_tables)
        self._fitted = tfidf_vectorizer().fit(list(corpus)) if corpus is not None else None

    def scores(self, query: list[str], captioned: list[Figure], doc: Doc) -> dict[str, float]:
        """Cosine of the TF-IDF vectors of the abstract and each caption."""
        abstract = " ".join(query)
        captions = [caption_text(f) for f in captioned]
        vectorizer = self._fitted or fit_on_paper(doc, [abstract] + captions)
        return dict(zip([f.id for f in captioned], tfidf_cosines(vectorizer, abstract, captions)))


class MentionCountBaseline(_Ranker):
    """How many times the paper refers to each captioned figure (ties in document order)."""

    name = "mention_count"

    def scores(self, query: list[str], captioned: list[Figure], doc: Doc) -> dict[str, float]:
        """The number of mentions of each figure."""
        return mention_counts(captioned)


class ReferringTextBaseline(_Ranker):
    """TF-IDF cosine between the abstract and the paragraphs that refer to each figure."""

    name = "referring_text_tfidf"

    def scores(self, query: list[str], captioned: list[Figure], doc: Doc) -> dict[str, float]:
        """The referring paragraphs' similarity to the abstract (0 without a mention)."""
        return context_similarity(doc, captioned, query)


# --------------------------------------------------------------------------- bi-encoder


class ZeroShotBiEncoderBaseline(_Ranker):
    """Cosine between sentence-encoder embeddings of the abstract and of each caption.

    ``encoder`` is a :class:`~scholarly_nlp.ml.sentence_encoder.SentenceEncoder` (or anything
    whose ``encode(texts)`` returns unit rows); by default ``encoder_name`` (MiniLM) is loaded
    on first use. ``query`` is "sentences" (mean of the abstract's sentence embeddings,
    re-normalised) or "whole" (the abstract as one text, truncated at the encoder's limit).
    """

    name = "zero_shot_minilm"

    def __init__(self, include_tables: bool = False, encoder=None, query: str = "sentences",
                 encoder_name: str = "all-MiniLM-L6-v2"):
        super().__init__(include_tables)
        if query not in ("sentences", "whole"):
            raise ValueError(f"query must be 'sentences' or 'whole', got {query!r}")
        self.query = query
        self.encoder_name = encoder_name
        self._encoder = encoder

    @property
    def encoder(self):
        """The sentence encoder (loaded on first use)."""
        if self._encoder is None:
            from scholarly_nlp.ml import SentenceEncoder

            self._encoder = SentenceEncoder(self.encoder_name)
        return self._encoder

    def scores(self, query: list[str], captioned: list[Figure], doc: Doc) -> dict[str, float]:
        """Cosine of the abstract embedding with each caption embedding."""
        texts = query if self.query == "sentences" else [" ".join(query)]
        vectors = self.encoder.encode(texts + [caption_text(f) for f in captioned])
        abstract = vectors[: len(texts)].mean(axis=0)
        abstract = abstract / max(float(numpy.linalg.norm(abstract)), 1e-12)
        similarities = vectors[len(texts):] @ abstract
        return {f.id: float(s) for f, s in zip(captioned, similarities)}


# --------------------------------------------------------------------------- registry

BASELINES: dict[str, Callable[..., _Ranker]] = {
    "random": RandomBaseline,
    "pick_first": PickFirstBaseline,
    "tfidf": TfidfBaseline,
    "mention_count": MentionCountBaseline,
    "referring_text_tfidf": ReferringTextBaseline,
    "zero_shot_minilm": ZeroShotBiEncoderBaseline,
}
"""Baseline name (the key used in evaluation reports) -> ranker class."""


def make_baseline(name: str, **options) -> _Ranker:
    """A baseline ranker by name (see :data:`BASELINES`); options go to its constructor."""
    if name not in BASELINES:
        raise ValueError(f"unknown baseline {name!r}; known: {', '.join(BASELINES)}")
    return BASELINES[name](**options)


# --------------------------------------------------------------------------- function forms


def random_expected(doc: Doc, gold: Sequence[str], include_tables: bool = False) -> dict[str, float]:
    """Exact expected AP/RR/Acc@1/Acc@3 of a random ranking of ``doc``'s candidates."""
    return RandomBaseline(include_tables).expected(doc, gold)


def pick_first(doc: Doc, include_tables: bool = False) -> list[str]:
    """Candidates in document order (captioned first)."""
    return PickFirstBaseline(include_tables).rank(doc)


def tfidf_cosine(doc: Doc, include_tables: bool = False) -> list[str]:
    """Candidates by TF-IDF cosine of abstract and caption, fitted on the paper's own texts."""
    return TfidfBaseline(include_tables).rank(doc)


def zero_shot_biencoder(doc: Doc, include_tables: bool = False, encoder=None) -> list[str]:
    """Candidates by MiniLM cosine of abstract and caption (the default encoder is loaded once)."""
    return ZeroShotBiEncoderBaseline(include_tables, encoder=encoder or _default_encoder()).rank(doc)


@lru_cache(maxsize=1)
def _default_encoder():
    """The default sentence encoder, shared by calls of :func:`zero_shot_biencoder`."""
    from scholarly_nlp.ml import SentenceEncoder

    return SentenceEncoder()
