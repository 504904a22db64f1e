"""Score the contribution_detector on every paper of an NLPContributionGraph-format folder.

Every readable paper folder of ``--ncg-eval-dir`` (the layout of SemEval-2021 Task 11:
``<task>/<n>/`` with ``*-Stanza-out.txt``, ``*-Grobid-out.txt`` and ``sentences.txt``; read
by :func:`scholarly_nlp.readers.iter_ncg_papers`) becomes its NCG Doc
(:func:`scholarly_contribution_detector.ncg_docs.ncg_doc`), whose ``contribution_gold``
holds the paper's introduction sentences with their gold labels. The pipeline's
``contribution_detector`` runs on a copy of that Doc, and
:meth:`ContributionDetector.score` / :meth:`ContributionDetector.count_outcomes` give
precision, recall and F1 of the positive class (contribution sentences), micro over all gold
introduction sentences of all papers. A folder that cannot be read is reported with the
reason under ``failed`` and skipped; the rest goes on.

Writes ``--metrics`` (default ``metrics/detector.json``): ``precision``, ``recall``, ``f1``,
``tp``, ``fp``, ``fn``, ``n_papers``, ``n_sentences``, ``n_positive``, ``threshold``,
``model``, ``failed``, ``per_paper`` (``{paper_id: {n_sentences, n_positive, tp, fp, fn}}``),
``baselines`` and ``vs_baselines``; and ``<output-dir>/detector_predictions.jsonl``, one line per gold
introduction sentence: ``{"paper_id", "sentence", "probability", "predicted", "gold"}``.

``--baselines tfidf,tfidf_context``: TF-IDF logistic regressions
(:mod:`scholarly_contribution_detector.baselines`, the ``tfidf_lr*`` systems of
``benchmarks/contribution_detection_cv.py``; on the sentence text alone, or with context
features), trained on the introduction sentences of the papers of ``--train-ncg-dir`` that
are not evaluated (neither the same paper id nor the same Stanza file name), decision
threshold 0.5, scored by the same ``ContributionDetector.score``; each also gets its
``per_paper`` counts. ``vs_baselines`` holds, for each baseline scored, the paired bootstrap
of the detector's F1 minus the baseline's over the evaluated papers
(:func:`scholarly_nlp.metrics.paired_bootstrap_micro_f1`: papers resampled, F1 pooled over
each resample's sentences; ``delta``, ``ci_low``, ``ci_high``, ``p_value``, ``n_papers``;
``skipped`` with a single paper).

``--model`` is an installed pipeline package (default: the shipped ``scholarly_core``) or a
pipeline folder; only its ``contribution_detector`` is loaded.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from spacy.language import Language
from spacy.training import Example

import scholarly_nlp
from scholarly_contribution_detector.baselines import fit_predict
from scholarly_contribution_detector.data import paper_rows
from scholarly_contribution_detector.factory import ContributionDetector, gold_items
from scholarly_contribution_detector.ncg_docs import ncg_doc, sentence_offsets
from scholarly_nlp.metrics import paired_bootstrap_micro_f1
from scholarly_nlp.readers import NCGPaper, iter_ncg_papers, ncg_folders

PIPE = "contribution_detector"
PREDICTIONS_NAME = "detector_predictions.jsonl"
BASELINE_THRESHOLD = 0.5
#: baseline name -> whether it adds the context features to the sentence's TF-IDF
BASELINES = {"tfidf": False, "tfidf_context": True}
OUTCOMES = ("tp", "fp", "fn")


@dataclass
class EvaluatedPaper:
    """One paper with its Example (the detector's output on a copy of the NCG Doc as the
    predicted Doc, the NCG Doc with the gold as the reference) and its per-sentence records
    (:func:`sentence_predictions`)."""

    paper: NCGPaper
    example: Example
    predictions: list[dict]

    @property
    def paper_id(self) -> str:
        """The paper's id (``<task>/<n>``)."""
        return self.paper.paper_id


