"""Evaluating central-figure rankings against gold files (Yamamoto et al.'s protocol).

Gold files are JSON lines ``{"paper_id": ..., "ranking": [figure ids, best first]}`` (up to 3
ids; further keys are ignored) for GROBID TEI files ``<paper_id>.tei.xml``. Per paper, the
gold ids (the top 3) are the relevant set and the first gold id is the target:

* ``map`` / ``mrr`` - mean average precision and mean reciprocal rank of the relevant set;
* ``acc_at_1`` / ``acc_at_3`` - the first gold figure is at rank 1 / within the first 3.

All four come from :mod:`scholarly_nlp.metrics` and are averaged over *every* gold paper
with at least one gold id: a paper without a prediction, or whose TEI file is missing or
cannot be parsed, scores 0 on every metric (it is a miss, not skipped), and
:func:`evaluate_dir` lists such papers under ``"missing"`` (reasons in
``"missing_reasons"``), so a broken input lowers the numbers visibly instead of silently
shrinking the test set.

Baselines (:mod:`.baselines`) are scored the same way, except the random one, whose
per-paper values are exact expectations over random orders. Every result keeps its values
paper by paper (``per_paper``: ``{paper_id: {"ap", "rr", "acc_at_1", "acc_at_3"}}``), and
with a model :func:`evaluate_dir` tests it against each baseline on them (``vs_baselines``:
a paired bootstrap over the gold papers, :func:`scholarly_nlp.metrics.versus_baselines`).

Command line: ``python -m scholarly_figure_ranker.evaluation TEI_DIR GOLD [--output DIR]``
(baselines only) prints the report as JSON.
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example

import scholarly_nlp
from scholarly_nlp import MalformedInputError, ScholarlyNLPError
from scholarly_nlp.metrics import average_precision, hit_at_k, reciprocal_rank, versus_baselines

from .baselines import BASELINES, RandomBaseline, make_baseline
from .factory import rank_figures

PathLike = Union[str, Path]
GOLD_DEPTH = 3
"""How many gold figures (best first) form the relevant set."""
PREDICTIONS_FILE = "predictions.jsonl"
METRICS = ("map", "mrr", "acc_at_1", "acc_at_3")
PER_PAPER_KEYS = {"map": "ap", "mrr": "rr", "acc_at_1": "acc_at_1", "acc_at_3": "acc_at_3"}
"""Each metric's key in a paper's ``per_paper`` values (the metric is their mean over the papers)."""

__all__ = ["GOLD_DEPTH", "PER_PAPER_KEYS", "evaluate_dir", "evaluate_rankings", "load_papers", "proxy_eval",
           "read_gold", "versus_each_baseline", "write_predictions"]

log = logging.getLogger(__name__)


# --------------------------------------------------------------------------- gold and metrics


def read_gold(path: PathLike) -> dict[str, list[str]]:
    """Paper id -> gold figure ids (best first), in file order.

    Blank lines are skipped; a line that is not a JSON object with a string ``paper_id`` and
    a list ``ranking``, or a repeated paper id, raises MalformedInputError naming the line.
    """
    gold: dict[str, list[str]] = {}
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        paper_id, ranking = _parse_gold_line(path, number, line)
        if paper_id in gold:
            raise MalformedInputError(path, f"line {number}: paper {paper_id!r} appears twice")
        gold[paper_id] = ranking
    return gold


def _parse_gold_line(path: PathLike, number: int, line: str) -> tuple[str, list[str]]:
    """(paper id, ranking) of one gold line; MalformedInputError when it is not valid."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise MalformedInputError(path, f"line {number} is not JSON ({exc})") from exc
    if not isinstance(record, dict) or not isinstance(record.get("paper_id"), str) \
            or not isinstance(record.get("ranking"), list):
        raise MalformedInputError(path, f"line {number} needs a string 'paper_id' and a list 'ranking'")
    return record["paper_id"], [str(fig_id) for fig_id in record["ranking"]]


