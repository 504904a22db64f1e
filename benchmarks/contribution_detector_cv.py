"""The ``contribution_detector`` pipe on NLPContributionGraph: grouped k-fold CV by paper.

The detection step of issue #6 as a spaCy component
(``components/contribution_detector``): spaCy's sparse n-gram model
``spacy.TextCatBOW.v3`` over each introduction sentence plus context pseudo-tokens
(section, quarter of the introduction, first after a heading, cue phrases in the sentence
and in the one before). The 177 NCG papers become Docs with
:func:`scholarly_contribution_detector.ncg_docs.ncg_doc`; only introduction sentences
(:func:`scholarly_nlp.readers.ncg.introduction_mask`) are trained on and scored, the
scope of the ``tfidf_lr_context_intro_only`` row of ``contribution_detection_cv.py``
(sklearn TF-IDF + context LR, F1 0.543). Folds are by paper
(:func:`scholarly_contribution_detector.data.grouped_folds`, the same seed, so the
same folds). Each fold trains a fresh pipe (``--epochs`` passes over the training papers,
minibatches of ``--batch`` papers, Adam with ``--lr``) and runs it on the test papers'
Docs; a sentence is positive when its probability is >= ``--threshold``.

Reported for the positive class: pooled P/R/F1 over all out-of-fold introduction
sentences, per-fold F1 (mean, std), average precision of the probabilities, and the
``rule_intro_we`` baseline (positive iff the sentence contains "we").

    python benchmarks/contribution_detector_cv.py [--data DIR] [--folds 5] [--seed 0]
        [--epochs 5] [--lr 0.002] [--positive-weight 4.5] [--out benchmarks/results/contribution_detector_cv.json]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DEFAULT_DATA_ROOT, RESULTS_DIR, ensure_repo_on_path, machine_info, markdown_table, write_json

ensure_repo_on_path()

import numpy  # noqa: E402
from contribution_detection_cv import prf  # noqa: E402  (one definition of the positive-class P/R/F1)


def train_pipeline(train_docs, epochs: int = 5, lr: float = 0.002, batch: int = 8, seed: int = 0, config=None):
    """A blank scholarly_nlp pipeline with a ``contribution_detector`` trained on ``train_docs``
    (NCG Docs carrying ``doc._.contribution_gold``)."""
    import scholarly_nlp
    from spacy.training import Example
    from thinc.api import Adam, fix_random_seed

    fix_random_seed(seed)
    nlp = scholarly_nlp.blank()
    nlp.add_pipe("contribution_detector", config=config or {})
    examples = [Example(doc, doc) for doc in train_docs]
    optimizer = nlp.initialize(lambda: examples, sgd=Adam(lr))
    rng = random.Random(seed)
    for _ in range(epochs):
        rng.shuffle(examples)
        for start in range(0, len(examples), batch):
            nlp.update(examples[start : start + batch], sgd=optimizer)
    return nlp


def score(gold: numpy.ndarray, predicted: numpy.ndarray, fold_of: numpy.ndarray, scores=None) -> dict:
    """Pooled and per-fold scores of ``predicted`` against ``gold``."""
    precision, recall, f1 = prf(gold, predicted)
    per_fold = [prf(gold[fold_of == f], predicted[fold_of == f])[2] for f in numpy.unique(fold_of)]
    out = {"sentences": int(len(gold)), "positives": int(gold.sum()), "predicted": int(predicted.sum()),
           "precision": precision, "recall": recall, "f1": f1, "f1_per_fold": per_fold,
           "f1_fold_mean": float(numpy.mean(per_fold)), "f1_fold_std": float(numpy.std(per_fold))}
    if scores is not None:
        from sklearn.metrics import average_precision_score

        out["average_precision"] = float(average_precision_score(gold, scores))
    return out


def main(argv=None) -> dict:
    """Run the cross-validation, print the markdown table, write the JSON; returns the result."""
    import scholarly_nlp
    from scholarly_contribution_detector.ncg_docs import ncg_doc
    from scholarly_contribution_detector.data import grouped_folds
    from scholarly_nlp.readers import iter_ncg_papers

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA_ROOT / "nlpcontributiongraph")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--lr", type=float, default=0.002)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--threshold", type=float, default=0.5)
    parser.add_argument("--positive-weight", type=float, default=4.5)
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "contribution_detector_cv.json")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        papers = list(iter_ncg_papers(args.data))
    skipped = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    folds = grouped_folds(papers, k=args.folds, seed=args.seed)
    vocab = scholarly_nlp.blank().vocab
    docs = {p.paper_id: ncg_doc(p, vocab) for p in papers}
    config = {"threshold": args.threshold, "positive_weight": args.positive_weight}

    gold, scores, rule, fold_of = [], [], [], []
    for f, test_ids in enumerate(folds):
        train_docs = [docs[i] for i in sorted(docs) if i not in test_ids]
        nlp = train_pipeline(train_docs, args.epochs, args.lr, args.batch, args.seed + f, config)
        for pid in sorted(test_ids):
            reference = docs[pid]
            predicted = nlp(reference.copy())
            items = reference._.contribution_gold or []
            by_offset = {tuple(o) for o in predicted._.contribution_sentence_offsets or []}
            probs = predicted._.contribution_scores or []
            assert len(probs) == len(items), pid
            for item, p in zip(items, probs):
                gold.append(bool(item["label"]))
                scores.append(p)
                rule.append("__cue_we" in item["features"])
                fold_of.append(f)
                assert ((item["start"], item["end"]) in by_offset) == (p >= args.threshold)
        print(f"fold {f + 1}/{len(folds)} done ({time.perf_counter() - started:.0f}s)", file=sys.stderr)

    gold_a = numpy.array(gold, dtype=bool)
    scores_a = numpy.array(scores, dtype=float)
    fold_a = numpy.array(fold_of)
    systems = {
        "contribution_detector": score(gold_a, scores_a >= args.threshold, fold_a, scores_a),
        "rule_intro_we": score(gold_a, numpy.array(rule, dtype=bool), fold_a),
    }
    result = {
        "benchmark": "contribution_detector_cv",
        "data": str(args.data),
        "papers": len(papers),
        "skipped_folders": skipped,
        "introduction_sentences": int(len(gold_a)),
        "introduction_positives": int(gold_a.sum()),
        "folds": args.folds,
        "seed": args.seed,
        "settings": {"epochs": args.epochs, "lr": args.lr, "batch": args.batch, "threshold": args.threshold,
                     "positive_weight": args.positive_weight},
        "reference": {"tfidf_lr_context_intro_only (contribution_detection_cv.py)": 0.543},
        "systems": systems,
        "seconds": round(time.perf_counter() - started, 1),
        "machine": machine_info(),
    }
    write_json(args.out, result)
    print(render_table(result))
    print(f"\nwritten {args.out}")
    return result


def render_table(result: dict) -> str:
    """The markdown table of a result dict (one line per system)."""
    lines = []
    for name, s in result["systems"].items():
        ap = f"{s['average_precision']:.3f}" if "average_precision" in s else "-"
        lines.append([name, f"{s['precision']:.3f}", f"{s['recall']:.3f}", f"{s['f1']:.3f}",
                      f"{s['f1_fold_mean']:.3f} ± {s['f1_fold_std']:.3f}", ap])
    summary = (f"{result['papers']} papers; introduction: {result['introduction_sentences']} sentences "
               f"({result['introduction_positives']} positive); {result['folds']}-fold CV grouped by paper, "
               f"{result['seconds']}s")
    return summary + "\n\n" + markdown_table(["system", "P", "R", "F1", "F1 per fold", "AP"], lines)


if __name__ == "__main__":
    main()
