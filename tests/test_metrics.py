"""Tests of scholarly_nlp.metrics. Expected values are worked out by hand in the comments."""

from __future__ import annotations

import json
import math

import numpy
import pytest

import scholarly_nlp.metrics
import scholarly_nlp.readers
from scholarly_nlp.errors import InputError, MalformedInputError
from scholarly_nlp.metrics import (
    BUILTIN_METRICS,
    FACET_LABELS,
    Counts,
    Task1Pair,
    accuracy_at_k,
    average_precision,
    clscisumm_task1a,
    clscisumm_task1b,
    csfcube_ndcg,
    csfcube_query_metrics,
    dcg_at_k,
    evaluate_csfcube,
    facet_f1,
    hit_at_k,
    mean_average_precision,
    mean_hit_at_k,
    mean_ndcg_at_k,
    mean_precision_at_k,
    mean_recall_at_k,
    mean_reciprocal_rank,
    ndcg_at_k,
    canonical_sentence_id,
    normalize_facet,
    micro_f1,
    paired_bootstrap,
    paired_bootstrap_micro_f1,
    paired_bootstrap_pooled,
    per_label_prf,
    versus_baselines,
    versus_summary,
    precision_at_k,
    ranked_grades,
    recall_at_k,
    reciprocal_rank,
    task1a_counts,
    task1b_counts,
)
from scholarly_nlp.readers import load_csfcube_qrels, read_csfcube_folds, read_csfcube_qrels, read_json

from conftest import data_path

CSFCUBE = data_path("csfcube")

approx = pytest.approx


# =========================================================================== ranking

RANKING = ["d1", "d2", "d3", "d4", "d5"]
BINARY = {"d2", "d4", "d9"}  # d9 is relevant but never ranked
# Graded judgements: d2 is judged 0 (not relevant), d7 is relevant but not ranked, d4 unjudged.
GRADED = {"d1": 3, "d2": 0, "d3": 2, "d5": 1, "d7": 2}


def test_precision_at_k():
    # top 3 = d1 d2 d3, relevant among them: d2 -> 1/3
    assert precision_at_k(RANKING, BINARY, 3) == approx(1 / 3)
    # k=10 > 5 ranked: relevant d2, d4 -> 2 / 10 (missing positions count as non-relevant)
    assert precision_at_k(RANKING, BINARY, 10) == approx(0.2)


def test_recall_at_k():
    # 3 relevant in total (d2 d4 d9). top 3 holds d2 -> 1/3; top 5 holds d2 d4 -> 2/3
    assert recall_at_k(RANKING, BINARY, 3) == approx(1 / 3)
    assert recall_at_k(RANKING, BINARY, 5) == approx(2 / 3)
    # k larger than the list: still 2/3
    assert recall_at_k(RANKING, BINARY, 50) == approx(2 / 3)


def test_hit_at_k():
    # rank 1 is d1 (not relevant), rank 2 is d2 (relevant)
    assert hit_at_k(RANKING, BINARY, 1) == 0.0
    assert hit_at_k(RANKING, BINARY, 2) == 1.0


def test_reciprocal_rank_and_average_precision_binary():
    # first relevant d2 at rank 2 -> 1/2
    assert reciprocal_rank(RANKING, BINARY) == approx(0.5)
    # relevant at ranks 2 and 4: precisions 1/2 and 2/4; 3 relevant in total (d9 unranked)
    # AP = (1/2 + 2/4) / 3 = 1/3
    assert average_precision(RANKING, BINARY) == approx(1 / 3)


def test_binary_metrics_on_graded_judgements_use_threshold():
    # threshold 1: relevant = d1 d3 d5 d7 (d2 has grade 0 -> NOT relevant)
    # relevant at ranks 1, 3, 5: precisions 1/1, 2/3, 3/5; 4 relevant in total
    # AP = (1 + 2/3 + 3/5) / 4 = (34/15) / 4 = 17/30
    assert average_precision(RANKING, GRADED) == approx(17 / 30)
    # threshold 2: relevant = d1 d3 d7 -> ranks 1, 3: (1 + 2/3) / 3 = 5/9
    assert average_precision(RANKING, GRADED, threshold=2) == approx(5 / 9)
    assert reciprocal_rank(RANKING, GRADED) == 1.0
    # top 2 = d1 (3), d2 (0): only d1 relevant -> precision 1/2
    assert precision_at_k(RANKING, GRADED, 2) == approx(0.5)


def test_ndcg_linear_gain_log2_rank_plus_1():
    # DCG@5 of grades [3, 0, 2, 0(unjudged d4), 1]:
    #   3/log2(2) + 0/log2(3) + 2/log2(4) + 0/log2(5) + 1/log2(6) = 3 + 1 + 0.386853 = 4.386853
    dcg5 = 3 / 1 + 2 / 2 + 1 / math.log2(6)
    assert dcg_at_k(RANKING, GRADED, 5) == approx(dcg5)
    # ideal over ALL judged grades sorted [3, 2, 2, 1, 0]:
    #   3 + 2/log2(3) + 2/2 + 1/log2(5) = 3 + 1.261860 + 1 + 0.430677 = 5.692536
    idcg5 = 3 + 2 / math.log2(3) + 2 / 2 + 1 / math.log2(5)
    assert ndcg_at_k(RANKING, GRADED, 5) == approx(dcg5 / idcg5)  # 4.386853 / 5.692536 = 0.770632
    assert ndcg_at_k(RANKING, GRADED, 5) == approx(0.770632, abs=1e-6)
    # no cut-off: same numbers here (5 ranked, 5 judged)
    assert ndcg_at_k(RANKING, GRADED) == approx(dcg5 / idcg5)
    # @2: DCG = 3 + 0 = 3; IDCG = 3 + 2/log2(3) = 4.261860 -> 0.703918
    assert ndcg_at_k(RANKING, GRADED, 2) == approx(3 / (3 + 2 / math.log2(3)))


