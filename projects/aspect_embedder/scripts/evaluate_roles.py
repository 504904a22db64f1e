"""Evaluate a trained sentence role tagger on a CSAbstruct-format file, and its agreement with CSFCube's shipped roles.

Usage::

    python scripts/evaluate_roles.py scholarly_core [--output] metrics/roles.json \
        [--csabstruct-file ../../../shared/data/csabstruct/dev.jsonl] \
        [--baselines position,tfidf_position] [--baseline-train-file ../../../shared/data/csabstruct/train.jsonl] \
        [--csfcube ../../../shared/data/csfcube/abstracts-csfcube-preds.jsonl] \
        [--predictions output/roles_predictions.jsonl] [--limit N]

* ``accuracy``, ``macro_f1``, ``kappa`` (top level): the tagger against the gold labels of the
  CSAbstruct-format file (``--csabstruct-file``, default CSAbstruct dev; ``--csabstruct-dev``
  is its older name), the held-back measurement interface;
* ``csabstruct_dev``: the same with per-label P/R/F1, the confusion matrix and speed;
* ``csfcube_agreement``: the same measures of the tagger against CSFCube's shipped
  ``pred_labels`` (themselves a model's predictions, so this is agreement, not accuracy),
  with the tagger run with ``overwrite = true`` so that it predicts instead of keeping them;
* confusion matrices (rows: reference, columns: tagger) and documents per second;
* ``--predictions``: one JSON line per sentence of the CSAbstruct-format file (paper id,
  sentence index, text, gold role, predicted role).
* ``baselines`` and ``vs_baselines``: role baselines
  (:mod:`scholarly_facet_classifier.role_baselines`: ``position``, ``tfidf_position``) fitted on
  ``--baseline-train-file`` (default CSAbstruct train) and scored on the same file as the
  tagger (``accuracy``, ``macro_f1``, ``kappa``, ``per_label``); for each, the paired bootstrap
  of the tagger against it on accuracy and macro-F1, resampling abstracts with their sentence
  counts pooled (``{metric: {"delta", "ci_low", "ci_high", "p_value"}, "n_items"}``,
  :func:`scholarly_nlp.metrics.versus_baselines`).

The model is an installed pipeline package (``scholarly_core``, the shipped one) or a pipeline
folder (``training/roles/model-best``); only its ``transformer`` and ``sentence_role_tagger``
are loaded. The JSON report is written to the given path (its folder is created).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

HERE = Path(__file__).resolve().parent
SHARED = HERE.parents[2].parent / "shared" / "data"
DEFAULT_DEV = SHARED / "csabstruct" / "dev.jsonl"
DEFAULT_TRAIN = SHARED / "csabstruct" / "train.jsonl"
DEFAULT_CSFCUBE = SHARED / "csfcube" / "abstracts-csfcube-preds.jsonl"
COMPONENT = "sentence_role_tagger"
PIPES = ["transformer", COMPONENT]
VERSUS_LABELS = {"accuracy": "accuracy", "macro_f1": "macro-F1"}


def confusion(reference: Sequence[str], predicted: Sequence[str], labels: Sequence[str]) -> Dict[str, Dict[str, int]]:
    """Counts ``{reference label: {predicted label: n}}`` over ``labels``."""
    table = {r: {p: 0 for p in labels} for r in labels}
    for r, p in zip(reference, predicted):
        if r in table and p in table[r]:
            table[r][p] += 1
    return table


def tag_records(nlp, records, batch_size: int = 32) -> tuple[List[dict], float]:
    """(one row per labelled sentence, seconds): each row holds the paper id, the sentence's
    index and text, its ``gold`` role and the tagger's ``predicted`` one.

    The tagger is run with ``overwrite`` on, so it replaces any roles the Docs arrive with.
    """
    from scholarly_nlp import ROLE_GROUP
    from scholarly_nlp.readers import abstract_doc

    tagger = nlp.get_pipe(COMPONENT)
    tagger.cfg["overwrite"] = True
    rows: List[dict] = []
    docs, golds = [], []
    for record in records:
        if record.roles is None:
            continue
        doc = abstract_doc(record, nlp)
        gold = [s.label_ for s in sorted(doc.spans.get(ROLE_GROUP, []), key=lambda s: s.start)]
        if gold:
            docs.append(doc)
            golds.append(gold)
    start = time.perf_counter()
    for doc, gold in zip(nlp.pipe(docs, batch_size=batch_size), golds):
        spans = sorted(doc.spans.get(ROLE_GROUP, []), key=lambda s: s.start)
        if len(spans) != len(gold):
            raise ValueError(f"paper {doc._.paper_id}: {len(spans)} predicted roles for {len(gold)} sentences")
        rows.extend({"paper_id": doc._.paper_id, "sentence": i, "text": span.text, "gold": g, "predicted": span.label_}
                    for i, (span, g) in enumerate(zip(spans, gold)))
    return rows, time.perf_counter() - start


def report(rows: Sequence[dict], n_docs: int, seconds: float) -> Dict[str, Any]:
    """Metrics (see :func:`role_metrics`) of the rows of :func:`tag_records`, confusion matrix,
    document count and speed."""
    from scholarly_facet_classifier.role_tagger import role_metrics
    from scholarly_nlp import ROLES

    reference = [r["gold"] for r in rows]
    predicted = [r["predicted"] for r in rows]
    metrics = role_metrics(reference, predicted, ROLES)
    metrics["confusion"] = confusion(reference, predicted, ROLES)
    metrics["docs"] = n_docs
    metrics["seconds"] = round(seconds, 1)
    metrics["docs_per_second"] = round(n_docs / seconds, 2) if seconds else None
    return metrics


def baseline_report(rows: Sequence[dict], records, names: Sequence[str], train_file: Path) -> tuple[dict, dict]:
    """(``baselines``, ``vs_baselines``) of the report: each named role baseline fitted on
    ``train_file`` and scored on the tagged ``rows`` (of :func:`tag_records` over ``records``:
    the non-blank sentences), and the tagger's paired bootstrap against each over the
    abstracts. A training file that cannot be read makes every baseline ``{"skipped": reason}``."""
    from scholarly_facet_classifier.role_baselines import (
        accuracy_of_counts,
        fit_role_baseline,
        macro_f1_of_counts,
        role_counts,
    )
    import scholarly_nlp
    from scholarly_facet_classifier.role_tagger import role_metrics
    from scholarly_nlp import ROLES
    from scholarly_nlp.metrics import versus_baselines
    from scholarly_nlp.readers import AbstractRecord, read_csabstruct

    try:
        train = read_csabstruct(train_file)
    except scholarly_nlp.ScholarlyNLPError as exc:  # the tagger's own numbers stand without them
        skipped = {"skipped": f"cannot read the baselines' training file: {exc}"}
        return {name: dict(skipped) for name in names}, {name: dict(skipped) for name in names}
    by_paper: Dict[str, List[dict]] = {}
    for row in rows:
        by_paper.setdefault(row["paper_id"], []).append(row)
    # the sentences abstract_doc keeps (it drops blank ones), which are the tagged rows
    tagged = [AbstractRecord(r.paper_id, r.title, [s for s in r.sentences if s and s.strip()], r.roles)
              for r in records if r.paper_id in by_paper]
    for record in tagged:
        if len(record.sentences) != len(by_paper[record.paper_id]):
            raise ValueError(f"paper {record.paper_id}: {len(record.sentences)} sentences but "
                             f"{len(by_paper[record.paper_id])} tagged")
    gold = [[row["gold"] for row in by_paper[r.paper_id]] for r in tagged]
    ours = [role_counts(g, [row["predicted"] for row in by_paper[r.paper_id]]) for g, r in zip(gold, tagged)]
    baselines, theirs = {}, {}
    for name in names:
        predicted = fit_role_baseline(name, train).predict(tagged)
        flat_gold = [role for roles in gold for role in roles]
        baselines[name] = role_metrics(flat_gold, [role for roles in predicted for role in roles], ROLES)
        baselines[name].update({"train_file": str(train_file), "n_train_abstracts": len(train)})
        counts = [role_counts(g, p) for g, p in zip(gold, predicted)]
        theirs[name] = {"accuracy": counts, "macro_f1": counts}
    statistics = {"accuracy": accuracy_of_counts, "macro_f1": macro_f1_of_counts}
    versus = versus_baselines({"accuracy": ours, "macro_f1": ours}, theirs, pooled=statistics)
    return baselines, versus


def evaluate(model: str, csabstruct_dev: Optional[Path] = DEFAULT_DEV, csfcube: Optional[Path] = DEFAULT_CSFCUBE,
             limit: int = 0, batch_size: int = 32, predictions: Optional[Path] = None,
             baselines: Sequence[str] = (), baseline_train: Path = DEFAULT_TRAIN) -> Dict[str, Any]:
    """The evaluation report of the pipeline ``model`` (a dict; see the module docstring).

    ``model`` is an installed pipeline package's name or a pipeline folder; a name that is
    neither raises :class:`scholarly_nlp.UnknownPipelineError`. With ``predictions``, the
    per-sentence rows of the CSAbstruct-format file are written there as JSON lines. Each of
    ``baselines`` is fitted on ``baseline_train`` and scored on the same file
    (:func:`baseline_report`).
    """
    import scholarly_nlp
    from scholarly_nlp.readers import read_csabstruct, read_csfcube_abstracts

    from scholarly_facet_classifier.role_encoder import owns_encoder

    nlp = scholarly_nlp.load(str(model), components=PIPES, require=[COMPONENT])
    if "transformer" in nlp.pipe_names and owns_encoder(nlp.get_pipe(COMPONENT).model):
        nlp.disable_pipe("transformer")  # a tagger with its own encoder does not read it
    out: Dict[str, Any] = {"model": str(model), "pipeline": nlp.pipe_names}
    if csabstruct_dev is not None:
        records = read_csabstruct(csabstruct_dev)
        records = records[:limit] if limit > 0 else records
        rows, seconds = tag_records(nlp, records, batch_size)
        out["csabstruct_dev"] = report(rows, len(records), seconds)
        out["csabstruct_dev"]["source"] = str(csabstruct_dev)
        for key in ("accuracy", "macro_f1", "kappa"):
            out[key] = out["csabstruct_dev"][key]
        out["csabstruct_file"] = str(csabstruct_dev)
        out["n_sentences"] = len(rows)
        if baselines:
            out["baselines"], out["vs_baselines"] = baseline_report(rows, records, baselines, baseline_train)
        if predictions is not None:
            scholarly_nlp.write_atomic(Path(predictions), "".join(json.dumps(r) + "\n" for r in rows))
    if csfcube is not None:
        records = read_csfcube_abstracts(csfcube)
        records = records[:limit] if limit > 0 else records
        rows, seconds = tag_records(nlp, records, batch_size)
        out["csfcube_agreement"] = report(rows, sum(r.roles is not None for r in records), seconds)
        out["csfcube_agreement"]["source"] = str(csfcube)
        out["csfcube_agreement"]["note"] = "reference = CSFCube's shipped pred_labels (a model's output)"
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Command line entry point (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="an installed pipeline package (scholarly_core) or a pipeline folder "
                                      "(e.g. training/roles/model-best)")
    parser.add_argument("output", type=Path, nargs="?", help="the JSON report to write (or --output)")
    parser.add_argument("--output", dest="output_opt", type=Path, default=None, help="the JSON report to write")
    parser.add_argument("--csabstruct-file", "--csabstruct-dev", dest="csabstruct_file", type=Path, default=DEFAULT_DEV,
                        help="the CSAbstruct-format JSON-lines file to score (default: CSAbstruct dev)")
    parser.add_argument("--predictions", type=Path, default=None,
                        help="write one JSON line per sentence of that file (gold and predicted role) here")
    parser.add_argument("--baselines", default="position,tfidf_position",
                        help="role baselines scored on the same file and tested against ('' for none)")
    parser.add_argument("--baseline-train-file", type=Path, default=DEFAULT_TRAIN,
                        help="the CSAbstruct-format file the baselines are fitted on (default: CSAbstruct train)")
    parser.add_argument("--csfcube", type=Path, default=DEFAULT_CSFCUBE)
    parser.add_argument("--no-csfcube", action="store_true", help="skip the CSFCube agreement")
    parser.add_argument("--limit", type=int, default=0, help="only the first N abstracts of each file (0: all)")
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args(argv)
    args.output = args.output_opt or args.output
    if args.output is None:
        parser.error("give the JSON report's path (positional or --output)")
    import scholarly_nlp
    from scholarly_facet_classifier.role_baselines import ROLE_BASELINES
    from scholarly_nlp.metrics import versus_summary

    names = [name.strip() for name in args.baselines.split(",") if name.strip()]
    unknown = [name for name in names if name not in ROLE_BASELINES]
    if unknown:
        parser.error(f"unknown baseline {unknown[0]!r}; known: {', '.join(ROLE_BASELINES)}")

    try:
        result = evaluate(args.model, args.csabstruct_file, None if args.no_csfcube else args.csfcube, args.limit,
                          args.batch_size, args.predictions, names, args.baseline_train_file)
    except scholarly_nlp.ScholarlyNLPError as exc:
        raise SystemExit(f"error: {exc}")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    for key in ("csabstruct_dev", "csfcube_agreement"):
        if key in result:
            r = result[key]
            f1s = ", ".join(f"{k} {v['f']:.3f}" for k, v in r["per_label"].items())
            print(f"{key}: accuracy {r['accuracy']:.4f}, macro-F1 {r['macro_f1']:.4f}, kappa {r['kappa']:.4f} ({f1s})")
    for name, metrics in result.get("baselines", {}).items():
        if "skipped" in metrics:
            print(f"baseline {name}: skipped ({metrics['skipped']})")
            continue
        print(f"baseline {name}: accuracy {metrics['accuracy']:.4f}, macro-F1 {metrics['macro_f1']:.4f}")
    for name, test in result.get("vs_baselines", {}).items():
        print(f"{COMPONENT} - {name}: {versus_summary(test, VERSUS_LABELS, 'abstracts')}")
    print(f"-> {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
