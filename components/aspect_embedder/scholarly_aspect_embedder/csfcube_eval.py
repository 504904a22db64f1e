"""CSFCube evaluation harness: pools, official ranked-pool files, metrics and a table.

CSFCube (Mysore et al., 2021) judges, for each query paper and query aspect (CSFCube's
"facet"; in scholarly_nlp a facet is a citation facet and these are
:data:`scholarly_nlp.QUERY_ASPECTS`: ``background``, ``method``, ``result``), a pool of about
100 candidate abstracts. A system ranks every pool; CSFCube's ``ranking_eval.py`` reads the
ranked pools from files named ``test-pid2pool-csfcube-<model>-<aspect>-ranked.json``
holding ``{query_pid: [[cand_pid, distance], ...]}``, smallest distance first, and scores
them with the metrics that :mod:`scholarly_nlp.metrics.csfcube` re-implements.

* :func:`csfcube_pools` reads the pools from the ``test-pid2anns-csfcube-<aspect>.json`` files
  (:func:`scholarly_nlp.readers.read_csfcube_qrels`).
* :func:`write_ranked_pools` / :func:`read_ranked_pools`: the official ranked-pool files.
* :func:`csfcube_metrics`: MAP, NDCG%20, NDCG@20, MRR, R@20 (percent) per aspect, for ``all``
  (every query-aspect pair pooled) and, when ``evaluation_splits.json`` is there, per fold.
* :func:`metrics_table`: a Markdown table of several systems' metrics.
* :func:`compare_runs`: a paired bootstrap of two runs' per-query average precision (over the
  query-aspect pairs both ranked): how sure a MAP difference is.
* :func:`rank_pools` / :func:`evaluate_rankers`: run rankers (see
  :mod:`scholarly_aspect_embedder.baselines`) over every pool and evaluate them.

As in the official script, a ranked list is scored in the order it is given (the rankers and
:func:`write_ranked_pools` put the smallest distance first).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from scholarly_nlp import QUERY_ASPECTS, MalformedInputError, write_atomic
from scholarly_nlp.metrics import csfcube_per_query, evaluate_csfcube, paired_bootstrap
from scholarly_nlp.readers import (AbstractRecord, load_csfcube_qrels, read_csfcube_abstracts, read_csfcube_folds,
                                   read_csfcube_qrels, read_json)

PathLike = Union[str, Path]
Ranked = Dict[str, List[Tuple[str, float]]]

__all__ = [
    "ABSTRACTS_FILE",
    "SPLITS_FILE",
    "METRIC_KEYS",
    "csfcube_pools",
    "ranked_pool_filename",
    "write_ranked_pools",
    "read_ranked_pools",
    "csfcube_metrics",
    "metrics_table",
    "compare_runs",
    "rank_pools",
    "evaluate_rankers",
]

ABSTRACTS_FILE = "abstracts-csfcube-preds.jsonl"
SPLITS_FILE = "evaluation_splits.json"

METRIC_KEYS = {"MAP": "map", "NDCG%20": "ndcg%20", "NDCG@20": "ndcg@20", "MRR": "mrr", "R@20": "recall@20"}
"""Reported name -> key of :func:`scholarly_nlp.metrics.csfcube.csfcube_query_metrics`."""


# --------------------------------------------------------------------------- pools and files


def csfcube_pools(data_dir: PathLike) -> Dict[str, Dict[str, List[str]]]:
    """``{aspect: {query_pid: [cand_pid, ...]}}`` of every query in the three pid2anns files.

    Candidates keep the order of the file's ``cands`` list.
    """
    data_dir = Path(data_dir)
    return {
        aspect: {q: list(judged) for q, judged in
                 read_csfcube_qrels(data_dir / f"test-pid2anns-csfcube-{aspect}.json").items()}
        for aspect in QUERY_ASPECTS
    }


def ranked_pool_filename(model_name: str, aspect: str) -> str:
    """The official file name ``test-pid2pool-csfcube-<model_name>-<aspect>-ranked.json``."""
    return f"test-pid2pool-csfcube-{model_name}-{aspect}-ranked.json"


def _by_distance(entries: Sequence[Sequence[Any]]) -> List[List[Any]]:
    """``[[cand_pid, distance], ...]`` sorted by distance; ties keep their input order."""
    pairs = [[str(pid), float(dist)] for pid, dist in entries]
    return sorted(pairs, key=lambda pair: pair[1])


def write_ranked_pools(output_dir: PathLike, model_name: str, aspect: str,
                       ranked: Mapping[str, Sequence[Sequence[Any]]]) -> Path:
    """Write one aspect's ranked pools in CSFCube's format; returns the file's path.

    ``ranked`` maps a query pid to ``(cand_pid, distance)`` pairs; the file holds
    ``{query_pid: [[cand_pid, distance], ...]}`` with the smallest distance first (a stable
    sort: equal distances keep the input order). The file is written atomically.
    """
    path = Path(output_dir) / ranked_pool_filename(model_name, aspect)
    payload = {str(q): _by_distance(entries) for q, entries in ranked.items()}
    write_atomic(path, json.dumps(payload))
    return path


def read_ranked_pools(path: PathLike) -> Ranked:
    """Read a ranked-pool file: ``{query_pid: [(cand_pid, distance), ...]}`` in file order.

    Raises InputError / MalformedInputError (naming the file) when it cannot be read or is
    not ``{query_pid: [[cand_pid, distance], ...]}``.
    """
    data = read_json(path)
    if not isinstance(data, dict):
        raise MalformedInputError(path, "expected a JSON object mapping query pids to ranked candidates")
    out: Ranked = {}
    for qpid, entries in data.items():
        if not isinstance(entries, list) or not all(
            isinstance(e, list) and len(e) == 2 and isinstance(e[1], (int, float)) for e in entries
        ):
            raise MalformedInputError(path, f"query {qpid!r}: expected a list of [cand_pid, distance] pairs")
        out[str(qpid)] = [(str(pid), float(dist)) for pid, dist in entries]
    return out


# --------------------------------------------------------------------------- metrics


def _report(metrics: Mapping[str, float]) -> Dict[str, Any]:
    """The reported metrics in percent (2 decimals) plus ``num_queries``."""
    out: Dict[str, Any] = {name: round(100.0 * metrics[key], 2) for name, key in METRIC_KEYS.items()}
    out["num_queries"] = int(metrics["num_queries"])
    return out


def _merged_ranked(ranked_by_aspect: Mapping[str, Mapping[str, Sequence]]) -> Dict[str, Sequence]:
    """All aspects' rankings keyed ``<pid>_<aspect>`` (the keys of ``load_csfcube_qrels(.., "all")``)."""
    return {f"{q}_{aspect}": r for aspect in QUERY_ASPECTS for q, r in ranked_by_aspect[aspect].items()}


