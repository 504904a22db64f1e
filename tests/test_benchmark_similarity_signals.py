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

import numpy
import pytest
from conftest import benchmark_modules, shared

from scholarly_nlp.readers import read_csfcube_abstracts


@pytest.fixture(scope="module")
def benchmarks():
    with benchmark_modules("csfcube_sentence_matching", "figure_pair_signals") as modules:
        yield modules


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
    """Twelve real CSFCube abstracts; the first has background and method sentences and others."""
    from scholarly_nlp import aspect_of_role

    found = [r for r in read_csfcube_abstracts(shared("csfcube", "abstracts-csfcube-preds.jsonl"))
             if r.roles and len(r.sentences) >= 4]
    first = next(r for r in found if {"background", "method"} <= {aspect_of_role(x) for x in r.roles}
                 and len({aspect_of_role(x) for x in r.roles}) >= 3)
    return [first, *[r for r in found if r is not first][:11]]


def unit(encoder, texts):
    vectors = encoder.encode(texts)
    return vectors / numpy.linalg.norm(vectors, axis=1, keepdims=True)


def aspect_sentences(record, aspect):
    from scholarly_nlp import aspect_of_role

    return [s for s, r in zip(record.sentences, record.roles) if aspect_of_role(r) == aspect]


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
    query, candidate = records[0], records[1]
    encoder = HashEncoder()
    ranker = matching.SentenceMatchRanker("max_sim", encoder)
    ranker.prepare([query, candidate])
    encoded = encoder.encoded
    (pid, distance), = ranker.rank(query, [candidate], "background")
    assert encoder.encoded == encoded  # prepared records are not encoded again

    picked = aspect_sentences(query, "background")
    assert picked and len(picked) < len(query.sentences)
    expected = (unit(encoder, picked) @ unit(encoder, [candidate.title, *candidate.sentences]).T).max(axis=1).mean()
    assert pid == candidate.paper_id and -distance == pytest.approx(expected, abs=1e-5)


def test_aspect_mean_compares_the_mean_vectors_of_both_papers_aspect_sentences(benchmarks, records):
    matching, _ = benchmarks
    query = records[0]
    candidate = next(r for r in records[1:] if aspect_sentences(r, "method"))
    encoder = HashEncoder()
    (_, distance), = matching.SentenceMatchRanker("aspect_mean", encoder).rank(query, [candidate], "method")
    a = unit(encoder, aspect_sentences(query, "method")).mean(axis=0)
    b = unit(encoder, aspect_sentences(candidate, "method")).mean(axis=0)
    assert -distance == pytest.approx(float(a @ b / numpy.linalg.norm(a) / numpy.linalg.norm(b)), abs=1e-5)


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
    # the test pairs are ranked differently: only the dev pairs may choose the weight and threshold
    test = {"tfidf": numpy.array([0.9, 0.0, 0.0, 0.0, 0.0, 0.0]), "paper": numpy.array([0.5, 0.5, 0.5, 0.4, 0.4, 0.6])}
    report = signals.blend_report(dev, labels, test, labels, "tfidf")
    assert report["paper_weight"] == 0.6 and report["dev_accuracy"] == 1.0
    blended = 0.4 * test["tfidf"] + 0.6 * test["paper"]
    assert report["accuracy"] == pytest.approx(float(numpy.mean((blended > report["threshold"]) == labels)))
    assert report["accuracy"] < 1.0 and report["auc"] == pytest.approx(7 / 9)
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


def test_signal_scores_pair_each_pool_index_with_its_own_figure_and_paper(benchmarks):
    _, signals = benchmarks
    from scholarly_figure_embedder.evaluation import PairSet
    from scholarly_figure_embedder.recommend import Candidate

    class PaperDoc:
        """What ``paper_texts`` reads of a Doc: span groups and ``doc._.paper_id``."""

        def __init__(self, paper_id, title, abstract):
            self.spans = {"title": [type("S", (), {"text": title})()], "abstract": [type("S", (), {"text": abstract})()]}
            self._ = type("U", (), {"paper_id": paper_id})()

    docs = [PaperDoc("A", "Parsing with graphs", "We parse."), PaperDoc("B", "Tagging words", "We tag.")]
    pool = [Candidate("A", "fig_1", "Figure: a parser", numpy.array([1.0, 0.0])),
            Candidate("A", "fig_2", "Figure: the parser output trees", numpy.array([0.0, 2.0])),
            Candidate("B", "fig_1", "Figure: a tagger", None)]
    pairs = PairSet(numpy.array([0, 0, 1]), numpy.array([1, 2, 2]), numpy.array([1, 0, 0]))
    encoder = HashEncoder()
    scores = signals.signal_scores(pool, pairs, signals.pool_vectors(pool, docs, encoder))
    assert numpy.allclose(scores["trained"], [0.0, 0.0, 0.0])  # orthogonal vectors; a missing vector scores 0
    texts = unit(encoder, [c.text for c in pool])
    assert numpy.allclose(scores["zero_shot"], [texts[0] @ texts[1], texts[0] @ texts[2], texts[1] @ texts[2]], atol=1e-6)
    papers = unit(encoder, ["Parsing with graphs We parse.", "Tagging words We tag."])
    assert numpy.allclose(scores["paper"], [1.0, papers[0] @ papers[1], papers[0] @ papers[1]], atol=1e-6)
    assert scores["tfidf"].shape == (3,) and scores["tfidf"][0] > scores["tfidf"][1]
    assert numpy.array_equal(signals.correct(numpy.array([0.9, 0.2, 0.6]), pairs.labels, 0.5), [1.0, 1.0, 0.0])
