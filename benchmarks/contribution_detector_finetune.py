"""Contribution-sentence detection with a fine-tuned encoder that reads the whole introduction.

Issue #19: frozen MiniLM embeddings lift TF-IDF + context by two points at most
(``contribution_detector_embeddings.py``); the SemEval-2021 Task 11 leaders fine-tuned their
encoders. This trains the sequential sentence classifier of the role tagger
(:mod:`scholarly_facet_classifier.role_encoder`: LoRA-adapted all-MiniLM-L6-v2, each sentence
the mean of its hidden states plus its position, a BiLSTM over the sentences) on the
introduction sentences of NLPContributionGraph, with one sigmoid output per sentence.

An introduction (7 to 56 sentences) is longer than one 512-piece sequence, so it is read in
windows of whole consecutive sentences (:func:`introduction_windows`); the BiLSTM then runs
over all of the introduction's sentences.

Protocol: the project's split (``grouped_split``: 142 training papers, 35 held-out papers, the
papers of ``evaluate-detector``'s project run); a fixed schedule (``--epochs``, AdamW with
warm-up and linear decay, the last epoch kept: nothing is chosen on the held-out papers);
weighted binary cross-entropy (positives x ``--positive-weight``, the shipped detector's 4.5)
and threshold 0.5. Reported on the held-out papers for each seed: pooled P/R/F1; the mean and
spread over seeds; a paired bootstrap over papers (2,000 resamples) of the F1 difference to
the ``tfidf_lr + context`` baseline (C chosen by grouped CV on the training papers).
Held-out F1 per epoch is logged, not used.

    python benchmarks/contribution_detector_finetune.py [--seeds 0 1 2] [--epochs 4] [--device cpu] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DEFAULT_DATA_ROOT, RESULTS_DIR, ensure_repo_on_path, machine_info, markdown_table, write_json  # noqa: E402

ensure_repo_on_path()

from contribution_detector_embeddings import FEATURE_SETS, choose_c, counts, f1, fit_predict, ncg_split  # noqa: E402

BOOTSTRAP = 2000


def introduction_windows(tokenizer, sentences, sentence_tokens: int, max_length: int):
    """Word-piece windows ``[CLS] s_i [SEP] s_i+1 [SEP] ...`` of whole consecutive sentences
    (each cut to ``sentence_tokens`` pieces) and each sentence's ``(window, start, end)``."""
    windows, spans = [[tokenizer.cls_token_id]], []
    for sentence in sentences:
        piece = (tokenizer(sentence, add_special_tokens=False)["input_ids"] or [tokenizer.unk_token_id])[:sentence_tokens]
        if len(windows[-1]) + len(piece) + 1 > max_length:
            windows.append([tokenizer.cls_token_id])
        window = windows[-1]
        spans.append((len(windows) - 1, len(window), len(window) + len(piece)))
        window.extend(piece)
        window.append(tokenizer.sep_token_id)
    return windows, spans


def batch_inputs(tokenizer, intros, sentence_tokens: int, max_length: int, device: str = "cpu"):
    """Torch inputs of a batch of introductions (lists of sentences), on ``device``."""
    import torch

    from scholarly_facet_classifier.role_model import position_features

    encoded = [introduction_windows(tokenizer, s, sentence_tokens, max_length) for s in intros]
    all_windows = [w for windows, _ in encoded for w in windows]
    length = max(len(w) for w in all_windows)
    most = max(len(spans) for _, spans in encoded)
    input_ids = numpy.zeros((len(all_windows), length), dtype="int64")
    mask = numpy.zeros_like(input_ids)
    for row, window in enumerate(all_windows):
        input_ids[row, : len(window)] = window
        mask[row, : len(window)] = 1
    pooling = numpy.zeros((len(encoded), most, len(all_windows) * length), dtype="float32")
    positions = numpy.zeros((len(encoded), most, 3), dtype="float32")
    first_window = 0
    for d, (windows, spans) in enumerate(encoded):
        for k, (w, start, end) in enumerate(spans):
            offset = (first_window + w) * length
            pooling[d, k, offset + start : offset + end] = 1.0 / (end - start)
        positions[d, : len(spans)] = position_features(len(spans))
        first_window += len(windows)
    lengths = numpy.asarray([len(spans) for _, spans in encoded], dtype="int64")
    arrays = dict(input_ids=input_ids, attention_mask=mask, pooling=pooling, positions=positions, lengths=lengths)
    # pack_padded_sequence wants its lengths on the CPU
    return {key: torch.from_numpy(value) if key == "lengths" else torch.from_numpy(value).to(device)
            for key, value in arrays.items()}