def test_ndcg_exponential_gain():
    # @2 with gain 2^g - 1: DCG = 7/1 + 0 = 7; IDCG = 7 + 3/log2(3) = 8.892789 -> 0.787155
    assert ndcg_at_k(RANKING, GRADED, 2, gain="exponential") == approx(7 / (7 + 3 / math.log2(3)))
    with pytest.raises(ValueError):
        ndcg_at_k(RANKING, GRADED, 2, gain="squared")


def test_ndcg_ties_between_equal_grades_do_not_matter():
    # d3 and d7 both have grade 2: either order is an ideal ordering -> NDCG 1.0
    assert ndcg_at_k(["d1", "d3", "d7", "d5"], GRADED) == approx(1.0)
    assert ndcg_at_k(["d1", "d7", "d3", "d5"], GRADED) == approx(1.0)


def test_binary_set_in_ndcg_means_grade_1():
    # relevant {a, c}; ranking [b, a, c]: DCG = 0 + 1/log2(3) + 1/log2(4) = 0.630930 + 0.5
    # IDCG = 1 + 1/log2(3) = 1.630930 -> 1.130930 / 1.630930 = 0.693426
    assert ndcg_at_k(["b", "a", "c"], {"a", "c"}) == approx((1 / math.log2(3) + 0.5) / (1 + 1 / math.log2(3)))


def test_duplicates_count_once():
    # [d2, d2, d4] -> deduplicated [d2, d4]: both relevant of {d2, d4}
    assert precision_at_k(["d2", "d2", "d4"], {"d2", "d4"}, 2) == 1.0
    assert recall_at_k(["d2", "d2", "d2"], {"d2", "d4"}, 3) == 0.5


def test_edge_cases_empty_ranking_and_no_relevant():
    for relevant in (BINARY, GRADED):
        assert precision_at_k([], relevant, 3) == 0.0
        assert recall_at_k([], relevant, 3) == 0.0
        assert hit_at_k([], relevant, 3) == 0.0
        assert reciprocal_rank([], relevant) == 0.0
        assert average_precision([], relevant) == 0.0
        assert ndcg_at_k([], relevant, 3) == 0.0
    # no relevant item at all -> 0.0, never NaN
    for relevant in (set(), {"d1": 0, "d2": 0}):
        assert recall_at_k(RANKING, relevant, 3) == 0.0
        assert average_precision(RANKING, relevant) == 0.0
        assert reciprocal_rank(RANKING, relevant) == 0.0
        assert ndcg_at_k(RANKING, relevant, 3) == 0.0


@pytest.mark.parametrize("k", [0, -1, 2.5, True])
def test_invalid_k(k):
    with pytest.raises(ValueError):
        precision_at_k(RANKING, BINARY, k)
    with pytest.raises(ValueError):
        ndcg_at_k(RANKING, BINARY, k)


def test_run_level_means_skip_or_zero_queries_without_relevant():
    rankings = {"q1": RANKING, "q2": ["x"]}  # q3 has no ranking
    qrels = {"q1": BINARY, "q2": set(), "q3": {"y"}}
    # q1: AP 1/3, RR 1/2, R@5 2/3, hit@2 1; q3 (unranked): all 0; q2 has no relevant
    # skipped (default): MAP = (1/3 + 0) / 2 = 1/6
    assert mean_average_precision(rankings, qrels) == approx(1 / 6)
    # counted as 0: MAP = (1/3 + 0 + 0) / 3 = 1/9
    assert mean_average_precision(rankings, qrels, skip_no_relevant=False) == approx(1 / 9)
    assert mean_reciprocal_rank(rankings, qrels) == approx((1 / 2 + 0) / 2)
    assert mean_recall_at_k(rankings, qrels, 5) == approx((2 / 3 + 0) / 2)
    assert mean_hit_at_k(rankings, qrels, 2) == approx((1 + 0) / 2)
    # P@3: q1 1/3, q3 0 -> 1/6
    assert mean_precision_at_k(rankings, qrels, 3) == approx(1 / 6)
    # graded: q1 NDCG@2 = 0.703918 (see above); q2 only grade 0 -> skipped
    graded = {"q1": GRADED, "q2": {"x": 0}}
    assert mean_ndcg_at_k(rankings, graded, 2) == approx(3 / (3 + 2 / math.log2(3)))
    assert mean_ndcg_at_k(rankings, graded, 2, skip_no_relevant=False) == approx(3 / (3 + 2 / math.log2(3)) / 2)
    assert mean_average_precision({}, {}) == 0.0


def test_accuracy_at_k_single_target():
    rankings = {"q1": ["a", "b", "c"], "q2": ["c", "a", "b"], "q3": ["b"]}
    targets = {"q1": "a", "q2": "a", "q3": "c", "q4": "a"}  # q4 unranked -> miss
    assert accuracy_at_k(rankings, targets, 1) == approx(1 / 4)  # q1
    assert accuracy_at_k(rankings, targets, 2) == approx(2 / 4)  # q1, q2
    assert accuracy_at_k(rankings, targets, 10) == approx(2 / 4)  # k > list: q3 still misses
    assert accuracy_at_k(rankings, {}, 1) == 0.0


