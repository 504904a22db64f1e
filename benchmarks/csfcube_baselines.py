"""CSFCube faceted similarity: the TF-IDF, BM25 and zero-shot MiniLM baselines.

Every baseline of :mod:`scholarly_aspect_embedder.baselines` is prepared on all CSFCube
abstracts of ``--data-dir`` and ranks every query's pool for its query aspect; the ranked pools are
written in CSFCube's official format (``test-pid2pool-csfcube-<model>-<aspect>-ranked.json``)
to ``--out-dir`` and :func:`scholarly_aspect_embedder.csfcube_eval.csfcube_metrics` gives
MAP, NDCG%20, NDCG@20, MRR and R@20 per aspect, for ``all`` and per fold of
``evaluation_splits.json``. The metrics go to ``<out-dir>/metrics.json``; Markdown tables
(MAP / NDCG%20, whole data and each fold) are printed.

    python benchmarks/csfcube_baselines.py [--data-dir DIR] [--out-dir DIR]
        [--baselines tfidf,bm25,minilm] [--backbone NAME_OR_PATH]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DEFAULT_DATA_ROOT, RESULTS_DIR, ensure_repo_on_path, machine_info, write_json

ensure_repo_on_path()

ALL_BASELINES = ("tfidf", "bm25", "minilm")


def make_rankers(names, backbone=None) -> dict:
    """Name -> fresh ranker for each requested baseline (``backbone`` for MiniLM)."""
    from scholarly_aspect_embedder.baselines import SIMILARITY_BASELINES

    unknown = [n for n in names if n not in SIMILARITY_BASELINES]
    if unknown:
        raise SystemExit(f"unknown baseline(s) {unknown}; known: {sorted(SIMILARITY_BASELINES)}")
    return {n: SIMILARITY_BASELINES[n](backbone=backbone) if n == "minilm" else SIMILARITY_BASELINES[n]()
            for n in names}


def fold_names(results: dict) -> list:
    """Every fold name evaluated in any result, in first-seen order."""
    names: list = []
    for result in results.values():
        for per_fold in result.get("folds", {}).values():
            names += [f for f in per_fold if f not in names]
    return names


def main(argv=None) -> dict:
    """Run the baselines, write pools and metrics, print the tables; returns the metrics."""
    from scholarly_aspect_embedder.csfcube_eval import evaluate_rankers, metrics_table

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_ROOT / "csfcube")
    parser.add_argument("--out-dir", type=Path, default=RESULTS_DIR / "csfcube_baselines")
    parser.add_argument("--baselines", default=",".join(ALL_BASELINES))
    parser.add_argument("--backbone", default=None, help="MiniLM ranker's encoder (default all-MiniLM-L6-v2)")
    args = parser.parse_args(argv)

    results, seconds = {}, {}
    for name, ranker in make_rankers([n for n in args.baselines.split(",") if n], args.backbone).items():
        start = time.perf_counter()
        results.update(evaluate_rankers(args.data_dir, {name: ranker}, output_dir=args.out_dir))
        seconds[name] = round(time.perf_counter() - start, 1)
        print(f"{name}: {seconds[name]} s", file=sys.stderr)
    write_json(args.out_dir / "metrics.json",
               {"machine": machine_info(), "data_dir": str(args.data_dir), "seconds": seconds, "results": results})
    print("## CSFCube, all queries (MAP / NDCG%20, percent)\n")
    print(metrics_table(results))
    for fold in fold_names(results):
        print(f"\n## CSFCube, {fold}\n")
        print(metrics_table(results, fold=fold))
    return results


if __name__ == "__main__":
    main()
