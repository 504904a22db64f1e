"""Central-figure ranking: a fusion of the signals and the figure order learned from labels,
against the fixed rank fusion the ``figure_ranker`` ships.

Issue 19 asks whether figure order, a strong prior (the first figure is often the overview),
can be combined with the cross-encoder by learning rather than by a hand-set weight. Labels
for that now exist apart from the dev gold: the 63-paper selection set
(``projects/figure_ranker/selection``). Per figure with caption text, the features are:

* ``caption``: the cross-encoder's caption score, z-scored within the paper;
* ``mentions``: log(1 + mentions), z-scored within the paper;
* ``context``: the referring paragraphs' TF-IDF similarity to the abstract, z-scored;
* ``first``: 1 for the paper's first candidate figure;
* ``position``: the figure's place among the candidates, 0 (first) to 1 (last);
* ``caption_length``: log(1 + caption characters), z-scored within the paper.

A conditional logit (one softmax over a paper's figures) is fitted to Borda-style weights of the
merged labels (3/2/1 for the merged top 3) with an L2 penalty, by L-BFGS. Feature sets and penalties are
compared by 7-fold cross-validation over the selection papers (every 7th paper a fold), against
the shipped rank fusion, which needs no fitting. The best setting by cross-validated Acc@1
(then MAP) is held to round 2's rule (``figure_ranker_aggregation_selection.py``), then fitted
on all selection papers and scored on the 20 dev gold papers (``--gold``). The default reads
both selection sets (163 papers) and writes ``figure_ranker_learned_fusion_round2.json``; round 1
read the 63 ACL papers alone (``--selection
projects/figure_ranker/selection/central_figures_selection.jsonl --out
benchmarks/results/figure_ranker_learned_fusion.json``).

    python benchmarks/figure_ranker_learned_fusion.py [--gold] [--selection FILE...] [--out FILE]
"""

from __future__ import annotations

import itertools
import sys
import time
from pathlib import Path
from typing import Optional

import numpy

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ensure_repo_on_path, machine_info, write_json  # noqa: E402
from figure_ranker_aggregation_selection import adopt  # noqa: E402
from figure_ranker_selection import (  # noqa: E402
    BIOMED_SELECTION_FILE,
    SELECTION_FILE,
    acc_by_group,
    arguments,
    dev_gold_docs,
    group_of,
    load_ranker,
    per_paper,
    ranking_by,
    read_docs,
    read_selection,
)

ensure_repo_on_path()

FEATURE_SETS = {
    "signals": ("caption", "mentions"),
    "signals+order": ("caption", "mentions", "first", "position"),
    "signals+order+length": ("caption", "mentions", "first", "position", "caption_length"),
    "all": ("caption", "mentions", "context", "first", "position", "caption_length"),
}
PENALTIES = (0.01, 0.1, 1.0, 10.0)
FOLDS = 7
BORDA = (3.0, 2.0, 1.0)


def zscore(values) -> numpy.ndarray:
    """Values centred and scaled within one paper (zeros when they do not vary)."""
    values = numpy.asarray(values, dtype=float)
    spread = values.std()
    return (values - values.mean()) / spread if spread > 0 else numpy.zeros_like(values)


def paper_features(doc, ranker) -> dict:
    """One paper's candidate ids (document order), scored ids and feature columns by name."""
    from scholarly_figure_ranker.texts import caption_text

    candidates = ranker.candidates(doc)
    signals = doc._.figure_signals or {}
    scored = [f for f in candidates if f.id in signals]
    place = {f.id: i for i, f in enumerate(candidates)}
    last = max(len(candidates) - 1, 1)
    columns = {
        "caption": zscore([signals[f.id]["caption"] for f in scored]),
        "mentions": zscore(numpy.log1p([signals[f.id]["mentions"] for f in scored])),
        "context": zscore([signals[f.id]["context"] for f in scored]),
        "first": numpy.array([float(place[f.id] == 0) for f in scored]),
        "position": numpy.array([place[f.id] / last for f in scored]),
        "caption_length": zscore(numpy.log1p([len(caption_text(f)) for f in scored])),
    }
    return {"ids": [f.id for f in candidates], "scored": [f.id for f in scored], "columns": columns}


