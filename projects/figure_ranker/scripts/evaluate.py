"""Evaluate the trained figure ranker and the baselines on a gold set.

Writes ``<output-dir>/predictions.jsonl`` (``{"paper_id", "ranking": [all candidate figure
ids, best first]}``) and the metrics JSON (MAP, MRR, acc_at_1, acc_at_3, plus each
baseline's, the values paper by paper, and ``vs_baselines``: the model against each baseline
by a paired bootstrap over the gold papers). Also reports the self-supervised proxy of the model on the gold papers
(does a sentence that mentions a figure rank that figure's caption first?).

``--model`` is an installed pipeline package (the project's default: the shipped
``scholarly_core``) or a pipeline folder (``training/model-best``); only its ``figure_ranker``
is loaded.
"""

from __future__ import annotations

import argparse
import json
import sys

import scholarly_nlp
from scholarly_nlp.metrics import versus_summary
from scholarly_figure_ranker.evaluation import evaluate_dir, load_papers, proxy_eval, read_gold

BASELINES_WITHOUT_ENCODER = ["random", "pick_first", "tfidf", "mention_count", "referring_text_tfidf"]
PIPES = ["figure_ranker"]
LABELS = {"acc_at_1": "Acc@1", "map": "MAP", "acc_at_3": "Acc@3", "mrr": "MRR"}


def main() -> None:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True,
                        help="installed pipeline package (scholarly_core) or pipeline folder (training/model-best)")
    parser.add_argument("--tei-dir", required=True)
    parser.add_argument("--gold", required=True)
    parser.add_argument("--output-dir", required=True)
    parser.add_argument("--metrics", required=True)
    parser.add_argument("--gpu-id", type=int, default=-1)
    parser.add_argument("--no-zero-shot", action="store_true", help="skip the zero-shot MiniLM baseline")
    args = parser.parse_args()

    try:
        nlp = scholarly_nlp.load(args.model, components=PIPES, require=["figure_ranker"], gpu_id=args.gpu_id)
    except scholarly_nlp.ScholarlyNLPError as exc:
        sys.exit(f"error: {exc}")
    baselines = BASELINES_WITHOUT_ENCODER if args.no_zero_shot else True
    report = evaluate_dir(args.tei_dir, args.gold, nlp=nlp, output_dir=args.output_dir, baselines=baselines)
    docs, _missing = load_papers(args.tei_dir, read_gold(args.gold), nlp)
    report["self_supervised_proxy"] = proxy_eval(list(docs.values()), nlp)
    scholarly_nlp.write_atomic(args.metrics, json.dumps(report, indent=2))
    print(json.dumps({k: report[k] for k in ("map", "mrr", "acc_at_1", "acc_at_3", "n_papers")}))
    for name, metrics in report.get("baselines", {}).items():
        print(f"baseline {name}: " + json.dumps({k: metrics.get(k) for k in ("map", "mrr", "acc_at_1", "acc_at_3")}))
    for name, test in report.get("vs_baselines", {}).items():
        print(f"figure_ranker - {name}: {versus_summary(test, LABELS, 'papers')}")
    if report.get("missing"):
        print(f"missing papers (counted as misses): {report['missing']}")


if __name__ == "__main__":
    main()
