"""The scoring definition and the saved aspect index: files, mmap search, exactness, reuse keys."""

from __future__ import annotations

import json
import os
import shutil

import numpy
import pytest

from scholarly_nlp.doc.roles import ASPECTS, QUERY_ASPECTS, aspect_sentences
from scholarly_nlp.errors import UnknownNameError
from scholarly_nlp.readers.abstracts import AbstractRecord, abstract_doc
from scholarly_aspect_embedder.index import (FORMAT_VERSION, AspectIndex, IndexFormatError, corpus_fingerprint,
                                            index_path_for)
from scholarly_aspect_embedder.vectors import (ASPECT_WEIGHT, MissingAspectVectorsError, aspect_cosines,
                                              aspect_search_vector, paper_vector)

from conftest import shared
from similarity_support import csfcube_docs, embed, light_nlp

N_DOCS = 120


@pytest.fixture(scope="module")
def docs():
    """120 real CSFCube papers with the hashed stand-in embedding."""
    return csfcube_docs(shared("csfcube", "abstracts-csfcube-preds.jsonl"), N_DOCS)


@pytest.fixture(scope="module")
def index(docs, tmp_path_factory):
    return AspectIndex.build(iter(docs), tmp_path_factory.mktemp("idx") / "index", model_name="hashed-test",
                             fingerprint="fp", chunk_size=32)


def _unit(v):
    v = numpy.asarray(v, dtype=numpy.float64)
    return v / numpy.linalg.norm(v)


def test_paper_vector_is_normalised_mean_of_normalised_aspects():
    aspects = {"title": [3.0, 0.0, 0.0], "method": [0.0, 0.0, 2.0]}
    expected = _unit(_unit(aspects["title"]) + _unit(aspects["method"]))
    assert numpy.allclose(paper_vector(aspects), expected, atol=1e-6)
    assert paper_vector(aspects).dtype == numpy.float32


def test_aspect_search_vector_and_distance_identity(docs):
    q, c = docs[0]._.aspect_vectors, docs[1]._.aspect_vectors
    for aspect in QUERY_ASPECTS:
        vq, vc = aspect_search_vector(q, aspect), aspect_search_vector(c, aspect)
        assert vq.shape == (2 * len(q["title"]),)
        fq = _unit(q[aspect]) if aspect in q else paper_vector(q)
        fc = _unit(c[aspect]) if aspect in c else paper_vector(c)
        score = float(paper_vector(q) @ paper_vector(c)) + ASPECT_WEIGHT * float(fq @ fc)
        assert numpy.linalg.norm(vq - vc) ** 2 == pytest.approx(2 + 2 * ASPECT_WEIGHT - 2 * score, abs=1e-5)


def test_missing_aspect_uses_paper_vector():
    aspects = {"title": [1.0, 0.0], "background": [0.0, 1.0]}
    vector = aspect_search_vector(aspects, "result", aspect_weight=0.25)
    assert numpy.allclose(vector[2:], 0.5 * paper_vector(aspects))
    with pytest.raises(UnknownNameError):
        aspect_search_vector(aspects, "title")


def test_aspect_cosines_only_shared_aspects_plus_paper():
    scores = aspect_cosines({"title": [1, 0], "method": [1, 1]}, {"title": [0, 1], "method": [1, 1], "result": [1, 0]})
    assert set(scores) == {"paper", "title", "method"}
    assert scores["title"] == pytest.approx(0.0) and scores["method"] == pytest.approx(1.0)


def test_index_files_and_shapes(index, docs):
    width = len(docs[0]._.aspect_vectors["title"])
    meta = json.loads((index.path / "meta.json").read_text())
    assert meta["n"] == len(index) == N_DOCS and meta["width"] == width and meta["model"] == "hashed-test"
    assert meta["fingerprint"] == "fp" and meta["aspect_weight"] == ASPECT_WEIGHT
    for aspect in QUERY_ASPECTS:
        assert isinstance(index.search_vectors[aspect], numpy.memmap)
        matrix = index.search_vectors[aspect]
        assert matrix.shape == (N_DOCS, 2 * width) and matrix.dtype == numpy.float32
        expected = numpy.stack([aspect_search_vector(d._.aspect_vectors, aspect) for d in docs])
        assert numpy.allclose(index.search_vectors[aspect], expected, atol=1e-6)
    assert index.aspects.shape == (N_DOCS, len(ASPECTS), width)
    total = sum(len(aspect_sentences(d)) for d in docs)
    assert index.sentence_vectors.shape == (total, width) and index.sentence_offsets[-1] == total
    assert [p["paper_id"] for p in index.papers] == [d._.paper_id for d in docs]
    missing = [i for i, d in enumerate(docs) if "result" not in d._.aspect_vectors]
    assert missing and numpy.isnan(index.aspects[missing[0], ASPECTS.index("result")]).all()