def matrix(paper: dict, names) -> numpy.ndarray:
    """The paper's (scored figures x features) matrix for the named features."""
    return numpy.stack([paper["columns"][n] for n in names], axis=1)


def targets(paper: dict, gold: list[str]) -> numpy.ndarray:
    """The annotators' Borda weights over the paper's scored figures, summing to 1 (or all 0)."""
    weights = numpy.zeros(len(paper["scored"]))
    for weight, figure in zip(BORDA, gold):
        if figure in paper["scored"]:
            weights[paper["scored"].index(figure)] = weight
    total = weights.sum()
    return weights / total if total else weights


def objective(weights: numpy.ndarray, data: list[tuple[numpy.ndarray, numpy.ndarray]], penalty: float
              ) -> tuple[float, numpy.ndarray]:
    """(value, gradient) of the conditional logit's objective over ``data`` ((features, targets)
    per paper): the sum of each paper's cross-entropy between the targets and the softmax of its
    figures' scores, plus ``penalty`` / 2 * |w|^2, all divided by the number of papers (so the
    penalty per paper is ``penalty`` / (2 N))."""
    total, grad = 0.5 * penalty * weights @ weights, penalty * weights
    for x, t in data:
        scores = x @ weights
        scores = scores - scores.max()
        probs = numpy.exp(scores) / numpy.exp(scores).sum()
        total -= t @ (scores - numpy.log(numpy.exp(scores).sum()))
        grad = grad + x.T @ (probs - t)
    return total / len(data), grad / len(data)


def fit(papers: list[dict], golds: list[list[str]], names, penalty: float) -> numpy.ndarray:
    """Conditional-logit weights minimising :func:`objective` by L-BFGS; the targets are 3/2/1
    for the merged top 3 (:func:`targets`)."""
    from scipy.optimize import minimize

    data = [(matrix(p, names), targets(p, g)) for p, g in zip(papers, golds) if len(p["scored"]) > 1]
    data = [(x, t) for x, t in data if t.sum() > 0]
    return minimize(objective, numpy.zeros(len(names)), args=(data, penalty), jac=True, method="L-BFGS-B").x


def learned_ranking(paper: dict, names, weights: numpy.ndarray) -> list[str]:
    """The paper's figures best first by the learned score; unscored figures last."""
    from scholarly_figure_ranker.factory import rank_figures

    if not paper["scored"]:
        return list(paper["ids"])
    scores = matrix(paper, names) @ weights
    return rank_figures(paper["ids"], dict(zip(paper["scored"], scores.tolist())))


def shipped_ranking(paper: dict, doc) -> list[str]:
    """The shipped ranker's own ranking (its default signals, fused by rank)."""
    from scholarly_figure_ranker.signals import DEFAULT_SIGNALS

    return ranking_by(DEFAULT_SIGNALS, paper["ids"], doc._.figure_signals or {})


def cross_validate(papers: list[dict], golds: list[list[str]], names, penalty: float) -> list[list[str]]:
    """Each paper's ranking by a model fitted on the other folds."""
    rankings: list = [None] * len(papers)
    for fold in range(FOLDS):
        held = set(range(fold, len(papers), FOLDS))
        train = [i for i in range(len(papers)) if i not in held]
        weights = fit([papers[i] for i in train], [golds[i] for i in train], names, penalty)
        for i in held:
            rankings[i] = learned_ranking(papers[i], names, weights)
    return rankings


def scores(rankings: list[list[str]], golds: list[list[str]], groups: Optional[list[str]] = None) -> dict:
    """MAP, Acc@1, the per-paper values and Acc@1 per group of rankings against gold rankings
    (same order; ``groups`` names each paper's group, all ``acl`` when not given)."""
    keys = [str(i) for i in range(len(golds))]
    ap, acc = per_paper(dict(zip(keys, rankings)), dict(zip(keys, golds)))
    groups = groups or ["acl"] * len(golds)
    by_group = acc_by_group(acc, groups)
    return {"map": float(numpy.mean(ap)), "acc_at_1": float(numpy.mean(acc)), "ap": ap, "acc": acc,
            "acc_at_1_by_group": by_group}


