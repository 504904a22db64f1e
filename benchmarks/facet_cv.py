"""CL-SciSumm Task 1B citance facets: grouped k-fold cross-validation by reference paper.

Every annotated citance of the reference papers (RPs) in ``train-manual`` (40 RPs, 753
citances with gold facets in the 2018+ release) is classified into the facets Aim,
Hypothesis, Implication, Method and Results (multi-label; 93% of citances have one). The
folds are ``GroupKFold`` over RPs, so no RP has citances on both sides of a split. Systems:

* ``majority``: the most frequent training facet ("Method") for every citance;
* ``tfidf_ovr``: the UniHD 2020 baseline, scikit-learn TF-IDF (1-2 grams) and one-vs-rest
  logistic regression with balanced class weights
  (:func:`scholarly_facet_classifier.baselines.tfidf_ovr_proba`);
* ``tfidf_linear``: the ``citance_facet_classifier`` pipe with its default model
  ``scholarly_facet_classifier.TfidfLinear.v1``, trained with ``nlp.update`` (BCE);
* ``transformer``: the pipe with ``scholarly_facet_classifier.TransformerClassifier.v1`` on the real
  backbone (all-MiniLM-L6-v2 by default), fine-tuned for a few epochs on the CPU.

Training settings are fixed in advance (see the ``--*-epochs``/``--*-lr`` options), not
tuned on the folds. Each system's out-of-fold probabilities are scored with the decision
rule of the component (labels with probability >= threshold, at least the argmax):

* at threshold 0.5: micro P/R/F1 over all out-of-fold citances (per-label sets, summed
  counts), macro F1 over the five labels, the per-fold micro F1 (mean and standard
  deviation) and per-label F1; and, threshold-free, each label's average precision of
  the probabilities (a constant score gets the label's prevalence) and their macro mean;
* threshold tuning: pooled micro F1 for every threshold of a 0.05 grid and the best one
  (optimistic: chosen on the data it is scored on), and an honest estimate: for each fold
  the threshold that maximises micro F1 on the other folds' out-of-fold predictions is
  applied to that fold.

``--transformer-folds N`` runs the transformer on the first N folds only (it is the slow
one); its scores are then over those folds' citances, and the JSON also gives every
other system's micro F1 on the same citances (``same_citances_as_transformer``).

    python benchmarks/facet_cv.py --folds 5 --out metrics.json [--data DIR]
        [--transformer-folds N] [--no-transformer] [--backbone NAME_OR_PATH]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DEFAULT_DATA_ROOT, RESULTS_DIR, ensure_repo_on_path, machine_info, markdown_table, write_json

ensure_repo_on_path()

import numpy  # noqa: E402

THRESHOLDS = [round(0.05 * i, 2) for i in range(1, 20)]


# --------------------------------------------------------------------------- training one fold


def train_pipe(docs, model_config: dict, epochs: int, learn_rate: float, papers_per_update: int, seed: int):
    """A blank pipeline whose citance_facet_classifier is trained on ``docs``; returns the pipe."""
    import spacy
    import torch
    from spacy.training import Example
    from thinc.api import Adam, fix_random_seed

    fix_random_seed(seed)
    torch.manual_seed(seed)
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("citance_facet_classifier", config={"model": model_config})
    examples = [Example(doc, doc) for doc in docs]
    nlp.initialize(lambda: examples)
    optimizer = Adam(learn_rate)
    rng = random.Random(seed)
    for _ in range(epochs):
        rng.shuffle(examples)
        for start in range(0, len(examples), papers_per_update):
            nlp.update(examples[start : start + papers_per_update], sgd=optimizer)
    return pipe


# --------------------------------------------------------------------------- scoring


def score_probs(gold: list, probs: numpy.ndarray, labels, threshold: float, fold_of: numpy.ndarray) -> dict:
    """Pooled micro/macro scores, per-fold micro F1 and per-label F1 at one threshold."""
    from scholarly_facet_classifier.labels import decide_many
    from scholarly_nlp.metrics import facet_f1

    predicted = decide_many(probs, labels, threshold)
    pooled = facet_f1(gold, predicted, labels=labels)
    per_fold = []
    for fold in sorted(set(fold_of.tolist())):
        rows = numpy.flatnonzero(fold_of == fold)
        per_fold.append(facet_f1([gold[i] for i in rows], [predicted[i] for i in rows], labels=labels)["f1_micro"])
    return {
        "threshold": threshold,
        "precision_micro": pooled["precision_micro"],
        "recall_micro": pooled["recall_micro"],
        "f1_micro": pooled["f1_micro"],
        "f1_macro": pooled["f1_macro"],
        "f1_micro_per_fold": per_fold,
        "f1_micro_fold_mean": float(numpy.mean(per_fold)),
        "f1_micro_fold_std": float(numpy.std(per_fold)),
        "f1_per_label": {label: row["f1"] for label, row in pooled["per_label"].items()},
        **ranking_quality(gold, probs, labels),
    }


def ranking_quality(gold: list, probs: numpy.ndarray, labels) -> dict:
    """Per-label average precision of the probabilities (threshold-free) and its macro mean.

    A constant score (the majority baseline) gets the label's prevalence; more means the
    model ranks citances of that facet above the others, whatever the threshold.
    """
    from sklearn.metrics import average_precision_score

    from scholarly_facet_classifier.labels import label_matrix

    truth = label_matrix(gold, labels)
    per_label = {label: float(average_precision_score(truth[:, j], probs[:, j]))
                 for j, label in enumerate(labels) if truth[:, j].any()}
    prevalence = {label: float(truth[:, j].mean()) for j, label in enumerate(labels)}
    return {"average_precision_per_label": per_label,
            "average_precision_macro": float(numpy.mean(list(per_label.values()))) if per_label else 0.0,
            "label_prevalence": prevalence}


def tune_threshold(gold: list, probs: numpy.ndarray, labels, fold_of: numpy.ndarray) -> dict:
    """Pooled micro F1 per threshold, the best threshold, and the leave-one-fold-out estimate."""
    from scholarly_facet_classifier.labels import decide_many
    from scholarly_nlp.metrics import facet_f1

    decided = {t: decide_many(probs, labels, t) for t in THRESHOLDS}

    def f1(threshold: float, rows) -> float:
        return facet_f1([gold[i] for i in rows], [decided[threshold][i] for i in rows], labels=labels)["f1_micro"]

    everything = numpy.arange(len(gold))
    grid = {t: f1(t, everything) for t in THRESHOLDS}
    best = max(THRESHOLDS, key=lambda t: (grid[t], -abs(t - 0.5)))
    chosen, predicted = {}, [None] * len(gold)
    for fold in sorted(set(fold_of.tolist())):
        inside, outside = numpy.flatnonzero(fold_of == fold), numpy.flatnonzero(fold_of != fold)
        threshold = max(THRESHOLDS, key=lambda t: (f1(t, outside), -abs(t - 0.5))) if len(outside) else 0.5
        chosen[int(fold)] = threshold
        for i in inside:
            predicted[i] = decided[threshold][i]
    honest = facet_f1(gold, predicted, labels=labels)["f1_micro"]
    return {"f1_micro_by_threshold": grid, "best_threshold": best, "best_f1_micro": grid[best],
            "nested_thresholds": chosen, "nested_f1_micro": honest}


# --------------------------------------------------------------------------- the run


def run(data: Path, folds: int, transformer_folds: int, backbone: str, args) -> dict:
    """Out-of-fold probabilities of every system, then their scores."""
    import spacy
    from sklearn.model_selection import GroupKFold

    from scholarly_facet_classifier.baselines import majority_baseline, tfidf_ovr_proba
    from scholarly_facet_classifier.data import labelled_citances, load_reference_docs
    from scholarly_facet_classifier.labels import FACET_LABELS, label_matrix

    labels = list(FACET_LABELS)
    docs = load_reference_docs(data, spacy.blank("en"))
    by_paper = {doc._.paper_id: doc for doc in docs}
    items = labelled_citances(docs)
    texts = [c["text"] for _, c in items]
    gold = [list(c["facets"]) for _, c in items]
    groups = numpy.asarray([paper for paper, _ in items])
    splits = list(GroupKFold(n_splits=folds).split(texts, groups=groups))
    fold_of = numpy.zeros(len(items), dtype=int)
    for fold, (_, test) in enumerate(splits):
        fold_of[test] = fold

    systems = ["majority", "tfidf_ovr", "tfidf_linear"] + (["transformer"] if transformer_folds else [])
    probs = {name: numpy.full((len(items), len(labels)), numpy.nan, dtype="float32") for name in systems}
    seconds = {name: 0.0 for name in systems}
    tfidf_model = {"@architectures": "scholarly_facet_classifier.TfidfLinear.v1"}
    transformer_model = {"@architectures": "scholarly_facet_classifier.TransformerClassifier.v1", "name": backbone,
                         "max_length": args.max_length}
    for fold, (train, test) in enumerate(splits):
        train_texts, train_gold = [texts[i] for i in train], [gold[i] for i in train]
        test_texts = [texts[i] for i in test]
        train_docs = [by_paper[p] for p in sorted(set(groups[train].tolist()))]

        start = time.perf_counter()
        probs["majority"][test] = label_matrix(majority_baseline(train_gold, test_texts), labels)
        seconds["majority"] += time.perf_counter() - start

        start = time.perf_counter()
        probs["tfidf_ovr"][test] = tfidf_ovr_proba(train_texts, train_gold, test_texts, labels)
        seconds["tfidf_ovr"] += time.perf_counter() - start

        start = time.perf_counter()
        pipe = train_pipe(train_docs, tfidf_model, args.tfidf_epochs, args.tfidf_lr, 4, args.seed)
        probs["tfidf_linear"][test] = pipe.predict_proba(test_texts)
        seconds["tfidf_linear"] += time.perf_counter() - start

        if fold < transformer_folds:
            start = time.perf_counter()
            pipe = train_pipe(train_docs, transformer_model, args.transformer_epochs, args.transformer_lr, 2, args.seed)
            probs["transformer"][test] = pipe.predict_proba(test_texts)
            seconds["transformer"] += time.perf_counter() - start
        print(f"fold {fold + 1}/{folds}: {len(test)} test citances, "
              + ", ".join(f"{name} {seconds[name]:.0f}s" for name in systems), flush=True)

    results = {}
    for name in systems:
        covered = ~numpy.isnan(probs[name][:, 0])
        rows = numpy.flatnonzero(covered)
        sub_gold, sub_probs, sub_folds = [gold[i] for i in rows], probs[name][rows], fold_of[rows]
        results[name] = {
            "folds": int(len(set(sub_folds.tolist()))),
            "citances": int(len(rows)),
            "train_and_predict_seconds": round(seconds[name], 1),
            "at_0.5": score_probs(sub_gold, sub_probs, labels, 0.5, sub_folds),
            "threshold_tuning": tune_threshold(sub_gold, sub_probs, labels, sub_folds),
        }
    same = None
    if transformer_folds and transformer_folds < folds:
        rows = numpy.flatnonzero(fold_of < transformer_folds)
        same = {
            name: score_probs([gold[i] for i in rows], probs[name][rows], labels, 0.5, fold_of[rows])["f1_micro"]
            for name in systems
        }
    label_counts = label_matrix(gold, labels).sum(axis=0)
    return {
        "task": "CL-SciSumm Task 1B facets of gold citances, GroupKFold by reference paper",
        "data": str(data),
        "reference_papers": len(docs),
        "citances": len(items),
        "gold_label_counts": {label: int(n) for label, n in zip(labels, label_counts)},
        "folds": folds,
        "settings": {"tfidf_linear": {"epochs": args.tfidf_epochs, "learn_rate": args.tfidf_lr, "papers_per_update": 4},
                     "transformer": {"backbone": backbone, "epochs": args.transformer_epochs,
                                     "learn_rate": args.transformer_lr, "papers_per_update": 2,
                                     "max_length": args.max_length, "folds_run": transformer_folds},
                     "seed": args.seed},
        "systems": results,
        "same_citances_as_transformer": same,
        "machine": machine_info(),
    }


def report(metrics: dict) -> str:
    """The markdown table of the systems' scores."""
    rows = []
    for name, result in metrics["systems"].items():
        at = result["at_0.5"]
        tuning = result["threshold_tuning"]
        rows.append([
            name, f"{result['folds']} ({result['citances']})", f"{at['f1_micro']:.3f}",
            f"{at['f1_micro_fold_mean']:.3f} ± {at['f1_micro_fold_std']:.3f}", f"{at['precision_micro']:.3f}",
            f"{at['recall_micro']:.3f}", f"{at['f1_macro']:.3f}",
            f"{tuning['best_threshold']:.2f}: {tuning['best_f1_micro']:.3f}", f"{tuning['nested_f1_micro']:.3f}",
            f"{at['average_precision_macro']:.3f}", f"{result['train_and_predict_seconds']:.0f}",
        ])
    header = ["system", "folds (citances)", "micro F1 @0.5", "per-fold F1", "micro P", "micro R", "macro F1",
              "best threshold: F1", "nested-threshold F1", "macro AP", "seconds"]
    return markdown_table(header, rows)


