"""Central-figure ranking: how to turn per-sentence cross-encoder scores into one figure score.

The ``figure_ranker`` scores every (abstract sentence, caption) pair and sums the scores over
the sentences. The margin loss it is trained with fixes neither a query's offset nor its
scale, so other aggregations are as defensible: this benchmark measures them on the same
score matrices (one cross-encoder pass per paper):

* ``sum`` (shipped): the sum over sentences of the raw scores;
* ``max``: the best sentence's score;
* ``sentence_votes``: each sentence's softmax over the paper's figures, summed (the expected
  number of sentences that point to the figure; every sentence weighs the same);
* ``hard_votes``: how many sentences score the figure highest;
* ``borda``: the sum over sentences of the figure's rank among the figures.

Two measurements, so that a choice need not be made on the reported dev set:

* **dev gold**: the 20 papers of ``gold/central_figures_dev.jsonl`` (MAP, Acc@1 as the
  project's ``evaluate``; paired bootstrap of per-paper AP and Acc@1 against ``sum``);
* **paragraph proxy** on papers the shipped ranker was not trained on (the ACL papers that
  ``projects/figure_ranker`` preprocess holds out, plus ``--biomed`` biomedical TEI papers):
  a paragraph that mentions exactly one figure, with its mentioning sentences removed, is a
  multi-sentence query whose target is that figure (at most 3 paragraphs a paper; queries of
  2 or more sentences). Accuracy and MRR over the paper's captioned figures.

    python benchmarks/figure_ranker_aggregation.py [--pipeline scholarly_core] [--biomed 80]
        [--out benchmarks/results/figure_ranker_aggregation.json]
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path
from typing import Callable, Iterator

import numpy

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DEFAULT_DATA_ROOT, RESULTS_DIR, ensure_repo_on_path, machine_info, markdown_table, write_json  # noqa: E402

ensure_repo_on_path()

PROXY_PARAGRAPHS_PER_PAPER = 3
PROJECT_DEV_PERCENT = 10
"""The share of ACL papers ``projects/figure_ranker/scripts/preprocess.py`` keeps out of training."""


def _softmax_columns(matrix: numpy.ndarray) -> numpy.ndarray:
    shifted = numpy.exp(matrix - matrix.max(axis=0, keepdims=True))
    return shifted / shifted.sum(axis=0, keepdims=True)


AGGREGATIONS: dict[str, Callable[[numpy.ndarray], numpy.ndarray]] = {
    "sum": lambda m: m.sum(axis=1),
    "max": lambda m: m.max(axis=1),
    "sentence_votes": lambda m: _softmax_columns(m).sum(axis=1),
    "hard_votes": lambda m: numpy.bincount(m.argmax(axis=0), minlength=m.shape[0]).astype(float),
    "borda": lambda m: m.argsort(axis=0).argsort(axis=0).sum(axis=1).astype(float),
}
"""Aggregation name -> function of a (figures x sentences) score matrix to one score a figure."""


def held_out_by_project(paper_id: str) -> bool:
    """The figure_ranker project's stable dev split (kept out of the shipped ranker's training)."""
    return int(hashlib.sha1(paper_id.encode()).hexdigest(), 16) % 100 < PROJECT_DEV_PERCENT


def paper_id_of(path: Path) -> str:
    """The paper id of a ``<paper id>.tei.xml`` file."""
    return path.name[:-len(".tei.xml")] if path.name.endswith(".tei.xml") else path.stem


def unseen_papers(data: Path, biomed: int) -> dict[str, list[Path]]:
    """TEI papers the shipped ranker was not trained on and that are not dev gold, by group:
    ``acl`` (the ACL papers the figure_ranker project holds out) and ``biomed`` (the first
    ``biomed`` biomedical papers)."""
    from scholarly_figure_ranker.evaluation import read_gold

    gold = read_gold(data / "gold" / "central_figures_dev.jsonl")
    acl = [p for p in sorted((data / "tei" / "acl").glob("*.tei.xml"))
           if paper_id_of(p) not in gold and held_out_by_project(paper_id_of(p))]
    return {"acl": acl, "biomed": sorted((data / "tei" / "biomed").glob("*.tei.xml"))[:biomed]}


def score_matrix(ranker, queries: list[str], captions: list[str]) -> numpy.ndarray:
    """(captions x queries) cross-encoder scores of the ranker's model."""
    from scholarly_nlp.ml import score_pairs

    pairs = [(q, c) for c in captions for q in queries]
    scores = ranker.model.ops.to_numpy(score_pairs(ranker.model, pairs, ranker.cfg["batch_size"]))
    return numpy.asarray(scores, dtype=float).reshape(len(captions), len(queries))


