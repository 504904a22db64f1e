"""Central-figure ranking: which signals to fuse, chosen on a selection set that is not the dev gold.

The ``figure_ranker`` fuses its cross-encoder's caption score with two signals of how the
paper discusses each figure (``mentions``, ``context``) by reciprocal rank fusion. That default
was fixed on the 20 dev gold papers, which are also where the project reports its numbers. This
benchmark chooses the signals on a second, independently annotated set instead:
``projects/figure_ranker/selection/central_figures_selection.jsonl`` (63 papers the ranker
never trained on: held-out ACL TEI papers and ACL PDFs; three annotators, the dev gold's
protocol, merged by Borda count; see that folder's README).

**The rule (fixed before measuring).** The candidates are the signal sets that contain the
trained caption score: ``caption`` alone, ``caption+mentions``, ``caption+context`` and
``caption+mentions+context`` (the default shipped when the rule was fixed: the "previous
default" below). The chosen set has the highest Acc@1 on the selection set (the central figure
is what users read); ties go to the higher MAP, then to the previous default. The sets without the caption score, pick-first and the other baselines are
reported for reference only. ``--gold`` scores every set on the dev gold too; those numbers are
reported after the choice and take no part in it.

    python benchmarks/figure_ranker_selection.py [--pipeline scholarly_core] [--gold]
        [--out benchmarks/results/figure_ranker_selection.json]
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path
from typing import Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DEFAULT_DATA_ROOT, REPO_ROOT, RESULTS_DIR, ensure_repo_on_path, machine_info, markdown_table, write_json  # noqa: E402

ensure_repo_on_path()

SELECTION_DIR = REPO_ROOT / "projects" / "figure_ranker" / "selection"
SELECTION_FILE = SELECTION_DIR / "central_figures_selection.jsonl"
"""The first selection set: 63 ACL papers (round 1 chose the signals on it alone)."""
BIOMED_SELECTION_FILE = SELECTION_DIR / "biomed" / "central_figures_selection.jsonl"
"""The second: 100 biomedical TEI papers (round 2)."""
SIGNAL_NAMES = ("caption", "mentions", "context")
PREVIOUS_DEFAULT = ("caption", "mentions", "context")
"""The signals shipped when the rule was fixed (2026-11-29); since then the default is what
the rule chose, ``caption+mentions``."""
REFERENCE_BASELINES = ["pick_first", "tfidf", "mention_count", "referring_text_tfidf"]


def signal_sets() -> list[tuple[str, ...]]:
    """Every non-empty set of signals, in a fixed order."""
    return [s for n in range(1, len(SIGNAL_NAMES) + 1) for s in itertools.combinations(SIGNAL_NAMES, n)]


def candidates() -> list[tuple[str, ...]]:
    """The sets the rule chooses among: those with the trained caption score."""
    return [s for s in signal_sets() if "caption" in s]


def read_selection(paths: Sequence[Path]) -> tuple[dict[str, list[str]], dict[str, str]]:
    """(paper id -> merged ranking, paper id -> file relative to the data folder) of one or more
    selection files; a paper in two files is a ValueError."""
    import json

    from scholarly_figure_ranker.evaluation import read_gold

    rankings: dict[str, list[str]] = {}
    sources: dict[str, str] = {}
    for path in paths:
        records = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
        repeated = [r["paper_id"] for r in records if r["paper_id"] in rankings]
        if repeated:
            raise ValueError(f"{path}: papers already read from another selection file: {repeated}")
        sources.update({record["paper_id"]: record["source"] for record in records})
        rankings.update(read_gold(path))
    return rankings, sources


def group_of(source: str) -> str:
    """The selection group of a paper's file: ``acl`` (ACL TEI and PDFs), ``biomed`` or
    ``pdf-pairs``; a ValueError for a file of no group."""
    if source.startswith("tei/biomed/"):
        return "biomed"
    if source.startswith("pdf-pairs/"):
        return "pdf-pairs"
    if source.startswith(("tei/acl/", "pdfs/acl/")):
        return "acl"
    raise ValueError(f"{source}: not a file of a selection group (tei/acl, pdfs/acl, tei/biomed, pdf-pairs)")


def signals_of(nlp, docs: dict) -> dict[str, tuple[list[str], dict[str, dict[str, float]]]]:
    """Paper id -> (candidate ids in document order, figure id -> {signal: value}) with every signal."""
    ranker = nlp.get_pipe("figure_ranker")
    ids = list(docs)
    return {pid: ([f.id for f in ranker.candidates(doc)], doc._.figure_signals or {})
            for pid, doc in zip(ids, nlp.pipe([docs[pid] for pid in ids]))}


def ranking_by(signal_set: tuple[str, ...], figure_ids: list[str], values: dict[str, dict[str, float]]) -> list[str]:
    """The paper's figures best first by one signal, or by the rank fusion of several."""
    from scholarly_figure_ranker.factory import rank_figures
    from scholarly_figure_ranker.signals import fuse_ranks

    scored = [f for f in figure_ids if f in values]
    by_signal = {name: {f: values[f][name] for f in scored} for name in signal_set}
    scores = fuse_ranks(by_signal, scored) if len(signal_set) > 1 else by_signal[signal_set[0]]
    return rank_figures(figure_ids, scores)