# =========================================================================== CSFCube

# pool of 5 with grades; a ranking puts the grade-1 candidate first and the grade-3 second
POOL = {"p1": 3, "p2": 1, "p3": 0, "p4": 2, "p5": 0}
RANK_A = ["p2", "p1", "p4", "p3", "p5"]  # grades [1, 3, 2, 0, 0]


def test_csfcube_ndcg_ranks_1_and_2_undiscounted():
    # CSFCube discount log2(max(rank, 2)): weights 1, 1, 1/log2(3), 1/2, ...
    #   DCG = 1 + 3 + 2/log2(3) = 5.261860; ideal [3,2,1,0,0]: 3 + 2 + 1/log2(3) = 5.630930
    expected = (1 + 3 + 2 / math.log2(3)) / (3 + 2 + 1 / math.log2(3))  # 5.261860 / 5.630930 = 0.934457
    assert csfcube_ndcg([1, 3, 2, 0, 0], 5) == approx(expected)
    assert csfcube_ndcg([1, 3, 2, 0, 0], 5) == approx(0.934457, abs=1e-6)
    # the standard log2(rank + 1) discount gives another value on the same ranking:
    #   DCG = 1 + 3/log2(3) + 2/2 = 3.892789; IDCG = 3 + 2/log2(3) + 1/2 = 4.761860 -> 0.817494 (CSFCube: 0.934457)
    assert ndcg_at_k(RANK_A, POOL) == approx((1 + 3 / math.log2(3) + 1) / (3 + 2 / math.log2(3) + 0.5))
    # swapping ranks 1 and 2 changes nothing for CSFCube, but does for standard NDCG
    assert csfcube_ndcg([2, 3, 1, 0, 0], 5) == approx(1.0)  # 2 + 3 + 1/log2(3) == ideal
    assert ndcg_at_k(["p4", "p1", "p2", "p3", "p5"], POOL) < 1.0
    # relevant only at rank 2 of 2: DCG = 0 + 2/1 = 2 = ideal -> 1.0
    assert csfcube_ndcg([0, 2], 2) == approx(1.0)
    # k <= 0 or no positive grade -> 0.0
    assert csfcube_ndcg([1, 2], 0) == 0.0
    assert csfcube_ndcg([0, 0], 2) == 0.0


def test_csfcube_query_metrics_tiny_pool():
    m = csfcube_query_metrics([1, 3, 2, 0, 0])
    assert m["ndcg"] == approx(0.934457, abs=1e-6)
    assert m["ndcg@20"] == approx(m["ndcg"])  # 20 > 5 candidates: whole list
    # NDCG%20 cuts at int(0.2 * 5) = 1: grade 1 vs ideal 3 -> 1/3
    assert m["ndcg%20"] == approx(1 / 3)
    # relevant for the binary metrics means grade >= 2: binary [0, 1, 1, 0, 0]
    # (p2 with grade 1 at rank 1 is NOT relevant)
    # AP = (1/2 + 2/3) / 2 = 7/12
    assert m["map"] == approx(7 / 12)
    assert m["mrr"] == approx(1 / 2)
    assert m["recall@20"] == approx(1.0)  # both relevant in the top 20
    assert m["precision@20"] == approx(2 / 20)
    # F1@20 = 2 * 0.1 * 1 / 1.1 = 0.181818
    assert m["f1@20"] == approx(2 * 0.1 / 1.1)
    # the script's r_precision: precision at the last relevant rank (3) = 2/3
    assert m["r_precision"] == approx(2 / 3)
    # NDCG%20 on a pool of 12 uses int(0.2 * 12) = 2 ranks: [0, 3, ...] -> 3 / (3 + 2) = 0.6
    assert csfcube_query_metrics([0, 3, 2] + [0] * 9)["ndcg%20"] == approx(3 / 5)


def test_evaluate_csfcube_mean_and_folds():
    qrels = {"q1": POOL, "q2": {"x": 0, "y": 2}}
    # q2 ranked [x, y] -> grades [0, 2]: ndcg 1.0 (rank 2 undiscounted), AP 1/2, RR 1/2,
    # ndcg%20 at int(0.4) = 0 -> 0.0
    # official [pid, score] pairs are accepted too
    ranked = {"q1": RANK_A, "q2": [["x", 0.9], ["y", 0.1]]}
    res = evaluate_csfcube(ranked, qrels)
    assert res["num_queries"] == 2
    assert res["ndcg"] == approx((0.934457 + 1.0) / 2, abs=1e-6)
    assert res["map"] == approx((7 / 12 + 1 / 2) / 2)  # 13/24
    assert res["mrr"] == approx((1 / 2 + 1 / 2) / 2)
    assert res["ndcg%20"] == approx((1 / 3 + 0) / 2)
    assert res["recall@20"] == approx(1.0)
    # folds: mean of fold means. f1 = [q1] -> 7/12; f2 = [q1, q2] -> 13/24;
    # (14/24 + 13/24) / 2 = 27/48 = 0.5625 (differs from the plain mean 13/24 = 0.541667)
    folded = evaluate_csfcube(ranked, qrels, folds={"f1": ["q1"], "f2": ["q1", "q2"]})
    assert folded["map"] == approx(27 / 48)
    with pytest.raises(ValueError, match="not in qrels"):
        evaluate_csfcube(ranked, qrels, folds={"f1": ["q9"]})
    with pytest.raises(ValueError):
        evaluate_csfcube(ranked, {})