def _fold_metrics(splits: Path, aspect: str, ranked: Mapping[str, Sequence],
                  qrels: Mapping[str, Mapping[str, float]]) -> Dict[str, Dict[str, Any]]:
    """Metrics of each fold of ``splits`` for ``aspect``; absent aspects/queries warn and skip."""
    try:
        folds = read_csfcube_folds(splits, aspect)
    except MalformedInputError as exc:
        warnings.warn(f"no folds evaluated for {aspect!r}: {exc}")
        return {}
    out = {}
    for fold, ids in folds.items():
        absent = [q for q in ids if q not in qrels]
        if absent or not ids:
            warnings.warn(f"fold {fold!r} of {aspect!r} skipped: {len(absent)} of its {len(ids)} queries "
                          f"are not in the qrels (e.g. {absent[0] if absent else None!r})")
            continue
        out[fold] = _report(evaluate_csfcube(ranked, qrels, folds={fold: ids}))
    return out


def csfcube_metrics(data_dir: PathLike, ranked_by_aspect: Mapping[str, Mapping[str, Sequence]]) -> Dict[str, Any]:
    """CSFCube metrics of a run: ``{aspect: m, "all": m, "folds": {aspect: {fold: m}}}``.

    ``ranked_by_aspect`` maps each of the three query aspects to ``{query_pid: ranked
    candidates}`` (``(cand_pid, distance)`` pairs or bare pids, best first), covering every
    query of that aspect's pid2anns file with a permutation of its pool (ValueError
    otherwise, from :func:`~scholarly_nlp.metrics.csfcube.evaluate_csfcube`). Each ``m`` is
    ``{"MAP", "NDCG%20", "NDCG@20", "MRR", "R@20"}`` in percent rounded to 2 decimals, plus
    ``num_queries``; ``"all"`` pools every query-aspect pair. ``"per_query_ap"`` maps each
    query-aspect pair (``<pid>_<aspect>``) to its average precision in percent, the items of
    :func:`compare_runs`. ``"folds"`` is present when
    ``evaluation_splits.json`` is in ``data_dir``: per aspect and ``all``, per fold name, the
    same metrics on that fold's queries (a fold with queries absent from the qrels is skipped
    with a warning).
    """
    data_dir = Path(data_dir)
    missing = [f for f in QUERY_ASPECTS if f not in ranked_by_aspect]
    if missing:
        raise ValueError(f"no rankings for aspect(s) {missing}; expected all of {list(QUERY_ASPECTS)}")
    rankings = {aspect: {str(q): r for q, r in ranked_by_aspect[aspect].items()} for aspect in QUERY_ASPECTS}
    rankings["all"] = _merged_ranked(rankings)
    qrels = {aspect: load_csfcube_qrels(data_dir, aspect) for aspect in QUERY_ASPECTS + ("all",)}
    result: Dict[str, Any] = {aspect: _report(evaluate_csfcube(rankings[aspect], qrels[aspect]))
                              for aspect in QUERY_ASPECTS + ("all",)}
    result["per_query_ap"] = {query: round(100.0 * m["map"], 4)
                              for query, m in csfcube_per_query(rankings["all"], qrels["all"]).items()}
    splits = data_dir / SPLITS_FILE
    if splits.exists():
        result["folds"] = {aspect: _fold_metrics(splits, aspect, rankings[aspect], qrels[aspect])
                           for aspect in QUERY_ASPECTS + ("all",)}
    return result