def read_papers(ncg_dir: Path) -> tuple[list[NCGPaper], list[dict]]:
    """The readable papers under ``ncg_dir`` and, for every paper folder that could not be
    read, ``{"paper_id", "folder", "reason"}`` (the reader's warning)."""
    folders = ncg_folders(ncg_dir)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        papers = list(iter_ncg_papers(ncg_dir))
    messages = [str(w.message) for w in caught]
    for message in messages:
        print(f"warning: {message}", file=sys.stderr)
    read = {Path(paper.folder) for paper in papers}
    failed = [{"paper_id": f"{folder.parent.name}/{folder.name}", "folder": str(folder),
               "reason": unreadable_reason(folder, messages)}
              for folder in folders if folder not in read]
    return papers, failed


def unreadable_reason(folder: Path, messages: list[str]) -> str:
    """The reader's warning about ``folder``, without its "skipping NCG paper folder ..." lead."""
    message = next((m for m in messages if str(folder) in m), "could not be read")
    return message.removeprefix(f"skipping NCG paper folder {folder}: ")


def detect(nlp: Language, papers: list[NCGPaper], failed: list) -> list[EvaluatedPaper]:
    """Run the pipeline on every paper's NCG Doc; a paper whose Doc cannot be built or run
    goes to ``failed`` and the others go on."""
    evaluated = []
    for paper in papers:
        try:
            reference = ncg_doc(paper, nlp)
            example = Example(nlp(reference.copy()), reference)
            evaluated.append(EvaluatedPaper(paper, example, sentence_predictions(paper.paper_id, example)))
        except Exception as exc:  # a bad paper is reported, the others go on
            failed.append({"paper_id": paper.paper_id, "folder": paper.folder, "reason": f"{type(exc).__name__}: {exc}"})
            print(f"failed: {paper.paper_id}: {exc}", file=sys.stderr)
    return evaluated


def sentence_predictions(paper_id: str, example: Example) -> list[dict]:
    """One record per gold introduction sentence of the paper: its text, the detector's
    probability, whether it was predicted a contribution and its gold label."""
    reference, predicted = example.reference, example.predicted
    chosen = {(int(start), int(end)) for start, end in predicted._.contribution_sentence_offsets or []}
    gold = gold_items(reference)
    probabilities = predicted._.contribution_scores or []
    if len(probabilities) != len(gold):
        raise ValueError(f"{len(probabilities)} scores for {len(gold)} gold sentences")
    return [{"paper_id": paper_id, "sentence": reference[g["start"] : g["end"]].text,
             "probability": float(p), "predicted": (int(g["start"]), int(g["end"])) in chosen,
             "gold": bool(g["label"])}
            for g, p in zip(gold, probabilities)]


def detection_metrics(detector: ContributionDetector, examples: list[Example]) -> dict:
    """``precision``, ``recall``, ``f1`` (:meth:`ContributionDetector.score`) and ``tp``,
    ``fp``, ``fn`` (:meth:`ContributionDetector.count_outcomes`) of the examples."""
    scores = detector.score(examples)
    counts = detector.count_outcomes(examples) or {"tp": 0, "fp": 0, "fn": 0}
    return {"precision": scores["contribution_p"], "recall": scores["contribution_r"],
            "f1": scores["contribution_f1"], **counts}


def gold_counts(examples: list[Example]) -> dict:
    """``n_sentences`` (gold introduction sentences) and ``n_positive`` (of them, contributions)."""
    items = [g for eg in examples for g in gold_items(eg.reference)]
    return {"n_sentences": len(items), "n_positive": sum(int(g["label"]) for g in items)}


def outcome_counts(detector: ContributionDetector, example: Example) -> dict:
    """``{tp, fp, fn}`` of one example (:meth:`ContributionDetector.count_outcomes`)."""
    return detector.count_outcomes([example]) or dict.fromkeys(OUTCOMES, 0)


def per_paper_counts(detector: ContributionDetector, evaluated: list[EvaluatedPaper]) -> dict:
    """``{paper_id: {n_sentences, n_positive, tp, fp, fn}}``."""
    return {item.paper_id: {**gold_counts([item.example]), **outcome_counts(detector, item.example)}
            for item in evaluated}


