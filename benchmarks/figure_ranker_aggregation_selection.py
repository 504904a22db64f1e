"""Central-figure ranking, round 2: how the caption score is aggregated over the abstract's
sentences, inside the shipped fusion, measured on both selection sets.

The ``figure_ranker`` sums the cross-encoder's (abstract sentence, caption) scores into one
caption score per figure, then fuses it with ``mentions`` by reciprocal rank fusion.
``figure_ranker_aggregation.py`` compared five aggregations of the caption score alone on the
dev gold and a paragraph proxy (level there). On the 63 ACL selection papers, in an
exploratory run inside the fusion, hard votes (0.556), softmax votes and max (0.540 each)
looked better than the sum (0.508), on too few papers to tell. Round 2 adds 100 biomedical papers
annotated the same way (``projects/figure_ranker/selection/biomed``) and measures again.

**Round 2's rule, fixed before the biomedical labels existed.** A change to the shipped ranking
ships only if, on the combined selection set (163 papers), it beats the shipped ranking on
Acc@1 with a paired bootstrap p < 0.05 (10,000 resamples) and is not worse on Acc@1 over the
63 ACL papers. The candidates are the other aggregations here (max, softmax votes, hard votes,
Borda) and the learned fusion of ``figure_ranker_learned_fusion.py`` (its best
cross-validated setting, held to the same rule). The dev gold (``--gold``) is reported after
the decision and takes no part in it.

    python benchmarks/figure_ranker_aggregation_selection.py [--gold]
        [--selection A.jsonl B.jsonl] [--out benchmarks/results/figure_ranker_aggregation_selection.json]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ensure_repo_on_path, machine_info, write_json  # noqa: E402
from figure_ranker_aggregation import AGGREGATIONS, score_matrix  # noqa: E402
from figure_ranker_selection import (  # noqa: E402
    BIOMED_SELECTION_FILE,
    SELECTION_FILE,
    arguments,
    dev_gold_docs,
    acc_by_group,
    group_of,
    load_ranker,
    per_paper,
    read_docs,
    read_selection,
)

ensure_repo_on_path()

SHIPPED_AGGREGATION = "sum"
P_VALUE = 0.05


def caption_matrices(nlp, docs: dict) -> dict[str, dict]:
    """Paper id -> its candidate ids, captioned ids, (captions x sentences) score matrix and
    mention counts, from one pass of the pipeline and one of the cross-encoder."""
    from scholarly_figure_ranker.texts import abstract_sentences, caption_text

    ranker = nlp.get_pipe("figure_ranker")
    ids = list(docs)
    papers = {}
    for pid, doc in zip(ids, nlp.pipe([docs[p] for p in ids])):
        candidates = ranker.candidates(doc)
        queries = abstract_sentences(doc)
        captioned = [f for f in candidates if caption_text(f)] if queries else []
        signals = doc._.figure_signals or {}
        matrix = score_matrix(ranker, queries, [caption_text(f) for f in captioned]) if captioned else None
        if matrix is not None:  # the sum must be the component's own caption score
            own = numpy.array([signals[f.id]["caption"] for f in captioned])
            if not numpy.allclose(matrix.sum(axis=1), own, rtol=1e-3, atol=1e-3):
                raise RuntimeError(f"{pid}: the summed matrix is not the figure ranker's caption score")
        papers[pid] = {"ids": [f.id for f in candidates], "captioned": [f.id for f in captioned],
                       "matrix": matrix, "mentions": {f.id: signals[f.id]["mentions"] for f in captioned}}
    return papers


def fused_ranking(paper: dict, aggregation: str) -> list[str]:
    """The paper's figures best first: the aggregated caption score fused with mentions."""
    from scholarly_figure_ranker.factory import rank_figures
    from scholarly_figure_ranker.signals import fuse_ranks

    if paper["matrix"] is None:
        return list(paper["ids"])
    caption = dict(zip(paper["captioned"], AGGREGATIONS[aggregation](paper["matrix"]).tolist()))
    scores = fuse_ranks({"caption": caption, "mentions": paper["mentions"]}, paper["captioned"])
    return rank_figures(paper["ids"], scores)


