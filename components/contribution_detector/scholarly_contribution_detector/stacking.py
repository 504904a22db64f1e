"""Stage 2 of the contribution detector: features of a sentence relative to its introduction.

NCG annotators mark few sentences per paper, usually the first statement of the approach, so
whether a sentence states a contribution depends on how it compares with the rest of its
introduction, which the stage-1 n-gram model (one sentence at a time) cannot see. Stage 2 is a
boosted-tree model (``scholarly_nlp.BoostedTrees.v1``) over, per introduction sentence:

* :func:`relational_features` of the stage-1 probabilities: its own, its neighbours' up to
  :data:`NEIGHBOURS` sentences away, its ratio to the introduction's highest, its rank, how
  many earlier sentences reach 0.5, the introduction's mean;
* :func:`introduction_context`: position in the introduction, cosine to the paper's title
  (frozen sentence embeddings), first occurrence of each cue phrase of
  :data:`.data.CUE_PATTERNS`;
* optionally :func:`cue_window`: the cue flags of the sentence and its two neighbours.

Stage 2 must learn from stage-1 scores of sentences the stage-1 model was *not* fitted on:
:func:`out_of_fold_scores` trains the stage-1 recipe (``spacy train`` with the detector's
config) once per fold of the training papers and scores the held-out fold. Measured in
``benchmarks/contribution_detector_stacking_bow.py``.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy

from .data import CUE_PATTERNS, id_folds

__all__ = [
    "NEIGHBOURS",
    "relational_features",
    "introduction_context",
    "cue_window",
    "stage2_matrix",
    "train_stage1",
    "out_of_fold_scores",
]

NEIGHBOURS = 3
"""Stage 2 sees the stage-1 probabilities of this many sentences on each side."""


def relational_features(probs: Sequence[float], neighbours: int = NEIGHBOURS) -> numpy.ndarray:
    """Per sentence of one introduction, from the stage-1 probabilities of all its sentences:
    its own probability; its neighbours' (``neighbours`` before, then after, 0 past the ends);
    its ratio to the introduction's highest; its rank / n (0 = highest); whether it ranks in
    the top 3; how many earlier sentences reach 0.5 (capped at 5, / 5); the mean probability."""
    probs = numpy.asarray(probs, dtype=numpy.float64)
    n = len(probs)
    if n == 0:
        return numpy.zeros((0, 2 * neighbours + 6))
    padded = numpy.concatenate([numpy.zeros(neighbours), probs, numpy.zeros(neighbours)])
    before = [padded[neighbours - k : neighbours - k + n] for k in range(1, neighbours + 1)]
    after = [padded[neighbours + k : neighbours + k + n] for k in range(1, neighbours + 1)]
    rank = numpy.argsort(numpy.argsort(-probs, kind="stable"), kind="stable")
    earlier = numpy.concatenate([[0], numpy.cumsum(probs >= 0.5)[:-1]])
    return numpy.column_stack([probs, *before, *after, probs / max(probs.max(), 1e-6), rank / n, rank < 3,
                               numpy.minimum(earlier, 5) / 5, numpy.full(n, probs.mean())])


def introduction_context(cues: Sequence[dict], sentence_vectors: numpy.ndarray,
                         title_vector: numpy.ndarray) -> numpy.ndarray:
    """Per introduction sentence (``cues``: the sentences' :func:`.data.cue_flags`, in order):
    relative position, first, last, index from the start and from the end (capped at 20, / 20),
    cosine of its unit vector to the title's, whether that is among the 3 and 6 most similar,
    and per cue phrase whether this is its first occurrence in the introduction and how many
    sentences before had it (capped at 5, / 5)."""
    n = len(cues)
    if n == 0:
        return numpy.zeros((0, 8 + 2 * len(CUE_PATTERNS)))
    similarity = (numpy.asarray(sentence_vectors, dtype=numpy.float64).reshape(n, -1)
                  @ numpy.asarray(title_vector, dtype=numpy.float64).reshape(-1))
    rank = numpy.argsort(numpy.argsort(-similarity, kind="stable"), kind="stable")
    seen = {cue: 0 for cue in CUE_PATTERNS}
    out = []
    for i, flags in enumerate(cues):
        features = [i / max(1, n - 1), float(i == 0), float(i == n - 1), min(i, 20) / 20, min(n - 1 - i, 20) / 20,
                    similarity[i], float(rank[i] < 3), float(rank[i] < 6)]
        features += [float(seen[cue] == 0 and bool(flags[cue])) for cue in CUE_PATTERNS]
        features += [min(seen[cue], 5) / 5 for cue in CUE_PATTERNS]
        out.append(features)
        for cue in CUE_PATTERNS:
            seen[cue] += int(bool(flags[cue]))
    return numpy.asarray(out, dtype=numpy.float64).reshape(n, 8 + 2 * len(CUE_PATTERNS))


def cue_window(cues: Sequence[dict]) -> numpy.ndarray:
    """Per sentence: the cue flags of the sentence, the one before and the one after (0 past the ends)."""
    flags = numpy.array([[float(bool(c[cue])) for cue in CUE_PATTERNS] for c in cues], dtype=numpy.float64)
    flags = flags.reshape(len(cues), len(CUE_PATTERNS))
    if not len(cues):
        return numpy.zeros((0, 3 * len(CUE_PATTERNS)))
    zero = numpy.zeros((1, flags.shape[1]))
    return numpy.hstack([flags, numpy.vstack([zero, flags[:-1]]), numpy.vstack([flags[1:], zero])])


def stage2_matrix(probs_by_input: Sequence[Sequence[float]], context: numpy.ndarray,
                  cues: Optional[Sequence[dict]]) -> numpy.ndarray:
    """The stage-2 rows of one introduction: the :func:`relational_features` of each stage-1
    probability set, its :func:`introduction_context` and, when ``cues`` is given, its
    :func:`cue_window`."""
    parts = [relational_features(probs) for probs in probs_by_input] + [numpy.asarray(context, dtype=numpy.float64)]
    if cues is not None:
        parts.append(cue_window(cues))
    return numpy.hstack(parts)


def train_stage1(docs: Sequence[Any], config: Path, *, steps: int, seed: int = 0,
                 overrides: Optional[dict] = None, gpu_id: int = -1):
    """The pipeline ``spacy train config`` makes from training Docs ``docs`` (its ``model-last``;
    the dev corpus, which only ``model-best`` would use, is the first two docs)."""
    import spacy
    from spacy.cli.train import train

    import scholarly_nlp

    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        scholarly_nlp.save_docbin(docs, folder / "train.spacy")
        scholarly_nlp.save_docbin(list(docs)[:2], folder / "dev.spacy")
        train(Path(config), folder / "out", use_gpu=gpu_id, overrides={
            "paths.train": str(folder / "train.spacy"), "paths.dev": str(folder / "dev.spacy"),
            "system.seed": seed, "training.max_steps": steps, **(overrides or {})})
        return spacy.load(folder / "out" / "model-last")


def out_of_fold_scores(docs: Sequence[Any], config: Path, *, folds: int = 5, steps: int = 100, seed: int = 0,
                       overrides: Optional[dict] = None, pipe: str = "contribution_detector",
                       gpu_id: int = -1) -> list[numpy.ndarray]:
    """Per doc, the stage-1 probabilities of its introduction sentences from a
    :func:`train_stage1` model fitted on the other folds: ``folds`` folds of the docs' paper ids
    (``doc._.paper_meta["paper_id"]``; :func:`.data.id_folds`, the benchmark's folds), so all the
    docs of a paper fall in one fold."""
    docs = list(docs)
    ids = []
    for i, doc in enumerate(docs):
        paper_id = (doc._.paper_meta or {}).get("paper_id")
        if not paper_id:
            raise ValueError(f"out_of_fold_scores: doc {i} has no paper id (doc._.paper_meta['paper_id'])")
        ids.append(paper_id)
    out: list[Optional[numpy.ndarray]] = [None] * len(docs)
    for fold in id_folds(ids, folds, seed):
        scored = [i for i, paper_id in enumerate(ids) if paper_id in fold]
        nlp = train_stage1([doc for doc, paper_id in zip(docs, ids) if paper_id not in fold], config, steps=steps,
                           seed=seed, overrides=overrides, gpu_id=gpu_id)
        for i, (_, probs) in zip(scored, nlp.get_pipe(pipe).predict_stage1([docs[i] for i in scored])):
            out[i] = numpy.asarray(probs, dtype=numpy.float64)
    return out
