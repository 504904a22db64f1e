"""Answer CL-SciSumm Task 1A/1B on a 2018-layout test folder and score with the official rules.

For every reference-paper folder ``<RP>/`` of ``--test-dir`` (``Reference_XML/<RP>.xml``,
``Citance_XML/``, ``annotation/<RP>.csv`` whose answer columns may be empty; a training
``annotation/*.ann.txt`` works too) the reference paper is read into a Doc with its
citances (``reference_folder_doc``) and answered by

* ``--system model``: a trained pipeline (``--model``: an installed pipeline package, by default
  the shipped ``scholarly_core``, or a pipeline folder such as ``training/pipeline``; only its
  ``citance_linker`` and ``citance_facet_classifier`` are loaded): ``citance_linker`` chooses
  the sentences, ``citance_facet_classifier`` the facets;
* ``--system bm25``: the baseline: BM25 over the paper's sentences times the position
  prior (:mod:`scholarly_nlp.retrieval.sentences`), top ``--k``, facet ``Method`` always.

``<output-dir>/<RP>.csv`` gets every input row, with Reference Offset = the chosen sids
(``['17', '18']``), Reference Text = those sentences as ``<S sid ="17" ssid = "3">...</S>``
and Discourse Facet = the facets (``Method_Citation`` ...); a citance the system could not
answer (no text) gets ``NA``, which the official script skips. Every
``<gold-dir>/<RP>_<annotator>.csv`` whose paper was answered is then scored the way the
official 2018 script (``task1_eval.py``) does, quirks included (see
:func:`scholarly_nlp.readers.clscisumm_cells.official_task1_maps`), and also keyed per citance.
``--metrics`` (default ``metrics/clscisumm.json``) gets ``task1a_precision``,
``task1a_recall``, ``task1a_f1``, ``task1b_precision``, ``task1b_recall``, ``task1b_f1``
(official micro), the ``_macro`` variants, counts, ``per_citance`` (the same keyed by
Citance Number), ``per_file`` (each gold file's official counts and its ``paper``), ``failed``
and settings. With ``--system model`` each of ``--baselines`` (default ``bm25``: the BM25 +
position prior system at k 3, as ``--system bm25`` answers; ``''`` for none) answers the same
folders into ``<output-dir>/baselines/<name>/`` and is scored the same way under
``baselines``; ``vs_baselines`` holds the model's paired bootstrap against each on the official
Task 1A and 1B F1 (``task1a_f1``, ``task1b_f1``: ``delta``, ``ci_low``, ``ci_high``,
``p_value``; ``n_items``), resampling the reference papers both answered with their counts
pooled over annotators and citances (:func:`scholarly_nlp.metrics.versus_baselines`).

A reference-paper folder that cannot be read (no Reference_XML, XML broken beyond
recovery, no annotation) is reported with the reason and the others go on; as in the
official script, a gold file whose paper has no system file is not scored (listed in
``gold_files_without_system``).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import warnings
from pathlib import Path
from typing import Callable, Optional

import scholarly_nlp
from scholarly_nlp.retrieval import top_sentences as bm25_link
from scholarly_nlp.metrics import (
    FACET_LABELS,
    versus_baselines,
    versus_summary,
    clscisumm_task1_official,
    clscisumm_task1_per_citance,
    normalize_facet,
    official_task1_counts,
)
from scholarly_nlp.readers import citance_key, citance_task1_maps, official_task1_maps
from scholarly_nlp.readers import annotation_files, read_folder_records, reference_folder_doc
from scholarly_nlp.readers import (
    read_task1_rows,
    reference_text_markup,
    task1_row,
    write_task1_csv,
)

_S_OPEN = re.compile(rb"<S\b([^>]*)>")
_ATTR = re.compile(rb"""\b(sid|ssid)\s*=\s*["']?\s*([^"'\s>]*)""")
SCORE_KEYS = ("task1a_precision", "task1a_recall", "task1a_f1", "task1b_precision", "task1b_recall", "task1b_f1")

# A prediction: citance id -> (chosen sentence indices, best first; canonical facets).
Predictions = dict[str, tuple[list[int], list[str]]]


def rp_folders(test_dir: Path) -> list[Path]:
    """The reference-paper folders of a test directory (every visible sub-folder), sorted."""
    return sorted(p for p in test_dir.iterdir() if p.is_dir() and not p.name.startswith("."))


def input_rows(rp_dir: Path) -> list[dict]:
    """The citance rows to answer: ``annotation/<RP>.csv`` as raw cells (every row kept), or
    the rows of a training ``.ann.txt`` without answers. ScholarlyNLPError when there is none."""
    files = annotation_files(rp_dir)
    if not files:
        raise scholarly_nlp.InputError(str(rp_dir), "has no annotation/<RP>.csv (or .ann.txt) listing the citances")
    preferred = [f for f in files if f.name == f"{rp_dir.name}.csv"]
    if files[0].suffix == ".csv":
        return read_task1_rows((preferred or files)[0])
    return [task1_row(r, answers=False) for r in read_folder_records(rp_dir) if str(r.get("citation_text") or "").strip()]


def ssid_map(xml_path: Path) -> dict[str, str]:
    """sid -> ssid of the ``<S>`` elements of a Reference_XML file (first occurrence of a sid)."""
    out: dict[str, str] = {}
    try:
        data = xml_path.read_bytes()
    except OSError:
        return out
    for match in _S_OPEN.finditer(data):
        attrs = {name.decode(): value.decode("utf-8", "replace") for name, value in _ATTR.findall(match.group(1))}
        if attrs.get("sid") and attrs.get("ssid"):
            out.setdefault(attrs["sid"], attrs["ssid"])
    return out


def canonical_facets(labels) -> list[str]:
    """Canonical facets of a component's labels, unknown ones dropped, order kept."""
    out = []
    for label in labels or []:
        try:
            out.append(normalize_facet(str(label)))
        except ValueError:
            continue
    return list(dict.fromkeys(out))


def model_predictor(nlp) -> Callable:
    """A function doc -> Predictions running the trained pipeline's pipes on the reference Doc."""

    def predict(doc) -> Predictions:
        doc = nlp(doc)
        links = doc._.citance_links or {}
        facets = (doc._.citance_facets or {}) if doc.has_extension("citance_facets") else {}
        return {str(cid): ([int(item["index"]) for item in chosen], canonical_facets(facets.get(cid)))
                for cid, chosen in links.items()}

    return predict


def bm25_predictor(k: int, position_boost: float, prior_fraction: float, facet: str) -> Callable:
    """A function doc -> Predictions: BM25 + position prior top ``k``, one fixed facet."""

    def predict(doc) -> Predictions:
        starts = {sent.start: i for i, sent in enumerate(doc.sents)}
        out: Predictions = {}
        for citance in doc._.incoming_citances or []:
            text = (citance.get("text") or "").strip()
            if not text:
                continue
            hits = bm25_link(text, doc, k=k, position_boost=position_boost, prior_fraction=prior_fraction)
            out[str(citance["id"])] = ([starts[span.start] for span, _ in hits], [facet])
        return out

    return predict


def answer_rows(rows: list[dict], doc, predictions: Predictions, ssids: dict[str, str],
                default_facet: str) -> tuple[list[dict], dict]:
    """Every input row with its answer columns filled (``NA`` when unanswered); and counts."""
    sentences = list(doc.sents)
    sids = list(doc._.paper_meta["sids"])
    out, stats = [], {"rows": len(rows), "answered": 0, "default_facet": 0}
    for row in rows:
        row = dict(row)
        indices, facets = predictions.get(citance_key(row.get("Citance Number", "")), ([], []))
        indices = [i for i in dict.fromkeys(indices) if 0 <= i < len(sentences)]
        if not indices:
            row["Reference Offset"] = row["Reference Text"] = row["Discourse Facet"] = "NA"
            out.append(row)
            continue
        ordered = sorted(indices)  # document order, as in the published gold
        row["Reference Offset"] = [sids[i] for i in ordered]
        row["Reference Text"] = reference_text_markup([(sids[i], sentences[i].text, ssids.get(sids[i])) for i in ordered])
        if not facets:
            facets = [default_facet]
            stats["default_facet"] += 1
        row["Discourse Facet"] = facets
        stats["answered"] += 1
        out.append(row)
    return out, stats


def run_paper(rp_dir: Path, nlp, predict: Callable, output_dir: Path, default_facet: str) -> dict:
    """Answer one reference paper and write ``<output_dir>/<RP>.csv``; returns its counts."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rows = input_rows(rp_dir)
        doc = reference_folder_doc(rp_dir, nlp)
    predictions = predict(doc)
    ssids = ssid_map(Path(doc._.paper_meta.get("source") or ""))
    answered, stats = answer_rows(rows, doc, predictions, ssids, default_facet)
    write_task1_csv(output_dir / f"{rp_dir.name}.csv", answered)
    stats["warnings"] = [str(w.message) for w in caught]
    return stats


def gold_pairs(gold_dir: Path, output_dir: Path, written: set[str]) -> tuple[list[tuple[str, list, list]], list[str]]:
    """(gold file name, system rows, gold rows) for every ``<RP>_*.csv`` gold file whose paper was
    answered; and the names of the other gold files (not scored, as in the official script)."""
    pairs, unscored = [], []
    if not gold_dir.is_dir():
        return pairs, unscored
    for gold in sorted(gold_dir.iterdir()):
        if not gold.is_file() or gold.name.startswith(".") or gold.suffix.lower() != ".csv":
            continue
        paper = gold.name.split("_")[0]
        if paper not in written:
            unscored.append(gold.name)
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pairs.append((gold.name, read_task1_rows(output_dir / f"{paper}.csv"), read_task1_rows(gold)))
    return pairs, unscored


def score(pairs: list[tuple[str, list, list]]) -> dict:
    """Official and per-citance scores plus per-file official counts."""
    if not pairs:
        return {key: None for key in SCORE_KEYS}
    official = [(official_task1_maps(s), official_task1_maps(g)) for _, s, g in pairs]
    report = clscisumm_task1_official(official)
    report["per_citance"] = clscisumm_task1_per_citance([(citance_task1_maps(s), citance_task1_maps(g))
                                                         for _, s, g in pairs])
    per_file = []
    for (name, _, _), (system, gold) in zip(pairs, official):
        a, b = official_task1_counts(system, gold)
        per_file.append({"gold_file": name, "paper": name.split("_")[0], "task1a": a._asdict(),
                         "task1b": b._asdict()})
    report["per_file"] = per_file
    report["n_gold_citances"] = sum(1 for _, _, g in pairs for r in g if r.get("Reference Text", "NA") != "NA")
    return report


PIPES = ["citance_linker", "citance_facet_classifier"]
BM25_K = 3  # the k that won grouped CV for BM25 + prior
VERSUS_LABELS = {"task1a_f1": "Task 1A F1", "task1b_f1": "Task 1B F1"}


def bm25_system(args, k: int) -> tuple[object, Callable, dict]:
    """(blank nlp, predictor, settings) of the BM25 + position prior system at ``k``."""
    settings = {"k": k, "position_boost": args.position_boost, "prior_fraction": args.prior_fraction,
                "facet": args.default_facet}
    return scholarly_nlp.blank(), bm25_predictor(k, args.position_boost, args.prior_fraction, args.default_facet), settings


#: The baselines ``--baselines`` may name: name -> (args -> (nlp, predictor, settings)).
BASELINES: dict[str, Callable] = {"bm25": lambda args: bm25_system(args, BM25_K)}


def load_predictor(args) -> tuple[object, Callable, dict]:
    """(nlp for tokenising, predictor, settings) for the chosen system; exits with one line on error."""
    if args.system == "bm25":
        return bm25_system(args, args.k or BM25_K)
    overrides = {"components": {"citance_linker": {"k": args.k}}} if args.k else {}
    try:
        nlp = scholarly_nlp.load(args.model, components=PIPES, require=["citance_linker"], gpu_id=args.gpu_id,
                                 config=overrides)
    except scholarly_nlp.UnknownPipelineError as exc:
        sys.exit(f"error: {exc} (or pass --vars.system bm25 for the baseline)")
    except scholarly_nlp.ScholarlyNLPError as exc:
        sys.exit(f"error: {exc}")
    linker = nlp.get_pipe("citance_linker")
    settings = {"model": str(args.model), "pipes": list(nlp.pipe_names),
                "k": linker.cfg.get("k"), "threshold": linker.cfg.get("threshold"),
                "candidates": linker.cfg.get("candidates"), "bm25_weight": linker.cfg.get("bm25_weight"),
                "default_facet": args.default_facet}
    return nlp, model_predictor(nlp), settings


def answer_and_score(folders: list[Path], nlp, predict: Callable, output_dir: Path, gold_dir: Path,
                     default_facet: str, label: str = "") -> tuple[dict, tuple]:
    """Answer every reference-paper folder into ``output_dir`` and score the answers against
    ``gold_dir``: (the report's scores and counts; (answered papers, failures, reader warnings,
    row totals, seconds)). A folder that cannot be answered is reported (``failed (label):``
    for a baseline) and the rest go on."""
    start = time.perf_counter()
    written: set[str] = set()
    failed, warned = [], {}
    totals = {"rows": 0, "answered": 0, "default_facet": 0}
    for rp_dir in folders:
        try:
            stats = run_paper(rp_dir, nlp, predict, output_dir, default_facet)
        except (scholarly_nlp.ScholarlyNLPError, ValueError, OSError) as exc:
            failed.append({"paper": rp_dir.name, "reason": str(exc)})
            print(f"failed{f' ({label})' if label else ''}: {rp_dir.name}: {exc}")
            continue
        written.add(rp_dir.name)
        for key in totals:
            totals[key] += stats[key]
        if stats["warnings"]:
            warned[rp_dir.name] = stats["warnings"]
    seconds = time.perf_counter() - start
    pairs, unscored = gold_pairs(gold_dir, output_dir, written)
    report = score(pairs)
    report.update({
        "n_papers": len(written), "n_failed": len(failed), "n_gold_files": len(pairs),
        "n_citances": totals["rows"], "n_answered": totals["answered"], "n_default_facet": totals["default_facet"],
        "failed": failed, "gold_files_without_system": unscored,
        "warnings": {paper: messages[:5] for paper, messages in warned.items()},
        "seconds": round(seconds, 2),
    })
    return report, (written, failed, warned, totals, seconds)


def paper_counts(report: dict, task: str) -> dict[str, list[int]]:
    """Official ``(tp, fp, fn)`` of ``task`` (task1a / task1b) per reference paper: its gold
    files' counts summed, so that the micro F1 over all papers is the official one."""
    counts: dict[str, list[int]] = {}
    for entry in report.get("per_file") or []:
        total = counts.setdefault(entry["paper"], [0, 0, 0])
        for i, key in enumerate(("tp", "fp", "fn")):
            total[i] += entry[task][key]
    return counts