def versus_baselines(per_paper: dict, baselines: dict) -> dict:
    """``{name: {delta, ci_low, ci_high, p_value, n_papers}}``: the paired bootstrap of the
    detector's micro F1 minus each scored baseline's, resampling the evaluated papers
    (``{name: {"skipped": reason}}`` with one paper, where resampling cannot vary)."""
    ids = sorted(per_paper)
    ours = [[per_paper[i][key] for key in OUTCOMES] for i in ids]
    tests = {}
    for name, result in baselines.items():
        if "per_paper" not in result:
            continue
        if len(ids) < 2:
            tests[name] = {"skipped": "a paired bootstrap over papers needs at least 2 papers"}
            continue
        theirs = [[result["per_paper"][i][key] for key in OUTCOMES] for i in ids]
        tests[name] = {**paired_bootstrap_micro_f1(ours, theirs), "n_papers": len(ids)}
    return tests


# --------------------------------------------------------------------------- baselines


def training_papers(train_ncg_dir: Path, evaluated: list[EvaluatedPaper]) -> list[NCGPaper]:
    """The papers of ``train_ncg_dir`` that are not evaluated: neither the same paper id nor
    the same Stanza file name (the arXiv / ACL id), so a paper filed under another id is
    still left out."""
    held_out_ids = {item.paper_id for item in evaluated}
    held_out_files = {Path(item.paper.files["stanza"]).name for item in evaluated}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        papers = list(iter_ncg_papers(train_ncg_dir))
    return [p for p in papers if p.paper_id not in held_out_ids and Path(p.files["stanza"]).name not in held_out_files]


def gold_rows(item: EvaluatedPaper) -> list:
    """The paper's sentence rows (:func:`paper_rows`) of its gold introduction sentences, in
    the order of its ``contribution_gold``."""
    rows = paper_rows(item.paper)
    line_of = {start: line for line, (start, _) in enumerate(sentence_offsets(item.paper)[1])}
    return [rows[line_of[int(g["start"])]] for g in gold_items(item.example.reference)]


def baseline_example(reference, probabilities) -> Example:
    """An Example whose predicted Doc carries a baseline's scores and the gold sentences it
    flags (probability >= :data:`BASELINE_THRESHOLD`), as the detector would annotate it."""
    predicted = reference.copy()
    gold = gold_items(reference)
    predicted._.contribution_scores = [float(p) for p in probabilities]
    predicted._.contribution_sentence_offsets = [[int(g["start"]), int(g["end"])] for g, p in zip(gold, probabilities)
                                                 if p >= BASELINE_THRESHOLD]
    return Example(predicted, reference)


def baseline_metrics(name: str, detector: ContributionDetector, train: list[NCGPaper],
                     evaluated: list[EvaluatedPaper]) -> dict:
    """Train baseline ``name`` on the introduction sentences of ``train`` and score it on the
    evaluated papers' gold sentences."""
    test_rows = [gold_rows(item) for item in evaluated]
    if not train:
        return {"skipped": "no training paper outside the evaluated papers"}
    if not any(test_rows):
        return {"skipped": "no gold introduction sentence to score"}
    train_rows = [row for paper in train for row in paper_rows(paper) if row.in_introduction]
    probabilities = fit_predict(train_rows, [row for rows in test_rows for row in rows], BASELINES[name])
    examples, start = [], 0
    for item, rows in zip(evaluated, test_rows):
        examples.append(baseline_example(item.example.reference, probabilities[start : start + len(rows)]))
        start += len(rows)
    return {**detection_metrics(detector, examples), "threshold": BASELINE_THRESHOLD,
            "n_train_papers": len(train), "n_train_sentences": len(train_rows),
            "per_paper": {item.paper_id: outcome_counts(detector, example) for item, example in zip(evaluated, examples)}}


def run_baselines(names: list[str], train_ncg_dir: Optional[Path], detector: ContributionDetector,
                  evaluated: list[EvaluatedPaper]) -> dict:
    """``{name: metrics}`` of the requested baselines (none without names)."""
    if not names:
        return {}
    try:
        train = training_papers(train_ncg_dir, evaluated)
    except scholarly_nlp.ScholarlyNLPError as exc:  # the detector's numbers stand without the baselines
        return {name: {"skipped": f"cannot read --train-ncg-dir: {exc}"} for name in names}
    return {name: baseline_metrics(name, detector, train, evaluated) for name in names}


# --------------------------------------------------------------------------- main


def write_predictions(path: Path, evaluated: list[EvaluatedPaper]) -> None:
    """The JSONL of every paper's per-sentence records, in paper order."""
    lines = [json.dumps(record) for item in evaluated for record in item.predictions]
    scholarly_nlp.write_atomic(path, ("\n".join(lines) + "\n" if lines else "").encode("utf-8"))


