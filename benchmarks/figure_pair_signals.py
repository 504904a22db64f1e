"""Figure pairs (issue 19): which signal separates Same and Citing pairs, and at what level.

``projects/figure_embeddings``'s pair sets (its ``build_pair_sets``: balanced, at most 2,000
positives, dev seed 0 and test seed 1, as ``evaluate`` draws them) scored by four similarities:

* ``trained``: the cosine of the pipeline's ``doc._.figure_vectors`` (the trained figure embedder);
* ``tfidf``: TF-IDF cosine of the figures' texts (caption + mention context), as ``evaluate``;
* ``zero_shot``: the frozen sentence encoder's cosine of the same figure texts (no training);
* ``paper``: the frozen encoder's cosine of the two *papers'* title + abstract. It says
  nothing about the figures themselves (every Same pair scores 1), so it is a reference for
  how much of the Citing relation is a relation between papers, not a candidate method.

Each similarity gets its threshold on the dev pairs (``tune_threshold``), and its accuracy and
ROC AUC are reported on the test pairs; ``<figure signal> + paper`` blends are tuned on dev
too (weight grid 0, 0.1, ..., 1) for the Citing sets only. ``zero_shot_vs_trained`` and
``zero_shot_vs_tfidf`` are paired bootstraps of per-pair correctness on the test pairs (pairs
share figures, so the intervals are optimistic).

    python benchmarks/figure_pair_signals.py [--corpus projects/figure_embeddings/corpus]
        [--model scholarly_core] [--out benchmarks/results/figure_pair_signals.json]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO_ROOT, RESULTS_DIR, ensure_repo_on_path, machine_info, markdown_table, write_json  # noqa: E402

ensure_repo_on_path()

PAIR_SETS = ("same", "citing", "citing_direct")
FIGURE_SIGNALS = ("trained", "tfidf", "zero_shot")
WEIGHTS = tuple(round(w / 10, 1) for w in range(11))


def unit_rows(matrix) -> numpy.ndarray:
    """Rows scaled to unit length (zero rows stay zero)."""
    matrix = numpy.asarray(matrix, dtype=numpy.float32)
    return matrix / numpy.maximum(numpy.linalg.norm(matrix, axis=1, keepdims=True), 1e-9)


def paper_texts(docs) -> dict:
    """Paper id -> its title and abstract text (what the ``paper`` signal encodes)."""
    texts = {}
    for doc in docs:
        parts = [span.text for group in ("title", "abstract") for span in (doc.spans[group] if group in doc.spans else [])]
        texts[doc._.paper_id or ""] = " ".join(parts).strip() or (doc._.paper_id or "")
    return texts


def pool_vectors(pool, docs, encoder) -> dict:
    """The unit vectors every pair set of ``pool`` is scored with, encoded once per pool:
    ``trained`` and ``zero_shot`` (one row per figure), ``paper`` (paper id -> vector)."""
    dim = next((len(c.vector) for c in pool if c.vector is not None), 1)
    texts = paper_texts(docs)
    ids = sorted(texts)
    return {
        "trained": unit_rows([c.vector if c.vector is not None else numpy.zeros(dim) for c in pool]),
        "zero_shot": unit_rows(encoder.encode([c.text for c in pool])),
        "paper": dict(zip(ids, unit_rows(encoder.encode([texts[i] for i in ids])))),
    }


def signal_scores(pool, pairs, vectors) -> dict:
    """Every signal's similarity of each pair of ``pairs`` (indices into ``pool``), from the
    pool's :func:`pool_vectors`."""
    from scholarly_figure_embedder.evaluation import tfidf_pair_scores

    trained, zero_shot, paper = vectors["trained"], vectors["zero_shot"], vectors["paper"]
    left, right = pairs.left, pairs.right
    return {
        "trained": (trained[left] * trained[right]).sum(1),
        "tfidf": numpy.asarray(tfidf_pair_scores(pool, pairs)),
        "zero_shot": (zero_shot[left] * zero_shot[right]).sum(1),
        "paper": numpy.array([paper[pool[i].paper_id] @ paper[pool[j].paper_id] for i, j in zip(left, right)]),
    }


def tuned_report(dev_scores, dev_labels, test_scores, test_labels) -> dict:
    """Threshold chosen on dev; dev accuracy, test accuracy and test AUC."""
    from scholarly_figure_embedder.evaluation import accuracy, pair_auc, tune_threshold

    threshold = tune_threshold(dev_scores, dev_labels)
    return {"threshold": threshold, "dev_accuracy": accuracy(dev_scores, dev_labels, threshold),
            "accuracy": accuracy(test_scores, test_labels, threshold), "auc": pair_auc(test_scores, test_labels)}


