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
* :func:`abstract_similarity`: cosines to the paper's abstract sentences (a contribution
  statement often restates a claim of the abstract);
* optionally :func:`cue_window`: the cue flags of the sentence and its two neighbours;
* optionally a second stage-1 probability set, from a logistic regression over the frozen
  embeddings of the sentence and its two neighbours (:func:`neighbour_vectors`) and the
  sentence's context in the paper (:func:`sentence_context`): the n-gram model and the
  embeddings err on different sentences.

Stage 2 must learn from stage-1 scores of sentences the stage-1 model was *not* fitted on:
:func:`out_of_fold_scores` trains the stage-1 recipe (``spacy train`` with the detector's
config) once per fold of the training papers and scores the held-out fold, and the embedding
regression is fitted once per fold the same way (``ContributionDetector.fit_stage2``). Measured
in ``benchmarks/contribution_detector_stacking_bow.py``.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy

from .data import CUE_PATTERNS, SECTION_KINDS, cue_flags, id_folds, section_kind

__all__ = [
    "NEIGHBOURS",
    "relational_features",
    "introduction_context",
    "ABSTRACT_COLUMNS",
    "abstract_similarity",
    "beside_neighbours",
    "cue_window",
    "neighbour_vectors",
    "sentence_context",
    "SENTENCE_CONTEXT_WIDTH",
    "paper_ids",
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


ABSTRACT_COLUMNS = 5
"""Columns of :func:`abstract_similarity`."""


def abstract_similarity(sentence_vectors: numpy.ndarray, abstract_vectors: numpy.ndarray) -> numpy.ndarray:
    """Per introduction sentence (its unit vector a row of ``sentence_vectors``), from the unit
    vectors of the paper's abstract sentences: its best and mean-of-top-2 cosine to an abstract
    sentence, whether its best ranks in the introduction's top 3 and top 6, and its best's ratio
    to the introduction's highest (all 0 for a paper without an abstract). Measured in
    ``benchmarks/contribution_detector_abstract.py``."""
    sentence_vectors = numpy.asarray(sentence_vectors, dtype=numpy.float64)
    abstract_vectors = numpy.asarray(abstract_vectors, dtype=numpy.float64)
    n = len(sentence_vectors)
    if not len(abstract_vectors) or not n:
        return numpy.zeros((n, ABSTRACT_COLUMNS))
    similarity = sentence_vectors.reshape(n, -1) @ abstract_vectors.reshape(len(abstract_vectors), -1).T
    best = similarity.max(axis=1)
    top2 = numpy.sort(similarity, axis=1)[:, -2:].mean(axis=1)
    rank = numpy.argsort(numpy.argsort(-best, kind="stable"), kind="stable")
    ratio = numpy.clip(best, 0.0, None) / max(best.max(), 1e-6)  # no blow-up when every cosine is <= 0
    return numpy.column_stack([best, top2, rank < 3, rank < 6, ratio])


def beside_neighbours(rows: numpy.ndarray, caller: str = "beside_neighbours") -> numpy.ndarray:
    """Per row of ``rows`` (one introduction's sentences in order, one row each): the row, the
    previous row and the next one (zeros past the ends), side by side; ``caller`` names the
    function in the error for an array that is not 2-D."""
    rows = numpy.asarray(rows)
    if rows.ndim != 2:
        raise ValueError(f"{caller}: expected a (sentences, width) array, got shape {rows.shape}")
    zero = numpy.zeros((min(1, len(rows)), rows.shape[1]), dtype=rows.dtype)
    return numpy.hstack([rows, numpy.vstack([zero, rows[:-1]]), numpy.vstack([rows[1:], zero])])


def cue_window(cues: Sequence[dict]) -> numpy.ndarray:
    """Per sentence: the cue flags of the sentence, the one before and the one after (0 past the ends)."""
    flags = numpy.array([[float(bool(c[cue])) for cue in CUE_PATTERNS] for c in cues], dtype=numpy.float64)
    return beside_neighbours(flags.reshape(len(cues), len(CUE_PATTERNS)))


def neighbour_vectors(vectors: numpy.ndarray) -> numpy.ndarray:
    """Per sentence of one introduction (``vectors``: its sentence embeddings in order): its own
    embedding, the previous sentence's and the next one's (zeros past the ends), side by side."""
    return beside_neighbours(numpy.asarray(vectors, dtype=numpy.float32), "neighbour_vectors")


SENTENCE_CONTEXT_WIDTH = len(SECTION_KINDS) + 1 + 10 + 3 + 3 * len(CUE_PATTERNS)
"""Columns of :func:`sentence_context`."""


def sentence_context(doc: Any, sentences: Sequence[Any]) -> numpy.ndarray:
    """Per sentence Span of ``sentences`` (introduction sentences of the paper Doc ``doc``), the
    dense context features of the TF-IDF baseline (:class:`.baselines.Featurizer`), computed
    from the Doc: the coarse kind of its section (one-hot over :data:`.data.SECTION_KINDS` and
    other), its position in the paper (10 bins over ``doc.sents``), its position in its section
    run, whether it is a heading and in the introduction (0 and 1 here), the cue flags of the
    sentence and of the one before it in the paper, and the cue flags again (crossed with the
    introduction flag, as the baseline does). A sentence's section is the text of the last
    heading sentence (``doc.spans["section_heads"]``) before it (without one, the title of the
    ``doc.spans["sections"]`` span that holds it), and a run ends where a heading names another
    section, as NCG's per-line section labels do, so an NCG paper's Doc gives the baseline's rows
    exactly."""
    kinds = [kind for kind, _ in SECTION_KINDS] + ["other"]
    cues = list(CUE_PATTERNS)
    all_sentences = list(doc.sents)
    n = len(all_sentences)
    head_spans = sorted((span.start, span.end) for span in doc.spans.get("section_heads", []))
    labels: list[Optional[str]] = []
    for sentence in all_sentences:
        heading = any(lo <= sentence.start < hi for lo, hi in head_spans)  # TEI sentences end in "\n\n"
        labels.append(sentence.text.strip() if heading else (labels[-1] if labels else None))
    sections = [(span.start, span.end, span.label_) for span in doc.spans.get("sections", [])]
    for i, sentence in enumerate(all_sentences):
        if labels[i] is None:
            labels[i] = next((title for lo, hi, title in sections if lo <= sentence.start < hi), None)
    run_of: list[tuple[int, int]] = []
    start = 0
    for i in range(1, n + 1):
        if i == n or labels[i] != labels[i - 1]:
            run_of.extend([(start, i)] * (i - start))
            start = i
    index = {sentence.start: i for i, sentence in enumerate(all_sentences)}
    out = numpy.zeros((len(sentences), SENTENCE_CONTEXT_WIDTH), dtype=numpy.float32)
    for r, sentence in enumerate(sentences):
        i = index.get(sentence.start)
        if i is None:
            raise ValueError(f"sentence_context: the sentence {sentence.text[:60]!r} does not start a sentence of the doc")
        lo, hi = run_of[i]
        out[r, kinds.index(section_kind(labels[i] or ""))] = 1.0
        col = len(kinds)
        out[r, col + min(9, int(i / max(1, n - 1) * 10))] = 1.0
        col += 10
        out[r, col] = (i - lo) / max(1, hi - lo - 1)
        out[r, col + 2] = 1.0  # in the introduction; col + 1, a heading, stays 0
        col += 3
        own = cue_flags(sentence.text)
        before = cue_flags(all_sentences[i - 1].text) if i else {name: 0 for name in cues}
        for j, name in enumerate(cues):
            out[r, col + j] = own[name]
            out[r, col + len(cues) + j] = before[name]
            out[r, col + 2 * len(cues) + j] = own[name]
    return out


def paper_ids(docs: Sequence[Any], caller: str) -> list[str]:
    """The docs' paper ids (``doc._.paper_meta["paper_id"]``), which folds group by; ``caller``
    names the function in the error for a doc without one."""
    ids = []
    for i, doc in enumerate(docs):
        paper_id = (doc._.paper_meta or {}).get("paper_id")
        if not paper_id:
            raise ValueError(f"{caller}: doc {i} has no paper id (doc._.paper_meta['paper_id'])")
        ids.append(paper_id)
    return ids


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
    ids = paper_ids(docs, "out_of_fold_scores")
    out: list[Optional[numpy.ndarray]] = [None] * len(docs)
    for fold in id_folds(ids, folds, seed):
        scored = [i for i, paper_id in enumerate(ids) if paper_id in fold]
        nlp = train_stage1([doc for doc, paper_id in zip(docs, ids) if paper_id not in fold], config, steps=steps,
                           seed=seed, overrides=overrides, gpu_id=gpu_id)
        for i, (_, probs) in zip(scored, nlp.get_pipe(pipe).predict_stage1([docs[i] for i in scored])):
            out[i] = numpy.asarray(probs, dtype=numpy.float64)
    return out
