"""Link contribution sentences to body paragraphs and score hit@1 / hit@5 / MRR on a gold file.

The gold (``--gold``, JSONL lines ``{"paper_id", "sentence", "paragraph_start"}``, optional
``acceptable_paragraph_starts``) names TEI papers ``<tei-dir>/<paper_id>.tei.xml``. Each gold
sentence is the query: it is matched by text to one of our introduction sentences
(:func:`scholarly_contribution_linker.evaluation.prepare_queries`), and the pipeline's
``contribution_linker`` ranks the paper's body paragraphs for it (``link(sentence, doc, k)``).
Items whose ``paragraph_start`` is null are skipped in hit@k, as the gold format says.

Writes ``<output-dir>/predictions.jsonl`` (``{"paper_id", "sentence", "ranked_paragraphs":
[full paragraph texts, best first, 5]}``, one line per gold item, in gold order) and
``--metrics`` (default ``metrics/contributions.json``): ``hit_at_1``, ``hit_at_5``, ``mrr``
and counts for the pipeline, the same for the baselines (BM25, TF-IDF, zero-shot MiniLM,
first paragraph, random expectation) under ``baselines``, ``vs_baselines``: for each
baseline, a paired bootstrap of the pipeline against it on each metric, resampling the gold
papers with their queries' values pooled, since the sentences of one paper are not
independent (:func:`scholarly_nlp.metrics.versus_baselines`; ``per_query`` holds each query's
values), and ``detection_recall``: the share of matched gold sentences that the pipeline's
``contribution_detector`` (when present) flags as contributions. A TEI file that is missing
or cannot be read is reported with the reason and its gold items count as misses; the other
papers go on.

``--model`` is an installed pipeline package (default: the shipped ``scholarly_core``) or a
pipeline folder (``training/pipeline``); only its ``contribution_detector`` and
``contribution_linker`` are loaded.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path
from typing import Optional

import numpy

import scholarly_nlp
from scholarly_nlp.metrics import versus_baselines, versus_summary
from scholarly_contribution_linker.baselines import BM25Ranker, EmbeddingRanker, FirstParagraphRanker, TfidfRanker
from scholarly_contribution_linker.evaluation import (
    evaluate_rankings,
    expected_random_metrics,
    prepare_queries,
    rank_queries,
    read_contribution_gold,
)

TOP = 5
PIPES = ["contribution_detector", "contribution_linker"]
LABELS = {"hit_at_1": "hit@1", "hit_at_5": "hit@5", "mrr": "MRR"}


def load_docs(nlp, tei_dir: Path, paper_ids, failed: list) -> dict:
    """Paper id -> pipeline-processed Doc; unreadable or missing papers go to ``failed``."""
    docs = {}
    for paper_id in sorted(set(paper_ids)):
        path = tei_dir / f"{paper_id}.tei.xml"
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                doc = scholarly_nlp.read(path, nlp=nlp)
            for _, pipe in nlp.pipeline:
                doc = pipe(doc)
            docs[paper_id] = doc
        except Exception as exc:  # a bad paper is reported, the others go on
            failed.append({"paper_id": paper_id, "file": str(path), "reason": f"{type(exc).__name__}: {exc}"})
            print(f"failed: {paper_id}: {exc}", file=sys.stderr)
    return docs


def pipeline_rankings(linker, queries) -> list[Optional[list]]:
    """The linker's full paragraph ranking for every matched query (None when unmatched)."""
    rankings = []
    for query in queries:
        if not query.matched or not query.paragraphs:
            rankings.append(None if not query.matched else [])
            continue
        doc = query.paragraphs[0].doc
        hits = linker.link(query.sentence_text, doc, k=len(query.paragraphs))
        rankings.append([span for span, _ in hits])
    return rankings


def detection_recall(queries, docs: dict) -> Optional[float]:
    """Share of matched gold sentences among the detected contribution sentences (None without a detector)."""
    flagged = total = 0
    for query in queries:
        doc = docs.get(query.gold.paper_id)
        if not query.matched or doc is None or not doc.has_extension("contribution_sentences"):
            continue
        detected = doc._.contribution_sentences
        if detected is None:
            return None
        total += 1
        flagged += any(span.text.strip() == query.sentence_text for span in detected)
    return flagged / total if total else None


