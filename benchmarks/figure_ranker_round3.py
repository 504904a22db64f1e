"""Central-figure ranking: round 3, one candidate confirmed or rejected on 111 fresh papers.

Rounds 1 and 2 compared many signal sets on the same 163 selection papers; adding ``cap_dense``
(the frozen all-MiniLM-L6-v2 cosine of the abstract and the caption, see
``figure_ranker_zero_shot_signals.py``) to the shipped fusion found 77 first figures against the
shipped 67 there, p = 0.10. Round 3's rule (``projects/figure_ranker/selection/README.md``,
committed with the packets before any label existed) decides on papers no earlier round and no
shipped ranker's training used:
``caption+mentions+cap_dense`` ships only if its Acc@1 beats the shipped ``caption+mentions``
with a two-sided paired bootstrap p < 0.05 over the round-3 papers. The other signal sets and
the reference baselines are reported, not used to choose. ``--pool-with`` adds, for every
system, its first figures and bootstrap over these papers and those of another run of this
script (rounds 1-2: ``--selection`` the two earlier label files).

    python benchmarks/figure_ranker_round3.py [--pipeline scholarly_core]
        [--selection LABELS ...] [--pool-with RESULTS.json] [--out benchmarks/results/figure_ranker_round3.json]
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DEFAULT_DATA_ROOT, RESULTS_DIR, ensure_repo_on_path, machine_info, write_json  # noqa: E402
from figure_ranker_selection import (  # noqa: E402
    REFERENCE_BASELINES,
    SELECTION_DIR,
    group_of,
    per_paper,
    ranking_by,
    read_docs,
    read_selection,
)
from figure_ranker_zero_shot_signals import SETS, SHIPPED, all_signals  # noqa: E402

ensure_repo_on_path()

ROUND3_FILES = [SELECTION_DIR / "round3" / "central_figures_selection.jsonl",
                SELECTION_DIR / "round3_pdf_pairs" / "central_figures_selection.jsonl"]
CANDIDATE = ("caption", "mentions", "cap_dense")
ALPHA = 0.05


def decide(candidate_acc: list[float], shipped_acc: list[float]) -> dict:
    """Round 3's rule on per-paper Acc@1: the bootstrap and whether the candidate ships."""
    from scholarly_nlp.metrics import paired_bootstrap

    test = paired_bootstrap(candidate_acc, shipped_acc)
    return {"test": test, "ships": bool(test["delta"] > 0 and test["p_value"] < ALPHA),
            "rule": f"Acc@1 above the shipped {'+'.join(SHIPPED)}, two-sided paired bootstrap p < {ALPHA}"}


def pooled(rows: dict[str, dict], other: dict[str, dict]) -> dict[str, dict]:
    """Per system of both runs: first figures and Acc@1 against the shipped fusion over the
    papers of both (their per-paper lists joined)."""
    from scholarly_nlp.metrics import paired_bootstrap

    shipped = rows["+".join(SHIPPED)]["acc"] + other["+".join(SHIPPED)]["acc"]
    out = {}
    for name in rows.keys() & other.keys():
        acc = rows[name]["acc"] + other[name]["acc"]
        out[name] = {"papers": len(acc), "first_figures": int(sum(acc)), "acc_vs_shipped": paired_bootstrap(acc, shipped)}
    return out


def baseline_rows(docs: dict, labels: dict[str, list[str]]) -> dict[str, tuple[list[float], list[float]]]:
    """Baseline name -> (per-paper AP, per-paper Acc@1), labelled papers in label order."""
    from scholarly_figure_ranker.baselines import make_baseline

    rows = {}
    for name in REFERENCE_BASELINES:
        ranker = make_baseline(name)
        rows[name] = per_paper({pid: ranker.rank(doc) for pid, doc in docs.items()}, labels)
    return rows


def main(argv=None) -> dict:
    """Command line: every signal set and baseline on the round-3 papers, and the rule's verdict."""
    import argparse

    from scholarly_nlp.metrics import paired_bootstrap
    from scholarly_nlp.ml import DEFAULT_BACKBONE, SentenceEncoder

    from figure_ranker_selection import load_ranker

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pipeline", default="scholarly_core")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA_ROOT)
    parser.add_argument("--selection", type=Path, nargs="+", default=ROUND3_FILES)
    parser.add_argument("--pool-with", type=Path, default=None,
                        help="results of this script on other papers, to pool with (rounds 1-2)")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "figure_ranker_round3.json")
    args = parser.parse_args(argv)

    started = time.time()
    nlp = load_ranker(args.pipeline)
    labels, sources = read_selection(args.selection)
    docs = read_docs(args.data, sources, nlp)
    signals = all_signals(nlp, SentenceEncoder(DEFAULT_BACKBONE), docs)
    fields = [group_of(sources[pid]) for pid, ranking in labels.items() if ranking]
    systems = {"+".join(s): per_paper({pid: ranking_by(s, *signals[pid]) for pid in signals}, labels) for s in SETS}
    systems.update({f"baseline:{name}": row for name, row in baseline_rows(docs, labels).items()})
    shipped_acc = systems["+".join(SHIPPED)][1]
    rows = {}
    for name, (ap, acc) in systems.items():
        rows[name] = {"map": float(numpy.mean(ap)), "acc_at_1": float(numpy.mean(acc)), "first_figures": int(sum(acc)),
                      "first_figures_by_field": {f: int(sum(a for a, g in zip(acc, fields) if g == f))
                                                 for f in sorted(set(fields))},
                      "acc_vs_shipped": paired_bootstrap(acc, shipped_acc), "ap": ap, "acc": acc}
        r = rows[name]
        print(f"{name:42s} first {r['first_figures']:3d} {r['first_figures_by_field']} MAP {r['map']:.3f} "
              f"vs shipped {r['acc_vs_shipped']['delta']:+.3f} (p {r['acc_vs_shipped']['p_value']:.3f})")
    verdict = decide(systems["+".join(CANDIDATE)][1], shipped_acc)
    print(f"round 3: {'+'.join(CANDIDATE)} {'SHIPS' if verdict['ships'] else 'does not ship'} "
          f"(delta {verdict['test']['delta']:+.3f}, p {verdict['test']['p_value']:.3f})")
    result = {"machine": machine_info(), "pipeline": args.pipeline, "papers": len(fields),
              "papers_by_field": {f: fields.count(f) for f in sorted(set(fields))},
              "shipped": "+".join(SHIPPED), "candidate": "+".join(CANDIDATE), "verdict": verdict, "systems": rows,
              "seconds": round(time.time() - started, 1)}
    if args.pool_with:
        other = json.loads(args.pool_with.read_text(encoding="utf-8"))
        result["pooled_with"] = {"file": str(args.pool_with), "papers": other["papers"],
                                 "systems": pooled(rows, other["systems"])}
        for name, r in sorted(result["pooled_with"]["systems"].items()):
            print(f"pooled {name:42s} first {r['first_figures']:3d} of {r['papers']} vs shipped "
                  f"{r['acc_vs_shipped']['delta']:+.3f} (p {r['acc_vs_shipped']['p_value']:.3f})")
    write_json(args.out, result)
    return result


if __name__ == "__main__":
    main()
