"""Contribution-sentence detection on NLPContributionGraph: grouped k-fold CV by paper.

Step 1 of the contribution linker (issue #6): which sentences of a paper state its
contributions? The data are the 177 papers of SemEval-2021 Task 11 (NLPContributionGraph,
read by :mod:`scholarly_nlp.readers.ncg`); a sentence is positive when its line number is
in the paper's ``sentences.txt``. Folds are by paper (:func:`grouped_folds`), so no paper
has sentences on both sides. Systems:

* ``tfidf_lr``: TF-IDF (word 1-2 grams, sublinear tf, min_df 2) of the sentence text,
  logistic regression (liblinear, C=1, balanced class weights);
* ``tfidf_lr_context``: the same plus context features (:mod:`scholarly_contribution_detector.data`):
  coarse section kind (title/abstract/introduction/related/method/experiments/setup/
  baselines/results/conclusion/other) one-hot, TF-IDF of the section heading words, relative
  position in the paper (10 bins) and in its section, heading flag, introduction flag, cue
  phrases ("we propose", "our contributions", "this paper", "we", "our model",
  "outperform/state of the art", hyper-parameter words, "baseline", digits, a trailing
  "as follows:") in the sentence and in the sentence before, and the cue flags crossed with
  the introduction flag;
* ``tfidf_lr_context_intro_only``: the same features, but trained (and scored) on the
  introduction's sentences only, which is all the linker needs;
* ``rule_intro_we``: positive iff the sentence is a non-heading sentence of the
  introduction and contains the word "we".

The learned systems are scored at two decision thresholds: 0.5 on the balanced-weight
probability, and a threshold tuned inside each training fold (fit on 80% of the training
papers, pick the F1-best threshold of a 0.05 grid on the other 20%, refit on all training
papers; the test fold is never seen). Reported for the positive class: pooled
precision/recall/F1 over all out-of-fold sentences, per-paper macro P/R/F1 (mean over
papers with at least one gold positive in scope; a paper with no predictions has P=0),
per-fold F1 (mean, std), and average precision of the scores (threshold-free). Every
number is given on all sentences and restricted to the introduction
(:func:`scholarly_nlp.readers.ncg.introduction_mask`; the models are still trained on all
sentences).

    python benchmarks/contribution_detection_cv.py [--data DIR] [--folds 5] [--seed 0]
        [--out benchmarks/results/contribution_detection_cv.json]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DEFAULT_DATA_ROOT, RESULTS_DIR, ensure_repo_on_path, machine_info, markdown_table, write_json

ensure_repo_on_path()

import numpy  # noqa: E402
from scholarly_contribution_detector.baselines import fit_predict  # noqa: E402

THRESHOLDS = [round(0.05 * i, 2) for i in range(1, 20)]
#: learned system -> (context features?, trained and applied on introduction sentences only?)
LEARNED = {
    "tfidf_lr": (False, False),
    "tfidf_lr_context": (True, False),
    "tfidf_lr_context_intro_only": (True, True),
}
SYSTEMS = (*LEARNED, "rule_intro_we")


def _keep(rows, intro_only: bool):
    return [r for r in rows if r.in_introduction] if intro_only else rows


def f1_at(labels: numpy.ndarray, scores: numpy.ndarray, threshold: float) -> float:
    """Positive-class F1 of ``scores >= threshold``."""
    predicted = scores >= threshold
    tp = float(numpy.sum(predicted & (labels == 1)))
    denominator = float(numpy.sum(predicted) + numpy.sum(labels == 1))
    return 2 * tp / denominator if denominator else 0.0


def tuned_threshold(train_papers, rows_by_paper: dict, context: bool, seed: int, intro_only: bool = False) -> float:
    """The F1-best threshold on a held-out 20% of the training papers (grouped split);
    ``rows_by_paper`` maps paper ids to their sentence rows; ``intro_only`` keeps only the
    introduction's sentences on both sides."""
    from scholarly_contribution_detector.data import grouped_split

    inner_train, inner_dev = grouped_split(train_papers, dev_fraction=0.2, seed=seed)
    dev_rows = _keep([row for p in inner_dev for row in rows_by_paper[p.paper_id]], intro_only)
    train_rows = _keep([row for p in inner_train for row in rows_by_paper[p.paper_id]], intro_only)
    scores = fit_predict(train_rows, dev_rows, context)
    labels = numpy.array([r.label for r in dev_rows])
    return max(THRESHOLDS, key=lambda t: (f1_at(labels, scores, t), -abs(t - 0.5)))


