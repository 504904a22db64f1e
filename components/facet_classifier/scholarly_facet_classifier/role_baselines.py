"""Baselines of abstract sentence roles, and role counts per abstract for a paired bootstrap.

Two baselines are fitted on labelled abstracts (:class:`~scholarly_nlp.readers.AbstractRecord`
with ``roles``, CSAbstruct train by default in ``evaluate-roles``) and tag other abstracts:

* ``position``: each sentence gets the role most frequent at its relative position in the
  training abstracts (ten position bins, the first and the last sentence apart); it reads no
  word, and is how far the order of an abstract alone goes;
* ``tfidf_position``: a multinomial logistic regression (C = 1) over TF-IDF (word 1-2 grams,
  sublinear tf, min_df 2) of the sentence and, as separate blocks, of the sentences before and
  after it, with the same position features: a linear sequential classifier with no encoder.

:func:`role_counts` turns one abstract's gold and predicted roles into the count vector that
:func:`accuracy_of_counts` and :func:`macro_f1_of_counts` read after summing over abstracts,
so that ``scholarly_nlp.metrics.paired_bootstrap_pooled`` can resample whole abstracts and
still give exactly :func:`~.role_tagger.role_metrics`' accuracy and macro-F1.

Needs scikit-learn and scipy (in the repository's ``requirements.txt``; imported only when a
TF-IDF baseline is fitted, so the component itself does not depend on them).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Dict, List, Sequence

import numpy

from scholarly_nlp import ROLES

__all__ = ["ROLE_BASELINES", "accuracy_of_counts", "fit_role_baseline", "macro_f1_of_counts", "role_counts"]

ROLE_BASELINES = ("position", "tfidf_position")
"""The baselines :func:`fit_role_baseline` knows, weakest first."""

_BINS = 10


def _position_features(n: int) -> numpy.ndarray:
    """One row per sentence of an abstract of ``n``: its relative position bin (one-hot), and
    whether it is the first and the last sentence."""
    out = numpy.zeros((n, _BINS + 2), dtype=numpy.float32)
    for i in range(n):
        out[i, min(_BINS - 1, int(_BINS * i / n))] = 1.0
        out[i, _BINS] = float(i == 0)
        out[i, _BINS + 1] = float(i == n - 1)
    return out


def _labelled(records: Sequence[Any]) -> List[Any]:
    """The records with one role per sentence; ValueError when there are none."""
    kept = [r for r in records if r.roles is not None and len(r.roles) == len(r.sentences) and r.sentences]
    if not kept:
        raise ValueError("no abstract with one role per sentence to fit a role baseline on")
    return kept


class PositionBaseline:
    """The most frequent training role at each position (bins of :func:`_position_features`)."""

    name = "position"

    def fit(self, records: Sequence[Any]) -> "PositionBaseline":
        """Count the roles at each position of the labelled ``records``; returns self."""
        counts: Dict[tuple, Counter] = {}
        overall: Counter = Counter()
        for record in _labelled(records):
            for key, role in zip(self._keys(len(record.sentences)), record.roles):
                counts.setdefault(key, Counter())[role] += 1
                overall[role] += 1
        # ties go to the order of ROLES, so a refit on the same data gives the same table
        best = {key: max(c, key=lambda role: (c[role], -_rank(role))) for key, c in counts.items()}
        self.table = best
        self.fallback = max(overall, key=lambda role: (overall[role], -_rank(role)))
        return self

    @staticmethod
    def _keys(n: int) -> List[tuple]:
        features = _position_features(n)
        return [tuple(int(v) for v in row) for row in features]

    def predict(self, records: Sequence[Any]) -> List[List[str]]:
        """One role per sentence of each record."""
        return [[self.table.get(key, self.fallback) for key in self._keys(len(r.sentences))] for r in records]


class TfidfPositionBaseline:
    """Logistic regression over TF-IDF of a sentence and its neighbours, plus its position."""

    name = "tfidf_position"

    def __init__(self, C: float = 1.0, seed: int = 0):
        self.C = C
        self.seed = seed

    def _matrix(self, records: Sequence[Any]):
        from scipy import sparse

        blocks = []
        for record in records:
            texts = list(record.sentences)
            words = self.vectorizer.transform(texts)
            empty = sparse.csr_matrix((1, words.shape[1]))
            before = sparse.vstack([empty, words[:-1]]) if len(texts) > 1 else empty
            after = sparse.vstack([words[1:], empty]) if len(texts) > 1 else empty
            position = sparse.csr_matrix(_position_features(len(texts)))
            blocks.append(sparse.hstack([words, before, after, position]))
        return sparse.vstack(blocks).tocsr()

    def fit(self, records: Sequence[Any]) -> "TfidfPositionBaseline":
        """Fit the vocabulary and the regression on the labelled ``records``; returns self."""
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression

        records = _labelled(records)
        self.vectorizer = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True, lowercase=True)
        self.vectorizer.fit([s for r in records for s in r.sentences])
        self.model = LogisticRegression(C=self.C, max_iter=2000, random_state=self.seed)
        self.model.fit(self._matrix(records), [role for r in records for role in r.roles])
        return self

    def predict(self, records: Sequence[Any]) -> List[List[str]]:
        """One role per sentence of each record."""
        records = list(records)
        if not records:
            return []
        flat = list(self.model.predict(self._matrix(records)))
        out, start = [], 0
        for record in records:
            out.append([str(role) for role in flat[start:start + len(record.sentences)]])
            start += len(record.sentences)
        return out


def _rank(role: str) -> int:
    return ROLES.index(role) if role in ROLES else len(ROLES)


def fit_role_baseline(name: str, records: Sequence[Any]):
    """The baseline ``name`` (one of :data:`ROLE_BASELINES`) fitted on labelled abstract records;
    it has ``predict(records) -> [[role per sentence], ...]``. ValueError for an unknown name or
    no labelled abstract."""
    makers = {"position": PositionBaseline, "tfidf_position": TfidfPositionBaseline}
    if name not in makers:
        raise ValueError(f"unknown role baseline {name!r}; known: {', '.join(ROLE_BASELINES)}")
    return makers[name]().fit(records)


def role_counts(gold: Sequence[str], predicted: Sequence[str], labels: Sequence[str] = ROLES) -> numpy.ndarray:
    """One abstract's counts: ``[correct, sentences, tp, fp, fn of labels[0], tp, fp, fn of
    labels[1], ...]``. Summed over abstracts, :func:`accuracy_of_counts` and
    :func:`macro_f1_of_counts` give :func:`~.role_tagger.role_metrics`' accuracy and macro-F1."""
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold roles but {len(predicted)} predicted")
    out = [sum(g == p for g, p in zip(gold, predicted)), len(gold)]
    for label in labels:
        tp = sum(g == label and p == label for g, p in zip(gold, predicted))
        out += [tp, sum(p == label for p in predicted) - tp, sum(g == label for g in gold) - tp]
    return numpy.asarray(out, dtype=float)


def accuracy_of_counts(counts) -> Any:
    """Accuracy of summed :func:`role_counts` (``(..., 2 + 3 L)``; 0 without a sentence)."""
    counts = numpy.asarray(counts, dtype=float)
    total = counts[..., 1]
    return numpy.where(total > 0, counts[..., 0] / numpy.where(total > 0, total, 1.0), 0.0)


def macro_f1_of_counts(counts) -> Any:
    """Macro-F1 of summed :func:`role_counts`: the mean F1 over the labels that occur in the
    gold or the predictions (0 when none does), as :func:`~.role_tagger.role_metrics` has it."""
    counts = numpy.asarray(counts, dtype=float)
    triples = counts[..., 2:].reshape(counts.shape[:-1] + (-1, 3))
    tp, fp, fn = triples[..., 0], triples[..., 1], triples[..., 2]
    denominator = 2 * tp + fp + fn
    present = denominator > 0
    f1 = numpy.where(present, 2 * tp / numpy.where(present, denominator, 1.0), 0.0)
    n_present = present.sum(axis=-1)
    return numpy.where(n_present > 0, f1.sum(axis=-1) / numpy.where(n_present > 0, n_present, 1), 0.0)