def test_sentence_rows_align_with_aspect_sentences(index, docs):
    for row in (0, 17, N_DOCS - 1):
        rows, vectors = index.paper_sentences(row)
        items = aspect_sentences(docs[row])
        assert [(r["text"], r["aspect"]) for r in rows] == [(s.text, a) for s, a in items]
        assert numpy.allclose(vectors, docs[row]._.sentence_vectors)


def test_chunked_mmap_search_equals_in_memory_and_brute_force(index, docs):
    in_memory = AspectIndex.load(index.path, mmap=False)
    assert not isinstance(in_memory.search_vectors["method"], numpy.memmap)
    for aspect in QUERY_ASPECTS:
        matrix = numpy.asarray(in_memory.search_vectors[aspect], dtype=numpy.float64)
        for q in (0, 5, 77):
            query = aspect_search_vector(docs[q]._.aspect_vectors, aspect)
            mmapped = index.search(query, aspect, 10, chunk_rows=7)
            assert mmapped == in_memory.search(query, aspect, 10, chunk_rows=7)
            assert [r for r, _ in mmapped] == [r for r, _ in in_memory.search(query, aspect, 10)]
            brute = numpy.linalg.norm(matrix - query, axis=1)
            assert numpy.allclose([d for _, d in mmapped], numpy.sort(brute)[:10], atol=1e-5)
            assert all(abs(brute[r] - d) < 1e-5 for r, d in mmapped)
            assert mmapped[0][0] == q  # a paper is nearest to itself


def test_search_exclude_k_and_errors(index, docs):
    query = aspect_search_vector(docs[3]._.aspect_vectors, "method")
    hits = index.search(query, "method", N_DOCS + 50, exclude=[3])
    assert len(hits) == N_DOCS - 1 and 3 not in [r for r, _ in hits]
    assert [d for _, d in hits] == sorted(d for _, d in hits)
    with pytest.raises(ValueError):
        index.search(query, "method", 0)
    with pytest.raises(UnknownNameError):
        index.search(query, "novelty", 3)


