"""Pair losses on unit-length embeddings, with their gradients (numpy).

Each pair (i, j) of rows of the embedding matrix ``E`` has a target relatedness ``R`` in
[0, 1] (1 same paper, 0.6 citation relation, 0 random) and the score ``s = E[i] . E[j]``
(the cosine, since rows are unit vectors). Every loss returns ``(loss, dE)`` with ``dE`` the
gradient of the mean loss with respect to ``E``.

* ``mse`` (the paper's): ``(s - R)^2``.
* ``cross_entropy``: binary cross-entropy between ``R`` (a soft label) and
  ``sigmoid(scale * s)``; ``scale`` spreads cosines over the sigmoid's useful range.
* ``triplet``: for pairs that share their first figure (the anchor) and have different
  targets, ``max(0, margin - s(anchor, more related) + s(anchor, less related))``.
"""

from __future__ import annotations

from typing import Callable

import numpy

LOSSES = ("mse", "cross_entropy", "triplet")


def _scores(E: numpy.ndarray, left: numpy.ndarray, right: numpy.ndarray) -> numpy.ndarray:
    return numpy.einsum("ij,ij->i", E[left], E[right])


def _pair_gradient(E: numpy.ndarray, left: numpy.ndarray, right: numpy.ndarray, d_scores: numpy.ndarray) -> numpy.ndarray:
    """dE from the gradient of each pair's score (s = E[l] . E[r])."""
    dE = numpy.zeros_like(E)
    numpy.add.at(dE, left, d_scores[:, None] * E[right])
    numpy.add.at(dE, right, d_scores[:, None] * E[left])
    return dE


def mse_loss(E: numpy.ndarray, left: numpy.ndarray, right: numpy.ndarray, targets: numpy.ndarray,
             **_: float) -> tuple[float, numpy.ndarray]:
    """Mean of ``(E[l] . E[r] - target)^2`` over the pairs."""
    n = max(len(left), 1)
    diff = _scores(E, left, right) - targets
    return float((diff ** 2).sum() / n), _pair_gradient(E, left, right, 2.0 * diff / n)


def cross_entropy_loss(E: numpy.ndarray, left: numpy.ndarray, right: numpy.ndarray, targets: numpy.ndarray,
                       scale: float = 5.0, **_: float) -> tuple[float, numpy.ndarray]:
    """Mean binary cross-entropy of ``sigmoid(scale * s)`` against the soft targets."""
    n = max(len(left), 1)
    logits = scale * _scores(E, left, right)
    # log(1 + exp(x)) computed stably; loss = softplus(x) - target * x.
    loss = numpy.logaddexp(0.0, logits) - targets * logits
    probabilities = 1.0 / (1.0 + numpy.exp(-logits))
    d_scores = scale * (probabilities - targets) / n
    return float(loss.sum() / n), _pair_gradient(E, left, right, d_scores)


def triplets(left: numpy.ndarray, right: numpy.ndarray, targets: numpy.ndarray) -> list[tuple[int, int]]:
    """(more related pair, less related pair) index pairs that share the anchor ``left``."""
    by_anchor: dict[int, list[int]] = {}
    for p, anchor in enumerate(left):
        by_anchor.setdefault(int(anchor), []).append(p)
    found = []
    for pairs in by_anchor.values():
        for a in pairs:
            for b in pairs:
                if targets[a] > targets[b]:
                    found.append((a, b))
    return found


def triplet_loss(E: numpy.ndarray, left: numpy.ndarray, right: numpy.ndarray, targets: numpy.ndarray,
                 margin: float = 0.2, **_: float) -> tuple[float, numpy.ndarray]:
    """Mean hinge ``max(0, margin - s_pos + s_neg)`` over the anchor's (more, less related) pairs."""
    found = triplets(left, right, targets)
    if not found:
        return 0.0, numpy.zeros_like(E)
    scores = _scores(E, left, right)
    pos = numpy.array([a for a, _ in found])
    neg = numpy.array([b for _, b in found])
    violation = margin - scores[pos] + scores[neg]
    active = violation > 0
    d_scores = numpy.zeros_like(scores)
    numpy.add.at(d_scores, pos[active], -1.0 / len(found))
    numpy.add.at(d_scores, neg[active], 1.0 / len(found))
    return float(violation[active].sum() / len(found)), _pair_gradient(E, left, right, d_scores)


_FUNCTIONS: dict[str, Callable[..., tuple[float, numpy.ndarray]]] = {
    "mse": mse_loss,
    "cross_entropy": cross_entropy_loss,
    "triplet": triplet_loss,
}


def pair_loss(name: str, E: numpy.ndarray, left, right, targets, **options: float) -> tuple[float, numpy.ndarray]:
    """The loss ``name`` (one of :data:`LOSSES`) and its gradient; ``options``: scale, margin."""
    if name not in _FUNCTIONS:
        raise ValueError(f"unknown loss {name!r}; known: {', '.join(LOSSES)}")
    E = numpy.asarray(E, dtype=numpy.float32)
    return _FUNCTIONS[name](E, numpy.asarray(left, dtype=int), numpy.asarray(right, dtype=int),
                            numpy.asarray(targets, dtype=numpy.float32), **options)
