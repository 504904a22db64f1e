"""Evaluate the aspect pipeline on a CSFCube directory, with the baselines in the same table.

    python scripts/evaluate.py MODEL CSFCUBE_DIR OUTPUT_DIR METRICS_JSON
        [--roles shipped|predicted] [--baselines tfidf,bm25,minilm] [--backbone NAME]

MODEL is an installed pipeline package (the project's default: the shipped ``scholarly_core``)
or a pipeline folder (``training/aspect-model``); only its ``transformer``,
``sentence_role_tagger`` and ``aspect_embedder`` are loaded.

CSFCUBE_DIR has the published layout (``abstracts-csfcube-preds.jsonl``,
``test-pid2anns-csfcube-{background,method,result}.json``, optionally
``evaluation_splits.json``). Every query of the pid2anns files is ranked; the ranked pools
go to OUTPUT_DIR in the official format ``test-pid2pool-csfcube-<model>-<aspect>-ranked.json``
(``{query_pid: [[cand_pid, distance], ...]}``, smallest distance first), and METRICS_JSON
gets MAP, NDCG%20, NDCG@20, MRR and R@20 per query aspect and for ``all`` (every query-aspect pair
pooled) as CSFCube's ``ranking_eval.py`` computes them, with a ``baselines`` section and,
in ``vs_baselines``, a paired bootstrap of the model against each baseline over the
query-aspect pairs (MAP points, 95% CI, p).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import scholarly_nlp
from scholarly_nlp import write_atomic
from scholarly_aspect_embedder.baselines import BM25AspectRanker, MiniLMRanker, TfidfAspectRanker
from scholarly_aspect_embedder.csfcube_eval import compare_runs, evaluate_rankers, metrics_table
from scholarly_aspect_embedder.pipeline_ranker import ROLE_SOURCES, AspectPipelineRanker

MODEL_NAME = "aspect_embedder"
PIPES = ["transformer", "sentence_role_tagger", "aspect_embedder"]
BASELINES = ("tfidf", "bm25", "minilm")


def baseline_rankers(names: list[str], backbone: str | None) -> dict:
    """The named baselines (``tfidf``, ``bm25``, ``minilm``)."""
    make = {"tfidf": TfidfAspectRanker, "bm25": BM25AspectRanker, "minilm": lambda: MiniLMRanker(backbone=backbone)}
    unknown = [n for n in names if n not in make]
    if unknown:
        raise SystemExit(f"unknown baseline(s) {unknown}; known: {sorted(make)}")
    return {name: make[name]() for name in names}


def main(argv=None) -> int:
    """Rank, write the pools and the metrics, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model", help="installed pipeline package (scholarly_core) or pipeline folder")
    parser.add_argument("csfcube_dir", type=Path)
    parser.add_argument("output_dir", type=Path)
    parser.add_argument("metrics", type=Path)
    parser.add_argument("--roles", choices=ROLE_SOURCES, default="shipped")
    parser.add_argument("--baselines", default=",".join(BASELINES), help="comma-separated; empty for none")
    parser.add_argument("--backbone", default=None, help="backbone of the zero-shot MiniLM baseline")
    args = parser.parse_args(argv)
    for name in ("abstracts-csfcube-preds.jsonl", "test-pid2anns-csfcube-method.json"):
        if not (args.csfcube_dir / name).exists():
            raise SystemExit(f"error: {args.csfcube_dir}: not a CSFCube directory ({name} is missing)")
    started = time.time()
    try:
        nlp = scholarly_nlp.load(args.model, components=PIPES)
    except scholarly_nlp.ScholarlyNLPError as exc:
        raise SystemExit(f"error: {exc}")
    names = [n for n in args.baselines.split(",") if n]
    baselines = baseline_rankers(names, args.backbone)
    model = {MODEL_NAME: AspectPipelineRanker(nlp, roles=args.roles)}
    results = evaluate_rankers(args.csfcube_dir, model, output_dir=args.output_dir)
    # Baselines' pools go to a subfolder: OUTPUT_DIR holds the evaluated model's files only.
    results.update(evaluate_rankers(args.csfcube_dir, baselines, output_dir=args.output_dir / "baselines"))
    report = dict(results[MODEL_NAME])
    report["model"] = args.model
    report["pipes"] = nlp.pipe_names
    report["roles"] = args.roles
    report["baselines"] = {n: results[n] for n in names}
    # How sure each MAP difference is: paired bootstrap over the query-aspect pairs.
    report["vs_baselines"] = {n: compare_runs(results[MODEL_NAME], results[n]) for n in names}
    train_log = Path(nlp.path or args.model) / "train_log.json"
    if train_log.exists():
        report["training"] = {k: v for k, v in json.loads(train_log.read_text()).items() if k != "log"}
    report["seconds"] = round(time.time() - started, 1)
    args.metrics.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(args.metrics, json.dumps(report, indent=2))
    print(metrics_table(results))
    for name, test in report["vs_baselines"].items():
        print(f"all MAP vs {name}: {test['delta']:+.2f} points, 95% CI {test['ci_low']:+.2f}..{test['ci_high']:+.2f}, "
              f"p = {test['p_value']:.3f} ({test['n_queries']} query-aspect pairs)")
    print(f"pools in {args.output_dir}, metrics in {args.metrics} ({report['seconds']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