def test_csfcube_strict_checks_and_lenient_mode():
    with pytest.raises(ValueError, match="not ranked"):
        ranked_grades(["p1", "p2"], POOL)
    with pytest.raises(ValueError, match="unjudged"):
        ranked_grades(RANK_A + ["zz"], POOL)
    with pytest.raises(ValueError, match="duplicate"):
        ranked_grades(RANK_A + ["p1"], POOL)
    with pytest.raises(ValueError, match="not ranked"):
        evaluate_csfcube({"q1": RANK_A}, {"q1": POOL, "q2": {"x": 1}})
    with pytest.raises(ValueError, match="not in qrels"):
        evaluate_csfcube({"q1": RANK_A, "q9": []}, {"q1": POOL})
    # lenient: duplicates dropped, unjudged -> grade 0, partial list scored as given
    assert ranked_grades(["p1", "zz", "p1", "p4"], POOL, strict=False) == [3.0, 0.0, 2.0]
    # partial list [p1, p4] -> grades [3, 2]: ideal of the ranked grades is itself -> 1.0
    res = evaluate_csfcube({"q1": ["p1", "p4"]}, {"q1": POOL, "q2": {"y": 3}}, strict=False)
    # q1: ndcg 1.0; q2 unranked -> empty ranking -> 0.0
    assert res["ndcg"] == approx(0.5)


def test_read_csfcube_qrels_layout_and_errors(tmp_path):
    good = tmp_path / "test-pid2anns-csfcube-method.json"
    good.write_text(json.dumps({"11": {"cands": ["a", "b"], "relevance_adju": [2, 0], "relevance_max": [3, 1]}}))
    assert read_csfcube_qrels(good) == {"11": {"a": 2, "b": 0}}
    assert read_csfcube_qrels(good, relevance_key="relevance_max") == {"11": {"a": 3, "b": 1}}
    assert read_csfcube_qrels(good, aspect_suffix="method") == {"11_method": {"a": 2, "b": 0}}
    assert load_csfcube_qrels(tmp_path, "method") == {"11": {"a": 2, "b": 0}}
    with pytest.raises(ValueError, match="unknown CSFCube query aspect"):
        load_csfcube_qrels(tmp_path, "methods")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"11": {"cands": ["a", "b"], "relevance_adju": [2]}}))
    with pytest.raises(MalformedInputError, match="2 candidates but 1 grades"):
        read_csfcube_qrels(bad)
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(MalformedInputError, match="broken.json"):
        read_csfcube_qrels(broken)
    with pytest.raises(MalformedInputError, match="broken.json"):
        read_json(broken)
    with pytest.raises(InputError, match="missing.json"):
        read_json(tmp_path / "missing.json")


def test_the_csfcube_file_readers_are_readers_not_metrics():
    """Metrics stay pure: the CSFCube qrels/folds readers live in scholarly_nlp.readers."""
    readers = {"read_csfcube_qrels", "load_csfcube_qrels", "read_csfcube_folds", "read_json"}
    assert readers <= set(scholarly_nlp.readers.__all__)
    assert not readers & set(scholarly_nlp.metrics.__all__)
    assert not any(hasattr(scholarly_nlp.metrics, name) for name in readers)


@pytest.mark.needs_data("csfcube")
@pytest.mark.parametrize("aspect", ["background", "method", "result", "all"])
def test_csfcube_real_files_gold_order_is_perfect_and_reverse_is_worse(aspect):
    qrels = load_csfcube_qrels(CSFCUBE, aspect)
    assert qrels and all(len(j) >= 50 for j in qrels.values())
    folds = read_csfcube_folds(CSFCUBE / "evaluation_splits.json", aspect)
    assert set(q for fold in folds.values() for q in fold) <= set(qrels)
    best = {q: sorted(j, key=lambda c: -j[c]) for q, j in qrels.items()}
    worst = {q: ranking[::-1] for q, ranking in best.items()}
    for kwargs in ({}, {"folds": folds}):
        top = evaluate_csfcube(best, qrels, **kwargs)
        low = evaluate_csfcube(worst, qrels, **kwargs)
        for metric in ("map", "ndcg", "ndcg@20", "ndcg%20"):
            assert top[metric] == approx(1.0)
            assert low[metric] < top[metric]
        assert low["mrr"] < top["mrr"]
    # the generic metrics agree that the gold order is ideal
    assert mean_ndcg_at_k(best, qrels) == approx(1.0)
    assert mean_average_precision(best, qrels, threshold=2) == approx(1.0)


# =========================================================================== CL-SciSumm


def test_canonical_sentence_id():
    assert [canonical_sentence_id(v) for v in (17, "17", " 017 ", "0")] == ["17", "17", "17", "0"]
    for bad in ("['17']", "x", -1, True, "1.5"):
        with pytest.raises(ValueError):
            canonical_sentence_id(bad)


def test_unknown_facet_names_the_value():
    with pytest.raises(ValueError, match="Methods"):
        normalize_facet("Methods")


# One paper, one system file, two annotators' gold files.
SYSTEM = {"c1": {1, 2, 3}, "c2": ["10"]}
GOLD_A = {"c1": {1, 2}, "c2": {10}}
GOLD_B = {"c1": ["4"], "c2": {10, 11, 12}, "c3": {20}}