def order_of(values: numpy.ndarray) -> list[int]:
    """Indices best first; ties keep document order (as ``rank_figures``)."""
    return sorted(range(len(values)), key=lambda k: (-values[k], k))


def dev_papers(ranker, nlp, tei_dir: Path, gold: dict) -> list[dict]:
    """Per gold paper: the candidate ids, the captioned ones and their score matrix."""
    import scholarly_nlp
    from scholarly_figure_ranker.texts import abstract_sentences, caption_text

    papers = []
    for paper_id, ranking in gold.items():
        doc = scholarly_nlp.read(tei_dir / f"{paper_id}.tei.xml", nlp=nlp)
        candidates = ranker.candidates(doc)
        captioned = [f for f in candidates if caption_text(f)]
        queries = abstract_sentences(doc)
        matrix = score_matrix(ranker, queries, [caption_text(f) for f in captioned]) if captioned and queries else None
        papers.append({"paper_id": paper_id, "gold": ranking, "ids": [f.id for f in candidates],
                       "captioned": [f.id for f in captioned], "matrix": matrix})
    return papers


def dev_metrics(papers: list[dict], aggregate) -> tuple[list[float], list[float]]:
    """Per-paper AP (top-3 gold) and Acc@1 of one aggregation."""
    from scholarly_nlp.metrics import average_precision

    aps, hits = [], []
    for paper in papers:
        ranking = list(paper["ids"])
        if paper["matrix"] is not None:
            scored = [paper["captioned"][k] for k in order_of(aggregate(paper["matrix"]))]
            ranking = scored + [i for i in paper["ids"] if i not in scored]
        relevant = list(dict.fromkeys(paper["gold"]))[:3]
        aps.append(average_precision(ranking, set(relevant)))
        hits.append(float(bool(ranking) and ranking[0] == relevant[0]))
    return aps, hits


def readable_papers(nlp, paths: list[Path]) -> Iterator[tuple[Path, object]]:
    """(path, Doc) for each paper the reader accepts; one a reader rejects is named on stderr."""
    import scholarly_nlp

    for path in paths:
        try:
            yield path, scholarly_nlp.read(path, nlp=nlp)
        except scholarly_nlp.ScholarlyNLPError as exc:
            print(f"skipped {path.name}: {exc}", file=sys.stderr)


def proxy_queries(ranker, nlp, paths: list[Path]) -> list[dict]:
    """Paragraph-proxy queries (see the module docstring) of the papers at ``paths``."""
    from scholarly_figure_ranker.texts import caption_text

    queries = []
    for path, doc in readable_papers(nlp, paths):
        figures = [f for f in ranker.candidates(doc) if caption_text(f)]
        if len(figures) < 2:
            continue
        ids = [f.id for f in figures]
        mentions = [(m, f.id) for f in doc._.figures for m in f.mentions]
        taken = 0
        for paragraph in doc.spans.get("paragraphs", []):
            inside = [(m, fid) for m, fid in mentions if paragraph.start <= m.start < paragraph.end]
            targets = {fid for _, fid in inside}
            if len(targets) != 1 or next(iter(targets)) not in ids:
                continue
            sentences = [s.text.strip() for s in paragraph.sents
                         if not any(s.start <= m.start < s.end for m, _ in inside) and len(s.text.split()) >= 4]
            if len(sentences) < 2:
                continue
            matrix = score_matrix(ranker, sentences, [caption_text(f) for f in figures])
            queries.append({"paper": path.name, "target": ids.index(next(iter(targets))), "matrix": matrix})
            taken += 1
            if taken >= PROXY_PARAGRAPHS_PER_PAPER:
                break
    return queries


