"""Train the aspect embedder's pooling head on the weak-supervision pairs.

The shared transformer and the role tagger stay frozen (see the project README for why),
so their annotations are computed once per Doc and each epoch only runs the pooling head:
minutes on a CPU instead of hours. After every epoch the model is scored on the CSFCube
*development* fold (``evaluation_splits.json`` ``fold1_dev``: never the test queries).
``--keep last`` (the default since 2026-11-27) keeps the last epoch of the fixed schedule, so
those dev scores are logged and reported but choose nothing (issue 19: an epoch chosen on
the 24 dev query-facets fitted them, not the task); ``--keep best`` keeps the best epoch on
the dev fold, epoch 0 (the untrained head: mean pooling per aspect) included.

``--report-seeds 1 2`` also trains heads from those seeds on the same annotated pairs (the
annotation, most of the time, is done once) and records their per-epoch dev scores in
``train_log.json`` (``seeds``) with the mean and spread of the kept epoch over all seeds;
only ``--seed``'s head is saved.

    python scripts/train_aspects.py BASE_MODEL PAIRS.spacy CSFCUBE_DIR OUTPUT_DIR [--epochs 8]
        [--keep last|best] [--seed 0] [--report-seeds 1 2]

BASE_MODEL is a pipeline with ``transformer`` and ``sentence_role_tagger``; OUTPUT_DIR gets
that pipeline plus the trained ``aspect_embedder`` and ``train_log.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import spacy
from spacy.training import Example
from thinc.api import Adam, fix_random_seed

import scholarly_nlp
from scholarly_nlp.ml import fix_malloc_mmap_threshold, transformer_listener_config
from scholarly_nlp import QUERY_ASPECTS
from scholarly_nlp.metrics import evaluate_csfcube
from scholarly_nlp.readers import abstract_doc, load_csfcube_qrels, read_csfcube_abstracts, read_csfcube_folds
from scholarly_aspect_embedder.vectors import aspect_search_vector

GROUP_KEY = "aspect_group"
DEV_FOLD = "fold1_dev"


def annotate(nlp, docs, batch_size=32):
    """Run every pipe before the aspect embedder over ``docs`` (in place, returns them)."""
    names = [name for name, _ in nlp.pipeline if name != "aspect_embedder"]
    with nlp.select_pipes(enable=names):
        return list(nlp.pipe(docs, batch_size=batch_size))


def has_dev_fold(data_dir: Path) -> bool:
    """Whether ``evaluation_splits.json`` names a ``fold1_dev`` for every query aspect."""
    splits = data_dir / "evaluation_splits.json"
    if not splits.exists():
        return False
    data = json.loads(splits.read_text())
    return all(DEV_FOLD in data.get(aspect, {}) for aspect in QUERY_ASPECTS)


def dev_map(nlp, csf_docs, data_dir: Path) -> dict:
    """CSFCube dev-fold MAP / NDCG%20 per query aspect and their mean, with the current head."""
    embedder = nlp.get_pipe("aspect_embedder")
    embedder.set_annotations(csf_docs, embedder.predict(csf_docs))
    by_id = {doc._.paper_id: doc for doc in csf_docs}
    out = {}
    for aspect in QUERY_ASPECTS:
        qrels = load_csfcube_qrels(data_dir, aspect)
        folds = {k: v for k, v in read_csfcube_folds(data_dir / "evaluation_splits.json", aspect).items() if k == DEV_FOLD}
        ranked = {}
        for qpid in folds[DEV_FOLD]:
            q = aspect_search_vector(by_id[qpid]._.aspect_vectors, aspect)
            cands = list(qrels[qpid])
            dist = [float(((aspect_search_vector(by_id[c]._.aspect_vectors, aspect) - q) ** 2).sum()) for c in cands]
            ranked[qpid] = [c for _, c in sorted(zip(dist, cands))]
        metrics = evaluate_csfcube(ranked, {q: qrels[q] for q in folds[DEV_FOLD]})
        out[aspect] = {"MAP": 100 * metrics["map"], "NDCG%20": 100 * metrics["ndcg%20"]}
    out["mean"] = {k: sum(out[a][k] for a in QUERY_ASPECTS) / len(QUERY_ASPECTS) for k in ("MAP", "NDCG%20")}
    return out


def train_head(nlp, initial: bytes, groups: dict, csf_docs, data_dir: Path, args, seed: int) -> tuple[list, int, bytes]:
    """Train the aspect embedder's head from its ``initial`` weights (bytes) and ``seed`` (the
    batch order and dropout: the head's initial weights are fixed, see the architecture).

    Returns the per-epoch log (loss and dev scores, epoch 0 the untrained head), the kept
    epoch (``args.keep``) and the kept model's bytes.
    """
    fix_random_seed(seed)
    embedder = nlp.get_pipe("aspect_embedder")
    embedder.model.from_bytes(initial)
    optimizer = Adam(args.lr)
    select = bool(csf_docs)
    log = [{"epoch": 0, "loss": None, "dev": dev_map(nlp, csf_docs, data_dir) if select else None}]
    print(json.dumps({"seed": seed, **log[-1]}), flush=True)
    choose_on_dev = select and args.keep == "best"
    best = (log[0]["dev"]["mean"]["MAP"], 0, embedder.model.to_bytes()) if choose_on_dev else None
    group_ids = sorted(groups)
    rng = random.Random(seed)
    for epoch in range(1, args.epochs + 1):
        rng.shuffle(group_ids)
        total = 0.0
        for start in range(0, len(group_ids), args.groups_per_batch):
            batch = [doc for g in group_ids[start : start + args.groups_per_batch] for doc in groups[g]]
            losses: dict = {}
            embedder.update([Example(d, d) for d in batch], sgd=optimizer, losses=losses)
            total += losses["aspect_embedder"]
        log.append({"epoch": epoch, "loss": total, "dev": dev_map(nlp, csf_docs, data_dir) if select else None})
        print(json.dumps({"seed": seed, **log[-1]}), flush=True)
        if choose_on_dev and log[-1]["dev"]["mean"]["MAP"] > best[0]:
            best = (log[-1]["dev"]["mean"]["MAP"], epoch, embedder.model.to_bytes())
    if not choose_on_dev:
        return log, args.epochs, embedder.model.to_bytes()
    return log, best[1], best[2]


def seed_spread(logs: dict, kept: dict) -> dict:
    """Mean and sample standard deviation over seeds of the kept epoch's dev MAP (mean and per aspect)."""
    import statistics

    out = {}
    for key in ("mean", *QUERY_ASPECTS):
        values = [logs[s][kept[s]]["dev"][key]["MAP"] for s in logs]
        out[key] = {"mean": statistics.fmean(values), "std": statistics.stdev(values) if len(values) > 1 else 0.0,
                    "values": values}
    return out