def correct(scores, labels, threshold: float) -> numpy.ndarray:
    """1.0 for each pair that ``score > threshold`` classifies right, else 0.0."""
    return ((numpy.asarray(scores) > threshold).astype(int) == numpy.asarray(labels)).astype(float)


def blend_report(dev, dev_labels, test, test_labels, signal: str) -> dict:
    """``(1 - w) * signal + w * paper`` with w (and the threshold) chosen on dev (ties: the smaller w)."""
    best = None
    for weight in WEIGHTS:
        report = tuned_report((1 - weight) * dev[signal] + weight * dev["paper"], dev_labels,
                              (1 - weight) * test[signal] + weight * test["paper"], test_labels)
        if best is None or report["dev_accuracy"] > best["dev_accuracy"]:
            best = {**report, "paper_weight": weight}
    return best


def main(argv=None) -> dict:
    """Score the pair sets with every signal, print the table, write the JSON; returns the result."""
    import scholarly_nlp
    from scholarly_figure_embedder.evaluation import build_pair_sets, embedder_pool
    from scholarly_figure_embedder.relations import RelationTable
    from scholarly_nlp.metrics import paired_bootstrap
    from scholarly_nlp.ml import DEFAULT_BACKBONE, SentenceEncoder

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=REPO_ROOT / "projects" / "figure_embeddings" / "corpus",
                        help="figure_embeddings preprocess output: dev.spacy, test.spacy, relations.json")
    parser.add_argument("--model", default="scholarly_core", help="pipeline whose figure_embedder is measured")
    parser.add_argument("--max-pairs", type=int, default=2000)
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "figure_pair_signals.json")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nlp = scholarly_nlp.load(args.model)
    embedder = nlp.get_pipe("figure_embedder")
    if (args.corpus / "text_vectors.npz").exists():
        embedder.use_text_cache(args.corpus / "text_vectors.npz")
    relations = RelationTable.load(args.corpus / "relations.json")
    encoder = SentenceEncoder(DEFAULT_BACKBONE)
    scored = {}
    for split, seed in (("dev", 0), ("test", 1)):
        docs = list(scholarly_nlp.load_docbin(args.corpus / f"{split}.spacy", embedder.vocab))
        pool = embedder_pool(embedder, docs)
        sets = build_pair_sets(pool, relations, None, args.max_pairs, seed)
        vectors = pool_vectors(pool, docs, encoder)
        scored[split] = {name: (signal_scores(pool, sets[name], vectors), sets[name].labels) for name in PAIR_SETS}

    results = {}
    for name in PAIR_SETS:
        (dev, dev_labels), (test, test_labels) = scored["dev"][name], scored["test"][name]
        results[name] = {"n_dev_pairs": int(len(dev_labels)), "n_test_pairs": int(len(test_labels))}
        for signal in (*FIGURE_SIGNALS, "paper"):
            results[name][signal] = tuned_report(dev[signal], dev_labels, test[signal], test_labels)
        zero_shot = correct(test["zero_shot"], test_labels, results[name]["zero_shot"]["threshold"])
        for other in ("trained", "tfidf"):
            results[name][f"zero_shot_vs_{other}"] = paired_bootstrap(
                zero_shot, correct(test[other], test_labels, results[name][other]["threshold"]), n_resamples=2000, seed=0)
        if name != "same":
            for signal in FIGURE_SIGNALS:
                results[name][f"{signal}+paper"] = blend_report(dev, dev_labels, test, test_labels, signal)
    result = {"benchmark": "figure_pair_signals", "corpus": str(args.corpus), "model": args.model,
              "results": results, "seconds": round(time.perf_counter() - started, 1), "machine": machine_info()}
    write_json(args.out, result)
    rows = [[name, signal, f"{r['accuracy']:.3f}", f"{r['auc']:.3f}", r.get("paper_weight", "")]
            for name, per in results.items() for signal, r in per.items() if isinstance(r, dict) and "auc" in r]
    print(markdown_table(["pair set", "signal", "test accuracy", "test AUC", "paper weight"], rows))
    for name, per in results.items():
        for key in ("zero_shot_vs_trained", "zero_shot_vs_tfidf"):
            b = per[key]
            print(f"{name} {key}: {b['delta']:+.3f} [{b['ci_low']:+.3f}, {b['ci_high']:+.3f}] p={b['p_value']:.3f}")
    print(f"\nwritten {args.out}")
    return result


if __name__ == "__main__":
    main()