def test_task1a_counts_per_file():
    # vs A: c1 TP {1,2}, FP {3}; c2 TP {10} -> TP 3, FP 1, FN 0
    assert task1a_counts(SYSTEM, GOLD_A) == Counts(3, 1, 0)
    # vs B: c1 TP 0, FP {1,2,3}, FN {4}; c2 TP {10}, FN {11,12}; c3 unanswered FN {20}
    #   -> TP 1, FP 3, FN 4
    assert task1a_counts(SYSTEM, GOLD_B) == Counts(1, 3, 4)
    # citance only in the system -> all FP; empty sets contribute nothing
    assert task1a_counts({"c9": {1, 2}, "c1": set()}, {}) == Counts(0, 2, 0)


def test_task1a_micro_vs_macro_over_two_annotator_files():
    res = clscisumm_task1a([(SYSTEM, GOLD_A), (SYSTEM, GOLD_B)])
    # micro: TP 3+1 = 4, FP 1+3 = 4, FN 0+4 = 4 -> P = R = F = 0.5
    assert (res["tp"], res["fp"], res["fn"], res["num_files"]) == (4, 4, 4, 2)
    assert res["precision_micro"] == approx(0.5)
    assert res["recall_micro"] == approx(0.5)
    assert res["f1_micro"] == approx(0.5)
    # per file: A P = 3/4, R = 1, F = 6/7; B P = 1/4, R = 1/5, F = 2/9
    # macro P = (3/4 + 1/4)/2 = 0.5; macro R = (1 + 1/5)/2 = 0.6
    assert res["precision_macro"] == approx(0.5)
    assert res["recall_macro"] == approx(0.6)
    # official macro F1 = harmonic mean of macro P and R = 2*0.5*0.6/1.1 = 6/11 = 0.545455
    assert res["f1_macro"] == approx(6 / 11)
    # mean of per-file F1 = (6/7 + 2/9)/2 = 34/63 = 0.539683
    assert res["f1_macro_per_file_mean"] == approx(34 / 63)
    assert res["f1_micro"] != approx(res["f1_macro"])
    with pytest.raises(ValueError):
        clscisumm_task1a([])


def test_task1b_facets_only_on_comparable_citances():
    sys_facets = {"c1": "Method_Citation", "c2": ["Results_Citation", "Aim_Citation"]}
    gold_a = {"c1": "Method Citation", "c2": "Results_Citation"}
    gold_b = {"c1": "Aim_Citation", "c2": ["Method_Citation", "Result_Citation"], "c3": "Hypothesis_Citation"}
    # vs A: c1, c2 comparable (1A found a gold sentence). c1: TP Method;
    #   c2: TP Results, FP Aim -> TP 2, FP 1, FN 0; P 2/3, R 1, F 0.8
    assert task1b_counts(SYSTEM, sys_facets, GOLD_A, gold_a) == Counts(2, 1, 0)
    # vs B: c1 not comparable (gold {4} missed) -> FN Aim, system's Method not counted;
    #   c2 comparable: TP Results, FN Method, FP Aim; c3 not found -> FN Hypothesis
    #   -> TP 1, FP 1, FN 3; P 1/2, R 1/4, F 1/3
    assert task1b_counts(SYSTEM, sys_facets, GOLD_B, gold_b) == Counts(1, 1, 3)
    res = clscisumm_task1b(
        [Task1Pair(SYSTEM, sys_facets, GOLD_A, gold_a), (SYSTEM, sys_facets, GOLD_B, gold_b)]
    )
    # micro: TP 3, FP 2, FN 3 -> P 3/5, R 1/2, F = 2*0.3/1.1 = 6/11
    assert res["precision_micro"] == approx(3 / 5)
    assert res["recall_micro"] == approx(1 / 2)
    assert res["f1_micro"] == approx(6 / 11)
    # macro P = (2/3 + 1/2)/2 = 7/12; R = (1 + 1/4)/2 = 5/8
    # F = 2*(7/12)*(5/8) / (7/12 + 5/8) = (35/48) / (29/24) = 35/58 = 0.603448
    assert res["precision_macro"] == approx(7 / 12)
    assert res["recall_macro"] == approx(5 / 8)
    assert res["f1_macro"] == approx(35 / 58)
    # mean per-file F1 = (0.8 + 1/3)/2 = 17/30
    assert res["f1_macro_per_file_mean"] == approx(17 / 30)
    # a system citance absent from gold: its facets are FP
    assert task1b_counts({"c9": {1}}, {"c9": "Aim"}, {}, {}) == Counts(0, 1, 0)


# =========================================================================== facets

FACET_GOLD = [{"Method"}, {"Method", "Results"}, {"Aim"}, set(), "Results"]
FACET_PRED = [{"Method"}, {"Results"}, {"Method"}, {"Aim"}, {"Results"}]


def test_per_label_prf():
    table = per_label_prf(FACET_GOLD, FACET_PRED)
    assert list(table) == ["Aim", "Method", "Results"]
    # Method: item 1 TP, item 2 FN, item 3 FP -> P 1/2, R 1/2, F 1/2
    assert (table["Method"]["tp"], table["Method"]["fp"], table["Method"]["fn"]) == (1, 1, 1)
    assert table["Method"]["f1"] == approx(0.5)
    # Results: items 2 and 5 TP -> 1, 1, 1 (support 2)
    assert table["Results"]["f1"] == 1.0 and table["Results"]["support"] == 2
    # Aim: item 3 FN, item 4 FP -> 0, 0, 0
    assert table["Aim"]["precision"] == table["Aim"]["recall"] == table["Aim"]["f1"] == 0.0


