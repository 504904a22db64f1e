"""Contribution-sentence detection: does the abstract tell stage 2 which introduction sentences state contributions?

Issue #19: the shipped detector (TextCatBOW stage 1, the ``embedding_context`` logistic
regression beside it, boosted trees on both; ``contribution_detector_stacking_bow.py``) is at
0.635 on the 35 held-out NCG papers against a 0.65 target. Two cheap levers are measured here on
the same 142 / 35 split and the same chosen stage 2 (no cue windows, ``fast`` trees):

* ``abstract``: five more stage-2 columns per introduction sentence, from the frozen MiniLM
  vectors of the paper's abstract sentences
  (:func:`scholarly_contribution_detector.stacking.abstract_similarity`): the sentence's best
  and mean-of-top-2 cosine to an abstract sentence, whether its best cosine ranks in the
  introduction's top 3 and top 6, and its ratio to the introduction's highest. A contribution
  statement often restates a claim of the abstract.
* ``bagged``: the held-out probabilities of the trees of every fold seed, averaged, against
  the trees of one fold seed.

Fold seeds 0-5 (``--seeds``): per seed, grouped 5-fold out-of-fold stage-1 scores of both
stage-1 systems, the stage-2 trees' out-of-fold F1 on the 142 training papers (what a choice
may read) and their F1 on the held-out papers. Reported: per variant the mean and spread over
seeds of both, the per-seed held-out differences, and a paired bootstrap over papers (seed
``--seeds[0]``) of ``abstract`` against the shipped stage 2.

    python benchmarks/contribution_detector_abstract.py [--data DIR] [--seeds 0 1 2 3 4 5] [--out FILE.json]
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy

sys.path.insert(0, str(Path(__file__).resolve().parent))
from contribution_detector_stacking import (  # noqa: E402
    arguments,
    out_of_fold,
    paired_bootstrap,
    pooled,
    stacking_inputs,
    summary,
)
from contribution_detector_stacking_bow import BOW, BowStacker  # noqa: E402
from scholarly_contribution_detector.stacking import abstract_similarity  # noqa: E402

EMBEDDING = "embedding_context"


def abstract_vectors(papers, encoder) -> dict:
    """``{paper id: unit MiniLM vectors of its abstract sentences}`` (headings left out)."""
    sentences = {p.paper_id: [s for s, section, heading in zip(p.sentences, p.sections, p.is_heading)
                              if section == "abstract" and not heading] for p in papers}
    flat = [s for texts in sentences.values() for s in texts]
    vectors = numpy.asarray(encoder.encode(flat), dtype=numpy.float64).reshape(len(flat), -1)
    out, start = {}, 0
    for pid, texts in sentences.items():
        out[pid] = vectors[start : start + len(texts)]
        start += len(texts)
    return out


def abstract_stacker(data: Path) -> tuple:
    """``(stacker, train, contexts, held_stage1)`` of the NCG papers under ``data``: a
    :class:`BowStacker` over the project's split (its ``embedding_context`` C chosen), the
    training papers, the stage-2 context rows ``{"shipped": ..., "abstract": ...}`` (the
    stacker holds the shipped ones) and both stage-1 scorers' held-out probabilities (fitted on
    all the training papers)."""
    import spacy
    from scholarly_contribution_detector.ncg_docs import ncg_doc
    from scholarly_nlp.ml import SentenceEncoder

    papers, train, held_ids, rows_of, emb_of, context, cues = stacking_inputs(data)
    papers = [p for p in papers if p.paper_id in emb_of]
    abstracts = abstract_vectors(papers, SentenceEncoder())
    dim = next(iter(emb_of.values())).shape[1] // 3
    contexts = {"shipped": context,
                "abstract": {pid: numpy.hstack([c, abstract_similarity(emb_of[pid][:, :dim], abstracts[pid])])
                             for pid, c in context.items()}}
    nlp = spacy.blank("en")
    stacker = BowStacker([p.paper_id for p in train], held_ids, rows_of, emb_of, context, cues,
                         docs={p.paper_id: ncg_doc(p, nlp) for p in papers})
    stacker.prepare(EMBEDDING, train)
    held_stage1 = [stacker.stage1(EMBEDDING, stacker.train_ids, held_ids), stacker.stage1(BOW, stacker.train_ids, held_ids)]
    return stacker, train, contexts, held_stage1


def main(argv=None) -> dict:
    """Command line (see the module docstring)."""
    from _common import machine_info, markdown_table, write_json
    from contribution_detector_embeddings import f1
    from scholarly_contribution_detector.data import grouped_folds

    args = arguments(argv, __doc__.splitlines()[0], "contribution_detector_abstract.json", seeds=(0, 1, 2, 3, 4, 5))
    warnings.filterwarnings("ignore")
    started = time.perf_counter()
    stacker, train, contexts, held_stage1 = abstract_stacker(args.data)
    train_ids, held_ids, rows_of = stacker.train_ids, stacker.held_ids, stacker.rows_of
    per_seed = {name: {} for name in contexts}
    for seed in args.seeds:
        folds = grouped_folds(train, k=5, seed=seed)
        oof = [out_of_fold(train_ids, folds, lambda tr, te, name=name: stacker.stage1(name, tr, te)) for name in (EMBEDDING, BOW)]
        for name, rows in contexts.items():
            stacker.context = rows
            cv = out_of_fold(train_ids, folds, lambda tr, te: stacker.stage2(oof, tr, te, oof, False, "fast", seed))
            held = stacker.stage2(oof, train_ids, held_ids, held_stage1, False, "fast", seed)
            per_seed[name][seed] = {"train_cv_f1": f1(pooled(train_ids, rows_of, cv).sum(axis=0)),
                                    "held_out": pooled(held_ids, rows_of, held), "probs": held}
        print(seed, {name: round(f1(runs[seed]["held_out"].sum(axis=0)), 3) for name, runs in per_seed.items()}, flush=True)
    report = {"n_train_papers": len(train_ids), "n_held_out_papers": len(held_ids), "seeds": list(args.seeds),
              "C": dict(stacker.c), "variants": {}}
    for name, runs in per_seed.items():
        held = numpy.array([f1(runs[s]["held_out"].sum(axis=0)) for s in args.seeds])
        cv = numpy.array([runs[s]["train_cv_f1"] for s in args.seeds])
        bagged = {pid: numpy.mean([runs[s]["probs"][pid] for s in args.seeds], axis=0) for pid in held_ids}
        report["variants"][name] = {
            "held_out_f1_by_seed": dict(zip(map(str, args.seeds), held.tolist())),
            "held_out_f1_mean": float(held.mean()), "held_out_f1_std": float(held.std(ddof=1)) if len(held) > 1 else 0.0,
            "train_cv_f1_by_seed": dict(zip(map(str, args.seeds), cv.tolist())),
            "train_cv_f1_mean": float(cv.mean()), "train_cv_f1_std": float(cv.std(ddof=1)) if len(cv) > 1 else 0.0,
            "bagged_over_seeds": summary(pooled(held_ids, rows_of, bagged))}
    first = args.seeds[0]
    report["abstract_vs_shipped"] = {
        "held_out_delta_by_seed": {str(s): report["variants"]["abstract"]["held_out_f1_by_seed"][str(s)]
                                   - report["variants"]["shipped"]["held_out_f1_by_seed"][str(s)] for s in args.seeds},
        f"bootstrap_seed_{first}": paired_bootstrap(per_seed["abstract"][first]["held_out"],
                                                    per_seed["shipped"][first]["held_out"])}
    report["seconds"] = round(time.perf_counter() - started, 1)
    report["machine"] = machine_info()
    write_json(args.out, report)
    rows = [[name, f"{v['train_cv_f1_mean']:.3f} +- {v['train_cv_f1_std']:.3f}",
             f"{v['held_out_f1_mean']:.3f} +- {v['held_out_f1_std']:.3f}", f"{v['bagged_over_seeds']['f1']:.3f}"]
            for name, v in report["variants"].items()]
    print(markdown_table(["stage 2", "train CV F1 (seeds)", "held-out F1 (seeds)", "held-out F1, trees bagged over seeds"], rows))
    print(report["abstract_vs_shipped"])
    return report


if __name__ == "__main__":
    main()
