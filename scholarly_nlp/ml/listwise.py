"""Listwise ranking training shared by pipes that rank candidates for a query with a pair scorer.

A pipe that mixes in :class:`ListwiseRankingPipe` (before ``TrainablePipe``) provides
``_training_lists(doc, limit)``, returning ``(query, candidate texts, gold positions)`` per
training query of one reference Doc, and names the per-Doc cap in ``per_doc_limit_key`` (a key
of ``self.cfg``). ``update`` scores the (query, candidate) pairs with ``self.model`` in forward
passes of at most ``cfg["batch_size"]`` pairs (whole lists; the gradients of the passes add
up before the one optimiser step, so the step equals one pass over everything without its
memory: 512 pairs of 256 tokens in one MiniLM pass took 23 GB on CPU); the loss is the
softmax cross-entropy of each list's scores (divided by ``cfg["loss_temperature"]`` when set)
against a uniform distribution over its gold positions, averaged over the lists.
"""

from __future__ import annotations

from typing import Any, Iterable, Optional, Sequence

import numpy
from spacy.training import Example, validate_examples
from thinc.api import Optimizer

from .training_state import TrainingState


def listwise_softmax_loss(scores: Sequence[float], groups: Sequence[tuple[int, int, Sequence[int]]],
                          temperature: float = 1.0) -> tuple[float, numpy.ndarray]:
    """Mean listwise cross-entropy and its gradient w.r.t. ``scores``.

    ``groups`` holds ``(start, end, gold positions within the list)`` per list of the flat
    ``scores``; logits are ``scores / temperature``.
    """
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, got {temperature!r}")
    logits_all = numpy.asarray(scores, dtype="float64") / temperature
    grad = numpy.zeros_like(logits_all)
    total = 0.0
    for start, end, gold in groups:
        logits = logits_all[start:end]
        exp = numpy.exp(logits - logits.max())
        probs = exp / exp.sum()
        target = numpy.zeros_like(probs)
        target[list(gold)] = 1.0 / len(gold)
        total += float(-(target * numpy.log(probs + 1e-12)).sum())
        grad[start:end] = (probs - target) / temperature
    n = max(len(groups), 1)
    return total / n, grad / n


def list_chunks(lists: Sequence[tuple[str, Sequence[str], Sequence[int]]], max_pairs: int) -> list[list]:
    """``lists`` in order, cut into runs of whole lists holding at most ``max_pairs`` pairs each
    (a list longer than that is a run of its own)."""
    chunks: list[list] = []
    size = 0
    for item in lists:
        n = len(item[1])
        if not chunks or size + n > max_pairs:
            chunks.append([])
            size = 0
        chunks[-1].append(item)
        size += n
    return chunks


class ListwiseRankingPipe(TrainingState):
    """``update`` and ``get_loss`` for a ranking pipe trained with a listwise loss (an update
    marks the pipe trained, see :class:`TrainingState`)."""

    per_doc_limit_key = "max_per_doc"

    def update(self, examples: Iterable[Example], *, drop: float = 0.0, sgd: Optional[Optimizer] = None,
               losses: Optional[dict[str, float]] = None) -> dict[str, float]:
        """One listwise step on the training queries of the examples' reference Docs."""
        losses = {} if losses is None else losses
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_examples(examples, f"{type(self).__name__}.update")
        limit = self.cfg[self.per_doc_limit_key]
        lists = [item for eg in examples for item in self._training_lists(eg.reference, limit)]
        if not lists:
            return losses
        for chunk in list_chunks(lists, self.cfg.get("batch_size") or len(lists)):
            pairs, groups = [], []
            for query, texts, gold in chunk:
                start = len(pairs)
                pairs.extend((query, text) for text in texts)
                groups.append((start, len(pairs), list(gold)))
            scores, backprop = self.model.begin_update(pairs)
            loss, d_scores = self.get_loss(examples, (scores, groups))
            share = len(chunk) / len(lists)  # get_loss averages over the chunk's lists; the step, over all
            backprop(d_scores * share)
            losses[self.name] += loss * share
        if sgd is not None:
            self.finish_update(sgd)
        self.mark_trained()
        return losses

    def get_loss(self, examples: Iterable[Example], scores: Any) -> tuple[float, Any]:
        """Listwise softmax cross-entropy; ``scores`` is (flat scores, [(start, end, gold positions)])."""
        values, groups = scores
        temperature = float(self.cfg.get("loss_temperature") or 1.0)
        loss, grad = listwise_softmax_loss(self.model.ops.to_numpy(values), groups, temperature)
        return loss, self.model.ops.asarray1f(grad.astype("float32"))
