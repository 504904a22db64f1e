"""CL-SciSumm Task 1A, grouped cross-validation of the citance linker's rerank stage.

The 40 manually annotated reference papers (RPs) of ``train-manual`` are split into
``--folds`` groups *by paper* (seeded). For each fold, a ``citance_linker`` pipe is
trained on the 978 ScisummNet papers (weak supervision: their automatic sids) plus the
manual papers of the other folds, then every citance of the fold's papers is scored:
its BM25(+prior) candidates, their BM25 scores and their cross-encoder scores are kept
per citance in the output JSON, so any (k, bm25_weight, threshold) setting can be
evaluated afterwards without re-running the model (``--report``). ``--weak-only``
trains once on ScisummNet alone and scores all 40 manual papers (no manual label used).

Training is the pipe's own ``update`` (listwise loss over gold + hard BM25 negatives),
with Adam and a linear warm-up/decay schedule; this is what ``spacy train`` runs too,
minus its evaluation loop. Meant for a GPU (``--gpu-id 0``); runs on CPU with few steps.

    python benchmarks/citance_linker_cv.py --manual manual.spacy --weak scisummnet.spacy \\
        --fold-ids 0,1 --steps 300 --gpu-id 0 --out fold01.json
    python benchmarks/citance_linker_cv.py --report fold01.json fold234.json [--out summary.json]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import numpy

KS = (1, 2, 3, 4, 5)
WEIGHTS = (0.0, 0.5, 1.0, 2.0, 4.0)


def fold_of(rps: list[str], folds: int, seed: int) -> dict[str, int]:
    """Reference paper -> fold number: a seeded shuffle dealt round-robin."""
    order = sorted(rps)
    random.Random(seed).shuffle(order)
    return {rp: i % folds for i, rp in enumerate(order)}


def load(path: str, nlp) -> list:
    """Reference Docs of a ``.spacy`` file."""
    import scholarly_nlp

    return list(scholarly_nlp.load_docbin(path, nlp.vocab))


def train_linker(nlp_factory, train_docs: list, steps: int, docs_per_step: int, learn_rate: float, seed: int,
                 backbone: str, mixed_precision: bool, candidates: int = 20, log=print):
    """A ``citance_linker`` pipeline trained for ``steps`` steps on ``train_docs``; returns (nlp, seconds)."""
    from spacy.training import Example
    from thinc.api import Adam, warmup_linear

    nlp = nlp_factory()
    nlp.add_pipe("citance_linker", config={"model": {"@architectures": "scholarly_nlp.CrossEncoder.v1",
                                                        "name": backbone, "max_length": 256,
                                                        "mixed_precision": mixed_precision},
                                              "seed": seed, "candidates": candidates})
    examples = [Example(d.copy(), d) for d in train_docs]
    nlp.initialize(lambda: examples[:50])
    optimizer = Adam(learn_rate=warmup_linear(learn_rate, max(1, steps // 10), steps), grad_clip=1.0)
    rng = random.Random(seed)
    start = time.time()
    for step in range(steps):
        batch = rng.sample(examples, min(docs_per_step, len(examples)))
        losses = nlp.update(batch, sgd=optimizer)
        if step % 25 == 0 or step == steps - 1:
            log(f"  step {step:4d} loss {losses['citance_linker']:.4f} {time.time() - start:.0f}s")
    return nlp, time.time() - start


def score_citances(nlp, docs: list) -> list[dict]:
    """Per citance with gold sids: candidate sids, BM25 scores, cross-encoder scores, gold sids."""
    from scholarly_citance_linker.candidates import bm25_candidates, encoder_query, sentence_sids, sentence_texts
    from scholarly_nlp.ml import score_pairs

    pipe = nlp.get_pipe("citance_linker")
    rows = []
    for doc in docs:
        sids, texts = sentence_sids(doc), sentence_texts(doc)
        for citance in doc._.incoming_citances or []:
            if not citance.get("sids"):
                continue
            cands = bm25_candidates(doc, citance["text"], pipe.cfg["candidates"],
                                    position_boost=pipe.cfg["position_boost"], prior_fraction=pipe.cfg["prior_fraction"])
            pairs = [(encoder_query(citance["text"]), texts[i]) for i, _ in cands]
            ce = pipe.model.ops.to_numpy(score_pairs(pipe.model, pairs, 256)).tolist()
            rows.append({"rp": doc._.paper_id, "id": citance["id"], "gold": citance["sids"],
                         "cand": [sids[i] for i, _ in cands], "bm25": [float(b) for _, b in cands], "ce": ce})
    return rows


def evaluate_rows(rows: list[dict], k: int, weight: float, use_ce: bool = True) -> dict:
    """Task 1A micro P/R/F1 (keyed per citance) of one setting over scored citances."""
    from scholarly_citance_linker.candidates import fuse
    from scholarly_nlp.metrics import prf

    tp = fp = fn = 0
    for row in rows:
        final = fuse(row["ce"], row["bm25"], weight) if use_ce else row["bm25"]
        order = sorted(range(len(final)), key=lambda j: (-final[j], j))
        chosen = {row["cand"][j] for j in order[:k]}
        gold = set(row["gold"])
        tp += len(chosen & gold)
        fp += len(chosen - gold)
        fn += len(gold - chosen)
    return {**prf((tp, fp, fn)), "tp": tp, "fp": fp, "fn": fn}


def nested_selection(rows: list[dict], folds: int = 5, seed: int = 0) -> dict:
    """Grouped CV of the setting choice: per fold, pick (k, weight) on the other folds' papers,
    score the fold with it; counts are pooled. Returns BM25+prior (k chosen) and rerank results."""
    from scholarly_nlp.metrics import prf

    fold = fold_of(sorted({r["rp"] for r in rows}), folds, seed)
    grids = {"bm25_prior": [(k, 0.0, False) for k in KS], "rerank": [(k, w, True) for k in KS for w in WEIGHTS]}
    out = {}
    for name, grid in grids.items():
        tp = fp = fn = 0
        chosen = []
        for f in range(folds):
            train = [r for r in rows if fold[r["rp"]] != f]
            test = [r for r in rows if fold[r["rp"]] == f]
            best = max(grid, key=lambda g: evaluate_rows(train, g[0], g[1], use_ce=g[2])["f1"])
            m = evaluate_rows(test, best[0], best[1], use_ce=best[2])
            tp, fp, fn = tp + m["tp"], fp + m["fp"], fn + m["fn"]
            chosen.append({"fold": f, "k": best[0], "weight": best[1]})
        out[name] = {**prf((tp, fp, fn)), "tp": tp, "fp": fp, "fn": fn, "chosen": chosen}
    return out


def report(paths: list[str]) -> dict:
    """Grid of (k, bm25_weight) micro F1 over the scored citances of the given result files."""
    rows, meta = [], []
    for path in paths:
        data = json.loads(Path(path).read_text())
        rows.extend(data["rows"])
        meta.append(data["meta"])
    out = {"n_citances": len(rows), "n_papers": len({r["rp"] for r in rows}), "runs": meta,
           "candidate_recall": sum(len(set(r["cand"]) & set(r["gold"])) for r in rows) / max(1, sum(len(set(r["gold"])) for r in rows)),
           "bm25_prior": {k: evaluate_rows(rows, k, 0.0, use_ce=False) for k in KS},
           "rerank": {f"k={k},w={w}": evaluate_rows(rows, k, w) for k in KS for w in WEIGHTS}}
    best = max(out["rerank"].items(), key=lambda item: item[1]["f1"])
    out["best_rerank"] = {"setting": best[0], **best[1]}
    if out["n_papers"] >= 10:
        out["nested_cv"] = nested_selection(rows)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--manual", help="train-manual reference Docs (.spacy)")
    parser.add_argument("--weak", help="ScisummNet reference Docs (.spacy)")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--fold-ids", default="0,1,2,3,4")
    parser.add_argument("--weak-only", action="store_true", help="also (first) train on ScisummNet alone and score all 40")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--docs-per-step", type=int, default=8)
    parser.add_argument("--manual-repeat", type=int, default=3, help="copies of each manual paper in the training pool")
    parser.add_argument("--learn-rate", type=float, default=3e-5)
    parser.add_argument("--backbone", default="all-MiniLM-L6-v2")
    parser.add_argument("--gpu-id", type=int, default=-1)
    parser.add_argument("--mixed-precision", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--candidates", type=int, default=20, help="BM25 candidates reranked per citance")
    parser.add_argument("--report", nargs="*")
    parser.add_argument("--out", required=False)
    args = parser.parse_args()

    if args.report:
        summary = report(args.report)
        text = json.dumps(summary, indent=2)
        if args.out:
            Path(args.out).write_text(text)
        best = summary["best_rerank"]
        print(f"citances {summary['n_citances']} papers {summary['n_papers']} candidate recall {summary['candidate_recall']:.3f}")
        for k, m in summary["bm25_prior"].items():
            print(f"bm25+prior k={k}: P {m['precision']:.3f} R {m['recall']:.3f} F1 {m['f1']:.3f}")
        for w in WEIGHTS:
            print(f"rerank w={w}: " + "  ".join(f"k={k} {summary['rerank'][f'k={k},w={w}']['f1']:.3f}" for k in KS))
        print(f"best rerank {best['setting']}: F1 {best['f1']:.3f}")
        for name, m in summary.get("nested_cv", {}).items():
            picks = ", ".join(f"k={c['k']} w={c['weight']}" for c in m["chosen"])
            print(f"nested grouped CV {name}: P {m['precision']:.3f} R {m['recall']:.3f} F1 {m['f1']:.3f} ({picks})")
        return

    import importlib

    import spacy
    import scholarly_nlp

    importlib.import_module("scholarly_citance_linker")  # registers the factory where entry points are absent

    if args.gpu_id >= 0:
        from thinc.api import set_gpu_allocator

        spacy.require_gpu(args.gpu_id)
        set_gpu_allocator("pytorch")  # one memory pool for cupy and torch
    numpy.random.seed(args.seed)
    nlp0 = scholarly_nlp.blank()
    manual = load(args.manual, nlp0)
    weak = load(args.weak, nlp0) if args.weak else []
    folds = fold_of([d._.paper_id for d in manual], args.folds, args.seed)
    runs = [("weak-only", weak, manual)] if args.weak_only else []
    for f in [int(x) for x in args.fold_ids.split(",") if x.strip()]:
        train = weak + [d for d in manual if folds[d._.paper_id] != f] * args.manual_repeat
        runs.append((f"fold{f}", train, [d for d in manual if folds[d._.paper_id] == f]))
    rows, meta = [], []
    for name, train, test in runs:
        print(f"{name}: {len(train)} training docs, {len(test)} test papers", flush=True)
        nlp, seconds = train_linker(scholarly_nlp.blank, train, args.steps, args.docs_per_step, args.learn_rate,
                                    args.seed, args.backbone, args.mixed_precision, args.candidates,
                                    log=lambda s: print(s, flush=True))
        t0 = time.time()
        scored = score_citances(nlp, test)
        meta.append({"run": name, "train_docs": len(train), "test_papers": sorted(d._.paper_id for d in test),
                     "steps": args.steps, "train_seconds": seconds, "score_seconds": time.time() - t0,
                     "n_scored": len(scored)})
        rows.extend(scored)
        print(f"{name}: trained {seconds:.0f}s; {json.dumps(evaluate_rows(scored, 2, 0.0))}", flush=True)
        if args.out:  # after every run, so a time limit loses at most the run in progress
            Path(args.out).write_text(json.dumps({"meta": meta, "rows": rows, "folds": folds}))


if __name__ == "__main__":
    sys.exit(main())