def acc_by_group(acc: list[float], groups: list[str]) -> dict[str, float]:
    """Acc@1 per group from per-paper values and each paper's group (same order and length)."""
    if len(acc) != len(groups):
        raise ValueError(f"{len(acc)} per-paper values for {len(groups)} papers: a paper without gold was skipped")
    return {g: float(sum(a for a, h in zip(acc, groups) if h == g) / groups.count(g)) for g in sorted(set(groups))}


def per_paper(rankings: dict[str, list[str]], gold: dict[str, list[str]]) -> tuple[list[float], list[float]]:
    """Per gold paper with a gold figure (gold order): average precision of the top gold figures
    (``GOLD_DEPTH``, as ``evaluate`` counts them) and Acc@1 (the first gold figure ranked first)."""
    from scholarly_figure_ranker.evaluation import GOLD_DEPTH
    from scholarly_nlp.metrics import average_precision, hit_at_k

    ap, acc = [], []
    for pid, ranking in gold.items():
        relevant = list(dict.fromkeys(ranking))[:GOLD_DEPTH]
        if not relevant:
            continue
        predicted = rankings.get(pid, [])
        ap.append(average_precision(predicted, set(relevant)))
        acc.append(hit_at_k(predicted, {relevant[0]}, 1))
    return ap, acc


def measure(nlp, docs: dict, gold: dict[str, list[str]]) -> dict[str, dict]:
    """Each signal set's MAP / Acc@1 and per-paper values on one labelled set."""
    signals = signals_of(nlp, docs)
    report = {}
    for signal_set in signal_sets():
        rankings = {pid: ranking_by(signal_set, *signals[pid]) for pid in signals}
        ap, acc = per_paper(rankings, gold)
        report["+".join(signal_set)] = {"map": sum(ap) / len(ap), "acc_at_1": sum(acc) / len(acc),
                                        "ap": ap, "acc": acc}
    return report


def choose(report: dict[str, dict]) -> str:
    """The rule: highest Acc@1 among the candidates, then MAP, then the previous default."""
    previous = "+".join(PREVIOUS_DEFAULT)
    names = ["+".join(s) for s in candidates()]
    return max(names, key=lambda n: (round(report[n]["acc_at_1"], 9), round(report[n]["map"], 9), n == previous))


def against_previous(report: dict[str, dict]) -> dict[str, dict]:
    """Paired bootstrap of each set against the previous default: per-paper AP and Acc@1."""
    from scholarly_nlp.metrics import paired_bootstrap

    previous = report["+".join(PREVIOUS_DEFAULT)]
    return {name: {"ap": paired_bootstrap(r["ap"], previous["ap"]), "acc": paired_bootstrap(r["acc"], previous["acc"])}
            for name, r in report.items()}