# --------------------------------------------------------------------------- scoring


def prf(gold: numpy.ndarray, predicted: numpy.ndarray) -> tuple[float, float, float]:
    """Precision, recall and F1 of the positive class (0 where undefined)."""
    tp = float(numpy.sum(gold & predicted))
    n_pred = float(numpy.sum(predicted))
    n_gold = float(numpy.sum(gold))
    precision = tp / n_pred if n_pred else 0.0
    recall = tp / n_gold if n_gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def score(gold, predicted, scores, paper_of, fold_of, mask) -> dict:
    """Pooled, per-paper macro and per-fold scores of ``predicted`` over the rows in ``mask``."""
    from sklearn.metrics import average_precision_score

    gold = gold[mask]
    predicted = predicted[mask]
    paper_of = paper_of[mask]
    fold_of = fold_of[mask]
    precision, recall, f1 = prf(gold, predicted)
    per_paper = []
    for paper in numpy.unique(paper_of):
        rows = paper_of == paper
        if gold[rows].any():
            per_paper.append(prf(gold[rows], predicted[rows]))
    per_fold = [prf(gold[fold_of == f], predicted[fold_of == f])[2] for f in numpy.unique(fold_of)]
    out = {
        "sentences": int(mask.sum()),
        "positives": int(gold.sum()),
        "predicted": int(predicted.sum()),
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "paper_macro_precision": float(numpy.mean([p[0] for p in per_paper])),
        "paper_macro_recall": float(numpy.mean([p[1] for p in per_paper])),
        "paper_macro_f1": float(numpy.mean([p[2] for p in per_paper])),
        "papers_scored": len(per_paper),
        "f1_per_fold": per_fold,
        "f1_fold_mean": float(numpy.mean(per_fold)),
        "f1_fold_std": float(numpy.std(per_fold)),
    }
    if scores is not None:
        out["average_precision"] = float(average_precision_score(gold, scores[mask]))
    return out


# --------------------------------------------------------------------------- main