def proxy_metrics(queries: list[dict], aggregate) -> tuple[list[float], list[float]]:
    """Per-query hit@1 and reciprocal rank of the target figure."""
    hits, reciprocal = [], []
    for query in queries:
        rank = 1 + order_of(aggregate(query["matrix"])).index(query["target"])
        hits.append(float(rank == 1))
        reciprocal.append(1.0 / rank)
    return hits, reciprocal


def main(argv=None) -> dict:
    """Command line (see the module docstring)."""
    import scholarly_nlp
    from scholarly_figure_ranker.evaluation import read_gold
    from scholarly_nlp.metrics import paired_bootstrap

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA_ROOT)
    parser.add_argument("--pipeline", default="scholarly_core")
    parser.add_argument("--biomed", type=int, default=80, help="biomedical TEI papers added to the proxy")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "figure_ranker_aggregation.json")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    nlp = scholarly_nlp.load(args.pipeline, components=["figure_ranker"], require=["figure_ranker"])
    ranker = nlp.get_pipe("figure_ranker")
    gold = read_gold(args.data / "gold" / "central_figures_dev.jsonl")
    acl = args.data / "tei" / "acl"
    papers = dev_papers(ranker, nlp, acl, gold)
    queries = proxy_queries(ranker, nlp, [path for paths in unseen_papers(args.data, args.biomed).values()
                                          for path in paths])

    report = {"pipeline": args.pipeline, "dev_papers": len(papers), "proxy_queries": len(queries),
              "proxy_papers": len({q["paper"] for q in queries}), "aggregations": {}}
    base_dev, base_proxy = dev_metrics(papers, AGGREGATIONS["sum"]), proxy_metrics(queries, AGGREGATIONS["sum"])
    rows = []
    for name, aggregate in AGGREGATIONS.items():
        (aps, hits), (proxy_hits, proxy_rr) = dev_metrics(papers, aggregate), proxy_metrics(queries, aggregate)
        entry = {"dev_map": float(numpy.mean(aps)), "dev_acc_at_1": float(numpy.mean(hits)),
                 "proxy_acc": float(numpy.mean(proxy_hits)), "proxy_mrr": float(numpy.mean(proxy_rr))}
        if name != "sum":
            entry["vs_sum"] = {"dev_ap": paired_bootstrap(aps, base_dev[0]), "dev_acc_at_1": paired_bootstrap(hits, base_dev[1]),
                               "proxy_rr": paired_bootstrap(proxy_rr, base_proxy[1])}
        report["aggregations"][name] = entry
        rows.append([name, f"{entry['dev_map']:.3f}", f"{entry['dev_acc_at_1']:.2f}", f"{entry['proxy_acc']:.3f}",
                     f"{entry['proxy_mrr']:.3f}", f"{entry.get('vs_sum', {}).get('proxy_rr', {}).get('p_value', 1.0):.2f}"])
    report["seconds"] = round(time.perf_counter() - started, 1)
    report["machine"] = machine_info()
    write_json(args.out, report)
    print(f"{len(papers)} dev papers; proxy: {len(queries)} paragraphs of {report['proxy_papers']} unseen papers")
    print(markdown_table(["aggregation", "dev MAP", "dev Acc@1", "proxy acc", "proxy MRR", "proxy p vs sum"], rows))
    return report


if __name__ == "__main__":
    main()