def arguments(doc: str, gold_help: str, out_name: str) -> argparse.ArgumentParser:
    """The options the selection-set benchmarks share: pipeline, data folder, selection labels,
    ``--gold`` and the results file."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--pipeline", default="scholarly_core")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA_ROOT)
    parser.add_argument("--selection", type=Path, nargs="+", default=[SELECTION_FILE],
                        help="selection label files (default: the 63 ACL papers)")
    parser.add_argument("--gold", action="store_true", help=gold_help)
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / out_name)
    return parser


def load_ranker(pipeline: str):
    """The pipeline's figure_ranker alone, computing every signal."""
    import scholarly_nlp

    return scholarly_nlp.load(pipeline, components=["figure_ranker"], require=["figure_ranker"],
                              config={"components.figure_ranker.signals": list(SIGNAL_NAMES)})


def dev_gold_docs(data: Path, nlp) -> tuple[dict[str, list[str]], dict]:
    """(dev gold rankings, paper id -> Doc); exits when a gold paper cannot be read."""
    from scholarly_figure_ranker.evaluation import load_papers, read_gold

    gold = read_gold(data / "gold" / "central_figures_dev.jsonl")
    docs, missing = load_papers(data / "tei" / "acl", gold, nlp)
    if missing:
        sys.exit(f"dev gold papers missing: {missing}")
    return gold, docs


def read_docs(data: Path, sources: dict[str, str], nlp) -> dict:
    """Paper id -> Doc for every labelled paper (all must be readable)."""
    import scholarly_nlp

    return {pid: scholarly_nlp.read(data / source, nlp=nlp) for pid, source in sources.items()}


def baselines(docs: dict, gold: dict[str, list[str]]) -> dict[str, dict]:
    """The reference baselines' metrics on one labelled set."""
    from scholarly_figure_ranker.evaluation import run_baselines

    return {name: {k: v for k, v in m.items() if k in ("map", "acc_at_1")}
            for name, m in run_baselines(docs, gold, REFERENCE_BASELINES).items()}


def table(report: dict[str, dict], chosen: str, tests: dict[str, dict]) -> str:
    """Markdown rows: set, MAP, Acc@1, and the bootstrap against the previous default."""
    rows = []
    for name, r in report.items():
        mark = " (chosen)" if name == chosen else (" (candidate)" if name.startswith("caption") else "")
        rows.append([name + mark, f"{r['map']:.3f}", f"{r['acc_at_1']:.3f}",
                     f"{tests[name]['acc']['delta']:+.3f} (p={tests[name]['acc']['p_value']:.2f})",
                     f"{tests[name]['ap']['delta']:+.3f} (p={tests[name]['ap']['p_value']:.2f})"])
    return markdown_table(["signals", "MAP", "Acc@1", "Acc@1 vs previous", "AP vs previous"], rows)


def main(argv=None) -> dict:
    """Command line: measure, choose, optionally score the dev gold, write the JSON."""
    args = arguments(__doc__, "also score every set on the dev gold (after the choice)",
                     "figure_ranker_selection.json").parse_args(argv)

    started = time.time()
    nlp = load_ranker(args.pipeline)
    labels, sources = read_selection(args.selection)
    docs = read_docs(args.data, sources, nlp)
    selection = measure(nlp, docs, labels)
    chosen = choose(selection)
    tests = against_previous(selection)
    result = {"machine": machine_info(), "pipeline": args.pipeline, "selection_papers": len(labels),
              "rule": "highest selection Acc@1 among the caption-score sets, then MAP, then the previous default",
              "chosen": chosen, "selection": selection, "selection_vs_previous": tests,
              "selection_baselines": baselines(docs, labels)}
    print(f"selection set ({len(labels)} papers): chosen {chosen}")
    print(table(selection, chosen, tests))
    for name, m in result["selection_baselines"].items():
        print(f"baseline {name}: MAP {m['map']:.3f} Acc@1 {m['acc_at_1']:.3f}")
    if args.gold:
        gold, gold_docs = dev_gold_docs(args.data, nlp)
        dev = measure(nlp, gold_docs, gold)
        result["dev_gold"] = dev
        result["dev_gold_vs_previous"] = against_previous(dev)
        print("dev gold (20 papers; reported, not chosen on):")
        print(table(dev, chosen, result["dev_gold_vs_previous"]))
    result["seconds"] = round(time.time() - started, 1)
    write_json(args.out, result)
    return result


if __name__ == "__main__":
    main()