def main(argv=None) -> dict:
    """Run the cross-validation, print the markdown table, write the JSON; returns the result."""
    from scholarly_contribution_detector.data import grouped_folds, paper_rows
    from scholarly_nlp.readers import iter_ncg_papers

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA_ROOT / "nlpcontributiongraph")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "contribution_detection_cv.json")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        papers = list(iter_ncg_papers(args.data))
    skipped = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    for message in skipped:
        print(f"warning: {message}", file=sys.stderr)
    folds = grouped_folds(papers, k=args.folds, seed=args.seed)

    by_id = {p.paper_id: p for p in papers}
    rows_by_paper = {p.paper_id: paper_rows(p) for p in papers}
    all_rows = [row for p in papers for row in rows_by_paper[p.paper_id]]
    gold = numpy.array([r.label for r in all_rows], dtype=bool)
    paper_of = numpy.array([r.paper_id for r in all_rows])
    intro = numpy.array([r.in_introduction for r in all_rows], dtype=bool)
    fold_of = numpy.zeros(len(all_rows), dtype=int)
    position = {}
    for i, row in enumerate(all_rows):
        position[(row.paper_id, row.index)] = i
    for f, ids in enumerate(folds):
        fold_of[numpy.isin(paper_of, sorted(ids))] = f

    scores = {name: numpy.zeros(len(all_rows)) for name in LEARNED}
    thresholds = {name: [] for name in LEARNED}
    tuned = {name: numpy.zeros(len(all_rows), dtype=bool) for name in LEARNED}
    for f, test_ids in enumerate(folds):
        train_papers = [by_id[i] for i in sorted(by_id) if i not in test_ids]
        test_papers = [by_id[i] for i in sorted(test_ids)]
        train_rows = [row for p in train_papers for row in rows_by_paper[p.paper_id]]
        test_rows = [row for p in test_papers for row in rows_by_paper[p.paper_id]]
        for name, (context, intro_only) in LEARNED.items():
            fold_test = _keep(test_rows, intro_only)
            index = numpy.array([position[(r.paper_id, r.index)] for r in fold_test])
            fold_scores = fit_predict(_keep(train_rows, intro_only), fold_test, context)
            threshold = tuned_threshold(train_papers, rows_by_paper, context, args.seed + f, intro_only)
            scores[name][index] = fold_scores
            thresholds[name].append(threshold)
            tuned[name][index] = fold_scores >= threshold
        print(f"fold {f + 1}/{len(folds)} done ({time.perf_counter() - started:.0f}s)", file=sys.stderr)

    rule = numpy.array(
        [r.in_introduction and not r.is_heading and bool(r.cues["we"]) for r in all_rows], dtype=bool
    )
    everything = numpy.ones(len(all_rows), dtype=bool)
    systems = {}
    for name, (_, intro_only) in LEARNED.items():
        scopes = (("introduction", intro),) if intro_only else (("all", everything), ("introduction", intro))
        systems[name] = {
            "threshold_0.5": {
                scope: score(gold, scores[name] >= 0.5, scores[name], paper_of, fold_of, mask)
                for scope, mask in scopes
            },
            "threshold_tuned": {
                "thresholds_per_fold": thresholds[name],
                **{scope: score(gold, tuned[name], scores[name], paper_of, fold_of, mask) for scope, mask in scopes},
            },
        }
    systems["rule_intro_we"] = {
        scope: score(gold, rule, None, paper_of, fold_of, mask)
        for scope, mask in (("all", everything), ("introduction", intro))
    }

    result = {
        "benchmark": "contribution_detection_cv",
        "data": str(args.data),
        "papers": len(papers),
        "skipped_folders": skipped,
        "sentences": len(all_rows),
        "positives": int(gold.sum()),
        "introduction_sentences": int(intro.sum()),
        "introduction_positives": int(gold[intro].sum()),
        "folds": args.folds,
        "seed": args.seed,
        "fold_papers": [sorted(ids) for ids in folds],
        "systems": systems,
        "seconds": round(time.perf_counter() - started, 1),
        "machine": machine_info(),
    }
    write_json(args.out, result)
    print(render_table(result))
    print(f"\nwritten {args.out}")
    return result


def render_table(result: dict) -> str:
    """The markdown table of a result dict (one line per system, decision rule and scope)."""
    lines = []
    for name, entry in result["systems"].items():
        variants = (
            [("", entry)] if name == "rule_intro_we"
            else [(" @0.5", entry["threshold_0.5"]), (" @tuned", entry["threshold_tuned"])]
        )
        for suffix, scopes in variants:
            for scope in ("all", "introduction"):
                if scope not in scopes:
                    continue
                s = scopes[scope]
                ap = f"{s['average_precision']:.3f}" if "average_precision" in s else "-"
                lines.append(
                    [
                        f"{name}{suffix}", scope,
                        f"{s['precision']:.3f}", f"{s['recall']:.3f}", f"{s['f1']:.3f}",
                        f"{s['f1_fold_mean']:.3f} ± {s['f1_fold_std']:.3f}",
                        f"{s['paper_macro_precision']:.3f}", f"{s['paper_macro_recall']:.3f}",
                        f"{s['paper_macro_f1']:.3f}", ap,
                    ]
                )
    header = ["system", "scope", "P", "R", "F1", "F1 per fold", "paper P", "paper R", "paper F1", "AP"]
    summary = (
        f"{result['papers']} papers, {result['sentences']} sentences ({result['positives']} positive); "
        f"introduction: {result['introduction_sentences']} ({result['introduction_positives']} positive); "
        f"{result['folds']}-fold CV grouped by paper, {result['seconds']}s"
    )
    return summary + "\n\n" + markdown_table(header, lines)


if __name__ == "__main__":
    main()