def _relevant(gold: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    """The first GOLD_DEPTH distinct gold ids per paper; papers without any are dropped."""
    relevant = {pid: list(dict.fromkeys(ranking))[:GOLD_DEPTH] for pid, ranking in gold.items()}
    return {pid: ids for pid, ids in relevant.items() if ids}


def evaluate_rankings(predictions: Mapping[str, Sequence[str]], gold: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """MAP, MRR, Acc@1, Acc@3 of ``predictions`` (paper id -> ids best first) against ``gold``.

    Averaged over the gold papers with at least one gold id (``n_papers``); a paper missing
    from ``predictions`` counts as an empty ranking (0 on every metric); predictions for
    papers not in the gold are ignored. ``per_paper`` holds each paper's values
    (:data:`PER_PAPER_KEYS`).
    """
    per_paper = {}
    for pid, ids in _relevant(gold).items():
        ranking = predictions.get(pid, ())
        per_paper[pid] = {"ap": average_precision(ranking, set(ids)), "rr": reciprocal_rank(ranking, set(ids)),
                          "acc_at_1": hit_at_k(ranking, {ids[0]}, 1), "acc_at_3": hit_at_k(ranking, {ids[0]}, 3)}
    return _mean_expected(per_paper, gold)


def _mean_expected(per_paper: Mapping[str, Mapping[str, float]], gold: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """Metrics as the mean of per-paper values (keys :data:`PER_PAPER_KEYS`; absent papers = 0),
    with ``n_papers`` and ``per_paper`` for every gold paper."""
    relevant = _relevant(gold)
    zeros = {key: 0.0 for key in PER_PAPER_KEYS.values()}
    values = {pid: {**zeros, **per_paper.get(pid, {})} for pid in relevant}
    report: dict[str, Any] = {}
    for metric, key in PER_PAPER_KEYS.items():
        report[metric] = sum(v[key] for v in values.values()) / len(values) if values else 0.0
    report["n_papers"] = len(relevant)
    report["per_paper"] = values
    return report


def versus_each_baseline(report: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The model's paired bootstrap against each baseline of an :func:`evaluate_dir` report, on
    each metric over the gold papers (``{name: {metric: {"delta", "ci_low", "ci_high",
    "p_value"}, "n_items"}}``; see :func:`scholarly_nlp.metrics.versus_baselines`)."""
    def columns(result: Mapping[str, Any]) -> dict[str, list[float]]:
        papers = result["per_paper"].values()
        return {metric: [values[key] for values in papers] for metric, key in PER_PAPER_KEYS.items()}

    return versus_baselines(columns(report), {name: columns(b) for name, b in report.get("baselines", {}).items()})


# --------------------------------------------------------------------------- papers and rankings


def load_papers(tei_dir: PathLike, paper_ids: Iterable[str], nlp: Optional[Language] = None
                ) -> tuple[dict[str, Doc], dict[str, str]]:
    """Read ``<tei_dir>/<paper_id>.tei.xml`` for each id: (id -> Doc, id -> why it is missing).

    A file that does not exist or that the reader rejects (any ScholarlyNLPError, or an
    OSError) is reported, not raised. ``nlp`` supplies the tokenizer; its pipes are not run.
    """
    nlp = nlp or scholarly_nlp.blank()
    docs: dict[str, Doc] = {}
    missing: dict[str, str] = {}
    for paper_id in paper_ids:
        path = Path(tei_dir) / f"{paper_id}.tei.xml"
        if not path.is_file():
            missing[paper_id] = f"no TEI file {path}"
            continue
        try:
            docs[paper_id] = scholarly_nlp.read(path, nlp=nlp)
        except (ScholarlyNLPError, OSError) as exc:
            missing[paper_id] = f"unparsable: {exc}"
    for paper_id, reason in missing.items():
        log.warning("figure ranking evaluation: paper %s counts as a miss (%s)", paper_id, reason)
    return docs, missing


def pipeline_rankings(nlp: Language, docs: Mapping[str, Doc]) -> dict[str, list[str]]:
    """Run ``nlp`` (with a ``figure_ranker``) on the docs: paper id -> all candidate ids, best first."""
    ranker = nlp.get_pipe("figure_ranker")
    ids = list(docs)
    processed = nlp.pipe([docs[pid] for pid in ids])
    return {pid: rank_figures([f.id for f in ranker.candidates(doc)], doc._.figure_scores or {})
            for pid, doc in zip(ids, processed)}


def write_predictions(path: PathLike, rankings: Mapping[str, Sequence[str]]) -> None:
    """Write ``{"paper_id", "ranking"}`` JSON lines atomically (one per paper, given order)."""
    lines = [json.dumps({"paper_id": pid, "ranking": list(ranking)}) for pid, ranking in rankings.items()]
    scholarly_nlp.write_atomic(path, "".join(line + "\n" for line in lines))


def _baseline_names(baselines: Union[bool, Iterable[str]]) -> list[str]:
    """The baselines to run: all for True, none for False, else the given names (checked)."""
    if baselines is True:
        return list(BASELINES)
    if baselines is False or baselines is None:
        return []
    names = list(baselines)
    unknown = [n for n in names if n not in BASELINES]
    if unknown:
        raise ValueError(f"unknown baselines {unknown}; known: {', '.join(BASELINES)}")
    return names


def run_baselines(docs: Mapping[str, Doc], gold: Mapping[str, Sequence[str]], names: Sequence[str], *,
                  include_tables: bool = False, encoder=None, output_dir: Optional[PathLike] = None
                  ) -> dict[str, dict[str, Any]]:
    """Scores of each named baseline; rankings go to ``output_dir/baseline_<name>.jsonl``."""
    report: dict[str, dict[str, Any]] = {}
    for name in names:
        if name == "random":
            ranker = RandomBaseline(include_tables)
            per_paper = {pid: ranker.expected(doc, gold[pid]) for pid, doc in docs.items()}
            report[name] = _mean_expected(per_paper, gold)
            continue
        options = {"encoder": encoder} if name == "zero_shot_minilm" and encoder is not None else {}
        ranker = make_baseline(name, include_tables=include_tables, **options)
        rankings = {pid: ranker.rank(doc) for pid, doc in docs.items()}
        report[name] = evaluate_rankings(rankings, gold)
        if output_dir is not None:
            write_predictions(Path(output_dir) / f"baseline_{name}.jsonl", rankings)
    return report


def _include_tables(nlp: Optional[Language]) -> bool:
    """The ranker's include_tables setting (False without a ranker)."""
    if nlp is None or "figure_ranker" not in nlp.pipe_names:
        return False
    return bool(nlp.get_pipe("figure_ranker").cfg.get("include_tables", False))


def evaluate_dir(tei_dir: PathLike, gold_path: PathLike, nlp: Optional[Language] = None,
                 output_dir: Optional[PathLike] = None, baselines: Union[bool, Iterable[str]] = True,
                 encoder=None) -> dict[str, Any]:
    """Evaluate the gold papers of ``tei_dir``: the pipeline's ranker and/or the baselines.

    ``nlp`` is a pipeline containing ``figure_ranker``; without one only baselines run and the
    top-level metrics are None. With ``output_dir`` the pipeline's rankings (every candidate,
    best first) go to ``predictions.jsonl`` and baseline rankings to ``baseline_<name>.jsonl``.
    ``baselines`` is True (all), False, or names from :data:`baselines.BASELINES`; ``encoder``
    replaces MiniLM in the zero-shot baseline. Returns ``{"map", "mrr", "acc_at_1",
    "acc_at_3", "n_papers", "per_paper", "missing", "missing_reasons", "baselines": {name:
    metrics}, "vs_baselines"}`` (``per_paper`` with a model, and in each baseline's metrics;
    ``vs_baselines`` with a model and baselines, :func:`versus_each_baseline`); missing or
    unparsable papers count as misses (see the module docstring).
    """
    gold = read_gold(gold_path)
    if nlp is not None and "figure_ranker" not in nlp.pipe_names:
        raise ValueError(f"the pipeline has no figure_ranker (pipes: {nlp.pipe_names})")
    docs, missing = load_papers(tei_dir, gold, nlp)
    report: dict[str, Any] = {metric: None for metric in METRICS}
    report["n_papers"] = len(_relevant(gold))
    if nlp is not None:
        rankings = pipeline_rankings(nlp, docs)
        report.update(evaluate_rankings(rankings, gold))
        if output_dir is not None:
            write_predictions(Path(output_dir) / PREDICTIONS_FILE, rankings)
    report["missing"] = list(missing)
    report["missing_reasons"] = missing
    names = _baseline_names(baselines)
    if names:
        report["baselines"] = run_baselines(docs, gold, names, include_tables=_include_tables(nlp),
                                            encoder=encoder, output_dir=output_dir)
        if nlp is not None:
            report["vs_baselines"] = versus_each_baseline(report)
    return report


def proxy_eval(docs: Iterable[Doc], nlp: Language) -> dict[str, Optional[float]]:
    """The ranker's self-supervised proxy scores on held-out paper Docs (no gold needed).

    Each sentence that mentions a figure (mention masked) should rank that figure's caption
    above the paper's other captions: ``{"figure_proxy_acc", "figure_proxy_mrr"}`` from
    :meth:`FigureRanker.score` (None when the papers give no such sentence).
    """
    return nlp.get_pipe("figure_ranker").score([Example(doc, doc) for doc in docs])


def main(argv: Optional[Sequence[str]] = None) -> dict[str, Any]:
    """Command line: evaluate the baselines on a TEI folder and a gold file, print JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tei_dir")
    parser.add_argument("gold")
    parser.add_argument("--output", default=None, help="folder for the baselines' rankings")
    parser.add_argument("--baselines", nargs="*", default=None, help="names (default: all)")
    args = parser.parse_args(argv)
    report = evaluate_dir(args.tei_dir, args.gold, output_dir=args.output,
                          baselines=True if args.baselines is None else args.baselines)
    print(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    main()
