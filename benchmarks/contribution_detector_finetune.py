"""Contribution-sentence detection with a fine-tuned encoder that reads the whole introduction.

Issue #19: frozen MiniLM embeddings lift TF-IDF + context by two points at most
(``contribution_detector_embeddings.py``); the SemEval-2021 Task 11 leaders fine-tuned their
encoders. This trains the detector's introduction tagger
(``scholarly_contribution_detector.IntroductionTagger.v1``, the sequential sentence classifier of
:mod:`scholarly_nlp.ml.sentence_sequence` that the role tagger also uses: LoRA-adapted
all-MiniLM-L6-v2, each sentence the mean of its hidden states plus its position, a BiLSTM over
the sentences) on the introduction sentences of NLPContributionGraph, with one sigmoid output
per sentence.

An introduction (7 to 56 sentences) is longer than one 512-piece sequence, so it is read in
windows of whole consecutive sentences (:func:`scholarly_nlp.ml.sentence_windows`); the BiLSTM
then runs over all of the introduction's sentences.

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


def tagger_of(args):
    """An unfitted introduction tagger (the detector's ``IntroductionTagger.v1``) with the
    command line's settings, from the packaged MiniLM."""
    from scholarly_contribution_detector.tagger import IntroductionTagger

    return IntroductionTagger(epochs=args.epochs, batch_size=args.batch, learn_rate=args.lr, head_lr_scale=args.head_scale,
                              lora_rank=args.rank, hidden_width=args.hidden, dropout=args.dropout,
                              positive_weight=args.positive_weight, sentence_tokens=args.sentence_tokens,
                              max_length=args.max_length)


def predict(model, intros) -> list[numpy.ndarray]:
    """Per introduction: its sentences' probabilities from a fitted tagger."""
    return model.predict([list(s) for s in intros])


def outcome_of(probs: list[numpy.ndarray], labels: list[numpy.ndarray]) -> numpy.ndarray:
    """Per paper (tp, fp, fn) at threshold 0.5."""
    return numpy.array([counts(y, p >= 0.5) for p, y in zip(probs, labels)])


def summary(outcome: numpy.ndarray) -> dict:
    """Pooled P/R/F1 of per-paper counts."""
    tp, fp, fn = outcome.sum(axis=0)
    return {"precision": float(tp / max(tp + fp, 1)), "recall": float(tp / max(tp + fn, 1)), "f1": f1(outcome.sum(axis=0)),
            "tp": int(tp), "fp": int(fp), "fn": int(fn)}


def fine_tune(seed: int, train_intros, train_labels, args, after_epoch=None):
    """Fine-tune one tagger on introductions (lists of sentences) and their per-sentence labels
    at the fixed schedule of ``args`` (the detector's :func:`fit_introduction_tagger`);
    ``after_epoch(epoch, model, mean_loss)`` is called after each epoch. Returns the model."""
    from scholarly_contribution_detector.tagger import fit_introduction_tagger

    model = tagger_of(args)
    fit_introduction_tagger(model, train_intros, train_labels, seed=seed, device=args.device,
                            after_epoch=None if after_epoch is None else lambda epoch, loss: after_epoch(epoch, model, loss))
    return model


def train_seed(seed: int, train_intros, train_labels, test_intros, test_labels, args) -> tuple[dict, numpy.ndarray]:
    """Fine-tune one model; its held-out summary (and per-epoch log) and per-paper counts."""
    log = []

    def held_out_f1(epoch, model, loss):
        held_out = summary(outcome_of(predict(model, test_intros), test_labels))
        log.append({"epoch": epoch, "train_loss": loss, "held_out_f1": held_out["f1"]})
        print(f"seed {seed} epoch {epoch}: loss {loss:.3f}, held-out F1 {held_out['f1']:.3f} "
              f"(P {held_out['precision']:.3f} R {held_out['recall']:.3f})", flush=True)

    model = fine_tune(seed, train_intros, train_labels, args, held_out_f1)
    outcome = outcome_of(predict(model, test_intros), test_labels)
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
