"""CSFCube (issue 19): does fine-tuning the encoder on the weak pairs beat the frozen MiniLM?

The aspect embedder's head reads a frozen all-MiniLM-L6-v2, and zero-shot MiniLM on the whole
title + abstract is the strongest baseline on the held-back test (.383 against the shipped
head's .375). This benchmark asks the question before any pipeline change: fine-tune every
MiniLM weight on the aspect project's weak pairs (``projects/aspect_embedder/scripts/aspect_pairs.py``:
a ScisummNet paper's title + abstract with the citances others wrote about it, and with
``--cocitations`` the abstracts of two papers cited by one sentence), with the in-batch
contrastive loss sentence-transformers calls MultipleNegativesSymmetricRankingLoss (cosine x
``scale``, cross-entropy against the other positives of the batch, both directions; a pair that
shares a text with the true pair, as co-citation pairs can, is masked out), at a fixed schedule
(no epoch or step is chosen on CSFCube); then rank every CSFCube pool exactly as the
``minilm`` baseline does (mean-pooled whole title + abstract, cosine) with the tuned weights.

Each seed is reported against the frozen model (paired bootstrap of per-query AP over the
query-aspect pairs), and the mean and spread over seeds.

    python benchmarks/aspect_encoder_finetune.py PAIRS.spacy [--seeds 0 1 2] [--epochs 1]
        [--lr 2e-5] [--batch-pairs 32] [--backbone NAME] [--data-dir CSFCUBE_DIR] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DEFAULT_DATA_ROOT, RESULTS_DIR, ensure_repo_on_path, machine_info, write_json  # noqa: E402

ensure_repo_on_path()

GROUP_KEY = "aspect_group"


def text_pairs(pairs_path: Path) -> list[tuple[str, str]]:
    """(anchor text, positive text) of every group of a pairs DocBin, in file order."""
    import scholarly_nlp

    nlp = scholarly_nlp.blank()
    groups: dict = {}
    for doc in scholarly_nlp.load_docbin(pairs_path, nlp.vocab):
        group = (doc._.paper_meta or {}).get(GROUP_KEY)
        if group is not None:
            groups.setdefault(group, []).append(" ".join(doc.text.split()))
    return [(texts[0], texts[1]) for texts in groups.values() if len(texts) >= 2]


def mean_pooled(model, batch):
    """Unit-length mean of the last hidden states over the real tokens (the encoder's pooling)."""
    import torch
    from scholarly_nlp.ml import mean_pool

    pooled = mean_pool(model(**batch).last_hidden_state, batch["attention_mask"])
    return torch.nn.functional.normalize(pooled, dim=-1)


def shared_text_mask(chunk: list[tuple[str, str]]):
    """(n, n) bool tensor: True where pair j is not pair i but shares a text with it (the same
    paper in two co-citation pairs), so it is not counted as a negative of pair i."""
    import torch

    texts = [set(pair) for pair in chunk]
    return torch.tensor([[i != j and bool(texts[i] & texts[j]) for j in range(len(chunk))]
                         for i in range(len(chunk))], dtype=torch.bool)


def fine_tune(encoder, pairs: list[tuple[str, str]], *, seed: int, epochs: int, lr: float, batch_pairs: int,
              scale: float, warmup: float) -> list[float]:
    """Train ``encoder.model`` in place; return the mean loss of each epoch."""
    import torch
    from transformers import get_linear_schedule_with_warmup

    torch.manual_seed(seed)
    rng = random.Random(seed)
    model = encoder.model
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    steps_per_epoch = (len(pairs) + batch_pairs - 1) // batch_pairs
    total = steps_per_epoch * epochs
    schedule = get_linear_schedule_with_warmup(optimizer, int(warmup * total), total)
    losses = []
    for _ in range(epochs):
        order = list(range(len(pairs)))
        rng.shuffle(order)
        model.train()
        epoch_loss = 0.0
        for start in range(0, len(order), batch_pairs):
            chunk = [pairs[i] for i in order[start : start + batch_pairs]]
            if len(chunk) < 2:
                continue
            tokens = encoder.tokenizer([a for a, _ in chunk] + [p for _, p in chunk], padding=True,
                                       truncation=True, max_length=encoder.max_length, return_tensors="pt")
            vectors = mean_pooled(model, {k: v.to(encoder.device) for k, v in tokens.items()})
            anchors, positives = vectors[: len(chunk)], vectors[len(chunk) :]
            logits = (scale * anchors @ positives.T).masked_fill(shared_text_mask(chunk).to(anchors.device),
                                                                 float("-inf"))
            target = torch.arange(len(chunk), device=logits.device)
            loss = (torch.nn.functional.cross_entropy(logits, target)
                    + torch.nn.functional.cross_entropy(logits.T, target)) / 2
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            epoch_loss += float(loss.item()) * len(chunk)
        losses.append(epoch_loss / len(pairs))
    model.eval()
    return losses


def main(argv=None) -> dict:
    """Fine-tune from each seed, rank CSFCube with the frozen and the tuned encoders, write the metrics."""
    from scholarly_aspect_embedder.baselines import MiniLMRanker
    from scholarly_aspect_embedder.csfcube_eval import compare_runs, evaluate_rankers, metrics_table
    from scholarly_nlp.ml import DEFAULT_BACKBONE, SentenceEncoder

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pairs", type=Path, help="a DocBin written by projects/aspect_embedder/scripts/aspect_pairs.py")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--lr", type=float, default=2e-5)
    parser.add_argument("--batch-pairs", type=int, default=32)
    parser.add_argument("--scale", type=float, default=20.0)
    parser.add_argument("--warmup", type=float, default=0.1, help="share of the steps spent warming up")
    parser.add_argument("--max-length", type=int, default=256)
    parser.add_argument("--backbone", default=DEFAULT_BACKBONE)
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_ROOT / "csfcube")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "aspect_encoder_finetune.json")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    pairs = text_pairs(args.pairs)
    print(f"{len(pairs)} training pairs from {args.pairs}", flush=True)
    results = {"frozen": evaluate_rankers(args.data_dir, {"frozen": MiniLMRanker(
        encoder=SentenceEncoder(args.backbone, max_length=args.max_length))})["frozen"]}
    runs = {}
    for seed in args.seeds:
        encoder = SentenceEncoder(args.backbone, max_length=args.max_length)
        seed_started = time.perf_counter()
        losses = fine_tune(encoder, pairs, seed=seed, epochs=args.epochs, lr=args.lr, batch_pairs=args.batch_pairs,
                           scale=args.scale, warmup=args.warmup)
        name = f"tuned_seed{seed}"
        results[name] = evaluate_rankers(args.data_dir, {name: MiniLMRanker(encoder=encoder)})[name]
        runs[name] = {"seed": seed, "epoch_losses": losses, "train_seconds": round(time.perf_counter() - seed_started, 1),
                      "vs_frozen": compare_runs(results[name], results["frozen"])}
        print(f"seed {seed}: losses {[round(x, 3) for x in losses]}, all MAP {results[name]['all']['MAP']:.2f} "
              f"(frozen {results['frozen']['all']['MAP']:.2f})", flush=True)
    maps = [results[name]["all"]["MAP"] for name in runs]
    spread = {"mean": statistics.fmean(maps), "std": statistics.stdev(maps) if len(maps) > 1 else None, "values": maps}
    write_json(args.out, {"benchmark": "aspect_encoder_finetune", "pairs": str(args.pairs), "n_pairs": len(pairs),
                          "settings": {k: str(v) for k, v in vars(args).items()}, "results": results, "runs": runs,
                          "all_map_over_seeds": spread, "seconds": round(time.perf_counter() - started, 1),
                          "machine": machine_info()})
    print(metrics_table(results))
    for name, run in runs.items():
        b = run["vs_frozen"]
        print(f"{name} vs frozen, all MAP: {b['delta']:+.2f} [{b['ci_low']:+.2f}, {b['ci_high']:+.2f}] p={b['p_value']:.2f}")
    spread_text = f" +- {spread['std']:.2f}" if spread["std"] is not None else " (one seed)"
    print(f"all MAP over seeds: {spread['mean']:.2f}{spread_text}\nwritten {args.out}")
    return results


if __name__ == "__main__":
    main()
