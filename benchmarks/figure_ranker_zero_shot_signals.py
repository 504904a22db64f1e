"""Central-figure ranking: zero-shot MiniLM signals beside the trained caption score (issue 19).

On the 100 biomedical selection papers the trained cross-encoder's caption score is the weakest
signal (it was trained on ACL papers), and the referring text, a TF-IDF signal, the strongest.
This measures two untrained dense signals from the frozen all-MiniLM-L6-v2 (the packaged
backbone) on both selection sets (163 papers) and on the dev gold:

* ``cap_dense``: cosine of the abstract (mean of its sentences' embeddings, renormalised) and
  the caption (the component's ``caption_dense`` signal since round 3);
* ``ctx_dense_max`` / ``ctx_dense_mean``: the best / mean cosine of the abstract and the
  paragraphs that refer to the figure (NaN, ranked last, for a figure no paragraph refers to).

Each signal set is fused by the ranker's own reciprocal rank fusion and compared with the
shipped ``caption+mentions`` by a paired bootstrap of per-paper Acc@1. Round 2's rule (see
``figure_ranker_aggregation_selection.py``) decides whether anything ships: Acc@1 above the
shipped ranking with p < 0.05 over the 163 papers and no loss on the 63 ACL papers. Many sets
are compared here, so a set that passes the rule alone still needs a confirming set.

    python benchmarks/figure_ranker_zero_shot_signals.py [--pipeline scholarly_core]
        [--out benchmarks/results/figure_ranker_zero_shot_signals.json]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DEFAULT_DATA_ROOT, RESULTS_DIR, ensure_repo_on_path, machine_info, write_json  # noqa: E402
from figure_ranker_selection import (  # noqa: E402
    BIOMED_SELECTION_FILE,
    SELECTION_FILE,
    acc_by_group,
    dev_gold_docs,
    group_of,
    load_ranker,
    per_paper,
    ranking_by,
    read_docs,
    read_selection,
    signals_of,
)

ensure_repo_on_path()

SHIPPED = ("caption", "mentions")
SETS = [SHIPPED, ("caption", "mentions", "context"), ("cap_dense",), ("ctx_dense_max",), ("ctx_dense_mean",),
        ("context",), ("caption", "mentions", "ctx_dense_max"), ("caption", "mentions", "ctx_dense_mean"),
        ("caption", "mentions", "cap_dense"), ("caption", "mentions", "cap_dense", "ctx_dense_max"),
        ("caption", "cap_dense", "ctx_dense_max"), ("caption", "mentions", "context", "ctx_dense_max"),
        ("caption", "ctx_dense_max"), ("mentions", "cap_dense"), ("mentions", "ctx_dense_max"),
        ("cap_dense", "ctx_dense_max"), ("mentions", "cap_dense", "ctx_dense_max")]


def dense_signals(encoder, doc, figures) -> dict[str, dict[str, float]]:
    """Figure id -> the zero-shot signals of this module's docstring, for captioned figures."""
    from scholarly_figure_ranker.signals import abstract_vector, caption_dense_similarity, referring_paragraphs
    from scholarly_figure_ranker.texts import abstract_sentences

    query = abstract_sentences(doc)
    if not query or not figures:
        return {}
    abstract = abstract_vector(encoder, query)
    caption_dense = caption_dense_similarity(encoder, figures, query, abstract)  # the component's caption_dense
    out = {}
    for figure in figures:
        paragraphs = referring_paragraphs(doc, figure)
        cosines = encoder.encode(paragraphs) @ abstract if paragraphs else numpy.array([numpy.nan])
        out[figure.id] = {"cap_dense": caption_dense[figure.id], "ctx_dense_max": float(numpy.max(cosines)),
                          "ctx_dense_mean": float(numpy.mean(cosines))}
    return out


def all_signals(nlp, encoder, docs: dict) -> dict:
    """Paper id -> (candidate ids, figure id -> {signal: value}) with the ranker's signals and
    the zero-shot ones."""
    signals = signals_of(nlp, docs)
    ranker = nlp.get_pipe("figure_ranker")
    for pid, doc in docs.items():
        ids, values = signals[pid]
        figures = [f for f in ranker.candidates(doc) if f.id in values]
        for fid, extra in dense_signals(encoder, doc, figures).items():
            values[fid].update(extra)
    return signals


def measure(signals: dict, gold: dict) -> dict[str, tuple[list[float], list[float]]]:
    """Signal set name -> (per-paper AP, per-paper Acc@1)."""
    return {"+".join(s): per_paper({pid: ranking_by(s, *signals[pid]) for pid in signals}, gold) for s in SETS}


def main(argv=None) -> dict:
    """Command line: both selection sets and the dev gold, every set against the shipped one."""
    import argparse

    from scholarly_nlp.metrics import paired_bootstrap
    from scholarly_nlp.ml import DEFAULT_BACKBONE, SentenceEncoder

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pipeline", default="scholarly_core")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA_ROOT)
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "figure_ranker_zero_shot_signals.json")
    args = parser.parse_args(argv)

    started = time.time()
    encoder = SentenceEncoder(DEFAULT_BACKBONE)
    nlp = load_ranker(args.pipeline)
    labels, sources = read_selection([SELECTION_FILE, BIOMED_SELECTION_FILE])
    selection = measure(all_signals(nlp, encoder, read_docs(args.data, sources, nlp)), labels)
    gold, gold_docs = dev_gold_docs(args.data, nlp)
    dev = measure(all_signals(nlp, encoder, gold_docs), gold)
    groups = [group_of(sources[pid]) for pid, ranking in labels.items() if ranking]
    shipped_acc = selection["+".join(SHIPPED)][1]
    rows = {}
    for name, (ap, acc) in selection.items():
        by_group = acc_by_group(acc, groups)
        rows[name] = {"selection_map": float(numpy.mean(ap)), "selection_first_figures": int(sum(acc)),
                      "acl_first_figures": round(by_group["acl"] * groups.count("acl")),
                      "biomed_first_figures": round(by_group["biomed"] * groups.count("biomed")),
                      "acc_vs_shipped": paired_bootstrap(acc, shipped_acc),
                      "dev_map": float(numpy.mean(dev[name][0])), "dev_acc_at_1": float(numpy.mean(dev[name][1])),
                      "selection_ap": ap, "selection_acc": acc}
        r = rows[name]
        print(f"{name:42s} first {r['selection_first_figures']:3d} (ACL {r['acl_first_figures']}, biomed "
              f"{r['biomed_first_figures']}) MAP {r['selection_map']:.3f} vs shipped "
              f"{r['acc_vs_shipped']['delta']:+.3f} (p {r['acc_vs_shipped']['p_value']:.2f}) | dev MAP "
              f"{r['dev_map']:.3f} Acc@1 {r['dev_acc_at_1']:.2f}")
    result = {"machine": machine_info(), "pipeline": args.pipeline, "selection_papers": len(groups),
              "shipped": "+".join(SHIPPED), "sets": rows, "seconds": round(time.time() - started, 1)}
    write_json(args.out, result)
    return result


if __name__ == "__main__":
    main()
