"""CSFCube evaluation harness: pools, official ranked-pool files, metrics and a table.

CSFCube (Mysore et al., 2021) judges, for each query paper and facet (``background``,
``method``, ``result``), a pool of about 100 candidate abstracts. A system ranks every
pool; CSFCube's ``ranking_eval.py`` reads the ranked pools from files named
``test-pid2pool-csfcube-<model>-<facet>-ranked.json`` holding ``{query_pid: [[cand_pid,
distance], ...]}``, smallest distance first, and scores them with the metrics that
:mod:`scholarly_nlp.metrics.csfcube` re-implements.

* :func:`csfcube_pools` reads the pools from the ``test-pid2anns-csfcube-<facet>.json`` files.
* :func:`write_ranked_pools` / :func:`read_ranked_pools`: the official ranked-pool files.
* :func:`csfcube_metrics`: MAP, NDCG%20, NDCG@20, MRR, R@20 (percent) per facet, for ``all``
  (every query-facet pair pooled) and, when ``evaluation_splits.json`` is there, per fold.
* :func:`metrics_table`: a Markdown table of several systems' metrics.
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

from scholarly_nlp import FACETS, InputError, MalformedInputError, write_atomic
from scholarly_nlp.readers import AbstractRecord, read_csfcube_abstracts
from scholarly_nlp.metrics import evaluate_csfcube, load_csfcube_qrels, read_csfcube_folds, read_csfcube_qrels

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
    "rank_pools",
    "evaluate_rankers",
]

ABSTRACTS_FILE = "abstracts-csfcube-preds.jsonl"
SPLITS_FILE = "evaluation_splits.json"

METRIC_KEYS = {"MAP": "map", "NDCG%20": "ndcg%20", "NDCG@20": "ndcg@20", "MRR": "mrr", "R@20": "recall@20"}
"""Reported name -> key of :func:`scholarly_nlp.metrics.csfcube.csfcube_query_metrics`."""


# --------------------------------------------------------------------------- pools and files


def csfcube_pools(data_dir: PathLike) -> Dict[str, Dict[str, List[str]]]:
    """``{facet: {query_pid: [cand_pid, ...]}}`` of every query in the three pid2anns files.

    Candidates keep the order of the file's ``cands`` list.
    """
    data_dir = Path(data_dir)
    return {
        facet: {q: list(judged) for q, judged in
                read_csfcube_qrels(data_dir / f"test-pid2anns-csfcube-{facet}.json").items()}
        for facet in FACETS
    }


def ranked_pool_filename(model_name: str, facet: str) -> str:
    """The official file name ``test-pid2pool-csfcube-<model_name>-<facet>-ranked.json``."""
    return f"test-pid2pool-csfcube-{model_name}-{facet}-ranked.json"


def _by_distance(entries: Sequence[Sequence[Any]]) -> List[List[Any]]:
    """``[[cand_pid, distance], ...]`` sorted by distance; ties keep their input order."""
    pairs = [[str(pid), float(dist)] for pid, dist in entries]
    return sorted(pairs, key=lambda pair: pair[1])


def write_ranked_pools(output_dir: PathLike, model_name: str, facet: str,
                       ranked: Mapping[str, Sequence[Sequence[Any]]]) -> Path:
    """Write one facet's ranked pools in CSFCube's format; returns the file's path.

    ``ranked`` maps a query pid to ``(cand_pid, distance)`` pairs; the file holds
    ``{query_pid: [[cand_pid, distance], ...]}`` with the smallest distance first (a stable
    sort: equal distances keep the input order). The file is written atomically.
    """
    path = Path(output_dir) / ranked_pool_filename(model_name, facet)
    payload = {str(q): _by_distance(entries) for q, entries in ranked.items()}
    write_atomic(path, json.dumps(payload))
    return path


def _load_json(path: PathLike) -> object:
    """Parse a JSON file, raising InputError / MalformedInputError naming the file."""
    try:
        with open(path, "r", encoding="utf-8") as fh:
            return json.load(fh)
    except OSError as exc:
        raise InputError(path, f"cannot read the file ({exc.strerror or exc})") from exc
    except json.JSONDecodeError as exc:
        raise MalformedInputError(path, f"not valid JSON ({exc.msg} at line {exc.lineno})") from exc


def read_ranked_pools(path: PathLike) -> Ranked:
    """Read a ranked-pool file: ``{query_pid: [(cand_pid, distance), ...]}`` in file order.

    Raises InputError / MalformedInputError (naming the file) when it cannot be read or is
    not ``{query_pid: [[cand_pid, distance], ...]}``.
    """
    data = _load_json(path)
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


def _merged_ranked(ranked_by_facet: Mapping[str, Mapping[str, Sequence]]) -> Dict[str, Sequence]:
    """All facets' rankings keyed ``<pid>_<facet>`` (the keys of ``load_csfcube_qrels(.., "all")``)."""
    return {f"{q}_{facet}": r for facet in FACETS for q, r in ranked_by_facet[facet].items()}


