"""Facet label sets as matrices, and the decision rule from probabilities to label sets."""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy

from scholarly_nlp.metrics import FACET_LABELS

__all__ = ["FACET_LABELS", "decide_labels", "decide_many", "label_matrix"]


def label_matrix(facet_lists: Iterable[Iterable[str]], labels: Sequence[str]) -> numpy.ndarray:
    """A float32 (items, labels) 0/1 matrix of label sets; ValueError naming an unknown label."""
    index = {label: j for j, label in enumerate(labels)}
    rows = []
    for facets in facet_lists:
        row = numpy.zeros(len(labels), dtype="float32")
        for facet in facets:
            if facet not in index:
                raise ValueError(f"unknown facet label {facet!r}; the classifier's labels are {', '.join(labels)}")
            row[index[facet]] = 1.0
        rows.append(row)
    return numpy.stack(rows) if rows else numpy.zeros((0, len(labels)), dtype="float32")


def decide_labels(probs: Sequence[float], labels: Sequence[str], threshold: float = 0.5,
                  min_labels: int = 1) -> list[str]:
    """Labels whose probability is >= ``threshold``, in label order.

    When fewer than ``min_labels`` pass, the most probable remaining labels are added (ties
    broken by label order) until there are ``min_labels``; with the default 1, every item
    gets at least its argmax label.
    """
    probs = numpy.asarray(probs, dtype="float64")
    chosen = {j for j, p in enumerate(probs) if p >= threshold}
    for j in numpy.argsort(-probs, kind="stable"):
        if len(chosen) >= min(min_labels, len(labels)):
            break
        chosen.add(int(j))
    return [labels[j] for j in sorted(chosen)]


def decide_many(probs: numpy.ndarray, labels: Sequence[str], threshold: float = 0.5,
                min_labels: int = 1) -> list[list[str]]:
    """:func:`decide_labels` for every row of a (items, labels) probability matrix."""
    return [decide_labels(row, labels, threshold, min_labels) for row in numpy.asarray(probs)]