def main(argv=None) -> int:
    """Train (extra seeds too), keep the last (or best) epoch, save the pipeline."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("base_model", type=Path)
    parser.add_argument("pairs", type=Path)
    parser.add_argument("csfcube_dir", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--keep", choices=("last", "best"), default="last",
                        help="last: the fixed schedule's last epoch; best: the best epoch on the CSFCube dev fold")
    parser.add_argument("--groups-per-batch", type=int, default=16)
    parser.add_argument("--lr", type=float, default=5e-4)
    parser.add_argument("--margin", type=float, default=0.2)
    parser.add_argument("--freeze-projection", action="store_true",
                        help="train only the attention (queries, positional gate), not the output projection")
    parser.add_argument("--limit", type=int, default=0, help="use at most this many pairs (0: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--report-seeds", type=int, nargs="*", default=[],
                        help="also train from these seeds and log their dev scores (only --seed's head is saved)")
    args = parser.parse_args(argv)
    # Every epoch pads and frees arrays of varying shape; without this the heap fragments and
    # the process grew by ~0.37 GB an epoch (killed at 24 GB with 3 seeds of a larger corpus).
    fix_malloc_mmap_threshold()
    fix_random_seed(args.seed)
    nlp = spacy.load(args.base_model)
    width = nlp.get_pipe("transformer").model.get_dim("nO")
    config = {"margin": args.margin, "model": {"@architectures": "scholarly_aspect_embedder.AttentionAspectPooler.v1",
              "width": width, "trainable_projection": not args.freeze_projection,
              "tok2vec": transformer_listener_config()}}
    embedder = nlp.add_pipe("aspect_embedder", config=config)
    started = time.time()
    pairs = list(scholarly_nlp.load_docbin(args.pairs, nlp.vocab))
    if args.limit:
        pairs = pairs[: 2 * args.limit]
    pairs = annotate(nlp, pairs)
    select = has_dev_fold(args.csfcube_dir)
    if not select:
        print(f"warning: no {DEV_FOLD} in {args.csfcube_dir}/evaluation_splits.json: no dev scores, the last epoch is kept",
              file=sys.stderr)
    csf_docs = annotate(nlp, [abstract_doc(r, nlp) for r in
                              read_csfcube_abstracts(args.csfcube_dir / "abstracts-csfcube-preds.jsonl")]) if select else []
    print(f"annotated {len(pairs)} pair docs and {len(csf_docs)} CSFCube docs in {time.time() - started:.0f} s")
    groups: dict = {}
    for doc in pairs:
        groups.setdefault((doc._.paper_meta or {}).get(GROUP_KEY), []).append(doc)
    groups.pop(None, None)
    embedder.initialize(lambda: [Example(d, d) for d in pairs[:10]], nlp=nlp)
    initial = embedder.model.to_bytes()
    logs, kept = {}, {}
    for seed in [s for s in args.report_seeds if s != args.seed] + [args.seed]:  # the saved head last
        logs[seed], kept[seed], model_bytes = train_head(nlp, initial, groups, csf_docs, args.csfcube_dir, args, seed)
    embedder.model.from_bytes(model_bytes)
    args.output.mkdir(parents=True, exist_ok=True)
    nlp.to_disk(args.output)
    log, best_epoch = logs[args.seed], kept[args.seed]
    summary = {"kept_epoch": best_epoch, "keep": args.keep, "best_epoch": best_epoch,
               "kept_dev_map": log[best_epoch]["dev"]["mean"]["MAP"] if select else None,
               "pairs": len(groups), "seconds": round(time.time() - started), "log": log,
               "seeds": {str(s): {"kept_epoch": kept[s], "log": logs[s]} for s in logs},
               "seed_spread": seed_spread(logs, kept) if select else None,
               "args": {k: str(v) for k, v in vars(args).items()}}
    (args.output / "train_log.json").write_text(json.dumps(summary, indent=2))
    print(f"kept epoch {best_epoch} ({args.keep})" + (f": dev MAP {summary['kept_dev_map']:.2f}" if select else "")
          + f"; saved to {args.output}")
    if select and len(logs) > 1:
        spread = summary["seed_spread"]["mean"]
        print(f"dev MAP of the kept epoch over seeds {sorted(logs)}: {spread['mean']:.2f} +- {spread['std']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