def _fold_metrics(splits: Path, facet: str, ranked: Mapping[str, Sequence],
                  qrels: Mapping[str, Mapping[str, float]]) -> Dict[str, Dict[str, Any]]:
    """Metrics of each fold of ``splits`` for ``facet``; absent facets/queries warn and skip."""
    try:
        folds = read_csfcube_folds(splits, facet)
    except MalformedInputError as exc:
        warnings.warn(f"no folds evaluated for {facet!r}: {exc}")
        return {}
    out = {}
    for fold, ids in folds.items():
        absent = [q for q in ids if q not in qrels]
        if absent or not ids:
            warnings.warn(f"fold {fold!r} of {facet!r} skipped: {len(absent)} of its {len(ids)} queries "
                          f"are not in the qrels (e.g. {absent[0] if absent else None!r})")
            continue
        out[fold] = _report(evaluate_csfcube(ranked, qrels, folds={fold: ids}))
    return out


def csfcube_metrics(data_dir: PathLike, ranked_by_facet: Mapping[str, Mapping[str, Sequence]]) -> Dict[str, Any]:
    """CSFCube metrics of a run: ``{facet: m, "all": m, "folds": {facet: {fold: m}}}``.

    ``ranked_by_facet`` maps each of the three facets to ``{query_pid: ranked candidates}``
    (``(cand_pid, distance)`` pairs or bare pids, best first), covering every query of that
    facet's pid2anns file with a permutation of its pool (ValueError otherwise, from
    :func:`~scholarly_nlp.metrics.csfcube.evaluate_csfcube`). Each ``m`` is ``{"MAP",
    "NDCG%20", "NDCG@20", "MRR", "R@20"}`` in percent rounded to 2 decimals, plus
    ``num_queries``; ``"all"`` pools every query-facet pair. ``"folds"`` is present when
    ``evaluation_splits.json`` is in ``data_dir``: per facet and ``all``, per fold name, the
    same metrics on that fold's queries (a fold with queries absent from the qrels is skipped
    with a warning).
    """
    data_dir = Path(data_dir)
    missing = [f for f in FACETS if f not in ranked_by_facet]
    if missing:
        raise ValueError(f"no rankings for facet(s) {missing}; expected all of {list(FACETS)}")
    rankings = {facet: {str(q): r for q, r in ranked_by_facet[facet].items()} for facet in FACETS}
    rankings["all"] = _merged_ranked(rankings)
    qrels = {facet: load_csfcube_qrels(data_dir, facet) for facet in FACETS + ("all",)}
    result: Dict[str, Any] = {facet: _report(evaluate_csfcube(rankings[facet], qrels[facet]))
                              for facet in FACETS + ("all",)}
    splits = data_dir / SPLITS_FILE
    if splits.exists():
        result["folds"] = {facet: _fold_metrics(splits, facet, rankings[facet], qrels[facet])
                           for facet in FACETS + ("all",)}
    return result


def metrics_table(rows: Mapping[str, Mapping[str, Any]], *, fold: Optional[str] = None,
                  metrics: Sequence[str] = ("MAP", "NDCG%20")) -> str:
    """A Markdown table: one row per system, ``<facet> <metric>`` columns for each facet and all.

    ``rows`` maps a system name to a :func:`csfcube_metrics` result. With ``fold`` the cells
    come from ``result["folds"][facet][fold]`` (``-`` where that fold was not evaluated).
    """
    facets = FACETS + ("all",)
    header = ["system"] + [f"{facet} {name}" for facet in facets for name in metrics]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|"]
    for system, result in rows.items():
        cells = [system]
        for facet in facets:
            block = result.get(facet) if fold is None else result.get("folds", {}).get(facet, {}).get(fold)
            cells += [f"{block[name]:.2f}" if block else "-" for name in metrics]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


# --------------------------------------------------------------------------- running rankers


def rank_pools(ranker: Any, records: Mapping[str, AbstractRecord],
               pools: Mapping[str, Mapping[str, Sequence[str]]]) -> Dict[str, Ranked]:
    """``{facet: {query_pid: ranker.rank(query, candidates, facet)}}`` for every pool.

    ``records`` maps a pid to its :class:`AbstractRecord`; KeyError naming the pid when a
    query or candidate has no record.
    """
    def record(pid: str) -> AbstractRecord:
        try:
            return records[pid]
        except KeyError:
            raise KeyError(f"paper {pid!r} of a CSFCube pool has no abstract record") from None

    return {
        facet: {q: list(ranker.rank(record(q), [record(c) for c in cands], facet)) for q, cands in queries.items()}
        for facet, queries in pools.items()
    }


def evaluate_rankers(data_dir: PathLike, rankers: Mapping[str, Any],
                     output_dir: Optional[PathLike] = None) -> Dict[str, Dict[str, Any]]:
    """Rank every CSFCube pool with every ranker and evaluate: ``{name: csfcube_metrics(...)}``.

    Each ranker is first given all abstracts of ``data_dir`` through ``prepare(records)``
    (when it has that method). With ``output_dir`` the ranked pools are also written there,
    one official file per ranker and facet, the ranker's name as the model name.
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
            for facet, per_query in ranked.items():
                write_ranked_pools(output_dir, name, facet, per_query)
        results[name] = csfcube_metrics(data_dir, ranked)
    return results
