"""The CSFCube retrieval baselines on a few real queries (fast: 2 queries per query aspect)."""

from __future__ import annotations

import pytest

from conftest import shared
from scholarly_nlp import QUERY_ASPECTS
from scholarly_nlp.metrics import evaluate_csfcube
from scholarly_nlp.readers import load_csfcube_qrels
from scholarly_nlp.readers.abstracts import AbstractRecord, read_csfcube_abstracts
from scholarly_aspect_embedder.baselines import (
    SIMILARITY_BASELINES,
    BM25AspectRanker,
    MiniLMRanker,
    TfidfAspectRanker,
    aspect_text,
    whole_text,
)
from scholarly_aspect_embedder.csfcube_eval import csfcube_pools, rank_pools

N_QUERIES = 2


@pytest.fixture(scope="module")
def data_dir():
    return shared("csfcube")


@pytest.fixture(scope="module")
def records(data_dir):
    return read_csfcube_abstracts(data_dir / "abstracts-csfcube-preds.jsonl")


@pytest.fixture(scope="module")
def small_pools(data_dir):
    """The first N_QUERIES queries of each aspect with their whole pools."""
    return {aspect: dict(list(queries.items())[:N_QUERIES]) for aspect, queries in csfcube_pools(data_dir).items()}


@pytest.fixture(scope="module")
def pool_records(records, small_pools):
    """The records of the small pools' queries and candidates (the collection the tests prepare on)."""
    wanted = {pid for queries in small_pools.values() for q, cands in queries.items() for pid in [q, *cands]}
    return [r for r in records if r.paper_id in wanted]


@pytest.fixture(scope="module")
def small_qrels(data_dir, small_pools):
    return {aspect: {q: load_csfcube_qrels(data_dir, aspect)[q] for q in small_pools[aspect]}
            for aspect in QUERY_ASPECTS}


def _map(ranked, qrels):
    return evaluate_csfcube(ranked, qrels)["map"]


def test_aspect_text_uses_the_aspect_sentences_and_falls_back_to_the_whole_text():
    record = AbstractRecord("1", "A title", ["Why.", "Goal.", "How.", "Other."],
                            ["background", "objective", "method", "other"])
    assert aspect_text(record, "background") == "Why. Goal."
    assert aspect_text(record, "method") == "How."
    assert aspect_text(record, "result") == whole_text(record) == "A title Why. Goal. How. Other."
    assert aspect_text(AbstractRecord("2", "T", ["S."]), "method") == "T S."


@pytest.mark.parametrize("factory", [TfidfAspectRanker, BM25AspectRanker])
@pytest.mark.parametrize("rule", ["aspect", "whole"])
def test_lexical_rankers_beat_a_reversed_ranking(factory, rule, pool_records, small_pools, small_qrels):
    ranker = factory(candidate_text=rule)
    ranker.prepare(pool_records)
    by_pid = {r.paper_id: r for r in pool_records}
    ranked = rank_pools(ranker, by_pid, small_pools)
    for aspect in QUERY_ASPECTS:
        for q, entries in ranked[aspect].items():
            assert sorted(c for c, _ in entries) == sorted(small_pools[aspect][q])
            distances = [d for _, d in entries]
            assert distances == sorted(distances)
        reversed_run = {q: entries[::-1] for q, entries in ranked[aspect].items()}
        assert _map(ranked[aspect], small_qrels[aspect]) > _map(reversed_run, small_qrels[aspect])


def test_lexical_defaults_and_bad_arguments(records):
    assert TfidfAspectRanker().candidate_text == BM25AspectRanker().candidate_text == "aspect"
    with pytest.raises(ValueError, match="candidate_text"):
        TfidfAspectRanker(candidate_text="title")
    ranker = BM25AspectRanker()
    ranker.prepare(records[:5])
    with pytest.raises(ValueError, match="prepared collection"):
        ranker.rank(records[0], [records[10]], "method")
    with pytest.raises(Exception, match="aspect"):
        ranker.rank(records[0], records[1:3], "title")
    assert ranker.rank(records[0], [], "method") == []


def test_lexical_ranker_prepares_itself_on_the_pool_when_not_prepared(records):
    ranked = TfidfAspectRanker().rank(records[0], records[1:6], "background")
    assert sorted(c for c, _ in ranked) == sorted(r.paper_id for r in records[1:6])


def test_minilm_ranker_with_a_tiny_backbone(tmp_path_factory, records, small_pools):
    from scholarly_nlp.ml.backbones import make_tiny_backbone

    backbone = make_tiny_backbone(tmp_path_factory.mktemp("backbones") / "tiny")
    ranker = MiniLMRanker(backbone=str(backbone))
    aspect = "method"
    query = next(iter(small_pools[aspect]))
    by_pid = {r.paper_id: r for r in records}
    candidates = [by_pid[c] for c in small_pools[aspect][query][:12]]
    ranker.prepare(records)
    ranked = ranker.rank(by_pid[query], candidates, aspect)
    assert sorted(c for c, _ in ranked) == sorted(c.paper_id for c in candidates)
    distances = [d for _, d in ranked]
    assert distances == sorted(distances)
    assert all(-1e-5 <= d <= 2 + 1e-5 for d in distances)
    # Embeddings are cached per pid: ranking again encodes nothing new.
    cached = len(ranker._cache)
    assert cached == len(candidates) + 1
    assert ranker.rank(by_pid[query], candidates, "result") == ranked
    assert len(ranker._cache) == cached


def test_baseline_registry():
    assert set(SIMILARITY_BASELINES) == {"tfidf", "bm25", "minilm"}