def test_facet_f1_micro_vs_macro():
    res = facet_f1(FACET_GOLD, FACET_PRED)
    # micro: TP 1+2+0 = 3, FP 1+0+1 = 2, FN 1+0+1 = 2 -> P = R = F = 3/5
    assert res["precision_micro"] == approx(0.6)
    assert res["recall_micro"] == approx(0.6)
    assert res["f1_micro"] == approx(0.6)
    # macro over 3 labels: F = (0 + 1/2 + 1)/3 = 1/2; P likewise (0 + 1/2 + 1)/3
    assert res["f1_macro"] == approx(0.5)
    assert res["precision_macro"] == approx(0.5)
    # over the 5 CL-SciSumm labels (Hypothesis, Implication unseen -> 0): 1.5/5 = 0.3
    assert facet_f1(FACET_GOLD, FACET_PRED, labels=FACET_LABELS)["f1_macro"] == approx(0.3)
    assert facet_f1([], [])["f1_macro"] == 0.0
    with pytest.raises(ValueError):
        facet_f1([{"Aim"}], [])


# =========================================================================== significance


def test_paired_bootstrap_delta_and_determinism():
    a, b = [1, 0, 1, 1], [0, 0, 1, 0]
    res = paired_bootstrap(a, b, n_resamples=2000, seed=3)
    # delta = mean(a) - mean(b) = 3/4 - 1/4 = 0.5
    assert res["delta"] == approx(0.5)
    assert set(res) == {"delta", "p_value", "ci_low", "ci_high"}
    assert res == paired_bootstrap(a, b, n_resamples=2000, seed=3)
    assert res["ci_low"] <= res["delta"] <= res["ci_high"]
    # swapping the systems mirrors the result
    swapped = paired_bootstrap(b, a, n_resamples=2000, seed=3)
    assert swapped["delta"] == approx(-0.5)
    assert swapped["p_value"] == approx(res["p_value"])
    assert swapped["ci_low"] == approx(-res["ci_high"])


def test_paired_bootstrap_hand_computed_extremes():
    # identical systems: every resampled difference is 0 -> delta 0, CI [0, 0], p = 1
    same = paired_bootstrap([0.2, 0.5, 0.9], [0.2, 0.5, 0.9], n_resamples=500)
    assert same == {"delta": 0.0, "p_value": 1.0, "ci_low": 0.0, "ci_high": 0.0}
    # constant difference 0.25: every resample mean is 0.25 -> CI [0.25, 0.25];
    # no resample has |d* - 0.25| >= 0.25 -> p = (0 + 1) / (1000 + 1)
    const = paired_bootstrap([0.5, 0.75, 1.0], [0.25, 0.5, 0.75], n_resamples=1000)
    assert const["delta"] == approx(0.25)
    assert const["ci_low"] == approx(0.25) and const["ci_high"] == approx(0.25)
    assert const["p_value"] == approx(1 / 1001)


def test_paired_bootstrap_separates_clear_and_null_differences():
    better = [0.9, 0.8, 0.7, 0.95, 0.85] * 10
    worse = [0.5, 0.6, 0.4, 0.55, 0.5] * 10
    clear = paired_bootstrap(better, worse)
    assert clear["p_value"] < 0.01 and clear["ci_low"] > 0
    noise = paired_bootstrap([0.5, 0.6, 0.4, 0.7, 0.3] * 10, [0.6, 0.5, 0.3, 0.4, 0.7] * 10)
    assert noise["p_value"] > 0.05 and noise["ci_low"] < 0 < noise["ci_high"]


@pytest.mark.parametrize(
    "a, b, kwargs",
    [([1, 2], [1], {}), ([], [], {}), ([1, float("nan")], [1, 2], {}), ([1], [2], {"n_resamples": 0})],
)
def test_paired_bootstrap_rejects_bad_input(a, b, kwargs):
    with pytest.raises(ValueError):
        paired_bootstrap(a, b, **kwargs)


def test_micro_f1_of_counts():
    # 2 * 3 / (2 * 3 + 1 + 2) = 6 / 9; nothing predicted and nothing gold -> 0
    assert micro_f1([3, 1, 2]) == approx(2 / 3)
    assert micro_f1([0, 0, 0]) == 0.0
    assert list(micro_f1([[3, 1, 2], [0, 4, 0], [1, 0, 0]])) == approx([2 / 3, 0.0, 1.0])
    for bad in ([1, 2], [1, 2, 3, 4], [1, -1, 0], 3):
        with pytest.raises(ValueError):
            micro_f1(bad)


def test_paired_bootstrap_micro_f1_pools_counts_before_f1():
    # A: papers (tp, fp, fn) sum to (4, 2, 2) -> F1 8/12; B: (2, 2, 4) -> 4/10
    a = [[3, 0, 1], [1, 2, 1]]
    b = [[2, 0, 2], [0, 2, 2]]
    res = paired_bootstrap_micro_f1(a, b, n_resamples=2000, seed=3)
    assert res["delta"] == approx(8 / 12 - 4 / 10)
    # the mean of per-paper F1 differences would be another number: pooling is what is tested
    per_paper = (micro_f1([3, 0, 1]) - micro_f1([2, 0, 2]) + micro_f1([1, 2, 1]) - micro_f1([0, 2, 2])) / 2
    assert res["delta"] != approx(per_paper)
    assert set(res) == {"delta", "p_value", "ci_low", "ci_high"}
    assert res == paired_bootstrap_micro_f1(a, b, n_resamples=2000, seed=3)
    swapped = paired_bootstrap_micro_f1(b, a, n_resamples=2000, seed=3)
    assert swapped["delta"] == approx(-res["delta"]) and swapped["ci_low"] == approx(-res["ci_high"])


