"""Contribution linking (issue #6): the ``contribution_linker`` pipe vs BM25 on the dev gold.

Each gold item of ``gold/contributions_dev.jsonl`` is matched to one of our introduction
sentences of the paper's TEI Doc (:func:`~scholarly_contribution_linker.evaluation.prepare_queries`);
the matched sentence is the query. The pipe ranks the paper's body paragraphs through
:meth:`ContributionLinker.link` (k = every paragraph, so the full ranking is scored); BM25 is
:class:`~scholarly_nlp.retrieval.BM25Ranker` on the same candidates.
:func:`~scholarly_contribution_linker.evaluation.evaluate_rankings` gives hit@1, hit@5 and MRR.

Default: the zero-shot MiniLM bi-encoder (``scholarly_nlp.BiEncoderScorer.v1``, the locally
packaged all-MiniLM-L6-v2) fused with BM25 at ``bm25_weight`` 0.5. Measured (2 CPU cores,
about 6 minutes, as ``link`` encodes every paragraph once per query): pipe hit@1 0.456 /
hit@5 0.721 / MRR 0.590; BM25 alone 0.382 / 0.721 / 0.519 (68 queries, all matched).

    python benchmarks/contribution_linker_dev.py [--data DIR] [--backbone NAME_OR_PATH]
        [--bm25-weight 0.5] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DEFAULT_DATA_ROOT, ensure_repo_on_path, machine_info, markdown_table, write_json

ensure_repo_on_path()

from contribution_linking_baselines import load_docs  # noqa: E402


def linker_pipeline(backbone=None, bm25_weight: float = 0.5):
    """A blank scholarly_nlp pipeline with an initialised ``contribution_linker`` (zero-shot)."""
    import warnings

    import scholarly_nlp
    from scholarly_contribution_linker.factory import DEFAULT_MODEL

    nlp = scholarly_nlp.blank()
    model = dict(DEFAULT_MODEL, name=backbone or DEFAULT_MODEL["name"])
    nlp.add_pipe("contribution_linker", config={"model": model, "bm25_weight": bm25_weight})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no contribution_pairs: zero-shot, nothing to train on
        nlp.initialize()
    return nlp


def pipe_rankings(pipe, queries, docs) -> list:
    """The pipe's full paragraph ranking (via ``pipe.link``) per query; None when unmatched."""
    rankings = []
    for query in queries:
        if not query.matched:
            rankings.append(None)
            continue
        doc = docs[query.gold.paper_id]
        k = max(1, len(query.paragraphs))
        rankings.append([span for span, _ in pipe.link(query.sentence_text, doc, k=k)])
    return rankings


def run(data: Path, backbone=None, bm25_weight: float = 0.5) -> dict:
    """hit@1 / hit@5 / MRR of the pipe and of BM25 on the dev gold under ``data``."""
    from scholarly_nlp.retrieval import BM25Ranker
    from scholarly_contribution_linker.evaluation import (
        evaluate_rankings,
        prepare_queries,
        rank_queries,
        read_contribution_gold,
    )

    gold = read_contribution_gold(data / "gold" / "contributions_dev.jsonl")
    nlp = linker_pipeline(backbone, bm25_weight)
    docs = load_docs(data / "tei" / "acl", (g.paper_id for g in gold), nlp)
    queries = prepare_queries(gold, docs)
    start = time.perf_counter()
    pipe = evaluate_rankings(gold, pipe_rankings(nlp.get_pipe("contribution_linker"), queries, docs))
    pipe_s = time.perf_counter() - start
    bm25 = evaluate_rankings(gold, rank_queries(BM25Ranker(), queries))
    return {
        "task": "contribution linking (issue #6), dev gold, contribution_linker pipe",
        "backbone": backbone or "all-MiniLM-L6-v2 (packaged)",
        "bm25_weight": bm25_weight,
        "n_gold": len(gold),
        "n_papers": len(docs),
        "n_sentences_matched": sum(q.matched for q in queries),
        "seconds_pipe": round(pipe_s, 2),
        "results": {"contribution_linker": pipe, "bm25": bm25},
        "machine": machine_info(),
    }


def main(argv=None) -> int:
    """Command line entry point: print the table (and write JSON with ``--out``)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA_ROOT, help="the shared data folder")
    parser.add_argument("--backbone", default=None, help="pair-scorer backbone (default all-MiniLM-L6-v2)")
    parser.add_argument("--bm25-weight", type=float, default=0.5)
    parser.add_argument("--out", type=Path, default=None, help="also write the report as JSON here")
    args = parser.parse_args(argv)
    report = run(args.data, args.backbone, args.bm25_weight)
    rows = [[name, f"{r['hit_at_1']:.3f}", f"{r['hit_at_5']:.3f}", f"{r['mrr']:.3f}", r["n_queries"],
             r["n_unmatched_sentence"], r["n_gold_paragraph_missing"]] for name, r in report["results"].items()]
    print(f"{report['n_gold']} gold items, {report['n_papers']} papers, {report['n_sentences_matched']} sentences "
          f"matched; bm25_weight {report['bm25_weight']}; pipe {report['seconds_pipe']} s\n")
    print(markdown_table(["ranker", "hit@1", "hit@5", "MRR", "queries", "unmatched sent.", "gold para. missing"], rows))
    if args.out:
        write_json(args.out, report)
        print(f"\nwritten {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