def test_a_format_1_index_is_refused(index, tmp_path):
    """Format 2 renamed format 1's facet-<aspect>.npy and facet_weight: an old index is rebuilt, not read."""
    assert FORMAT_VERSION == 2 and sorted(p.name for p in index.path.glob("search-*.npy")) == [
        f"search-{a}.npy" for a in sorted(QUERY_ASPECTS)]
    old = tmp_path / "old"
    shutil.copytree(index.path, old)
    meta = json.loads((old / "meta.json").read_text())
    meta["format_version"] = 1
    (old / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(IndexFormatError, match="rebuild it"):
        AspectIndex.load(old)


def test_chunk_size_does_not_change_the_index(index, docs, tmp_path):
    other = AspectIndex.build(iter(docs), tmp_path / "big", model_name="hashed-test", chunk_size=1000)
    for name in ["aspects", "sentence_vectors", "sentence_offsets"]:
        assert numpy.array_equal(getattr(other, name), getattr(index, name), equal_nan=True)
    assert numpy.array_equal(other.search_vectors["result"], index.search_vectors["result"])


def test_list_vectors_after_docbin_roundtrip_are_accepted(docs, tmp_path):
    doc = docs[0].copy()
    doc._.aspect_vectors = {k: v.tolist() for k, v in docs[0]._.aspect_vectors.items()}
    doc._.sentence_vectors = docs[0]._.sentence_vectors.tolist()
    built = AspectIndex.build([doc], tmp_path / "one", model_name="m")
    assert numpy.allclose(built.search_vectors["method"][0], aspect_search_vector(docs[0]._.aspect_vectors, "method"))


def test_doc_without_aspect_vectors_names_the_paper(docs, tmp_path):
    bare = docs[2].copy()
    bare._.aspect_vectors = None
    with pytest.raises(MissingAspectVectorsError, match=rf"{bare._.paper_id}.*aspect_embedder"):
        AspectIndex.build([docs[0], bare], tmp_path / "bad", model_name="m")
    assert not (tmp_path / "bad").exists() and os.listdir(tmp_path) == []


def test_from_arrays_and_rebuild_in_place(tmp_path):
    rng = numpy.random.default_rng(0)
    aspects = rng.standard_normal((50, 4, 8)).astype(numpy.float32)
    aspects[::3, 2] = numpy.nan
    first = AspectIndex.from_arrays(tmp_path / "arr", aspects, [f"p{i}" for i in range(50)], model_name="m",
                                    chunk_size=16)
    assert len(first) == 50 and first.sentence_vectors.shape == (0, 8)
    expected = aspect_search_vector({a: aspects[3, i] for i, a in enumerate(ASPECTS) if i != 2}, "method")
    assert numpy.allclose(first.search_vectors["method"][3], expected, atol=1e-6)
    again = AspectIndex.from_arrays(tmp_path / "arr", aspects[:10], [f"p{i}" for i in range(10)], model_name="m")
    assert len(again) == 10 and len(AspectIndex.load(tmp_path / "arr")) == 10
    assert sorted(os.listdir(tmp_path)) == ["arr"]


def test_empty_index(tmp_path):
    empty = AspectIndex.build([], tmp_path / "empty", model_name="m")
    assert len(empty) == 0 and empty.search(numpy.zeros(4), "method", 3) == []


def test_the_index_lives_in_the_cache_unless_asked(tmp_path, monkeypatch):
    monkeypatch.setenv("SCHOLARLY_NLP_CACHE", str(tmp_path / "cache"))
    corpus = tmp_path / "papers"
    corpus.mkdir()
    path = index_path_for(corpus, "m")
    assert path.is_relative_to(tmp_path / "cache" / "aspect-index") and path.parent.name.startswith("papers-")
    assert index_path_for(str(corpus) + "/*.xml", "m") == path  # the glob's folder is the same corpus
    other = tmp_path / "elsewhere" / "papers"
    other.mkdir(parents=True)
    assert index_path_for(other, "m") != path  # same name, another folder


def test_index_path_for_and_fingerprint(tmp_path):
    corpus = tmp_path / "papers"
    corpus.mkdir()
    paper = corpus / "a.tei.xml"
    paper.write_text("<TEI/>")
    assert index_path_for(corpus, "/models/aspects", in_corpus=True).parent == corpus / ".scholarly-index"
    jsonl = tmp_path / "abstracts.jsonl"
    jsonl.write_text("{}\n")
    assert index_path_for(jsonl, "m", in_corpus=True).parent == tmp_path / "abstracts.jsonl.scholarly-index"
    assert index_path_for(str(corpus) + "/*.xml", "m", in_corpus=True).parent == corpus / ".scholarly-index"
    assert index_path_for(corpus, "m1") != index_path_for(corpus, "m2")
    before = corpus_fingerprint([paper], "m")
    assert before == corpus_fingerprint([str(paper)], "m") and before != corpus_fingerprint([paper], "m2")
    os.utime(paper, ns=(1, 1))
    assert corpus_fingerprint([paper], "m") != before


def test_sentence_text_with_unicode_line_separators_round_trips(tmp_path):
    record = AbstractRecord("sep", "A title\u2028with a separator", ["We use a method\u2028here.", "It works."],
                            ["method", "result"])
    doc = embed(abstract_doc(record, light_nlp()))
    built = AspectIndex.build([doc], tmp_path / "sep", model_name="m")
    rows, vectors = built.paper_sentences(0)
    assert [(r["text"], r["aspect"]) for r in rows] == [(s.text, a) for s, a in aspect_sentences(doc)]
    assert vectors.shape == (3, doc._.sentence_vectors.shape[1])
