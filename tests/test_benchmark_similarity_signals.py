"""The two similarity benchmarks of issue 19 compute what their READMEs report.

``benchmarks/csfcube_sentence_matching.py`` (sentence-level matching of a query aspect, on real
CSFCube abstracts) and ``benchmarks/figure_pair_signals.py`` (which signal separates figure
pairs): their scoring is checked here with a deterministic encoder, so the numbers in
``projects/aspect_embedder/README.md`` and ``projects/figure_embeddings/README.md`` come from
code that does what its docstring says.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import sys
from pathlib import Path

import numpy
import pytest
from conftest import shared

from scholarly_nlp.readers import read_csfcube_abstracts

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def benchmarks():
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        yield (importlib.import_module("csfcube_sentence_matching"), importlib.import_module("figure_pair_signals"))
    finally:
        sys.path.remove(str(REPO / "benchmarks"))


class HashEncoder:
    """A stand-in sentence encoder: a fixed random vector per distinct text; counts calls."""

    def __init__(self):
        self.encoded = 0

    def encode(self, texts):
        self.encoded += len(texts)
        rows = []
        for text in texts:
            seed = int(hashlib.sha1(text.encode()).hexdigest()[:8], 16)
            rows.append(numpy.random.default_rng(seed).standard_normal(16))
        return numpy.asarray(rows, dtype=numpy.float32)


@pytest.fixture(scope="module")
def records():
    found = read_csfcube_abstracts(shared("csfcube", "abstracts-csfcube-preds.jsonl"))
    return [r for r in found if r.roles and len(r.sentences) >= 4][:12]


def test_sentence_matching_ranks_a_copy_of_the_query_first(benchmarks, records):
    matching, _ = benchmarks
    query, others = records[0], records[1:]
    copy = dataclasses.replace(query, paper_id="copy-of-" + query.paper_id)
    for variant in matching.VARIANTS:
        ranked = matching.SentenceMatchRanker(variant, HashEncoder()).rank(query, [*others, copy], "method")
        assert ranked[0] == ("copy-of-" + query.paper_id, pytest.approx(-1.0, abs=1e-5))
        assert len(ranked) == len(others) + 1
        assert [d for _, d in ranked] == sorted(d for _, d in ranked)


def test_max_sim_is_the_mean_best_match_of_the_query_aspect_sentences(benchmarks, records):
    matching, _ = benchmarks
    from scholarly_nlp import aspect_of_role

    query, candidate = records[0], records[1]
    encoder = HashEncoder()
    ranker = matching.SentenceMatchRanker("max_sim", encoder)
    ranker.prepare([query, candidate])
    encoded = encoder.encoded
    (pid, distance), = ranker.rank(query, [candidate], "background")
    assert encoder.encoded == encoded  # prepared records are not encoded again

    def unit(texts):
        v = encoder.encode(texts)
        return v / numpy.linalg.norm(v, axis=1, keepdims=True)

    picked = [s for s, r in zip(query.sentences, query.roles) if aspect_of_role(r) == "background"] or \
        [query.title, *query.sentences]
    expected = (unit(picked) @ unit([candidate.title, *candidate.sentences]).T).max(axis=1).mean()
    assert pid == candidate.paper_id and -distance == pytest.approx(expected, abs=1e-5)


def test_sentence_matching_refuses_an_unknown_variant(benchmarks):
    matching, _ = benchmarks
    with pytest.raises(ValueError, match="variant"):
        matching.SentenceMatchRanker("bm25", HashEncoder())


def test_paper_blend_weight_is_chosen_on_dev(benchmarks):
    _, signals = benchmarks
    labels = numpy.array([1, 1, 1, 0, 0, 0])
    # the figure signal is noise, the paper signal separates the classes; from weight 0.6 on the
    # blend separates them too, and of equally good weights the smallest is kept
    dev = {"tfidf": numpy.array([0.2, 0.9, 0.1, 0.8, 0.3, 0.5]), "paper": numpy.array([0.9, 0.8, 0.7, 0.2, 0.1, 0.3])}
    report = signals.blend_report(dev, labels, dev, labels, "tfidf")
    assert report["paper_weight"] == 0.6 and report["accuracy"] == 1.0 and report["auc"] == 1.0
    # and the other way round: a useless paper signal gets weight 0
    swapped = {"tfidf": dev["paper"], "paper": dev["tfidf"]}
    assert signals.blend_report(swapped, labels, swapped, labels, "tfidf")["paper_weight"] == 0.0


def test_unit_rows_keep_zero_rows(benchmarks):
    _, signals = benchmarks
    rows = signals.unit_rows([[3.0, 4.0], [0.0, 0.0]])
    assert numpy.allclose(rows, [[0.6, 0.8], [0.0, 0.0]])


def test_paper_texts_are_title_and_abstract_of_real_papers(benchmarks, nlp, acl_tei_dir):
    import scholarly_nlp

    _, signals = benchmarks
    doc = scholarly_nlp.read(acl_tei_dir / "D14-1003.tei.xml", nlp=nlp)
    texts = signals.paper_texts([doc])
    (pid, text), = texts.items()
    assert pid == (doc._.paper_id or "")
    assert doc.spans["title"][0].text in text and doc.spans["abstract"][0].text[:40] in text
