"""CL-SciSumm Task 1A, grouped cross-validation of the citance linker's rerank stage.

The 40 manually annotated reference papers (RPs) of ``train-manual`` are split into
``--folds`` groups *by paper* (seeded). For each fold, a ``citance_linker`` pipe is
trained on the manual papers of the other folds (and, with ``--weak``, the ScisummNet papers,
weak supervision: their automatic sids), then every citance of the fold's papers is scored:
its BM25(+prior) candidates, their BM25 scores and their cross-encoder scores are kept
per citance in the output JSON, so any (k, bm25_weight) setting can be evaluated afterwards
without re-running the model (``--report``). ``--weak-only`` trains once on ScisummNet alone
and scores all 40 manual papers (no manual label used).

The pipe, its model and the optimizer are read from the project's training config
(``--config``, default ``projects/citance_linkage/configs/citance_linker.cfg``) with
``--set section.key=value`` overrides, and trained as ``spacy train`` does: the pipe's own
``update`` (listwise loss over gold + hard BM25 negatives), the config's optimizer and
schedule, ``training.max_steps`` steps of ``training.batcher.size`` papers from a pool
shuffled every pass, no evaluation loop. Meant for a GPU (``--gpu-id 0``); runs on CPU with
few steps.

    python benchmarks/citance_linker_cv.py --manual manual.spacy --gpu-id 0 \\
        --set components.citance_linker.model.lora_rank=16 --out lora.json
    python benchmarks/citance_linker_cv.py --report lora.json [--out summary.json]
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


def parse_override(text: str) -> tuple[str, object]:
    """``section.key=value`` -> (key, value); the value is read as JSON where it parses (spaCy's rule)."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise SystemExit(f"--set needs section.key=value, got {text!r}")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def load_training_config(path: str, overrides: dict):
    """The interpolated training config of ``path`` with ``overrides`` applied first."""
    from spacy.util import load_config

    return load_config(path, overrides=overrides, interpolate=True)


def train_linker(nlp_factory, train_docs: list, config, seed: int, log=print):
    """A ``citance_linker`` pipeline trained on ``train_docs`` as ``spacy train`` would with
    ``config`` (pipe settings, optimizer, ``max_steps``, papers per step); returns (nlp, seconds)."""
    from spacy.training import Example
    from spacy.util import registry

    component = {k: v for k, v in config["components"]["citance_linker"].items() if k != "factory"}
    component["seed"] = seed
    steps = int(config["training"]["max_steps"])
    docs_per_step = int(config["training"]["batcher"]["size"])
    nlp = nlp_factory()
    nlp.add_pipe("citance_linker", config=component)
    examples = [Example(d.copy(), d) for d in train_docs]
    optimizer = registry.resolve({"optimizer": config["training"]["optimizer"]})["optimizer"]
    nlp.initialize(lambda: examples[:50], sgd=optimizer)
    rng = random.Random(seed)
    pool: list = []
    start = time.time()
    for step in range(steps):
        if len(pool) < docs_per_step:  # a new pass over the shuffled training papers
            fresh = examples[:]
            rng.shuffle(fresh)
            pool.extend(fresh)
        batch, pool = pool[:docs_per_step], pool[docs_per_step:]
        losses = nlp.update(batch, sgd=optimizer, drop=float(config["training"]["dropout"]))
        # thinc's schedules advance only when told (spacy train does this after every step);
        # without it the warm-up keeps the learning rate at its first value, 0, for ever.
        optimizer.step_schedules()
        if step % 25 == 0 or step == steps - 1:
            log(f"  step {step:4d} loss {losses['citance_linker']:.4f} {time.time() - start:.0f}s")
    return nlp, time.time() - start


def score_citances(nlp, docs: list) -> list[dict]:
    """Per citance with gold sids: candidate sids, BM25 scores, rerank scores, gold sids.

    A bi-encoder's scores are divided by its ``scale`` (cosines), so that one BM25 weight means
    the same fusion for every scorer, as in the shipped pipeline (scale 1)."""
    from scholarly_citance_linker.candidates import bm25_candidates, encoder_query, sentence_sids, sentence_texts
    from scholarly_nlp.ml import score_pairs

    pipe = nlp.get_pipe("citance_linker")
    scale = float(pipe.model.attrs.get("scale", 1.0))
    rows = []
    for doc in docs:
        sids, texts = sentence_sids(doc), sentence_texts(doc)
        for citance in doc._.incoming_citances or []:
            if not citance.get("sids"):
                continue
            cands = bm25_candidates(doc, citance["text"], pipe.cfg["candidates"],
                                    position_boost=pipe.cfg["position_boost"], prior_fraction=pipe.cfg["prior_fraction"])
            pairs = [(encoder_query(citance["text"]), texts[i]) for i, _ in cands]
            ce = (pipe.model.ops.to_numpy(score_pairs(pipe.model, pairs, 256)) / scale).tolist()
            rows.append({"rp": doc._.paper_id, "id": citance["id"], "gold": citance["sids"],
                         "cand": [sids[i] for i, _ in cands], "bm25": [float(b) for _, b in cands], "ce": ce})
    return rows


def chosen_sids(row: dict, k: int, weight: float, use_ce: bool = True) -> set:
    """The ``k`` sids a setting answers for one scored citance (ties keep BM25 order)."""
    from scholarly_citance_linker.candidates import fuse

    final = fuse(row["ce"], row["bm25"], weight) if use_ce else row["bm25"]
    order = sorted(range(len(final)), key=lambda j: (-final[j], j))
    return {row["cand"][j] for j in order[:k]}


def evaluate_rows(rows: list[dict], k: int, weight: float, use_ce: bool = True) -> dict:
    """Task 1A micro P/R/F1 (keyed per citance) of one setting over scored citances."""
    from scholarly_nlp.metrics import prf

    tp = fp = fn = 0
    for row in rows:
        chosen, gold = chosen_sids(row, k, weight, use_ce), set(row["gold"])
        tp += len(chosen & gold)
        fp += len(chosen - gold)
        fn += len(gold - chosen)
    return {**prf((tp, fp, fn)), "tp": tp, "fp": fp, "fn": fn}


def per_citance_f1(rows: list[dict], k: int, weight: float) -> dict:
    """(paper, citance id) -> the citance's own Task 1A F1 at one setting (the README's "per citance")."""
    out = {}
    for row in rows:
        chosen, gold = chosen_sids(row, k, weight), set(row["gold"])
        out[(row["rp"], row["id"])] = 2 * len(chosen & gold) / (len(chosen) + len(gold)) if chosen or gold else 0.0
    return out


def compare(rows: list[dict], baseline: list[dict], k: int = 3, weight: float = 1.0) -> dict:
    """Paired bootstrap of per-citance F1 (same citances, one fixed setting): rows minus baseline."""
    from scholarly_nlp.metrics import paired_bootstrap

    a, b = per_citance_f1(rows, k, weight), per_citance_f1(baseline, k, weight)
    keys = sorted(set(a) & set(b))
    if not keys:
        raise SystemExit("--versus: the two result sets score no citance in common")
    result = paired_bootstrap([a[key] for key in keys], [b[key] for key in keys])
    return {"k": k, "weight": weight, "n_citances": len(keys), "mean_f1": sum(a[key] for key in keys) / len(keys),
            "baseline_mean_f1": sum(b[key] for key in keys) / len(keys), **result}


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


def load_rows(paths: list[str]) -> tuple[list[dict], list[dict]]:
    """The scored citances and run records of result files."""
    rows, meta = [], []
    for path in paths:
        data = json.loads(Path(path).read_text())
        rows.extend(data["rows"])
        meta.extend(data["meta"])
    return rows, meta


def report(paths: list[str], versus: list[str] = ()) -> dict:
    """Grid of (k, bm25_weight) micro F1 over the scored citances of the given result files;
    with ``versus`` (another scorer's result files), the paired comparison of the two."""
    rows, meta = load_rows(paths)
    out = {"n_citances": len(rows), "n_papers": len({r["rp"] for r in rows}), "runs": meta,
           "candidate_recall": sum(len(set(r["cand"]) & set(r["gold"])) for r in rows) / max(1, sum(len(set(r["gold"])) for r in rows)),
           "bm25_prior": {k: evaluate_rows(rows, k, 0.0, use_ce=False) for k in KS},
           "rerank": {f"k={k},w={w}": evaluate_rows(rows, k, w) for k in KS for w in WEIGHTS}}
    best = max(out["rerank"].items(), key=lambda item: item[1]["f1"])
    out["best_rerank"] = {"setting": best[0], **best[1]}
    if out["n_papers"] >= 10:
        out["nested_cv"] = nested_selection(rows)
    if versus:
        baseline, _ = load_rows(versus)
        out["versus"] = {"files": list(versus), "fixed": compare(rows, baseline),
                         "baseline_fixed_micro_f1": evaluate_rows(baseline, 3, 1.0)["f1"],
                         "fixed_micro_f1": evaluate_rows(rows, 3, 1.0)["f1"]}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--manual", help="train-manual reference Docs (.spacy)")
    parser.add_argument("--weak", help="ScisummNet reference Docs (.spacy)")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--fold-ids", default="0,1,2,3,4")
    parser.add_argument("--weak-only", action="store_true", help="also (first) train on ScisummNet alone and score all 40")
    parser.add_argument("--config", default=str(Path(__file__).resolve().parents[1] / "projects" / "citance_linkage"
                                                   / "configs" / "citance_linker.cfg"),
                        help="the project's training config (pipe, model, optimizer, steps, papers per step)")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="config override, e.g. components.citance_linker.model.lora_rank=16 (repeatable)")
    parser.add_argument("--manual-repeat", type=int, default=3, help="copies of each manual paper in the training pool")
    parser.add_argument("--backbone", default="all-MiniLM-L6-v2")
    parser.add_argument("--gpu-id", type=int, default=-1)
    parser.add_argument("--seed", type=int, default=0, help="seed of the fold assignment and of training")
    parser.add_argument("--report", nargs="*")
    parser.add_argument("--versus", nargs="*", default=[], help="with --report: another scorer's result files, compared paired")
    parser.add_argument("--out", required=False)
    args = parser.parse_args()

    if args.report:
        summary = report(args.report, args.versus)
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
        if "versus" in summary:
            v = summary["versus"]
            c = v["fixed"]
            print(f"k=3, w=1 micro F1 {v['fixed_micro_f1']:.3f} vs {v['baseline_fixed_micro_f1']:.3f}; per-citance F1 "
                  f"{c['mean_f1']:.3f} vs {c['baseline_mean_f1']:.3f}: delta {c['delta']:+.3f} "
                  f"(95% CI {c['ci_low']:+.3f}..{c['ci_high']:+.3f}, p {c['p_value']:.2f}, {c['n_citances']} citances)")
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
    overrides = {"paths.backbone": args.backbone, **dict(parse_override(text) for text in args.set)}
    config = load_training_config(args.config, overrides)
    settings = {"config": Path(args.config).name, "overrides": overrides,
                "steps": int(config["training"]["max_steps"]), "docs_per_step": int(config["training"]["batcher"]["size"]),
                "manual_repeat": args.manual_repeat, "seed": args.seed, "gpu_id": args.gpu_id}
    rows, meta = [], []
    for name, train, test in runs:
        print(f"{name}: {len(train)} training docs, {len(test)} test papers", flush=True)
        nlp, seconds = train_linker(scholarly_nlp.blank, train, config, args.seed, log=lambda s: print(s, flush=True))
        t0 = time.time()
        scored = score_citances(nlp, test)
        meta.append({"run": name, **settings, "train_docs": len(train), "test_papers": sorted(d._.paper_id for d in test),
                     "train_seconds": seconds, "score_seconds": time.time() - t0,
                     "n_scored": len(scored)})
        rows.extend(scored)
        alone, fused = evaluate_rows(scored, 3, 0.0)["f1"], evaluate_rows(scored, 3, 1.0)["f1"]
        print(f"{name}: trained {seconds:.0f}s; Task 1A F1 at k=3: cross-encoder {alone:.3f}, fused with BM25 {fused:.3f}",
              flush=True)
        if args.out:  # after every run, so a time limit loses at most the run in progress
            Path(args.out).write_text(json.dumps({"meta": meta, "rows": rows, "folds": folds}))


if __name__ == "__main__":
    sys.exit(main())