def versus_each_baseline(report: dict) -> dict:
    """The system's paired bootstrap against each baseline of ``report`` on the official Task 1A
    and 1B F1, resampling reference papers (all annotators of a paper together) with their
    counts pooled (:func:`scholarly_nlp.metrics.versus_baselines`), over the papers both
    scored: all of them unless one system failed on a paper, when ``delta`` is no longer the
    difference of the two reported F1s (``n_items`` says how many papers were compared)."""
    tasks = ("task1a", "task1b")
    ours = {task: paper_counts(report, task) for task in tasks}
    versus = {}
    for name, baseline in report.get("baselines", {}).items():
        theirs = {task: paper_counts(baseline, task) for task in tasks}
        papers = sorted(set(ours["task1a"]) & set(theirs["task1a"]))
        ours_by_task, theirs_by_task = ({f"{task}_f1": [counts[task][paper] for paper in papers] for task in tasks}
                                        for counts in (ours, theirs))
        versus.update(versus_baselines(ours_by_task, {name: theirs_by_task}, pooled=True))
    return versus


def main(argv: Optional[list[str]] = None) -> int:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--test-dir", required=True, help="2018-layout folder of <RP>/ folders")
    parser.add_argument("--gold-dir", required=True, help="folder of gold <RP>_<annotator>.csv files")
    parser.add_argument("--output-dir", required=True, help="where the system's <RP>.csv files go")
    parser.add_argument("--metrics", default="metrics/clscisumm.json")
    parser.add_argument("--system", choices=("model", "bm25"), default="model")
    parser.add_argument("--model", default="scholarly_core",
                        help="installed pipeline package (scholarly_core) or pipeline folder (--system model)")
    parser.add_argument("--gpu-id", type=int, default=-1)
    parser.add_argument("--k", type=int, default=0, help="sentences per citance (0: the pipeline's k; bm25: 3, the k that won grouped CV for BM25 + prior)")
    parser.add_argument("--position-boost", type=float, default=1.5, help="bm25 system: position prior boost")
    parser.add_argument("--prior-fraction", type=float, default=0.3, help="bm25 system: boosted leading fraction")
    parser.add_argument("--default-facet", default="Method", choices=FACET_LABELS,
                        help="facet written when the system gives none (bm25: always)")
    parser.add_argument("--baselines", default="bm25",
                        help="system model: baselines answered and scored on the same folders, into "
                             "<output-dir>/baselines/<name>/, and tested against ('' for none; known: bm25 at k 3)")
    args = parser.parse_args(argv)

    test_dir, output_dir, gold_dir = Path(args.test_dir), Path(args.output_dir), Path(args.gold_dir)
    if not test_dir.is_dir():
        sys.exit(f"error: no test folder at {test_dir}; run 'weasel run make-test-layout' or pass --vars.test_dir")
    folders = rp_folders(test_dir)
    if not folders:
        sys.exit(f"error: {test_dir} holds no reference-paper folder")
    baseline_names = [b.strip() for b in args.baselines.split(",") if b.strip()] if args.system == "model" else []
    unknown = [b for b in baseline_names if b not in BASELINES]
    if unknown:
        sys.exit(f"error: unknown baseline {unknown[0]!r}; known: {', '.join(BASELINES)}")
    nlp, predict, settings = load_predictor(args)

    report, answered = answer_and_score(folders, nlp, predict, output_dir, gold_dir, args.default_facet)
    report = {"system": args.system, **report}
    report["settings"] = settings
    report.update({"test_dir": str(test_dir), "gold_dir": str(gold_dir), "output_dir": str(output_dir)})
    if baseline_names and report["n_gold_files"]:
        report["baselines"] = {}
        for name in baseline_names:
            b_nlp, b_predict, b_settings = BASELINES[name](args)
            b_report, _ = answer_and_score(folders, b_nlp, b_predict, output_dir / "baselines" / name, gold_dir,
                                           args.default_facet, label=name)
            report["baselines"][name] = {**b_report, "settings": b_settings}
        report["vs_baselines"] = versus_each_baseline(report)
    written, failed, warned, totals, seconds = answered
    scholarly_nlp.write_atomic(args.metrics, json.dumps(report, indent=2))

    print(f"{args.system}: {len(written)} paper(s) answered, {totals['answered']}/{totals['rows']} citances, "
          f"{len(failed)} failed, {seconds:.1f} s; CSVs in {output_dir}")
    if warned:
        print(f"reader warnings in {len(warned)} paper(s) (first ones in {args.metrics})")
    if report["n_gold_files"]:
        print(json.dumps({k: round(report[k], 4) for k in SCORE_KEYS}))
        print("per citance: " + json.dumps({k: round(report["per_citance"][k], 4) for k in SCORE_KEYS}))
    else:
        print(f"no gold file in {gold_dir} matches an answered paper: predictions written, nothing scored")
    for name, baseline in report.get("baselines", {}).items():
        print(f"baseline {name}: " + json.dumps({k: round(baseline[k], 4) for k in SCORE_KEYS if baseline[k] is not None}))
    for name, test in report.get("vs_baselines", {}).items():
        print(f"{args.system} - {name}: {versus_summary(test, VERSUS_LABELS, 'reference papers')}")
    if report["gold_files_without_system"]:
        print(f"gold files not scored (no system file): {', '.join(report['gold_files_without_system'])}")
    if not written:
        print("error: no reference paper could be answered")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
