"""Fit the contribution detector's stage 2 (boosted trees over each sentence's place in its introduction).

Stage 2 must learn from stage-1 probabilities of sentences the stage-1 model never saw, or it
learns to trust scores that are better than they will be on new papers. So this trains the
stage-1 recipe (``spacy train`` with ``--config``, ``--max-steps`` steps, its ``model-last``)
once per fold of ``--folds`` folds of the training papers, scores each held-out fold
(``scholarly_contribution_detector.stacking.out_of_fold_scores``), fits the stage-2 trees of
the ``--stage1`` pipeline on those scores (``ContributionDetector.fit_stage2``, which also fits
the detector's embedding scorer and fine-tunes its introduction tagger, on the GPU of
``--gpu-id`` when given, out of fold over the same folds and then on all the papers)
and writes the pipeline, both stages, to ``--output``. ``--stage1`` should be the same recipe trained on all the
training papers (``train-detector``'s ``model-last``). Prints and writes to
``<output>/stage2_fit.json``: the papers and sentences learnt from and the out-of-fold
precision, recall and F1 at the detector's threshold of the n-gram stage 1, the embedding
scorer and the tagger.

    python scripts/fit_detector_stage2.py --train corpus/detector_train.spacy --config configs/detector.cfg
        --stage1 training/detector/model-last --output training/detector/stacked
        [--folds 5] [--max-steps 100] [--seed 0] [--gpu-id -1]

The title similarity uses the sentence encoder the ``--stage1`` pipeline's config names
(``paths.backbone`` of ``train-detector``).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy
import spacy

import scholarly_nlp
from scholarly_contribution_detector.features import introduction_features
from scholarly_contribution_detector.stacking import out_of_fold_scores

PIPE = "contribution_detector"


def out_of_fold_outcomes(docs, probs, threshold: float) -> dict:
    """Pooled precision, recall and F1 of the out-of-fold stage-1 probabilities ``probs`` against the docs' gold."""
    tp = fp = fn = 0
    for doc, scores in zip(docs, probs):
        gold = {(int(g["start"]), int(g["end"])): int(g["label"]) for g in doc._.contribution_gold or []}
        for sentence, score in zip(introduction_features(doc)[0], scores):
            label = gold.get((sentence.start, sentence.end), 0)
            predicted = score >= threshold
            tp += int(predicted and label)
            fp += int(predicted and not label)
            fn += int(label and not predicted)
    return outcome_scores(tp, fp, fn)


def outcome_scores(tp: int, fp: int, fn: int) -> dict:
    """Precision, recall and F1 of pooled counts, with the counts."""
    precision = tp / max(tp + fp, 1)
    recall = tp / max(tp + fn, 1)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "tp": tp, "fp": fp, "fn": fn}


def main(argv=None) -> dict:
    """Command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=Path, required=True, help="the detector's training DocBin")
    parser.add_argument("--config", type=Path, required=True, help="the stage-1 training config")
    parser.add_argument("--stage1", type=Path, required=True, help="the stage-1 pipeline trained on all of --train")
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--max-steps", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--gpu-id", type=int, default=-1)
    args = parser.parse_args(argv)
    started = time.perf_counter()

    nlp = spacy.load(args.stage1)
    detector = nlp.get_pipe(PIPE)
    docs = [doc for doc in scholarly_nlp.load_docbin(args.train, nlp.vocab) if doc._.contribution_gold]
    if len(docs) < args.folds:
        raise SystemExit(f"{args.train}: {len(docs)} papers with gold, fewer than --folds {args.folds}")
    probs = out_of_fold_scores(docs, args.config, folds=args.folds, steps=args.max_steps, seed=args.seed,
                               pipe=PIPE, gpu_id=args.gpu_id)
    device = f"cuda:{args.gpu_id}" if args.gpu_id >= 0 else "cpu"
    fitted = detector.fit_stage2(docs, probs, seed=args.seed, folds=args.folds, device=device)
    nlp.to_disk(args.output)
    embedding, tagger = fitted.pop("embedding_scorer"), fitted.pop("tagger")
    report = {**fitted, "folds": args.folds, "max_steps": args.max_steps, "seed": args.seed,
              "sentence_encoder": detector.stage2.attrs["sentence_encoder"],
              "cue_window": detector.stage2.attrs["cue_window"],
              "abstract": detector.stage2.attrs["abstract"],
              "out_of_fold_stage1": out_of_fold_outcomes(docs, probs, detector.cfg["threshold"]),
              "out_of_fold_embedding_scorer": outcome_scores(**embedding) if embedding else None,
              "out_of_fold_tagger": outcome_scores(**tagger) if tagger else None,
              "seconds": round(time.perf_counter() - started, 1)}
    (args.output / "stage2_fit.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf8")
    print(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    numpy.seterr(all="ignore")
    main()
