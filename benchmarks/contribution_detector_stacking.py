"""Contribution-sentence detection: does the rest of the introduction lift a sentence's score?

Issue #19 asks for detector F1 above 0.65. Every detector measured so far scores each
introduction sentence on its own (its text, its two neighbours, cue and position features).
NCG annotators mark only a few sentences per paper, usually the first statement of the
approach, so whether a sentence is a contribution also depends on how it compares with the
other sentences of the same introduction. This measures that with stacking, on the
project's split (``grouped_split``: 142 training papers, 35 held-out papers):

* **stage 1**: the logistic regressions of ``contribution_detector_embeddings.py``
  (``tfidf_context``, and ``tfidf_context_embedding`` with frozen MiniLM embeddings of the
  sentence and its neighbours), C chosen there by grouped CV. Their *out-of-fold*
  probabilities on the training papers come from grouped 5-fold CV, so stage 2 never learns
  from a score of a sentence the stage-1 model was fitted on.
* **stage 2**: gradient-boosted trees (``scholarly_nlp.BoostedTrees.v1``, the thinc model the
  shipped detector holds, fitted by scikit-learn's ``GradientBoostingClassifier``: exact
  splits, leaves of one row or more, a zero start; balanced classes) over the features of
  :mod:`scholarly_contribution_detector.stacking` (the ones the shipped detector's stage 2
  computes): the relational features of each stage-1 probability (its neighbours'
  probabilities up to three sentences away, its ratio to the introduction's highest, its rank,
  how many earlier sentences reach 0.5, the introduction's mean), the introduction context
  (position in the introduction, similarity to the title, first occurrence of each cue
  phrase) and, in half the candidates, the cue flags of the sentence and its neighbours.

Selection uses the training papers only: among :data:`CANDIDATES` (stage-1 inputs x cue flags x
tree settings), the highest pooled out-of-fold F1 at 0.5 (grouped 5-fold CV of stage 2 over
the stage-1 out-of-fold probabilities, fold seed 0). Reported on the 35 held-out papers for
every candidate, with the chosen one's mean and spread over fold seeds 0, 1, 2 (the folds
change which out-of-fold scores stage 2 learns from) and paired bootstraps over papers
(2,000 resamples) against ``tfidf_context`` and against its own stage-1 input.

    python benchmarks/contribution_detector_stacking.py [--data DIR] [--seeds 0 1 2] [--out FILE.json]
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
from contribution_detector_embeddings import (  # noqa: E402
    BOOTSTRAP,
    FEATURE_SETS,
    choose_c,
    counts,
    f1,
    fit_predict,
    ncg_split,
    neighbour_embeddings,
)

ensure_repo_on_path()

TREE_SETTINGS = {"fast": (0.05, 150, 15), "slow": (0.03, 300, 7)}
"""Name -> (learning rate, boosting iterations, leaves per tree)."""
STAGE1_INPUTS = {"tfidf_context": ("tfidf_context",),
                 "tfidf_context+embedding": ("tfidf_context", "tfidf_context_embedding")}
CANDIDATES = [(inputs, cues, trees) for inputs in STAGE1_INPUTS for cues in (False, True) for trees in TREE_SETTINGS]
"""(stage-1 input name, neighbour cue flags or not, tree setting name)."""


def paper_title(paper) -> str:
    """The title of an NCG paper: its sentences in section ``title`` that are not headings
    (the Stanza file's first line is the marker ``title``, not the title)."""
    return " ".join(sentence for sentence, section, heading in zip(paper.sentences, paper.sections, paper.is_heading)
                    if section == "title" and not heading)


def design_matrix(pids, probs_by_input: list[dict], context: dict, cues: dict | None) -> numpy.ndarray:
    """The stage-2 rows of the papers ``pids``, paper after paper
    (:func:`scholarly_contribution_detector.stacking.stage2_matrix` of each: the relational
    features of each stage-1 probability set, the introduction context and, when ``cues`` is
    given, the cue windows)."""
    from scholarly_contribution_detector.stacking import stage2_matrix

    return numpy.vstack([stage2_matrix([probs[pid] for probs in probs_by_input], context[pid],
                                       cues[pid] if cues is not None else None) for pid in pids])


def fit_stage2(x: numpy.ndarray, y: numpy.ndarray, trees: str, seed: int):
    """The stage-2 trees fitted on ``x``, ``y``: a ``scholarly_nlp.BoostedTrees.v1`` thinc model
    (the one a shipped detector would hold), balanced classes."""
    from scholarly_nlp.ml import BoostedTrees, fit_boosted_trees

    rate, iterations, leaves = TREE_SETTINGS[trees]
    model = BoostedTrees(n_trees=iterations, learning_rate=rate, max_leaf_nodes=leaves, balanced=True)
    return fit_boosted_trees(model, x, y, seed=seed)


def out_of_fold(pids, folds, predict) -> dict:
    """``{paper id: probabilities}`` where each fold's papers are scored by
    ``predict(training ids, fold ids)`` (which returns ``{paper id: probabilities}`` for the
    fold's papers), fitted without them."""
    out = {}
    for fold in folds:
        held = [pid for pid in pids if pid in fold]
        out.update(predict([pid for pid in pids if pid not in fold], held))
    return out


def split_by_paper(flat: numpy.ndarray, pids, rows_of: dict) -> dict:
    """``{paper id: its slice of flat}``, the papers' rows laid end to end in ``pids``' order."""
    out, start = {}, 0
    for pid in pids:
        out[pid] = flat[start : start + len(rows_of[pid])]
        start += len(rows_of[pid])
    if start != len(flat):
        raise ValueError(f"{len(flat)} scores for {start} rows")
    return out


def pooled(pids, rows_of: dict, probs: dict, threshold: float = 0.5) -> numpy.ndarray:
    """Per paper (tp, fp, fn) at ``threshold``."""
    return numpy.array([counts(numpy.array([r.label for r in rows_of[pid]], dtype=bool), probs[pid] >= threshold)
                        for pid in pids]).reshape(len(pids), 3)


def paired_bootstrap(ours: numpy.ndarray, theirs: numpy.ndarray, seed: int = 0) -> dict:
    """F1 difference of two per-paper (tp, fp, fn) arrays with a 95% interval over papers."""
    rng = numpy.random.default_rng(seed)
    samples = rng.integers(0, len(ours), size=(BOOTSTRAP, len(ours)))
    deltas = numpy.array([f1(ours[s].sum(axis=0)) - f1(theirs[s].sum(axis=0)) for s in samples])
    return {"delta": f1(ours.sum(axis=0)) - f1(theirs.sum(axis=0)), "ci_low": float(numpy.quantile(deltas, 0.025)),
            "ci_high": float(numpy.quantile(deltas, 0.975)), "p_not_better": float((deltas <= 0).mean())}


def summary(outcome: numpy.ndarray) -> dict:
    """Pooled precision, recall, F1 and counts of per-paper (tp, fp, fn)."""
    tp, fp, fn = (int(v) for v in outcome.sum(axis=0))
    return {"precision": tp / max(tp + fp, 1), "recall": tp / max(tp + fn, 1), "f1": f1(outcome.sum(axis=0)),
            "tp": tp, "fp": fp, "fn": fn}


class Stacker:
    """Stage-1 scores and stage-2 fits over one split (see the module docstring)."""

    def __init__(self, train_ids, held_ids, rows_of, emb_of, context, cues):
        self.train_ids, self.held_ids = list(train_ids), list(held_ids)
        self.rows_of, self.emb_of, self.context, self.cues = rows_of, emb_of, context, cues
        self.c = {}

    def prepare(self, name: str, papers_train) -> None:
        """Choose the regularisation of stage-1 system ``name`` by grouped CV on ``papers_train``."""
        self.c[name] = choose_c(papers_train, self.rows_of, self.emb_of, FEATURE_SETS[name])

    def stage1(self, name: str, train_ids, test_ids) -> dict:
        """Stage-1 probabilities of ``test_ids`` from a model fitted on ``train_ids``."""
        rows = [r for pid in train_ids for r in self.rows_of[pid]]
        test_rows = [r for pid in test_ids for r in self.rows_of[pid]]
        probs = fit_predict(rows, numpy.vstack([self.emb_of[pid] for pid in train_ids]), test_rows,
                            numpy.vstack([self.emb_of[pid] for pid in test_ids]), FEATURE_SETS[name], self.c[name])
        return split_by_paper(probs, test_ids, self.rows_of)

    def labels(self, pids) -> numpy.ndarray:
        """The gold labels of the papers' rows, paper after paper."""
        return numpy.array([r.label for pid in pids for r in self.rows_of[pid]])

    def stage2(self, inputs: list[dict], train_ids, test_ids, test_inputs: list[dict], cues: bool, trees: str,
               seed: int) -> dict:
        """Stage-2 probabilities of ``test_ids`` (their stage-1 scores ``test_inputs``), fitted
        on ``train_ids`` with their out-of-fold stage-1 scores ``inputs``."""
        cue_rows = self.cues if cues else None
        model = fit_stage2(design_matrix(train_ids, inputs, self.context, cue_rows), self.labels(train_ids), trees, seed)
        probs = model.predict(design_matrix(test_ids, test_inputs, self.context, cue_rows).astype(numpy.float32))[:, 0]
        return split_by_paper(probs, test_ids, self.rows_of)


def run(stacker: Stacker, papers_train, seeds, candidates=CANDIDATES, inputs_of: dict = STAGE1_INPUTS) -> dict:
    """Prepare each stage-1 system (:meth:`Stacker.prepare`), select one of ``candidates`` on
    the training papers (the first seed) and report every candidate on the held-out papers;
    ``inputs_of`` names the stage-1 systems of each candidate's inputs. Returns the report."""
    from scholarly_contribution_detector.data import grouped_folds

    rows_of, train_ids, held_ids = stacker.rows_of, stacker.train_ids, stacker.held_ids
    stacked = sorted({name for inputs, _, _ in candidates for name in inputs_of[inputs]})
    systems = sorted({"tfidf_context", *stacked})  # tfidf_context: the bootstraps' baseline
    for name in systems:
        stacker.prepare(name, papers_train)
    held_stage1 = {name: stacker.stage1(name, train_ids, held_ids) for name in systems}
    report = {"C": dict(stacker.c), "stage1_held_out": {name: summary(pooled(held_ids, rows_of, held_stage1[name]))
                                                       for name in systems},
              "candidates": {}, "seeds": list(seeds)}
    per_seed = {}
    for seed in seeds:
        folds = grouped_folds(papers_train, k=5, seed=seed)
        oof = {name: out_of_fold(train_ids, folds, lambda tr, te, name=name: stacker.stage1(name, tr, te))
               for name in stacked}
        for inputs, cues, trees in candidates:
            key = f"{inputs} | cues={cues} | {trees}"
            train_in = [oof[name] for name in inputs_of[inputs]]
            entry = report["candidates"].setdefault(key, {"held_out_f1_by_seed": {}})
            if seed == seeds[0]:
                cv = out_of_fold(train_ids, folds, lambda tr, te: stacker.stage2(train_in, tr, te, train_in, cues, trees, seed))
                entry["train_cv"] = summary(pooled(train_ids, rows_of, cv))
            held = stacker.stage2(train_in, train_ids, held_ids, [held_stage1[n] for n in inputs_of[inputs]],
                                  cues, trees, seed)
            outcome = pooled(held_ids, rows_of, held)
            per_seed[(key, seed)] = outcome
            entry["held_out_f1_by_seed"][str(seed)] = f1(outcome.sum(axis=0))
    chosen = max(report["candidates"], key=lambda key: (report["candidates"][key]["train_cv"]["f1"], key))
    for key, entry in report["candidates"].items():
        values = numpy.array(list(entry["held_out_f1_by_seed"].values()))
        entry["held_out_f1_mean"] = float(values.mean())
        entry["held_out_f1_std"] = float(values.std(ddof=1)) if len(values) > 1 else 0.0
    first = per_seed[(chosen, seeds[0])]
    own_input = inputs_of[chosen.split(" | ")[0]][-1]
    report["chosen"] = {"candidate": chosen, "first_seed": seeds[0], "held_out_first_seed": summary(first),
                        "vs_tfidf_context": paired_bootstrap(first, pooled(held_ids, rows_of, held_stage1["tfidf_context"])),
                        "vs_own_stage1": {"stage1": own_input,
                                          **paired_bootstrap(first, pooled(held_ids, rows_of, held_stage1[own_input]))}}
    return report


def finish(report: dict, out: Path, started: float) -> dict:
    """Add the run's time and machine to ``report``, write it to ``out``, print its tables; returns it."""
    report["seconds"] = round(time.perf_counter() - started, 1)
    report["machine"] = machine_info()
    write_json(out, report)
    rows = [[key, f"{entry['train_cv']['f1']:.3f}", f"{entry['held_out_f1_mean']:.3f} +- {entry['held_out_f1_std']:.3f}",
             "chosen" if key == report["chosen"]["candidate"] else ""] for key, entry in report["candidates"].items()]
    print(markdown_table(["candidate", "train CV F1", "held-out F1 (seeds)", ""], rows))
    print({name: round(s["f1"], 3) for name, s in report["stage1_held_out"].items()}, report["chosen"])
    return report


def stacking_inputs(data: Path):
    """``(papers, train, held_ids, rows_of, emb_of, context, cues)`` of the NCG papers under
    ``data``: the project's split (training papers, held-out ids; papers without an
    introduction left out), each paper's introduction rows, their MiniLM neighbour embeddings,
    introduction context and cue flags."""
    from scholarly_contribution_detector.stacking import introduction_context
    from scholarly_nlp.ml import SentenceEncoder

    papers, train, held_out, rows_of = ncg_split(data)
    ids = [p.paper_id for p in papers if rows_of[p.paper_id]]
    encoder = SentenceEncoder()
    emb_of = split_by_paper(neighbour_embeddings([rows_of[pid] for pid in ids], encoder), ids, rows_of)
    titles = numpy.asarray(encoder.encode([paper_title(p) for p in papers if p.paper_id in emb_of]))
    dim = titles.shape[1]
    cues = {pid: [row.cues for row in rows_of[pid]] for pid in ids}
    context = {pid: introduction_context(cues[pid], emb_of[pid][:, :dim], title) for pid, title in zip(ids, titles)}
    train = [p for p in train if p.paper_id in emb_of]
    held_ids = [p.paper_id for p in held_out if p.paper_id in emb_of]
    return papers, train, held_ids, rows_of, emb_of, context, cues


def arguments(argv, description: str, out_name: str, seeds: tuple = (0, 1, 2)) -> argparse.Namespace:
    """The stacking benchmarks' command line: ``--data``, ``--seeds`` (default ``seeds``),
    ``--out`` (default ``benchmarks/results/<out_name>``)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA_ROOT)
    parser.add_argument("--seeds", type=int, nargs="+", default=list(seeds))
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / out_name)
    return parser.parse_args(argv)


def main(argv=None) -> dict:
    """Command line (see the module docstring)."""
    args = arguments(argv, __doc__.splitlines()[0], "contribution_detector_stacking.json")
    warnings.filterwarnings("ignore")
    started = time.perf_counter()
    papers, train, held_ids, rows_of, emb_of, context, cues = stacking_inputs(args.data)
    stacker = Stacker([p.paper_id for p in train], held_ids, rows_of, emb_of, context, cues)
    report = {"n_train_papers": len(stacker.train_ids), "n_held_out_papers": len(stacker.held_ids),
              **run(stacker, train, args.seeds)}
    return finish(report, args.out, started)


if __name__ == "__main__":
    main()