def measure(papers: dict[str, dict], gold: dict[str, list[str]], groups: dict[str, str]) -> dict[str, dict]:
    """Per aggregation: MAP, Acc@1, per-paper values and Acc@1 per group."""
    report = {}
    for name in AGGREGATIONS:
        rankings = {pid: fused_ranking(papers[pid], name) for pid in gold}
        ap, acc = per_paper(rankings, gold)
        by_group = acc_by_group(acc, [groups[pid] for pid in gold])
        report[name] = {"map": float(numpy.mean(ap)), "acc_at_1": float(numpy.mean(acc)), "ap": ap, "acc": acc,
                        "acc_at_1_by_group": by_group}
    return report


def adopt(candidate: dict, shipped: dict) -> dict:
    """Round 2's rule for one candidate against the shipped ranking (same papers, same order):
    ``{"adopt", "acc", "ap"}`` with the paired bootstraps."""
    from scholarly_nlp.metrics import paired_bootstrap

    acc = paired_bootstrap(candidate["acc"], shipped["acc"])
    ap = paired_bootstrap(candidate["ap"], shipped["ap"])
    if "acl" not in candidate["acc_at_1_by_group"] or "acl" not in shipped["acc_at_1_by_group"]:
        raise ValueError("round 2's rule needs the ACL papers among the measured ones")
    acl_kept = candidate["acc_at_1_by_group"]["acl"] >= shipped["acc_at_1_by_group"]["acl"]
    return {"adopt": bool(acc["delta"] > 0 and acc["p_value"] < P_VALUE and acl_kept), "acc": acc, "ap": ap}


def main(argv=None) -> dict:
    """Command line: measure on the selection sets, decide, optionally report the dev gold."""
    parser = arguments(__doc__, "also report every aggregation on the dev gold (after the decision)",
                       "figure_ranker_aggregation_selection.json")
    parser.set_defaults(selection=[SELECTION_FILE, BIOMED_SELECTION_FILE])
    args = parser.parse_args(argv)

    started = time.time()
    nlp = load_ranker(args.pipeline)
    labels, sources = read_selection(args.selection)
    groups = {pid: group_of(source) for pid, source in sources.items()}
    report = measure(caption_matrices(nlp, read_docs(args.data, sources, nlp)), labels, groups)
    decisions = {name: adopt(r, report[SHIPPED_AGGREGATION]) for name, r in report.items() if name != SHIPPED_AGGREGATION}
    result = {"machine": machine_info(), "pipeline": args.pipeline, "papers": len(labels),
              "papers_by_group": {g: list(groups.values()).count(g) for g in sorted(set(groups.values()))},
              "rule": f"Acc@1 above the shipped sum with paired-bootstrap p < {P_VALUE} on all papers, "
                      "and not lower on the ACL papers",
              "selection": report, "decisions": decisions}
    print(f"selection ({len(labels)} papers: {result['papers_by_group']})")
    for name, r in report.items():
        decision = decisions.get(name)
        versus = "" if decision is None else (f"  vs sum Acc@1 {decision['acc']['delta']:+.3f} "
                                              f"(p={decision['acc']['p_value']:.2f}) adopt={decision['adopt']}")
        print(f"{name:15s} MAP {r['map']:.3f} Acc@1 {r['acc_at_1']:.3f} by group {r['acc_at_1_by_group']}{versus}")
    if args.gold:
        gold, gold_docs = dev_gold_docs(args.data, nlp)
        dev = measure(caption_matrices(nlp, gold_docs), gold, {pid: "acl" for pid in gold})
        result["dev_gold"] = dev
        for name, r in dev.items():
            print(f"dev gold {name:15s} MAP {r['map']:.3f} Acc@1 {r['acc_at_1']:.3f}")
    result["seconds"] = round(time.time() - started, 1)
    write_json(args.out, result)
    return result


if __name__ == "__main__":
    main()
