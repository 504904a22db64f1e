"""The CSFCube harness: pools, official ranked-pool files, metrics, folds and the table."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import shared
from scholarly_nlp.errors import MalformedInputError
from scholarly_nlp import QUERY_ASPECTS
from scholarly_nlp.metrics import evaluate_csfcube
from scholarly_nlp.readers import load_csfcube_qrels, read_csfcube_folds
from scholarly_aspect_embedder.csfcube_eval import (
    METRIC_KEYS,
    compare_runs,
    csfcube_metrics,
    csfcube_pools,
    metrics_table,
    rank_pools,
    read_ranked_pools,
    write_ranked_pools,
)


@pytest.fixture(scope="module")
def data_dir():
    return shared("csfcube")


@pytest.fixture(scope="module")
def pools(data_dir):
    return csfcube_pools(data_dir)


def _by_grade(data_dir, sign=1):
    """A run sorting every pool by gold grade (sign=1: best first; -1: worst first)."""
    out = {}
    for aspect in QUERY_ASPECTS:
        qrels = load_csfcube_qrels(data_dir, aspect)
        out[aspect] = {q: [(c, -sign * g) for c, g in sorted(j.items(), key=lambda cg: -sign * cg[1])]
                      for q, j in qrels.items()}
    return out


def test_pools_come_from_the_pid2anns_files(data_dir, pools):
    assert set(pools) == set(QUERY_ASPECTS)
    for aspect in QUERY_ASPECTS:
        raw = json.loads((data_dir / f"test-pid2anns-csfcube-{aspect}.json").read_text())
        assert set(pools[aspect]) == set(raw)
        for q, ann in raw.items():
            assert pools[aspect][q] == [str(c) for c in ann["cands"]]


def test_ranked_pool_file_round_trip_and_official_format(tmp_path):
    ranked = {"111": [("a", 0.5), ("b", -1.0), ("c", 0.5), ("d", 0.1)], "222": [("x", 2.0), ("y", 1)]}
    path = write_ranked_pools(tmp_path, "mymodel", "method", ranked)
    assert path == tmp_path / "test-pid2pool-csfcube-mymodel-method-ranked.json"
    raw = json.loads(path.read_text())
    # Official format: {query_pid: [[cand_pid, distance], ...]}, smallest distance first, stable ties.
    assert raw == {"111": [["b", -1.0], ["d", 0.1], ["a", 0.5], ["c", 0.5]], "222": [["y", 1.0], ["x", 2.0]]}
    assert read_ranked_pools(path) == {"111": [("b", -1.0), ("d", 0.1), ("a", 0.5), ("c", 0.5)],
                                       "222": [("y", 1.0), ("x", 2.0)]}


def test_read_ranked_pools_rejects_a_bad_layout(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"1": [["a"]]}))
    with pytest.raises(MalformedInputError, match="bad.json"):
        read_ranked_pools(path)


def test_perfect_ranking_scores_100_where_relevant_exist(data_dir):
    result = csfcube_metrics(data_dir, _by_grade(data_dir))
    for aspect in QUERY_ASPECTS + ("all",):
        qrels = load_csfcube_qrels(data_dir, aspect)
        with_relevant = sum(any(g >= 2 for g in j.values()) for j in qrels.values())
        expected = 100.0 * with_relevant / len(qrels)
        assert result[aspect]["MAP"] == pytest.approx(expected, abs=0.01)
        assert result[aspect]["MRR"] == pytest.approx(expected, abs=0.01)
        assert set(result[aspect]) == set(METRIC_KEYS) | {"num_queries"}


def test_metrics_equal_evaluate_csfcube_and_all_pools_the_aspects(data_dir):
    run = _by_grade(data_dir, sign=-1)
    result = csfcube_metrics(data_dir, run)
    for aspect in QUERY_ASPECTS:
        direct = evaluate_csfcube(run[aspect], load_csfcube_qrels(data_dir, aspect))
        for name, key in METRIC_KEYS.items():
            assert result[aspect][name] == round(100 * direct[key], 2)
        assert result[aspect]["num_queries"] == direct["num_queries"]
    merged = {f"{q}_{aspect}": r for aspect in QUERY_ASPECTS for q, r in run[aspect].items()}
    direct_all = evaluate_csfcube(merged, load_csfcube_qrels(data_dir, "all"))
    assert result["all"]["MAP"] == round(100 * direct_all["map"], 2)
    assert result["all"]["num_queries"] == sum(result[f]["num_queries"] for f in QUERY_ASPECTS)


def test_folds_section_per_aspect_and_fold(data_dir):
    run = _by_grade(data_dir, sign=-1)
    result = csfcube_metrics(data_dir, run)
    splits = data_dir / "evaluation_splits.json"
    assert set(result["folds"]) == set(QUERY_ASPECTS) | {"all"}
    for aspect in QUERY_ASPECTS:
        folds = read_csfcube_folds(splits, aspect)
        assert set(result["folds"][aspect]) == set(folds)
        for fold, ids in folds.items():
            direct = evaluate_csfcube(run[aspect], load_csfcube_qrels(data_dir, aspect), folds={fold: ids})
            assert result["folds"][aspect][fold]["MAP"] == round(100 * direct["map"], 2)
            assert result["folds"][aspect][fold]["num_queries"] == len(ids)


def test_fold_with_absent_queries_is_skipped_with_a_warning(data_dir, tmp_path):
    for name in [f"test-pid2anns-csfcube-{f}.json" for f in QUERY_ASPECTS]:
        shutil.copy(data_dir / name, tmp_path / name)
    splits = json.loads((data_dir / "evaluation_splits.json").read_text())
    splits["method"]["ghost_fold"] = ["999999999_method"]
    (tmp_path / "evaluation_splits.json").write_text(json.dumps(splits))
    with pytest.warns(UserWarning, match="ghost_fold"):
        result = csfcube_metrics(tmp_path, _by_grade(data_dir))
    assert "ghost_fold" not in result["folds"]["method"]
    assert set(result["folds"]["background"]) == set(splits["background"])


def test_no_folds_section_without_splits_file(data_dir, tmp_path):
    for name in [f"test-pid2anns-csfcube-{f}.json" for f in QUERY_ASPECTS]:
        shutil.copy(data_dir / name, tmp_path / name)
    assert "folds" not in csfcube_metrics(tmp_path, _by_grade(data_dir))


def test_a_ranking_missing_a_candidate_is_an_error(data_dir):
    run = _by_grade(data_dir)
    query = next(iter(run["result"]))
    dropped = run["result"][query].pop()[0]
    with pytest.raises(ValueError, match="not ranked") as info:
        csfcube_metrics(data_dir, run)
    assert dropped in str(info.value) or "1 pool candidate" in str(info.value)
    with pytest.raises(ValueError, match="no rankings for aspect"):
        csfcube_metrics(data_dir, {"method": run["method"]})


def test_rank_pools_calls_the_ranker_and_names_missing_records(pools):
    class Reverse:
        def rank(self, query, candidates, aspect):
            return [(c.paper_id, -i) for i, c in enumerate(candidates)][::-1]

    class Rec:
        def __init__(self, pid):
            self.paper_id = pid

    aspect = "background"
    query = next(iter(pools[aspect]))
    small = {aspect: {query: pools[aspect][query]}}
    records = {pid: Rec(pid) for pid in [query, *pools[aspect][query]]}
    ranked = rank_pools(Reverse(), records, small)
    assert [c for c, _ in ranked[aspect][query]] == pools[aspect][query][::-1]
    del records[pools[aspect][query][0]]
    with pytest.raises(KeyError, match=pools[aspect][query][0]):
        rank_pools(Reverse(), records, small)


def test_metrics_table_is_markdown(data_dir):
    result = csfcube_metrics(data_dir, _by_grade(data_dir))
    table = metrics_table({"oracle": result, "empty": {}})
    lines = table.splitlines()
    assert lines[0].startswith("| system | background MAP | background NDCG%20 |")
    assert lines[0].rstrip().endswith("all MAP | all NDCG%20 |")
    assert len(lines) == 4 and lines[2].startswith("| oracle | ") and "| - |" in lines[3]
    assert f"{result['all']['MAP']:.2f}" in lines[2]
    fold = next(iter(result["folds"]["all"]))
    assert metrics_table({"oracle": result}, fold=fold).splitlines()[2].startswith("| oracle | ")


def test_per_query_ap_averages_to_all_map_and_compare_runs_is_paired(data_dir):
    """Each query-aspect pair's AP is kept, their mean is the pooled MAP, and the paired
    bootstrap of a perfect run against a reversed one is positive with a CI that excludes 0."""
    best = csfcube_metrics(data_dir, _by_grade(data_dir))
    worst = csfcube_metrics(data_dir, _by_grade(data_dir, sign=-1))
    n_pairs = best["all"]["num_queries"]
    assert len(best["per_query_ap"]) == n_pairs and set(best["per_query_ap"]) == set(worst["per_query_ap"])
    assert sum(best["per_query_ap"].values()) / n_pairs == pytest.approx(best["all"]["MAP"], abs=0.01)
    test = compare_runs(best, worst, n_resamples=2000)
    assert test["n_queries"] == n_pairs
    assert test["delta"] == pytest.approx(best["all"]["MAP"] - worst["all"]["MAP"], abs=0.02)
    assert test["delta"] > 0 and test["ci_low"] > 0 and test["p_value"] < 0.05
    assert compare_runs(best, best)["delta"] == 0.0
    with pytest.raises(ValueError, match="share no query-aspect pair"):
        compare_runs(best, {"all": best["all"]})