def read_labelled(nlp, docs: dict, gold: dict[str, list[str]]) -> tuple[list[dict], list[list[str]], list]:
    """Features, gold rankings and processed docs of a labelled set, in gold order."""
    ranker = nlp.get_pipe("figure_ranker")
    ids = list(gold)
    processed = list(nlp.pipe([docs[pid] for pid in ids]))
    return [paper_features(doc, ranker) for doc in processed], [gold[pid] for pid in ids], processed


def main(argv=None) -> dict:
    """Command line: cross-validate on the selection set, optionally score the dev gold."""
    from scholarly_nlp.metrics import paired_bootstrap

    parser = arguments(__doc__, "fit on all selection papers, score the dev gold",
                       "figure_ranker_learned_fusion_round2.json")
    parser.set_defaults(selection=[SELECTION_FILE, BIOMED_SELECTION_FILE])
    args = parser.parse_args(argv)

    started = time.time()
    nlp = load_ranker(args.pipeline)
    labels, sources = read_selection(args.selection)
    papers, golds, docs = read_labelled(nlp, read_docs(args.data, sources, nlp), labels)
    groups = [group_of(sources[pid]) for pid in labels]
    shipped = scores([shipped_ranking(p, d) for p, d in zip(papers, docs)], golds, groups)
    settings = {}
    for (name, names), penalty in itertools.product(FEATURE_SETS.items(), PENALTIES):
        result = scores(cross_validate(papers, golds, names, penalty), golds, groups)
        result["vs_shipped_acc"] = paired_bootstrap(result["acc"], shipped["acc"])
        settings[f"{name} l2={penalty:g}"] = result
        print(f"{name:22s} l2={penalty:<5g} CV MAP {result['map']:.3f} Acc@1 {result['acc_at_1']:.3f} "
              f"(vs shipped {result['vs_shipped_acc']['delta']:+.3f}, p={result['vs_shipped_acc']['p_value']:.2f})")
    print(f"shipped rank fusion (no fitting): MAP {shipped['map']:.3f} Acc@1 {shipped['acc_at_1']:.3f}")
    best = max(settings, key=lambda k: (round(settings[k]["acc_at_1"], 9), round(settings[k]["map"], 9)))
    decision = adopt(settings[best], shipped)
    print(f"best by CV: {best}; round 2's rule: adopt={decision['adopt']} "
          f"(Acc@1 {decision['acc']['delta']:+.3f}, p={decision['acc']['p_value']:.2f}; "
          f"by group {settings[best]['acc_at_1_by_group']} against {shipped['acc_at_1_by_group']})")
    report = {"machine": machine_info(), "pipeline": args.pipeline, "selection_papers": len(papers),
              "folds": FOLDS, "shipped": shipped, "cross_validated": settings, "best": best, "decision": decision}
    if args.gold:
        name, penalty = best.split(" l2=")
        names = FEATURE_SETS[name]
        weights = fit(papers, golds, names, float(penalty))
        gold, gold_docs = dev_gold_docs(args.data, nlp)
        dev_papers, dev_golds, dev_docs = read_labelled(nlp, gold_docs, gold)
        learned = scores([learned_ranking(p, names, weights) for p in dev_papers], dev_golds)
        dev_shipped = scores([shipped_ranking(p, d) for p, d in zip(dev_papers, dev_docs)], dev_golds)
        report["dev_gold"] = {"weights": dict(zip(names, weights.tolist())), "learned": learned,
                              "shipped": dev_shipped,
                              "learned_vs_shipped_acc": paired_bootstrap(learned["acc"], dev_shipped["acc"]),
                              "learned_vs_shipped_ap": paired_bootstrap(learned["ap"], dev_shipped["ap"])}
        print(f"dev gold, {best} fitted on all {len(papers)} selection papers: MAP {learned['map']:.3f} "
              f"Acc@1 {learned['acc_at_1']:.3f}; shipped {dev_shipped['map']:.3f} / {dev_shipped['acc_at_1']:.3f}; "
              f"weights {report['dev_gold']['weights']}")
    report["seconds"] = round(time.time() - started, 1)
    write_json(args.out, report)
    return report


if __name__ == "__main__":
    main()
