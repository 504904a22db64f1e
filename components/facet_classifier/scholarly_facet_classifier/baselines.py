"""Baselines for citance facet classification, on plain texts and label lists.

* :func:`tfidf_ovr_baseline`: the UniHD 2020 reproduction of the CL-SciSumm Task 1B
  baseline: scikit-learn ``TfidfVectorizer(ngram_range=(1, 2))`` and
  ``OneVsRestClassifier(LogisticRegression(class_weight="balanced"))``, with the
  component's decision rule (labels with probability >= threshold, at least the argmax).
* :func:`majority_baseline`: the most frequent training facet ("Method" on CL-SciSumm)
  for every citance.
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

import numpy

from .labels import FACET_LABELS, decide_many, label_matrix

__all__ = ["majority_baseline", "tfidf_ovr_baseline", "tfidf_ovr_proba"]


def tfidf_ovr_proba(train_texts: Sequence[str], train_labels: Sequence[Sequence[str]], test_texts: Sequence[str],
                    labels: Sequence[str] = FACET_LABELS, seed: int = 0) -> numpy.ndarray:
    """(test texts, labels) probabilities of the TF-IDF one-vs-rest logistic regression.

    A label that never occurs in the training labels gets probability 0 (it cannot be
    learnt); a label on every training text gets 1.
    """
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.multiclass import OneVsRestClassifier

    gold = label_matrix(train_labels, labels).astype(int)
    probs = numpy.zeros((len(test_texts), len(labels)), dtype="float32")
    if not len(test_texts):
        return probs
    vectorizer = TfidfVectorizer(ngram_range=(1, 2))
    train = vectorizer.fit_transform(list(train_texts))
    test = vectorizer.transform(list(test_texts))
    learnable = [j for j in range(len(labels)) if 0 < gold[:, j].sum() < len(gold)]
    for j in range(len(labels)):
        if j not in learnable and len(gold) and gold[:, j].all():
            probs[:, j] = 1.0
    if learnable:
        classifier = OneVsRestClassifier(LogisticRegression(class_weight="balanced", max_iter=1000, random_state=seed))
        classifier.fit(train, gold[:, learnable])
        probs[:, learnable] = classifier.predict_proba(test)
    return probs


def tfidf_ovr_baseline(train_texts: Sequence[str], train_labels: Sequence[Sequence[str]], test_texts: Sequence[str],
                       labels: Sequence[str] = FACET_LABELS, threshold: float = 0.5,
                       min_labels: int = 1) -> list[list[str]]:
    """Facet labels of each test text from :func:`tfidf_ovr_proba` (>= threshold, at least ``min_labels``)."""
    probs = tfidf_ovr_proba(train_texts, train_labels, test_texts, labels)
    return decide_many(probs, labels, threshold, min_labels)


def majority_baseline(train_labels: Sequence[Sequence[str]], test_texts: Sequence[str]) -> list[list[str]]:
    """The most frequent training label (ties: first in sorted order) for every test text."""
    counts = Counter(label for labels in train_labels for label in labels)
    if not counts:
        raise ValueError("majority_baseline needs at least one training label")
    best = min(counts, key=lambda label: (-counts[label], label))
    return [[best] for _ in test_texts]
