"""Sentence roles: how far does fine-tuning the encoder lift the tagger above the frozen one?

The shipped ``sentence_role_tagger`` reads the shared, frozen MiniLM (CSAbstruct dev accuracy
.62). Issue #19 asks for a fine-tuned encoder. Before building it into the component (its own
LoRA adapter beside the shared transformer, so that the aspect space does not move), this
measures what fine-tuning gives on a fixed schedule, on CPU or GPU:

* the whole abstract is one sequence: ``[CLS] s1 [SEP] s2 [SEP] ...`` (each sentence cut to
  ``--sentence-tokens`` word pieces so that every sentence of an abstract fits), so every
  sentence's token vectors see its neighbours (the "sequential sentence classification" set-up
  of Cohan et al. 2019, who introduced CSAbstruct);
* sentence vector = the mean of its hidden states + three position features (relative position,
  first, last), a LayerNorm-ed projection, a bidirectional LSTM over the abstract's sentences
  and a linear layer over the five roles (the head of the shipped tagger);
* ``--mode lora``: LoRA adapters of rank ``--rank`` on the attention and dense projections
  (what would ship: a few MB); ``--mode full``: every encoder weight trains (88 MB, never
  shipped; the ceiling); ``--mode frozen``: the head alone on the frozen encoder.

AdamW, linear warm-up (10%) and decay over ``--epochs`` epochs, batches of ``--batch-size``
abstracts; no model selection (the schedule is fixed before seeing dev). Reported after each
epoch on CSAbstruct dev: accuracy and macro-F1 (``role_metrics`` of the component), and seconds.

    python benchmarks/role_tagger_finetune.py [--mode lora|full|frozen] [--epochs 2] [--seed 0]
        [--backbone all-MiniLM-L6-v2] [--device cpu|cuda] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import numpy

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DEFAULT_DATA_ROOT, RESULTS_DIR, ensure_repo_on_path, machine_info, write_json  # noqa: E402

ensure_repo_on_path()


def read_abstracts(path: Path) -> list[dict]:
    """CSAbstruct records: ``{"sentences": [...], "labels": [...]}`` per abstract."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def build_model(backbone: str, mode: str, rank: int, n_labels: int, hidden: int = 128):
    """The encoder (frozen, LoRA-adapted or fully trainable) and the sentence-sequence head."""
    import torch
    from transformers import AutoModel

    from scholarly_nlp.ml import resolve_backbone
    from scholarly_nlp.ml import add_lora

    encoder = AutoModel.from_pretrained(resolve_backbone(backbone))
    if mode == "lora":
        encoder = add_lora(encoder, rank)
    elif mode == "frozen":
        encoder.requires_grad_(False)
    width = encoder.config.hidden_size

    class Head(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.project = torch.nn.Sequential(torch.nn.Linear(width + 3, hidden), torch.nn.LayerNorm(hidden),
                                               torch.nn.GELU(), torch.nn.Dropout(0.1))
            self.lstm = torch.nn.LSTM(hidden, hidden // 2, batch_first=True, bidirectional=True)
            self.out = torch.nn.Sequential(torch.nn.Dropout(0.1), torch.nn.Linear(hidden, n_labels))

        def forward(self, sentence_vectors):  # (batch, sentences, width + 3), zero-padded
            return self.out(self.lstm(self.project(sentence_vectors))[0])

    return encoder, Head()


def sentence_logits(encoder, head, batch: list[tuple[list[int], list[tuple[int, int]]]], device):
    """Per abstract of ``batch``: a (sentences, labels) logit tensor."""
    import torch
    from scholarly_facet_classifier.role_model import position_features

    length = max(len(ids) for ids, _ in batch)
    input_ids = torch.zeros((len(batch), length), dtype=torch.long)
    mask = torch.zeros((len(batch), length), dtype=torch.long)
    for row, (ids, _) in enumerate(batch):
        input_ids[row, : len(ids)] = torch.tensor(ids)
        mask[row, : len(ids)] = 1
    hidden = encoder(input_ids=input_ids.to(device), attention_mask=mask.to(device)).last_hidden_state
    most = max(len(spans) for _, spans in batch)
    vectors = torch.zeros((len(batch), most, hidden.shape[-1] + 3), device=device)
    for row, (_, spans) in enumerate(batch):
        for k, (start, end) in enumerate(spans):
            vectors[row, k, : hidden.shape[-1]] = hidden[row, start:end].mean(dim=0)
        vectors[row, : len(spans), hidden.shape[-1]:] = torch.from_numpy(position_features(len(spans))).to(device)
    logits = head(vectors)
    return [logits[row, : len(spans)] for row, (_, spans) in enumerate(batch)]


def evaluate(encoder, head, encoded: list, labels: list[list[str]], roles: list[str], device, batch_size: int) -> dict:
    """Accuracy and macro-F1 on ``encoded`` abstracts (the component's ``role_metrics``)."""
    import torch
    from scholarly_facet_classifier.role_tagger import role_metrics

    encoder.eval()
    head.eval()
    predicted = []
    with torch.no_grad():
        for start in range(0, len(encoded), batch_size):
            for logits in sentence_logits(encoder, head, encoded[start : start + batch_size], device):
                predicted.extend(roles[i] for i in logits.argmax(dim=-1).tolist())
    gold = [label for abstract in labels for label in abstract]
    metrics = role_metrics(gold, predicted, roles)
    return {"accuracy": metrics["accuracy"], "macro_f1": metrics["macro_f1"], "kappa": metrics["kappa"]}


def main(argv=None) -> dict:
    """Command line (see the module docstring)."""
    import torch
    from transformers import AutoTokenizer

    from scholarly_facet_classifier.role_encoder import encode_abstract
    from scholarly_nlp import ROLES
    from scholarly_nlp.ml import resolve_backbone

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA_ROOT)
    parser.add_argument("--mode", choices=("lora", "full", "frozen"), default="lora")
    parser.add_argument("--rank", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--lr", type=float, default=None, help="encoder learning rate (default: 5e-4 LoRA, 3e-5 full)")
    parser.add_argument("--head-lr", type=float, default=1e-3)
    parser.add_argument("--sentence-tokens", type=int, default=64)
    parser.add_argument("--max-length", type=int, default=512)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit", type=int, default=None, help="train on the first N abstracts only (smoke runs)")
    parser.add_argument("--backbone", default="all-MiniLM-L6-v2")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    out = args.out or RESULTS_DIR / f"role_tagger_finetune_{args.mode}_seed{args.seed}.json"

    random.seed(args.seed)
    torch.manual_seed(args.seed)
    device = torch.device(args.device)
    roles = list(ROLES)
    tokenizer = AutoTokenizer.from_pretrained(resolve_backbone(args.backbone))
    train = read_abstracts(args.data / "csabstruct" / "train.jsonl")[: args.limit]
    dev = read_abstracts(args.data / "csabstruct" / "dev.jsonl")
    encode = lambda records: [encode_abstract(tokenizer, r["sentences"], args.sentence_tokens, args.max_length) for r in records]  # noqa: E731
    train_encoded, dev_encoded = encode(train), encode(dev)
    train_targets = [torch.tensor([roles.index(label) for label in r["labels"]]) for r in train]

    encoder, head = build_model(args.backbone, args.mode, args.rank, len(roles))
    encoder.to(device)
    head.to(device)
    encoder_lr = args.lr if args.lr is not None else (5e-4 if args.mode == "lora" else 3e-5)
    groups = [{"params": list(head.parameters()), "lr": args.head_lr}]
    trainable = [p for p in encoder.parameters() if p.requires_grad]
    if trainable:
        groups.append({"params": trainable, "lr": encoder_lr})
    optimizer = torch.optim.AdamW(groups, weight_decay=0.01)
    steps_per_epoch = (len(train) + args.batch_size - 1) // args.batch_size
    total = steps_per_epoch * args.epochs
    warmup = max(1, total // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min((step + 1) / warmup, max(0.0, (total - step) / max(1, total - warmup))))

    report = {"mode": args.mode, "rank": args.rank if args.mode == "lora" else None, "backbone": args.backbone,
              "seed": args.seed, "epochs": args.epochs, "batch_size": args.batch_size, "encoder_lr": encoder_lr,
              "head_lr": args.head_lr, "train_abstracts": len(train), "dev_abstracts": len(dev),
              "trainable_parameters": sum(p.numel() for p in list(head.parameters()) + trainable),
              "device": str(device), "epochs_dev": []}
    started = time.perf_counter()
    step = 0
    for epoch in range(args.epochs):
        order = list(range(len(train)))
        random.shuffle(order)
        encoder.train(args.mode != "frozen")
        head.train()
        running = []
        for start in range(0, len(order), args.batch_size):
            rows = order[start : start + args.batch_size]
            logits = sentence_logits(encoder, head, [train_encoded[i] for i in rows], device)
            loss = torch.nn.functional.cross_entropy(torch.cat(logits), torch.cat([train_targets[i] for i in rows]).to(device))
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_([p for g in groups for p in g["params"]], 1.0)
            optimizer.step()
            schedule.step()
            step += 1
            running.append(loss.item())
            if step % 25 == 0:
                print(f"step {step}/{total} loss {numpy.mean(running[-25:]):.3f} "
                      f"{(time.perf_counter() - started) / step:.2f} s/step", flush=True)
        metrics = evaluate(encoder, head, dev_encoded, [r["labels"] for r in dev], roles, device, 2 * args.batch_size)
        metrics.update({"epoch": epoch + 1, "train_loss": float(numpy.mean(running)),
                        "seconds": round(time.perf_counter() - started, 1)})
        report["epochs_dev"].append(metrics)
        print(f"epoch {epoch + 1}: dev accuracy {metrics['accuracy']:.3f} macro-F1 {metrics['macro_f1']:.3f} "
              f"({metrics['seconds']:.0f} s)", flush=True)
        write_json(out, {**report, "machine": machine_info()})
    report["machine"] = machine_info()
    write_json(out, report)
    return report


if __name__ == "__main__":
    main()