def write_predictions(path: Path, gold, rankings) -> None:
    """One JSON line per gold item: the top paragraphs' full texts, best first."""
    lines = []
    for item, ranking in zip(gold, rankings):
        ranked = [span.text for span in (ranking or [])[:TOP]]
        lines.append(json.dumps({"paper_id": item.paper_id, "sentence": item.sentence, "ranked_paragraphs": ranked}))
    scholarly_nlp.write_atomic(path, ("\n".join(lines) + "\n").encode("utf-8"))


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tei-dir", type=Path, required=True)
    parser.add_argument("--gold", type=Path, required=True)
    parser.add_argument("--output-dir", type=Path, required=True)
    parser.add_argument("--model", default="scholarly_core",
                        help="installed pipeline package (scholarly_core) or pipeline folder (training/pipeline)")
    parser.add_argument("--metrics", type=Path, default=Path("metrics/contributions.json"))
    parser.add_argument("--baselines", default="bm25,tfidf,minilm,first_paragraph",
                        help="comma-separated; empty for none (the random expectation is always given)")
    parser.add_argument("--backbone", default=None, help="backbone of the zero-shot MiniLM baseline")
    parser.add_argument("--gpu-id", type=int, default=-1)
    args = parser.parse_args(argv)

    if not args.gold.exists():
        sys.exit(f"error: no gold file at {args.gold}")
    try:
        nlp = scholarly_nlp.load(args.model, components=PIPES, require=["contribution_linker"], gpu_id=args.gpu_id)
    except scholarly_nlp.ScholarlyNLPError as exc:
        sys.exit(f"error: {exc}")
    start = time.time()
    gold = read_contribution_gold(args.gold)
    failed: list = []
    docs = load_docs(nlp, args.tei_dir, [g.paper_id for g in gold], failed)
    queries = prepare_queries(gold, docs)
    rankings = pipeline_rankings(nlp.get_pipe("contribution_linker"), queries)
    args.output_dir.mkdir(parents=True, exist_ok=True)
    write_predictions(args.output_dir / "predictions.jsonl", gold, rankings)
    metrics = evaluate_rankings(gold, rankings)
    rankers = {"bm25": BM25Ranker, "tfidf": TfidfRanker, "first_paragraph": FirstParagraphRanker,
               "minilm": lambda: EmbeddingRanker(backbone=args.backbone)}
    baselines = {}
    for name in [b.strip() for b in args.baselines.split(",") if b.strip()]:
        if name not in rankers:
            sys.exit(f"error: unknown baseline {name!r}; known: {', '.join(rankers)}")
        baselines[name] = evaluate_rankings(gold, rank_queries(rankers[name](), queries))
    baselines["random_expected"] = expected_random_metrics(gold, [q.paragraphs if q.matched else None for q in queries])
    papers = [item.paper_id for item in gold if not item.is_null]  # the queries' papers, as per_query lists them
    versus = versus_baselines(paper_sums(metrics["per_query"], papers),
                              {name: paper_sums(m["per_query"], papers) for name, m in baselines.items()},
                              pooled={metric: mean_of_sums for metric in LABELS})
    metrics.update({"baselines": baselines, "vs_baselines": versus, "detection_recall": detection_recall(queries, docs),
                    "n_papers": len(docs), "failed": failed, "seconds": time.time() - start,
                    "model": args.model, "pipes": nlp.pipe_names})
    args.metrics.parent.mkdir(parents=True, exist_ok=True)
    scholarly_nlp.write_atomic(args.metrics, json.dumps(metrics, indent=2).encode("utf-8"))
    print(f"pipeline: hit@1 {metrics['hit_at_1']:.3f} hit@5 {metrics['hit_at_5']:.3f} MRR {metrics['mrr']:.3f} "
          f"({metrics['n_queries']} queries, {len(docs)} papers, {len(failed)} failed)")
    for name, m in baselines.items():
        print(f"{name}: hit@1 {m['hit_at_1']:.3f} hit@5 {m['hit_at_5']:.3f} MRR {m['mrr']:.3f}")
    for name, test in versus.items():
        print(f"pipeline - {name}: {versus_summary(test, LABELS, 'papers')}")
    return 0


def paper_sums(per_query: dict, papers: list) -> dict:
    """Each metric's ``[sum over the paper's queries, number of queries]`` per paper (papers in
    order of first query): what a bootstrap that resamples whole papers pools."""
    order = list(dict.fromkeys(papers))
    sums = {}
    for metric in LABELS:
        totals = {paper: [0.0, 0] for paper in order}
        for paper, value in zip(papers, per_query[metric]):
            totals[paper][0] += value
            totals[paper][1] += 1
        sums[metric] = [totals[paper] for paper in order]
    return sums


def mean_of_sums(counts):
    """The mean over queries of pooled ``[sum, n]`` (one pair or an array of them)."""
    counts = numpy.asarray(counts, dtype=float)
    return counts[..., 0] / counts[..., 1]


if __name__ == "__main__":
    sys.exit(main())