def main(argv=None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA_ROOT / "clscisumm" / "train-manual")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "facet_cv.json")
    parser.add_argument("--no-transformer", action="store_true", help="skip the transformer (the slow system)")
    parser.add_argument("--transformer-folds", type=int, default=None, help="run the transformer on the first N folds")
    parser.add_argument("--backbone", default="all-MiniLM-L6-v2", help="Hugging Face name or local path")
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--tfidf-epochs", type=int, default=10)
    parser.add_argument("--tfidf-lr", type=float, default=0.01)
    parser.add_argument("--transformer-epochs", type=int, default=2)
    parser.add_argument("--transformer-lr", type=float, default=1e-4)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if not args.data.is_dir():
        print(f"error: {args.data} is not a folder of CL-SciSumm reference papers", file=sys.stderr)
        return 1
    transformer_folds = 0 if args.no_transformer else min(args.folds, args.transformer_folds or args.folds)
    start = time.perf_counter()
    metrics = run(args.data, args.folds, transformer_folds, args.backbone, args)
    metrics["seconds"] = round(time.perf_counter() - start, 1)
    write_json(args.out, metrics)
    print(report(metrics))
    if metrics["same_citances_as_transformer"]:
        print("micro F1 @0.5 on the transformer's folds:", metrics["same_citances_as_transformer"])
    print(f"wrote {args.out} ({metrics['seconds']:.0f}s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