def metrics_table(rows: Mapping[str, Mapping[str, Any]], *, fold: Optional[str] = None,
                  metrics: Sequence[str] = ("MAP", "NDCG%20")) -> str:
    """A Markdown table: one row per system, ``<aspect> <metric>`` columns for each aspect and all.

    ``rows`` maps a system name to a :func:`csfcube_metrics` result. With ``fold`` the cells
    come from ``result["folds"][aspect][fold]`` (``-`` where that fold was not evaluated).
    """
    aspects = QUERY_ASPECTS + ("all",)
    header = ["system"] + [f"{aspect} {name}" for aspect in aspects for name in metrics]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|"]
    for system, result in rows.items():
        cells = [system]
        for aspect in aspects:
            block = result.get(aspect) if fold is None else result.get("folds", {}).get(aspect, {}).get(fold)
            cells += [f"{block[name]:.2f}" if block else "-" for name in metrics]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


# --------------------------------------------------------------------------- running rankers


def rank_pools(ranker: Any, records: Mapping[str, AbstractRecord],
               pools: Mapping[str, Mapping[str, Sequence[str]]]) -> Dict[str, Ranked]:
    """``{aspect: {query_pid: ranker.rank(query, candidates, aspect)}}`` for every pool.

    ``records`` maps a pid to its :class:`AbstractRecord`; KeyError naming the pid when a
    query or candidate has no record.
    """
    def record(pid: str) -> AbstractRecord:
        try:
            return records[pid]
        except KeyError:
            raise KeyError(f"paper {pid!r} of a CSFCube pool has no abstract record") from None

    return {
        aspect: {q: list(ranker.rank(record(q), [record(c) for c in cands], aspect)) for q, cands in queries.items()}
        for aspect, queries in pools.items()
    }


def evaluate_rankers(data_dir: PathLike, rankers: Mapping[str, Any],
                     output_dir: Optional[PathLike] = None) -> Dict[str, Dict[str, Any]]:
    """Rank every CSFCube pool with every ranker and evaluate: ``{name: csfcube_metrics(...)}``.

    Each ranker is first given all abstracts of ``data_dir`` through ``prepare(records)``
    (when it has that method). With ``output_dir`` the ranked pools are also written there,
    one official file per ranker and aspect, the ranker's name as the model name.
    """
    data_dir = Path(data_dir)
    records = read_csfcube_abstracts(data_dir / ABSTRACTS_FILE)
    by_pid = {r.paper_id: r for r in records}
    pools = csfcube_pools(data_dir)
    results = {}
    for name, ranker in rankers.items():
        if hasattr(ranker, "prepare"):
            ranker.prepare(records)
        ranked = rank_pools(ranker, by_pid, pools)
        if output_dir is not None:
            for aspect, per_query in ranked.items():
                write_ranked_pools(output_dir, name, aspect, per_query)
        results[name] = csfcube_metrics(data_dir, ranked)
    return results


def compare_runs(result_a: Mapping[str, Any], result_b: Mapping[str, Any], *, n_resamples: int = 10000,
                 seed: int = 0) -> Dict[str, Any]:
    """Paired bootstrap of run A against run B (two :func:`csfcube_metrics` results) over the
    query-aspect pairs both have in ``per_query_ap``.

    Returns ``{"delta", "ci_low", "ci_high", "p_value"}`` in MAP points (positive: A better;
    :func:`scholarly_nlp.metrics.paired_bootstrap`) and ``n_queries``. Raises ValueError when
    the runs share no query-aspect pair.
    """
    a, b = result_a.get("per_query_ap") or {}, result_b.get("per_query_ap") or {}
    common = sorted(set(a) & set(b))
    if not common:
        raise ValueError("the two runs share no query-aspect pair with a per-query AP")
    test = paired_bootstrap([a[q] for q in common], [b[q] for q in common], n_resamples=n_resamples, seed=seed)
    return {**{key: round(value, 4) for key, value in test.items()}, "n_queries": len(common)}