def build_module(seed: int, rank: int, hidden: int, dropout: float):
    """LoRA-wrapped MiniLM and a BiLSTM sentence head with one output, and the tokenizer."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    from scholarly_nlp.ml import add_lora, resolve_backbone

    torch.manual_seed(seed)
    source = resolve_backbone(None)
    encoder = add_lora(AutoModel.from_pretrained(source), rank, dropout=dropout)
    tokenizer = AutoTokenizer.from_pretrained(source)

    class IntroductionTagger(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = encoder
            self.project = torch.nn.Sequential(torch.nn.Linear(encoder.config.hidden_size + 3, hidden),
                                               torch.nn.LayerNorm(hidden), torch.nn.GELU(), torch.nn.Dropout(dropout))
            self.lstm = torch.nn.LSTM(hidden, hidden // 2, batch_first=True, bidirectional=True)
            self.out = torch.nn.Sequential(torch.nn.Dropout(dropout), torch.nn.Linear(hidden, 1))

        def forward(self, input_ids, attention_mask, pooling, positions, lengths):
            states = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
            flat = states.reshape(-1, states.shape[-1])
            sentences = torch.cat([torch.matmul(pooling, flat), positions], dim=-1)
            packed = torch.nn.utils.rnn.pack_padded_sequence(self.project(sentences), lengths, batch_first=True,
                                                             enforce_sorted=False)
            context, _ = self.lstm(packed)
            context, _ = torch.nn.utils.rnn.pad_packed_sequence(context, batch_first=True,
                                                                total_length=pooling.shape[1])
            return self.out(context).squeeze(-1)

    return IntroductionTagger(), tokenizer


def predict(module, tokenizer, intros, args) -> list[numpy.ndarray]:
    """Per introduction: its sentences' probabilities."""
    import torch

    module.eval()
    out = []
    with torch.no_grad():
        for start in range(0, len(intros), args.batch):
            chunk = intros[start : start + args.batch]
            logits = module(**batch_inputs(tokenizer, chunk, args.sentence_tokens, args.max_length, args.device))
            probs = torch.sigmoid(logits).cpu().numpy()
            out.extend(probs[i, : len(s)] for i, s in enumerate(chunk))
    return out


def outcome_of(probs: list[numpy.ndarray], labels: list[numpy.ndarray]) -> numpy.ndarray:
    """Per paper (tp, fp, fn) at threshold 0.5."""
    return numpy.array([counts(y, p >= 0.5) for p, y in zip(probs, labels)])


def summary(outcome: numpy.ndarray) -> dict:
    """Pooled P/R/F1 of per-paper counts."""
    tp, fp, fn = outcome.sum(axis=0)
    return {"precision": float(tp / max(tp + fp, 1)), "recall": float(tp / max(tp + fn, 1)), "f1": f1(outcome.sum(axis=0)),
            "tp": int(tp), "fp": int(fp), "fn": int(fn)}


