"""``similar``: ranking by the aspect distance, self-exclusion, explanations, documented edge cases."""

from __future__ import annotations

import json

import numpy
import pytest

from scholarly_nlp.doc.roles import QUERY_ASPECTS, aspect_sentences
from scholarly_nlp.errors import UnknownNameError
from scholarly_aspect_embedder.index import AspectIndex
from scholarly_aspect_embedder.search import SimilarPaper, similar
from scholarly_aspect_embedder.vectors import ASPECT_WEIGHT, MissingAspectVectorsError, paper_vector

from conftest import shared
from similarity_support import csfcube_docs, embed

N_DOCS = 100


@pytest.fixture(scope="module")
def docs():
    """100 real CSFCube papers with the hashed stand-in embedding."""
    return csfcube_docs(shared("csfcube", "abstracts-csfcube-preds.jsonl"), N_DOCS)


@pytest.fixture(scope="module")
def index(docs, tmp_path_factory):
    return AspectIndex.build(docs, tmp_path_factory.mktemp("similar") / "index", model_name="hashed-test")


def _unit(v):
    v = numpy.asarray(v, dtype=numpy.float64)
    return v / numpy.linalg.norm(v)


def _score(q, c, aspect, w=ASPECT_WEIGHT):
    """cos(paper) + w * cos(query aspect), the paper vector standing in for a missing aspect."""
    fq = _unit(q[aspect]) if aspect in q else paper_vector(q)
    fc = _unit(c[aspect]) if aspect in c else paper_vector(c)
    return float(paper_vector(q) @ paper_vector(c)) + w * float(fq @ fc)


@pytest.mark.parametrize("aspect", QUERY_ASPECTS)
def test_ranking_is_brute_force_score_order_without_the_query(docs, aspect):
    query = docs[0]
    hits = similar(query, docs, aspect, k=10)
    scores = {d._.paper_id: _score(query._.aspect_vectors, d._.aspect_vectors, aspect) for d in docs[1:]}
    best = sorted(scores, key=lambda pid: -scores[pid])[:10]
    assert [h.paper_id for h in hits] == best
    assert [h.rank for h in hits] == list(range(1, 11))
    assert all(h.paper_id != query._.paper_id for h in hits)
    for hit in hits:  # the distance is the score's Euclidean form
        assert hit.distance ** 2 == pytest.approx(2 + 2 * ASPECT_WEIGHT - 2 * scores[hit.paper_id], abs=1e-5)
        assert hit.aspect_scores["paper"] == pytest.approx(
            float(paper_vector(query._.aspect_vectors) @ paper_vector(_doc(docs, hit.paper_id)._.aspect_vectors)),
            abs=1e-6)


def _doc(docs, paper_id):
    return next(d for d in docs if d._.paper_id == paper_id)


def test_docs_and_mmapped_index_give_the_same_hits(docs, index):
    for aspect in QUERY_ASPECTS:
        for q in (1, 42):
            from_docs, from_index = similar(docs[q], docs, aspect, k=7), similar(docs[q], index, aspect, k=7)
            assert [h.paper_id for h in from_docs] == [h.paper_id for h in from_index]
            assert numpy.allclose([h.distance for h in from_docs], [h.distance for h in from_index], atol=1e-5)
            assert [h.explanation for h in from_docs] == [h.explanation for h in from_index]
            for a, b in zip(from_docs, from_index):
                assert a.aspect_scores.keys() == b.aspect_scores.keys()
                assert numpy.allclose(list(a.aspect_scores.values()), list(b.aspect_scores.values()), atol=1e-6)


def test_explanation_is_the_max_cosine_pair(docs):
    query = docs[0]
    items = aspect_sentences(query)
    q_rows = [i for i, (_s, a) in enumerate(items) if a == "method"]
    assert q_rows, "the first CSFCube paper has method sentences"
    for hit in similar(query, docs, "method", k=5):
        cand = _doc(docs, hit.paper_id)
        c_items = aspect_sentences(cand)
        cos = numpy.array([[float(_unit(query._.sentence_vectors[i]) @ _unit(cand._.sentence_vectors[j]))
                            if numpy.any(cand._.sentence_vectors[j]) else -1.0
                            for j in range(len(c_items))] for i in q_rows])
        i, j = numpy.unravel_index(numpy.argmax(cos), cos.shape)
        match = hit.explanation
        assert match.similarity == pytest.approx(cos.max(), abs=1e-6)
        assert match.query_aspect == "method" and match.query_sentence == items[q_rows[i]][0].text
        assert (match.candidate_sentence, match.candidate_aspect) == (c_items[j][0].text, c_items[j][1])


def test_explanation_falls_back_to_abstract_then_title(docs):
    no_result = next(d for d in docs if not any(a == "result" for _s, a in aspect_sentences(d)))
    match = similar(no_result, docs, "result", k=1)[0].explanation
    assert match.query_aspect != "title"
    title_only = docs[5].copy()
    title_only.spans["roles"] = []
    title_only.spans["abstract"] = []
    embed(title_only)
    match = similar(title_only, docs, "method", k=1)[0].explanation
    assert match.query_aspect == "title" and match.query_sentence == title_only.spans["title"][0].text


def test_documented_edge_cases(docs):
    query = docs[0]
    with pytest.raises(UnknownNameError):
        similar(query, docs, "novelty")
    assert similar(query, [], "method") == []
    assert similar(query, [query], "method") == []  # only itself
    with pytest.raises(ValueError):
        similar(query, docs, "method", k=0)
    everything = similar(query, docs[:6], "method", k=50)
    assert len(everything) == 5 and [h.rank for h in everything] == [1, 2, 3, 4, 5]
    bare = docs[3].copy()
    bare._.aspect_vectors = None
    with pytest.raises(MissingAspectVectorsError, match="run the aspect_embedder"):
        similar(bare, docs, "method")
    with pytest.raises(MissingAspectVectorsError, match=bare._.paper_id):
        similar(query, [docs[1], bare], "method")


def test_no_sentence_vectors_means_no_explanation(docs):
    query = docs[0].copy()
    query._.aspect_vectors = docs[0]._.aspect_vectors
    query._.sentence_vectors = None
    hits = similar(query, docs, "background", k=2)
    assert len(hits) == 2 and all(h.explanation is None for h in hits)


def test_to_dict_is_json(docs):
    hit = similar(docs[0], docs, "method", k=1)[0]
    data = json.loads(json.dumps(hit.to_dict()))
    assert isinstance(hit, SimilarPaper)
    assert set(data) == {"rank", "paper_id", "title", "distance", "aspect_scores", "explanation"}
    assert set(data["explanation"]) == {"query_sentence", "query_aspect", "candidate_sentence", "candidate_aspect",
                                        "similarity"}
