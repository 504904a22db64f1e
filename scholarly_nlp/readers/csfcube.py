"""CSFCube's relevance and split files (Mysore et al., 2021), as the published repository lays them out.

* :func:`read_csfcube_qrels` reads one ``test-pid2anns-csfcube-<facet>.json`` file (the file
  names keep CSFCube's word "facet"; in scholarly_nlp its query facets are *aspects*,
  :data:`scholarly_nlp.doc.roles.QUERY_ASPECTS`, and "facet" means a citation facet);
  :func:`load_csfcube_qrels` finds it in a CSFCube directory by aspect (or merges all three).
* :func:`read_csfcube_folds` reads ``evaluation_splits.json``.
* :func:`read_json` parses a JSON file, naming the file in the error when it cannot.

The qrels and folds go to :func:`scholarly_nlp.metrics.evaluate_csfcube`; the metrics
themselves read no file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, List, Optional, Union

from ..doc.roles import QUERY_ASPECTS
from ..errors import InputError, MalformedInputError

PathLike = Union[str, Path]

__all__ = ["read_json", "read_csfcube_qrels", "load_csfcube_qrels", "read_csfcube_folds"]


def read_json(path: PathLike) -> object:
    """Parse a JSON file, raising InputError / MalformedInputError naming the file."""
    try:
        with open(path, "r", encoding="utf-8") as fh:
            return json.load(fh)
    except OSError as exc:
        raise InputError(path, f"cannot read the file ({exc.strerror or exc})") from exc
    except json.JSONDecodeError as exc:
        raise MalformedInputError(path, f"not valid JSON ({exc.msg} at line {exc.lineno})") from exc


def read_csfcube_qrels(
    path: PathLike, *, relevance_key: str = "relevance_adju", aspect_suffix: Optional[str] = None
) -> Dict[str, Dict[str, int]]:
    """Read a published ``test-pid2anns-csfcube-<facet>.json`` file.

    The file maps a query pid to ``{"cands": [pid, ...], "relevance_adju": [grade, ...],
    ...}`` (parallel lists; ``relevance_max``/``relevance_min``/per-annotator lists may
    also be present and can be chosen with ``relevance_key``). Returns ``{query pid:
    {candidate pid: grade}}``; with ``aspect_suffix`` the query keys become
    ``"<pid>_<aspect_suffix>"`` (the ids ``evaluation_splits.json`` uses). Raises
    MalformedInputError naming the file and query when the layout is not as described.
    """
    data = read_json(path)
    if not isinstance(data, dict):
        raise MalformedInputError(path, "expected a JSON object mapping query pids to annotations")
    qrels: Dict[str, Dict[str, int]] = {}
    for qpid, ann in data.items():
        cands = ann.get("cands") if isinstance(ann, dict) else None
        grades = ann.get(relevance_key) if isinstance(ann, dict) else None
        if not isinstance(cands, list) or not isinstance(grades, list):
            raise MalformedInputError(path, f"query {qpid!r} lacks the 'cands' or {relevance_key!r} list")
        if len(cands) != len(grades):
            raise MalformedInputError(
                path, f"query {qpid!r} has {len(cands)} candidates but {len(grades)} grades in {relevance_key!r}"
            )
        key = f"{qpid}_{aspect_suffix}" if aspect_suffix else str(qpid)
        qrels[key] = {str(c): int(g) for c, g in zip(cands, grades)}
    return qrels


def load_csfcube_qrels(
    data_dir: PathLike, aspect: str, *, relevance_key: str = "relevance_adju"
) -> Dict[str, Dict[str, int]]:
    """Qrels of one query aspect from a CSFCube directory, or of all three with ``aspect="all"``.

    For a single aspect the query keys are bare pids; for ``"all"`` they are
    ``"<pid>_<aspect>"`` so that a paper queried on two aspects stays two queries.
    """
    data_dir = Path(data_dir)
    if aspect == "all":
        merged: Dict[str, Dict[str, int]] = {}
        for one in QUERY_ASPECTS:
            merged.update(_read_aspect_qrels(data_dir, one, relevance_key, suffix=True))
        return merged
    if aspect not in QUERY_ASPECTS:
        raise ValueError(f"unknown CSFCube query aspect {aspect!r}; expected one of {QUERY_ASPECTS + ('all',)}")
    return _read_aspect_qrels(data_dir, aspect, relevance_key, suffix=False)


def _read_aspect_qrels(data_dir: Path, aspect: str, relevance_key: str, *, suffix: bool) -> Dict[str, Dict[str, int]]:
    """Read ``<data_dir>/test-pid2anns-csfcube-<aspect>.json`` (the published file name)."""
    path = data_dir / f"test-pid2anns-csfcube-{aspect}.json"
    return read_csfcube_qrels(path, relevance_key=relevance_key, aspect_suffix=aspect if suffix else None)


def read_csfcube_folds(path: PathLike, aspect: str) -> Dict[str, List[str]]:
    """Read ``evaluation_splits.json``: ``{fold name: [query id, ...]}`` for ``aspect``.

    The file is keyed by aspect (or ``"all"``) and lists ids as ``"<pid>_<aspect>"``. For a
    single aspect the suffix is removed so the ids match :func:`load_csfcube_qrels` keys;
    for ``"all"`` they are kept.
    """
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get(aspect), dict):
        raise MalformedInputError(path, f"no splits for aspect {aspect!r}")
    suffix = f"_{aspect}"
    strip = aspect != "all"
    return {
        fold: [q[: -len(suffix)] if strip and q.endswith(suffix) else q for q in ids]
        for fold, ids in data[aspect].items()
    }