def fine_tune(seed: int, train_intros, train_labels, args, after_epoch=None):
    """Fine-tune one model on introductions (lists of sentences) and their per-sentence labels
    at the fixed schedule of ``args``; ``after_epoch(epoch, module, tokenizer, mean_loss)`` is
    called after each epoch. Returns ``(module, tokenizer)``."""
    import torch

    module, tokenizer = build_module(seed, args.rank, args.hidden, args.dropout)
    module.to(args.device)
    head = [p for n, p in module.named_parameters() if not n.startswith("encoder.") and p.requires_grad]
    adapters = [p for n, p in module.named_parameters() if n.startswith("encoder.") and p.requires_grad]
    optimizer = torch.optim.AdamW([{"params": adapters, "lr": args.lr}, {"params": head, "lr": args.lr * args.head_scale}],
                                  weight_decay=0.01)
    steps_per_epoch = -(-len(train_intros) // args.batch)
    total = steps_per_epoch * args.epochs
    warmup = max(1, total // 10)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min((step + 1) / warmup, max(0.0, (total - step) / max(total - warmup, 1))))
    rng = numpy.random.default_rng(seed)
    for epoch in range(args.epochs):
        module.train()
        order = rng.permutation(len(train_intros))
        losses = []
        for start in range(0, len(order), args.batch):
            chosen = order[start : start + args.batch]
            intros = [train_intros[i] for i in chosen]
            logits = module(**batch_inputs(tokenizer, intros, args.sentence_tokens, args.max_length, args.device))
            target = torch.zeros_like(logits)
            mask = torch.zeros_like(logits)
            for row, i in enumerate(chosen):
                target[row, : len(train_labels[i])] = torch.from_numpy(train_labels[i].astype("float32")).to(args.device)
                mask[row, : len(train_labels[i])] = 1.0
            weight = mask * torch.where(target > 0.5, args.positive_weight, 1.0)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, target, weight=weight, reduction="sum")
            loss = loss / mask.sum()
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(module.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            losses.append(float(loss))
        if after_epoch is not None:
            after_epoch(epoch + 1, module, tokenizer, float(numpy.mean(losses)))
    return module, tokenizer


def train_seed(seed: int, train_intros, train_labels, test_intros, test_labels, args) -> tuple[dict, numpy.ndarray]:
    """Fine-tune one model; its held-out summary (and per-epoch log) and per-paper counts."""
    log = []

    def held_out_f1(epoch, module, tokenizer, loss):
        held_out = summary(outcome_of(predict(module, tokenizer, test_intros, args), test_labels))
        log.append({"epoch": epoch, "train_loss": loss, "held_out_f1": held_out["f1"]})
        print(f"seed {seed} epoch {epoch}: loss {loss:.3f}, held-out F1 {held_out['f1']:.3f} "
              f"(P {held_out['precision']:.3f} R {held_out['recall']:.3f})", flush=True)

    module, tokenizer = fine_tune(seed, train_intros, train_labels, args, held_out_f1)
    outcome = outcome_of(predict(module, tokenizer, test_intros, args), test_labels)
    return {**summary(outcome), "epochs": log}, outcome


def tfidf_context_outcome(train, held_out, rows_of) -> tuple[dict, numpy.ndarray]:
    """The ``tfidf_lr + context`` baseline's per-paper counts on the held-out papers."""
    spec = FEATURE_SETS["tfidf_context"]
    empty = {pid: numpy.zeros((len(rows), 1), dtype="float32") for pid, rows in rows_of.items()}
    c = choose_c(train, rows_of, empty, spec)
    test_ids = [p.paper_id for p in held_out]
    probs = fit_predict([r for p in train for r in rows_of[p.paper_id]], None,
                        [r for pid in test_ids for r in rows_of[pid]], None, spec, c)
    split, start = [], 0
    for pid in test_ids:
        split.append(probs[start : start + len(rows_of[pid])])
        start += len(rows_of[pid])
    outcome = outcome_of(split, [numpy.array([r.label for r in rows_of[pid]], dtype=bool) for pid in test_ids])
    return {"C": c, **summary(outcome)}, outcome


def settings_parser(description: str) -> argparse.ArgumentParser:
    """A command line with the fine-tuning settings (the fixed schedule, the model's sizes,
    ``--device``: ``cpu`` or a torch CUDA device such as ``cuda:0``)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--head-scale", type=float, default=2.0)
    parser.add_argument("--rank", type=int, default=16)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--positive-weight", type=float, default=4.5)
    parser.add_argument("--sentence-tokens", type=int, default=64)
    parser.add_argument("--max-length", type=int, default=512)
    parser.add_argument("--device", default="cpu")
    return parser


def main(argv=None) -> dict:
    """Command line (see the module docstring)."""
    parser = settings_parser(__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA_ROOT)
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "contribution_detector_finetune.json")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    started = time.perf_counter()

    _, train, held_out, rows_of = ncg_split(args.data)
    intros = {pid: [r.sentence for r in rows] for pid, rows in rows_of.items()}
    labels = {pid: numpy.array([r.label for r in rows], dtype=bool) for pid, rows in rows_of.items()}
    train_ids = [p.paper_id for p in train if rows_of[p.paper_id]]
    test_ids = [p.paper_id for p in held_out if rows_of[p.paper_id]]

    baseline, base_outcome = tfidf_context_outcome(train, held_out, rows_of)
    report = {"n_train_papers": len(train_ids), "n_held_out_papers": len(test_ids),
              "settings": {k: v for k, v in vars(args).items() if k not in ("data", "out")},
              "tfidf_context": baseline, "seeds": {}}
    outcomes = []
    for seed in args.seeds:
        seed_started = time.perf_counter()
        result, outcome = train_seed(seed, [intros[p] for p in train_ids], [labels[p] for p in train_ids],
                                     [intros[p] for p in test_ids], [labels[p] for p in test_ids], args)
        result["seconds"] = round(time.perf_counter() - seed_started, 1)
        report["seeds"][str(seed)] = result
        outcomes.append(outcome)
    scores = numpy.array([report["seeds"][str(s)]["f1"] for s in args.seeds])
    report["f1_mean"], report["f1_std"] = float(scores.mean()), float(scores.std(ddof=1)) if len(scores) > 1 else 0.0
    rng = numpy.random.default_rng(0)
    samples = rng.integers(0, len(test_ids), size=(BOOTSTRAP, len(test_ids)))
    # The seeds' mean F1 against the baseline, resampling the same papers for both.
    deltas = numpy.array([numpy.mean([f1(o[s].sum(axis=0)) for o in outcomes]) - f1(base_outcome[s].sum(axis=0))
                          for s in samples])
    report["vs_tfidf_context"] = {"delta": report["f1_mean"] - baseline["f1"], "ci_low": float(numpy.quantile(deltas, 0.025)),
                                  "ci_high": float(numpy.quantile(deltas, 0.975)), "p_not_better": float((deltas <= 0).mean())}
    report["seconds"] = round(time.perf_counter() - started, 1)
    report["machine"] = machine_info()
    write_json(args.out, report)
    rows = [["tfidf_lr + context", f"{baseline['precision']:.3f}", f"{baseline['recall']:.3f}", f"{baseline['f1']:.3f}"]]
    rows += [[f"fine-tuned, seed {s}", f"{r['precision']:.3f}", f"{r['recall']:.3f}", f"{r['f1']:.3f}"]
             for s, r in report["seeds"].items()]
    print(markdown_table(["system", "P", "R", "F1"], rows))
    vs = report["vs_tfidf_context"]
    print(f"fine-tuned mean F1 {report['f1_mean']:.3f} +- {report['f1_std']:.3f}; vs tfidf_context "
          f"{vs['delta']:+.3f} [{vs['ci_low']:+.3f}, {vs['ci_high']:+.3f}]")
    return report


if __name__ == "__main__":
    main()
