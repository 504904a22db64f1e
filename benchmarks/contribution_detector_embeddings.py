"""Contribution-sentence detection: do frozen sentence embeddings add to TF-IDF and context?

Issue #19 asks whether an encoder lifts the detector above TF-IDF. Before fine-tuning one (a
GPU job), this measures what the frozen encoder already gives: logistic regressions over the
introduction sentences of NLPContributionGraph, on the project's split
(``grouped_split``: 142 training papers, 35 held-out papers, the papers of
``weasel run evaluate-detector``'s project run), with these feature sets:

* ``tfidf_context``: the ``tfidf_lr + context`` baseline of the component
  (:class:`scholarly_contribution_detector.baselines.Featurizer`);
* ``embedding``: the sentence's MiniLM embedding (mean-pooled, normalised;
  :class:`scholarly_nlp.ml.SentenceEncoder`) and those of the sentences before and after it;
* ``embedding_context``: the embeddings plus the context features (no sentence TF-IDF);
* ``tfidf_context_embedding``: everything.

The regularisation C (0.1, 0.3, 1, 3) is chosen by grouped 5-fold CV on the training papers
(pooled F1 at probability 0.5), never on the held-out papers. Reported on the held-out papers:
pooled P/R/F1, and a paired bootstrap over papers (2,000 resamples) of the F1 difference to
``tfidf_context``.

    python benchmarks/contribution_detector_embeddings.py [--data DIR] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DEFAULT_DATA_ROOT, RESULTS_DIR, ensure_repo_on_path, machine_info, markdown_table, write_json  # noqa: E402

ensure_repo_on_path()

CS = (0.1, 0.3, 1.0, 3.0)
FEATURE_SETS = {
    "tfidf_context": (True, True, False),
    "embedding": (False, False, True),
    "embedding_context": (False, True, True),
    "tfidf_context_embedding": (True, True, True),
}
"""Name -> (sentence TF-IDF, context features, embeddings)."""
BOOTSTRAP = 2000


def neighbour_embeddings(groups: list[list], encoder) -> numpy.ndarray:
    """Per row: its embedding, the previous sentence's and the next one's (zeros at the ends;
    :func:`scholarly_contribution_detector.stacking.neighbour_vectors`, what the detector's
    embedding scorer reads)."""
    from scholarly_contribution_detector.stacking import neighbour_vectors

    vectors = numpy.asarray(encoder.encode([row.sentence for rows in groups for row in rows]), dtype=numpy.float32)
    blocks, start = [], 0
    for rows in groups:
        blocks.append(neighbour_vectors(vectors[start : start + len(rows)]))
        start += len(rows)
    return numpy.vstack(blocks)


def design(rows, embeddings, featurizer, use_tfidf: bool, use_context: bool, use_embedding: bool, fit: bool):
    """The sparse design matrix of one feature set."""
    from scipy.sparse import csr_matrix, hstack

    parts = []
    if use_tfidf or use_context:
        matrix = featurizer.fit_transform(rows) if fit else featurizer.transform(rows)
        if not use_tfidf:
            matrix = matrix[:, len(featurizer.text.vocabulary_):]
        parts.append(matrix)
    if use_embedding:
        parts.append(csr_matrix(embeddings))
    return hstack(parts).tocsr()


def fit_predict(train_rows, train_emb, test_rows, test_emb, spec, c: float) -> numpy.ndarray:
    """Positive-class probabilities of the test rows."""
    from scholarly_contribution_detector.baselines import Featurizer
    from sklearn.linear_model import LogisticRegression

    featurizer = Featurizer(context=True)
    x_train = design(train_rows, train_emb, featurizer, *spec, fit=True)
    x_test = design(test_rows, test_emb, featurizer, *spec, fit=False)
    model = LogisticRegression(C=c, solver="liblinear", class_weight="balanced", max_iter=2000)
    model.fit(x_train, numpy.array([r.label for r in train_rows]))
    return model.predict_proba(x_test)[:, 1]


def counts(labels: numpy.ndarray, predicted: numpy.ndarray) -> numpy.ndarray:
    """(tp, fp, fn)."""
    return numpy.array([(predicted & labels).sum(), (predicted & ~labels).sum(), (~predicted & labels).sum()])


def f1(tp_fp_fn: numpy.ndarray) -> float:
    """Pooled F1 of (tp, fp, fn)."""
    tp, fp, fn = tp_fp_fn
    return float(2 * tp / max(2 * tp + fp + fn, 1))


def choose_c(papers, rows_of, emb_of, spec) -> float:
    """The C with the best pooled out-of-fold F1 over grouped folds of the training papers."""
    from scholarly_contribution_detector.data import grouped_folds

    folds = grouped_folds(papers, k=5, seed=0)
    best = (-1.0, CS[0])
    for c in CS:
        total = numpy.zeros(3)
        for fold in folds:
            train = [p.paper_id for p in papers if p.paper_id not in fold]
            test = [p.paper_id for p in papers if p.paper_id in fold]
            probs = fit_predict([r for pid in train for r in rows_of[pid]], numpy.vstack([emb_of[pid] for pid in train]),
                                [r for pid in test for r in rows_of[pid]], numpy.vstack([emb_of[pid] for pid in test]), spec, c)
            labels = numpy.array([r.label for pid in test for r in rows_of[pid]], dtype=bool)
            total += counts(labels, probs >= 0.5)
        best = max(best, (f1(total), c))
    return best[1]


def ncg_split(data: Path):
    """``(papers, train, held_out, rows_of)``: the NCG papers under ``data/nlpcontributiongraph``,
    the project's split of them (``grouped_split``, seed 0) and each paper's introduction rows
    (``{paper id: [SentenceRow]}``)."""
    from scholarly_contribution_detector.data import grouped_split, paper_rows
    from scholarly_nlp.readers import iter_ncg_papers

    papers = list(iter_ncg_papers(data / "nlpcontributiongraph"))
    train, held_out = grouped_split(papers)
    rows_of = {p.paper_id: [r for r in paper_rows(p) if r.in_introduction] for p in papers}
    return papers, train, held_out, rows_of


def main(argv=None) -> dict:
    """Command line (see the module docstring)."""
    from scholarly_nlp.ml import SentenceEncoder

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA_ROOT)
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "contribution_detector_embeddings.json")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    started = time.perf_counter()

    papers, train, held_out, rows_of = ncg_split(args.data)
    ids = [p.paper_id for p in papers]
    vectors = neighbour_embeddings([rows_of[pid] for pid in ids], SentenceEncoder())
    emb_of, start = {}, 0
    for pid in ids:
        emb_of[pid] = vectors[start : start + len(rows_of[pid])]
        start += len(rows_of[pid])

    test_ids = [p.paper_id for p in held_out]
    train_rows = [r for p in train for r in rows_of[p.paper_id]]
    train_emb = numpy.vstack([emb_of[p.paper_id] for p in train])
    per_paper: dict[str, numpy.ndarray] = {}
    report = {"n_train_papers": len(train), "n_held_out_papers": len(held_out), "systems": {}}
    for name, spec in FEATURE_SETS.items():
        c = choose_c(train, rows_of, emb_of, spec)
        probs = fit_predict(train_rows, train_emb, [r for pid in test_ids for r in rows_of[pid]],
                            numpy.vstack([emb_of[pid] for pid in test_ids]), spec, c)
        outcome, start = [], 0
        for pid in test_ids:
            n = len(rows_of[pid])
            labels = numpy.array([r.label for r in rows_of[pid]], dtype=bool)
            outcome.append(counts(labels, probs[start : start + n] >= 0.5))
            start += n
        per_paper[name] = numpy.array(outcome)
        tp, fp, fn = per_paper[name].sum(axis=0)
        report["systems"][name] = {"C": c, "precision": float(tp / max(tp + fp, 1)), "recall": float(tp / max(tp + fn, 1)),
                                   "f1": f1(per_paper[name].sum(axis=0)), "tp": int(tp), "fp": int(fp), "fn": int(fn)}
    rng = numpy.random.default_rng(0)
    samples = rng.integers(0, len(test_ids), size=(BOOTSTRAP, len(test_ids)))
    base = per_paper["tfidf_context"]
    for name, outcome in per_paper.items():
        if name == "tfidf_context":
            continue
        deltas = numpy.array([f1(outcome[s].sum(axis=0)) - f1(base[s].sum(axis=0)) for s in samples])
        report["systems"][name]["vs_tfidf_context"] = {
            "delta": report["systems"][name]["f1"] - report["systems"]["tfidf_context"]["f1"],
            "ci_low": float(numpy.quantile(deltas, 0.025)), "ci_high": float(numpy.quantile(deltas, 0.975)),
            "p_not_better": float((deltas <= 0).mean())}
    report["seconds"] = round(time.perf_counter() - started, 1)
    report["machine"] = machine_info()
    write_json(args.out, report)
    rows = [[name, s["C"], f"{s['precision']:.3f}", f"{s['recall']:.3f}", f"{s['f1']:.3f}",
             "" if "vs_tfidf_context" not in s else
             f"{s['vs_tfidf_context']['delta']:+.3f} [{s['vs_tfidf_context']['ci_low']:+.3f}, {s['vs_tfidf_context']['ci_high']:+.3f}]"]
            for name, s in report["systems"].items()]
    print(markdown_table(["features", "C (train CV)", "P", "R", "F1", "F1 vs tfidf_context (95% CI)"], rows))
    return report


if __name__ == "__main__":
    main()