def headline(name: str, metrics: dict) -> str:
    """``name: P .. R .. F1 ..`` (``n/a`` where undefined), or why the system was skipped."""
    if "skipped" in metrics:
        return f"{name}: skipped ({metrics['skipped']})"
    values = [f"{metrics[key]:.3f}" if metrics[key] is not None else "n/a" for key in ("precision", "recall", "f1")]
    return f"{name}: P {values[0]} R {values[1]} F1 {values[2]}"


def parse_args(argv: Optional[list[str]]) -> argparse.Namespace:
    """The command line (see the module docstring); an unknown baseline or a baseline without
    ``--train-ncg-dir`` is an error."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ncg-eval-dir", type=Path, required=True)
    parser.add_argument("--output-dir", type=Path, required=True)
    parser.add_argument("--model", default="scholarly_core",
                        help="installed pipeline package (scholarly_core) or pipeline folder (training/pipeline)")
    parser.add_argument("--metrics", type=Path, default=Path("metrics/detector.json"))
    parser.add_argument("--baselines", default="", help=f"comma-separated, of {', '.join(BASELINES)}; empty for none")
    parser.add_argument("--train-ncg-dir", type=Path, default=None,
                        help="NCG folder the baselines train on (its papers that are not evaluated)")
    parser.add_argument("--gpu-id", type=int, default=-1)
    args = parser.parse_args(argv)
    args.baselines = [name.strip() for name in args.baselines.split(",") if name.strip()]
    unknown = [name for name in args.baselines if name not in BASELINES]
    if unknown:
        parser.error(f"unknown baseline {unknown[0]!r}; known: {', '.join(BASELINES)}")
    if args.baselines and args.train_ncg_dir is None:
        parser.error("--baselines needs --train-ncg-dir")
    return args


def main(argv: Optional[list[str]] = None) -> int:
    """Evaluate, write the metrics and predictions, print the headline; 0 on success."""
    args = parse_args(argv)
    try:
        nlp = scholarly_nlp.load(args.model, components=[PIPE], require=[PIPE], gpu_id=args.gpu_id)
        papers, failed = read_papers(args.ncg_eval_dir)
    except scholarly_nlp.ScholarlyNLPError as exc:
        sys.exit(f"error: {exc}")
    start = time.time()
    detector = nlp.get_pipe(PIPE)
    evaluated = detect(nlp, papers, failed)
    if not evaluated:
        sys.exit(f"error: no readable NCG paper under {args.ncg_eval_dir} ({len(failed)} failed)")
    args.output_dir.mkdir(parents=True, exist_ok=True)
    write_predictions(args.output_dir / PREDICTIONS_NAME, evaluated)
    examples = [item.example for item in evaluated]
    per_paper = per_paper_counts(detector, evaluated)
    baselines = run_baselines(args.baselines, args.train_ncg_dir, detector, evaluated)
    metrics = {**detection_metrics(detector, examples), "n_papers": len(evaluated), **gold_counts(examples),
               "threshold": detector.cfg["threshold"], "model": args.model, "failed": failed,
               "per_paper": per_paper, "baselines": baselines, "vs_baselines": versus_baselines(per_paper, baselines),
               "ncg_eval_dir": str(args.ncg_eval_dir), "seconds": round(time.time() - start, 1)}
    args.metrics.parent.mkdir(parents=True, exist_ok=True)
    scholarly_nlp.write_atomic(args.metrics, json.dumps(metrics, indent=2).encode("utf-8"))
    print(f"{headline(PIPE, metrics)} ({metrics['n_sentences']} sentences, {metrics['n_positive']} positive, "
          f"{len(evaluated)} papers, {len(failed)} failed)")
    for name, result in metrics["baselines"].items():
        print(headline(name, result))
    for name, test in metrics["vs_baselines"].items():
        if "skipped" in test:
            print(f"{PIPE} - {name}: skipped ({test['skipped']})")
            continue
        print(f"{PIPE} - {name}: F1 {test['delta']:+.3f} (95% CI {test['ci_low']:+.3f}..{test['ci_high']:+.3f}, "
              f"p {test['p_value']:.2g}, {test['n_papers']} papers)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