def test_paired_bootstrap_micro_f1_hand_computed_extremes():
    # identical systems: every resample gives 0 -> delta 0, CI [0, 0], p = 1
    same = paired_bootstrap_micro_f1([[1, 1, 0], [2, 0, 1]], [[1, 1, 0], [2, 0, 1]], n_resamples=500)
    assert same == {"delta": 0.0, "p_value": 1.0, "ci_low": 0.0, "ci_high": 0.0}
    # every paper perfect for A and wholly wrong for B: each resample differs by exactly 1
    perfect = paired_bootstrap_micro_f1([[2, 0, 0], [1, 0, 0]], [[0, 1, 2], [0, 3, 1]], n_resamples=1000)
    assert perfect["delta"] == approx(1.0) and perfect["ci_low"] == approx(1.0) and perfect["ci_high"] == approx(1.0)
    assert perfect["p_value"] == approx(1 / 1001)


def test_paired_bootstrap_micro_f1_separates_clear_and_null_differences():
    better = [[4, 1, 1], [3, 1, 0], [5, 0, 1], [2, 1, 1]] * 10
    worse = [[2, 3, 3], [1, 4, 2], [3, 2, 3], [1, 2, 2]] * 10
    clear = paired_bootstrap_micro_f1(better, worse)
    assert clear["p_value"] < 0.01 and clear["ci_low"] > 0
    # A is one true positive ahead in one paper of forty: a small delta, no evidence
    noise_a = [[3, 1, 1], [1, 2, 2]] * 20
    noise_b = [[1, 2, 2], [3, 1, 1]] * 20
    noise_a[0] = [4, 1, 0]
    noise = paired_bootstrap_micro_f1(noise_a, noise_b)
    assert 0 < noise["delta"] < 0.02 and noise["ci_low"] < 0 < noise["ci_high"] and noise["p_value"] > 0.05


def test_paired_bootstrap_micro_f1_draws_items_with_replacement():
    # two papers: A perfect on one (1, 0, 0), wrong on the other (0, 1, 0); B is never right.
    # Drawing two papers with replacement gives A's F1 1 (both the first), 2/3 (one each) or
    # 0 (both the second), with probabilities 1/4, 1/2, 1/4; B's F1 is always 0.
    res = paired_bootstrap_micro_f1([[1, 0, 0], [0, 1, 0]], [[0, 1, 1], [0, 1, 0]], n_resamples=20000,
                                    seed=1, confidence=0.4)
    assert res["delta"] == approx(2 / 3)
    # the middle 40% of the resampled deltas (30th to 70th percentile) is exactly 2/3
    assert res["ci_low"] == approx(2 / 3) and res["ci_high"] == approx(2 / 3)
    wide = paired_bootstrap_micro_f1([[1, 0, 0], [0, 1, 0]], [[0, 1, 1], [0, 1, 0]], n_resamples=20000,
                                     seed=1, confidence=0.9)
    assert wide["ci_low"] == approx(0.0) and wide["ci_high"] == approx(1.0)
    # |d* - 2/3| >= 2/3 only for d* = 0, a quarter of the resamples
    assert res["p_value"] == approx(0.25, abs=0.015)


@pytest.mark.parametrize(
    "a, b, kwargs",
    [([[1, 0, 0]], [[1, 0]], {}), ([[1, 0, 0]], [[1, 0, 0], [1, 0, 0]], {}), ([], [], {}),
     (numpy.empty((0, 3)), numpy.empty((0, 3)), {}),
     ([[1, -1, 0]], [[1, 0, 0]], {}), ([[1, float("nan"), 0]], [[1, 0, 0]], {}),
     ([[1, 0, 0]], [[1, 0, 0]], {"n_resamples": 0}), ([[1, 0, 0]], [[1, 0, 0]], {"confidence": 1.0})],
)
def test_paired_bootstrap_micro_f1_rejects_bad_input(a, b, kwargs):
    with pytest.raises(ValueError):
        paired_bootstrap_micro_f1(a, b, **kwargs)


def test_versus_baselines_tests_each_metric_against_each_baseline():
    ours = {"ap": [0.9, 0.8, 1.0, 0.7], "hit": [1.0, 1.0, 1.0, 0.0]}
    baselines = {"first": {"ap": [0.5, 0.8, 0.6, 0.7], "hit": [0.0, 1.0, 0.0, 0.0]},
                 "same": {"ap": [0.9, 0.8, 1.0, 0.7], "hit": [1.0, 1.0, 1.0, 0.0]}}
    report = versus_baselines(ours, baselines, n_resamples=500, seed=1)
    assert set(report) == {"first", "same"}
    for metric in ("ap", "hit"):
        assert report["first"][metric] == paired_bootstrap(ours[metric], baselines["first"][metric],
                                                           n_resamples=500, seed=1)
    assert report["first"]["ap"]["delta"] == pytest.approx(0.2)
    assert report["first"]["hit"]["delta"] == pytest.approx(0.5)
    assert report["same"]["ap"]["delta"] == 0.0 and report["same"]["ap"]["p_value"] == 1.0
    assert report["first"]["n_items"] == report["same"]["n_items"] == 4


