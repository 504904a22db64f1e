"""Contribution linking (issue #6): baseline rankers on the development gold.

Each gold item of ``gold/contributions_dev.jsonl`` (an introduction sentence that states a
contribution, and the start of the first body paragraph that explains it) is matched to our
sentences of the paper's TEI Doc; every baseline of
:mod:`scholarly_contribution_linker.baselines` ranks the paper's body paragraphs for the matched
sentence, and :func:`scholarly_contribution_linker.evaluation.evaluate_rankings` gives hit@1,
hit@5 and MRR. The random reference is the exact expectation
(:func:`~scholarly_contribution_linker.evaluation.expected_random_metrics`), not one draw.
The candidate set is :func:`scholarly_nlp.introduction_and_body`; with
``--all-sections`` the body keeps related work, conclusions etc. as well.

Tanaka & Ushiku's fine-tuned SciBERT bi-encoder (hit@1 38.5, hit@5 70.9) is printed as a
reference row: it was measured on *their* test set, not on this dev gold.

    python benchmarks/contribution_linking_baselines.py [--data DIR] [--out FILE.json]
        [--baselines bm25,tfidf,minilm,first_paragraph,random] [--all-sections] [--per-paper]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DEFAULT_DATA_ROOT, RESULTS_DIR, ensure_repo_on_path, machine_info, markdown_table, write_json

ensure_repo_on_path()

#: Tanaka & Ushiku's SciBERT bi-encoder, on their own test set (percent).
PAPER_REFERENCE = {"hit_at_1": 0.385, "hit_at_5": 0.709, "mrr": None}
ALL_BASELINES = ("bm25", "tfidf", "minilm", "first_paragraph", "random")


def load_docs(tei_dir: Path, paper_ids, nlp=None) -> dict:
    """Paper id -> Doc read from ``tei_dir/<id>.tei.xml`` with ``nlp`` (default a blank
    scholarly_nlp pipeline); absent files are left out."""
    import scholarly_nlp

    nlp = nlp or scholarly_nlp.blank()
    docs = {}
    for paper_id in sorted(set(paper_ids)):
        path = tei_dir / f"{paper_id}.tei.xml"
        if path.exists():
            docs[paper_id] = scholarly_nlp.read(path, nlp=nlp)
        else:
            print(f"missing TEI for {paper_id}: {path}", file=sys.stderr)
    return docs


def run(data: Path, baselines=ALL_BASELINES, all_sections: bool = False, backbone=None) -> dict:
    """Metrics per baseline (and per paper) on the dev gold under ``data``."""
    from scholarly_contribution_linker import baselines as rankers
    from scholarly_contribution_linker.evaluation import (
        evaluate_rankings,
        expected_random_metrics,
        prepare_queries,
        rank_queries,
        read_contribution_gold,
    )
    from scholarly_nlp import EXCLUDED_BODY_TITLE

    gold = read_contribution_gold(data / "gold" / "contributions_dev.jsonl")
    start = time.perf_counter()
    docs = load_docs(data / "tei" / "acl", (g.paper_id for g in gold))
    read_s = time.perf_counter() - start
    queries = prepare_queries(gold, docs, exclude=None if all_sections else EXCLUDED_BODY_TITLE)
    by_paper = defaultdict(list)
    for i, query in enumerate(queries):
        by_paper[query.gold.paper_id].append(i)

    results, per_paper, timings = {}, {}, {}
    for name in baselines:
        start = time.perf_counter()
        if name == "random":
            candidates = [q.paragraphs if q.matched else None for q in queries]
            metric = lambda idx, c=candidates: expected_random_metrics([gold[i] for i in idx], [c[i] for i in idx])  # noqa: E731
        else:
            factory = rankers.BASELINES[name]
            ranker = factory(backbone=backbone) if name == "minilm" and backbone else factory()
            rankings = rank_queries(ranker, queries)
            metric = lambda idx, r=rankings: evaluate_rankings([gold[i] for i in idx], [r[i] for i in idx])  # noqa: E731
        results[name] = metric(range(len(gold)))
        per_paper[name] = {paper: metric(idx) for paper, idx in sorted(by_paper.items())}
        timings[name] = round(time.perf_counter() - start, 2)

    return {
        "task": "contribution linking (issue #6), dev gold",
        "candidate_set": "all later paragraphs" if all_sections else
        f"paragraphs after the introduction, sections matching {EXCLUDED_BODY_TITLE.pattern!r} excluded",
        "n_gold": len(gold),
        "n_papers": len(docs),
        "n_sentences_matched": sum(q.matched for q in queries),
        "min_match_score": round(min((q.score for q in queries if q.matched), default=0.0), 3),
        "mean_candidates": round(sum(len(q.paragraphs or []) for q in queries) / max(len(queries), 1), 1),
        "read_seconds": round(read_s, 2),
        "seconds": timings,
        "results": results,
        "per_paper": per_paper,
        "reference_tanaka_ushiku_scibert": {**PAPER_REFERENCE, "note": "their test set, not this dev gold"},
        "machine": machine_info(),
    }


def _pct(value) -> str:
    """A fraction as a percentage with one decimal ("-" for None)."""
    return "-" if value is None else f"{100 * value:.1f}"


def table(report: dict) -> str:
    """The markdown table: hit@1, hit@5, MRR (percent) per baseline, and the paper's row."""
    rows = []
    for name, res in report["results"].items():
        label = "random (expected)" if name == "random" else name
        rows.append([label, _pct(res["hit_at_1"]), _pct(res["hit_at_5"]), _pct(res["mrr"]), res["n_queries"],
                     res["n_unmatched_sentence"], res["n_gold_paragraph_missing"]])
    ref = report["reference_tanaka_ushiku_scibert"]
    rows.append(["Tanaka & Ushiku SciBERT (their test set, not comparable)", _pct(ref["hit_at_1"]),
                 _pct(ref["hit_at_5"]), "-", "-", "-", "-"])
    return markdown_table(["ranker", "hit@1", "hit@5", "MRR", "queries", "unmatched sent.", "gold para. missing"],
                          rows)


def main(argv=None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA_ROOT, help="the shared data folder")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "contribution_linking_baselines.json")
    parser.add_argument("--baselines", default=",".join(ALL_BASELINES), help="comma-separated baseline names")
    parser.add_argument("--all-sections", action="store_true", help="keep related work, conclusions, ... as candidates")
    parser.add_argument("--backbone", default=None, help="backbone for the minilm baseline (default all-MiniLM-L6-v2)")
    parser.add_argument("--per-paper", action="store_true", help="also print hit@1 per paper")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.baselines.split(",") if n.strip()]
    unknown = [n for n in names if n not in ALL_BASELINES]
    if unknown:
        parser.error(f"unknown baseline(s) {unknown}; choose from {list(ALL_BASELINES)}")
    report = run(args.data, names, all_sections=args.all_sections, backbone=args.backbone)
    print(f"{report['n_gold']} gold items, {report['n_papers']} papers, {report['n_sentences_matched']} sentences "
          f"matched (min similarity {report['min_match_score']}), {report['mean_candidates']} candidate paragraphs "
          f"per query; candidates: {report['candidate_set']}\n")
    print(table(report))
    if args.per_paper:
        papers = sorted(next(iter(report["per_paper"].values()), {}))
        rows = [[p] + [_pct(report["per_paper"][n][p]["hit_at_1"]) for n in report["per_paper"]] for p in papers]
        print("\nhit@1 per paper\n")
        print(markdown_table(["paper"] + list(report["per_paper"]), rows))
    write_json(args.out, report)
    print(f"\nwritten {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
