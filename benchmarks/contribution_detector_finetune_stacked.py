"""Contribution-sentence detection: does a fine-tuned introduction tagger, stacked in, lift the detector?

Issue #19: the shipped detector stacks two stage-1 scorers (TextCatBOW and the
``embedding_context`` logistic regression over frozen MiniLM vectors) under boosted trees that
also read each sentence's cosines to the title and the abstract
(``contribution_detector_abstract.py``). A fine-tuned encoder is what the SemEval-2021 Task 11
leaders used; alone, the sequential tagger of ``contribution_detector_finetune.py`` (LoRA
MiniLM over the whole introduction, a BiLSTM over its sentences) is below the stack (0.603 +-
0.015 over 3 seeds against 0.643). Its errors may still differ from the other two scorers'. This measures
it as a third stage-1 scorer on the same 142 / 35 split:

* per fold seed (``--seeds``), the tagger is fine-tuned once per grouped fold of the training
  papers (the folds the other scorers' out-of-fold scores use) and scores the papers of its
  fold, so stage 2 learns from out-of-fold probabilities of all three scorers; the held-out
  papers get the mean of the fold models' probabilities (no sixth fine-tuning; a mean is less
  spread than one model's scores, which the trees' 0.5-based relations see, and the held-out
  ``tagger alone`` is that five-model mean, not comparable with one fine-tuned model);
* ``two scorers`` (as shipped, with the abstract columns) and ``three scorers`` (plus the
  tagger's probabilities and their relations to the introduction) are fitted on the same folds
  and trees seed; reported per variant: the out-of-fold F1 on the training papers (what a choice
  may read) and the held-out F1, their mean and spread over seeds, the tagger alone (out of fold
  and held out), the per-seed differences and a paired bootstrap over the held-out papers of the
  F1 of all seeds' counts pooled (papers resampled; the seeds' spread is in the per-seed
  differences, not in its interval).

Cost: five fine-tunings per seed, ~20 min each on 2 CPU cores (measured 2026-11-30; the
machine's speed varies: a 142-paper fine-tuning took 10-13 min on 2026-11-27); ``--device
cuda:0`` runs them on a GPU (not yet measured).

    python benchmarks/contribution_detector_finetune_stacked.py [--data DIR] [--seeds 0 1 2] [--device cpu]
        [--out FILE.json] [fine-tuning settings of contribution_detector_finetune.py]
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DEFAULT_DATA_ROOT, RESULTS_DIR  # noqa: E402
from contribution_detector_abstract import EMBEDDING, abstract_stacker  # noqa: E402
from contribution_detector_finetune import fine_tune, predict, settings_parser  # noqa: E402
from contribution_detector_stacking import out_of_fold, pooled, summary  # noqa: E402
from contribution_detector_stacking_bow import BOW  # noqa: E402

VARIANTS = ("two scorers", "three scorers")


def tagger_scores(folds, train_ids, held_ids, rows_of, seed: int, args) -> tuple[dict, dict]:
    """The fine-tuned tagger's out-of-fold probabilities of the training papers (one
    fine-tuning per fold) and the held-out papers' mean over the fold models."""
    intros = {pid: [r.sentence for r in rows_of[pid]] for pid in [*train_ids, *held_ids]}
    labels = {pid: numpy.array([r.label for r in rows_of[pid]], dtype=bool) for pid in intros}
    oof, held = {}, {pid: [] for pid in held_ids}
    for k, fold in enumerate(folds):
        fitted = [pid for pid in train_ids if pid not in fold]
        scored = [pid for pid in train_ids if pid in fold]
        started = time.perf_counter()
        model = fine_tune(seed, [intros[p] for p in fitted], [labels[p] for p in fitted], args)
        for pid, probs in zip(scored, predict(model, [intros[p] for p in scored])):
            oof[pid] = numpy.asarray(probs, dtype=numpy.float64)
        for pid, probs in zip(held_ids, predict(model, [intros[p] for p in held_ids])):
            held[pid].append(numpy.asarray(probs, dtype=numpy.float64))
        print(f"seed {seed} fold {k}: {len(fitted)} papers fitted, {time.perf_counter() - started:.0f} s", flush=True)
    return oof, {pid: numpy.mean(runs, axis=0) for pid, runs in held.items()}