def test_versus_baselines_pools_counts_and_skips_a_single_item():
    ours = {"f1": [[3, 1, 0], [1, 0, 2]]}
    theirs = {"f1": [[2, 2, 1], [0, 1, 3]]}
    report = versus_baselines(ours, {"bm25": theirs}, pooled=True, n_resamples=300)
    assert report["bm25"]["f1"] == paired_bootstrap_micro_f1(ours["f1"], theirs["f1"], n_resamples=300)
    assert report["bm25"]["f1"]["delta"] == pytest.approx(micro_f1([4, 1, 2]) - micro_f1([2, 3, 4]))
    single = versus_baselines({"f1": [[3, 1, 0]]}, {"bm25": {"f1": [[2, 2, 1]]}}, pooled=True)
    assert "at least 2 items" in single["bm25"]["skipped"]
    assert versus_baselines(ours, {}, pooled=True) == {}


@pytest.mark.parametrize("ours, baselines, message", [
    ({"ap": [0.1, 0.2]}, {"b": {"mrr": [0.1, 0.2]}}, "has no ap"),
    ({"ap": [0.1, 0.2]}, {"b": {"ap": [0.1, 0.2, 0.3]}}, "scores 3 items"),
    ({"ap": [0.1, 0.2], "hit": [1.0]}, {"b": {"ap": [0.1, 0.2], "hit": [1.0]}}, "different numbers of items"),
])
def test_versus_baselines_rejects_misaligned_inputs(ours, baselines, message):
    with pytest.raises(ValueError, match=message):
        versus_baselines(ours, baselines)


def _accuracy(counts):
    """Accuracy of (correct, total) counts, for one vector or many."""
    counts = numpy.asarray(counts, dtype=float)
    return counts[..., 0] / counts[..., 1]


def test_paired_bootstrap_pooled_is_the_micro_f1_test_for_micro_f1():
    a = [[3, 1, 0], [1, 0, 2], [0, 2, 1], [4, 0, 0]]
    b = [[2, 2, 1], [0, 1, 3], [1, 1, 0], [3, 1, 1]]
    assert paired_bootstrap_pooled(a, b, micro_f1, 700, 4) == paired_bootstrap_micro_f1(a, b, 700, 4)


def test_paired_bootstrap_pooled_pools_before_the_statistic():
    # abstracts of 10 and 2 sentences: pooled accuracy is 11/12 vs 6/12, not the mean of ratios
    a, b = [[9, 10], [2, 2]], [[6, 10], [0, 2]]
    result = paired_bootstrap_pooled(a, b, _accuracy, n_resamples=2000)
    assert result["delta"] == approx(11 / 12 - 6 / 12)
    # two items: a resample holds the first twice, both, or the second twice (1/4, 1/2, 1/4)
    assert result["ci_low"] == approx(0.3) and result["ci_high"] == approx(1.0)
    with pytest.raises(ValueError, match="one shape"):
        paired_bootstrap_pooled(a, [[1, 2]], _accuracy)
    with pytest.raises(ValueError, match="not negative"):
        paired_bootstrap_pooled([[-1, 2], [1, 2]], b, _accuracy)
    with pytest.raises(ValueError, match="one value each"):  # indexes the first vector, not the last axis
        paired_bootstrap_pooled(a, b, lambda counts: numpy.asarray(counts)[0] / 12, n_resamples=50)


def test_versus_baselines_takes_a_statistic_per_metric():
    ours = {"accuracy": [[9, 10], [2, 2], [5, 6]]}
    theirs = {"accuracy": [[6, 10], [0, 2], [5, 6]]}
    report = versus_baselines(ours, {"lr": theirs}, pooled={"accuracy": _accuracy}, n_resamples=300)
    assert report["lr"]["accuracy"] == paired_bootstrap_pooled(ours["accuracy"], theirs["accuracy"], _accuracy, 300)
    assert report["lr"]["n_items"] == 3
    with pytest.raises(ValueError, match="statistics for"):
        versus_baselines(ours, {"lr": theirs}, pooled={"f1": _accuracy})


def test_versus_summary_prints_the_named_metrics_in_order():
    test = {"hit_at_5": {"delta": -0.0147, "ci_low": -0.1, "ci_high": 0.07, "p_value": 0.81234},
            "hit_at_1": {"delta": 0.0441, "ci_low": -0.029, "ci_high": 0.1176, "p_value": 0.3},
            "n_items": 68}
    line = versus_summary(test, {"hit_at_1": "hit@1", "hit_at_5": "hit@5", "mrr": "MRR"}, "queries")
    assert line == ("hit@1 +0.044 (95% CI -0.029..+0.118, p 0.3), "
                    "hit@5 -0.015 (95% CI -0.100..+0.070, p 0.81) (68 queries)")
    assert versus_summary({"skipped": "one paper"}, {"f1": "F1"}) == "skipped (one paper)"

# =========================================================================== registry


def test_builtin_metrics_registry():
    expected = {
        "map", "mrr", "ndcg", "acc_at_k", "recall_at_k", "hit_at_k",
        "csfcube", "clscisumm_task1a", "facet_f1", "paired_bootstrap", "paired_bootstrap_micro_f1",
    }
    assert expected <= set(BUILTIN_METRICS)
    assert all(callable(f) for f in BUILTIN_METRICS.values())
    assert BUILTIN_METRICS["map"] is mean_average_precision
    assert BUILTIN_METRICS["csfcube"] is evaluate_csfcube
    # run-level ranking metrics share one call shape
    rankings, qrels = {"q": RANKING}, {"q": BINARY}
    assert BUILTIN_METRICS["mrr"](rankings, qrels) == approx(0.5)
    assert BUILTIN_METRICS["recall_at_k"](rankings, qrels, 5) == approx(2 / 3)