def main(argv=None) -> dict:
    """Command line (see the module docstring)."""
    from _common import machine_info, markdown_table, write_json
    from contribution_detector_embeddings import f1
    from contribution_detector_stacking import paired_bootstrap
    from scholarly_contribution_detector.data import grouped_folds

    parser = settings_parser(__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA_ROOT)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "contribution_detector_finetune_stacked.json")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    started = time.perf_counter()
    stacker, train, contexts, held_stage1 = abstract_stacker(args.data)
    stacker.context = contexts["abstract"]  # the shipped stage 2 reads the abstract
    train_ids, held_ids, rows_of = stacker.train_ids, stacker.held_ids, stacker.rows_of
    runs = {name: {} for name in (*VARIANTS, "tagger alone")}
    for seed in args.seeds:
        folds = grouped_folds(train, k=5, seed=seed)
        oof = [out_of_fold(train_ids, folds, lambda tr, te, name=name: stacker.stage1(name, tr, te)) for name in (EMBEDDING, BOW)]
        tagger_oof, tagger_held = tagger_scores(folds, train_ids, held_ids, rows_of, seed, args)
        inputs = {"two scorers": (oof, held_stage1), "three scorers": ([*oof, tagger_oof], [*held_stage1, tagger_held])}
        for name, (train_in, held_in) in inputs.items():
            cv = out_of_fold(train_ids, folds, lambda tr, te: stacker.stage2(train_in, tr, te, train_in, False, "fast", seed))
            held = stacker.stage2(train_in, train_ids, held_ids, held_in, False, "fast", seed)
            runs[name][seed] = {"train_cv_f1": f1(pooled(train_ids, rows_of, cv).sum(axis=0)),
                                "held_out": pooled(held_ids, rows_of, held)}
        runs["tagger alone"][seed] = {"train_cv_f1": f1(pooled(train_ids, rows_of, tagger_oof).sum(axis=0)),
                                      "held_out": pooled(held_ids, rows_of, tagger_held)}
        print(seed, {name: round(f1(r[seed]["held_out"].sum(axis=0)), 3) for name, r in runs.items()}, flush=True)
    report = {"n_train_papers": len(train_ids), "n_held_out_papers": len(held_ids), "seeds": list(args.seeds),
              "settings": {k: v for k, v in vars(args).items() if k not in ("data", "out", "seeds")}, "variants": {}}
    for name, by_seed in runs.items():
        held = numpy.array([f1(by_seed[s]["held_out"].sum(axis=0)) for s in args.seeds])
        cv = numpy.array([by_seed[s]["train_cv_f1"] for s in args.seeds])
        report["variants"][name] = {
            "held_out_by_seed": {str(s): summary(by_seed[s]["held_out"]) for s in args.seeds},
            "held_out_f1_mean": float(held.mean()), "held_out_f1_std": float(held.std(ddof=1)) if len(held) > 1 else 0.0,
            "train_cv_f1_by_seed": dict(zip(map(str, args.seeds), cv.tolist())),
            "train_cv_f1_mean": float(cv.mean()), "train_cv_f1_std": float(cv.std(ddof=1)) if len(cv) > 1 else 0.0}
    three, two = report["variants"]["three scorers"], report["variants"]["two scorers"]
    report["three_vs_two"] = {
        "held_out_delta_by_seed": {str(s): three["held_out_by_seed"][str(s)]["f1"] - two["held_out_by_seed"][str(s)]["f1"]
                                   for s in args.seeds},
        # per paper, the seeds' counts summed: the bootstrap of the pooled F1 over all seeds' runs
        "bootstrap_over_seeds": paired_bootstrap(sum(runs["three scorers"][s]["held_out"] for s in args.seeds),
                                                 sum(runs["two scorers"][s]["held_out"] for s in args.seeds))}
    report["seconds"] = round(time.perf_counter() - started, 1)
    report["machine"] = machine_info()
    write_json(args.out, report)
    rows = [[name, f"{v['train_cv_f1_mean']:.3f} +- {v['train_cv_f1_std']:.3f}",
             f"{v['held_out_f1_mean']:.3f} +- {v['held_out_f1_std']:.3f}"] for name, v in report["variants"].items()]
    print(markdown_table(["stage 1 into the trees", "train CV F1 (seeds)", "held-out F1 (seeds)"], rows))
    print(report["three_vs_two"])
    return report


if __name__ == "__main__":
    main()
