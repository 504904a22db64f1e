"""The aspect_embedder component on real CSFCube abstracts, over a tiny random backbone:
aspect vectors, the mean-pooling start, fallbacks for missing aspects, training with the
triplet loss, serialisation, and similar() on the component's output."""

from __future__ import annotations

import numpy
import pytest
import torch
from spacy.tokens import DocBin
from spacy.training import Example
from thinc.api import Adam

import scholarly_nlp
from scholarly_nlp.doc.roles import ASPECTS, aspect_sentences
from scholarly_nlp.ml.abstract_spans import shared_transformer_config
from scholarly_nlp.ml.backbones import make_tiny_backbone
from scholarly_nlp.ml.listener import transformer_listener_config
from scholarly_nlp.readers.abstracts import AbstractRecord, abstract_doc, read_csfcube_abstracts
from scholarly_aspect_embedder import similar

from conftest import shared

WIDTH = 32


def listener():
    return transformer_listener_config()


@pytest.fixture(scope="module")
def records():
    return read_csfcube_abstracts(shared("csfcube", "abstracts-csfcube-preds.jsonl"))[:12]


@pytest.fixture(scope="module")
def make_nlp(tmp_path_factory, records):
    backbone = make_tiny_backbone(tmp_path_factory.mktemp("aspects") / "tiny")

    def build(trainable_projection=True):
        torch.manual_seed(0)
        nlp = scholarly_nlp.blank()
        nlp.add_pipe("transformer", config=shared_transformer_config(str(backbone)))
        nlp.add_pipe("aspect_embedder", config={"model": {"@architectures": "scholarly_aspect_embedder.AttentionAspectPooler.v1",
                                                          "width": WIDTH, "tok2vec": listener(),
                                                          "trainable_projection": trainable_projection}})
        docs = [abstract_doc(r, nlp) for r in records[:4]]
        nlp.initialize(lambda: [Example(d.copy(), d) for d in docs])
        return nlp

    return build


@pytest.fixture(scope="module")
def trained_docs(make_nlp, records):
    nlp = make_nlp()
    return nlp, list(nlp.pipe(abstract_doc(r, nlp) for r in records))


def test_every_paper_gets_four_aspect_vectors_and_sentence_vectors(trained_docs, records):
    _, docs = trained_docs
    for doc, record in zip(docs, records):
        assert set(doc._.aspect_vectors) == set(ASPECTS)
        assert all(v.shape == (WIDTH,) and numpy.isfinite(v).all() for v in doc._.aspect_vectors.values())
        assert doc._.sentence_vectors.shape == (len(aspect_sentences(doc)), WIDTH) == (1 + len(record.sentences), WIDTH)


def test_the_untrained_head_is_mean_pooling_of_each_aspects_tokens(trained_docs):
    nlp, docs = trained_docs
    tok2vec = nlp.get_pipe("aspect_embedder").model.get_ref("tok2vec")
    doc = docs[0]
    tokvecs = tok2vec.predict([doc])[0]
    for aspect in ("title", "method"):
        rows = [i for span, a in aspect_sentences(doc) if a == aspect for i in range(span.start, span.end)]
        assert rows, aspect
        numpy.testing.assert_allclose(doc._.aspect_vectors[aspect], tokvecs[rows].mean(axis=0), rtol=1e-4, atol=1e-5)


def test_missing_aspects_fall_back_to_the_whole_abstract_and_say_so(make_nlp):
    nlp = make_nlp()
    one = nlp(abstract_doc(AbstractRecord("one", "", ["We parse sentences with a neural model."], ["method"]), nlp))
    assert one._.aspect_fallbacks == {"title": "no title", "background": "no background sentence",
                                      "result": "no result sentence"}
    # The fallback of an aspect pools the same tokens as the paper's only sentence.
    numpy.testing.assert_allclose(one._.aspect_vectors["result"], one._.aspect_vectors["method"], rtol=1e-5, atol=1e-6)
    no_abstract = nlp(abstract_doc(AbstractRecord("t", "A Title Only Paper", []), nlp))
    assert "background" in no_abstract._.aspect_fallbacks and "title" not in no_abstract._.aspect_fallbacks
    empty = nlp(nlp.make_doc(""))
    assert empty._.aspect_vectors is None
    assert set(empty._.aspect_fallbacks) == set(ASPECTS)


@pytest.mark.parametrize("trainable_projection", [True, False])
def test_triplet_training_separates_papers_from_others(make_nlp, records, trainable_projection):
    nlp = make_nlp(trainable_projection)
    examples = []
    for r in records[:8]:
        view = AbstractRecord(r.paper_id + "#view", "", r.sentences[::-1], r.roles[::-1])
        for doc in (abstract_doc(r, nlp), abstract_doc(view, nlp)):
            doc._.paper_meta = {**doc._.paper_meta, "aspect_group": r.paper_id}
            examples.append(Example(doc.copy(), doc))
    for eg in examples:  # the frozen shared transformer annotates once, as in train_aspects.py
        nlp.get_pipe("transformer")(eg.predicted)
    embedder = nlp.get_pipe("aspect_embedder")
    before = embedder.score(examples)["aspect_loss"]
    optimizer = Adam(0.01)
    for _ in range(12):
        nlp.update(examples, sgd=optimizer, exclude=["transformer"])
    after = embedder.score(examples)["aspect_loss"]
    # Attention alone has fewer parameters to move than attention plus projection.
    assert after < before * (0.8 if trainable_projection else 0.99), (before, after)
    projection = embedder.model.get_ref("pooler").shims[0]._model.projection.weight.detach().numpy()
    assert numpy.allclose(projection, numpy.eye(WIDTH)) is (not trainable_projection)


def test_pipeline_and_docbin_round_trips_keep_the_vectors(trained_docs, tmp_path, records):
    nlp, docs = trained_docs
    nlp.to_disk(tmp_path / "model")
    import spacy

    again = spacy.load(tmp_path / "model")
    doc = again(abstract_doc(records[0], again))
    for aspect in ASPECTS:
        numpy.testing.assert_allclose(doc._.aspect_vectors[aspect], docs[0]._.aspect_vectors[aspect], rtol=1e-5)
    blob = DocBin(store_user_data=True, docs=[docs[0]]).to_bytes()
    restored = list(DocBin().from_bytes(blob).get_docs(nlp.vocab))[0]
    numpy.testing.assert_allclose(numpy.asarray(restored._.aspect_vectors["method"]), docs[0]._.aspect_vectors["method"])


def test_similar_ranks_the_components_output_and_explains_each_hit(trained_docs):
    _, docs = trained_docs
    hits = similar(docs[0], docs, aspect="method", k=5)
    assert len(hits) == 5 and docs[0]._.paper_id not in {h.paper_id for h in hits}
    assert [h.distance for h in hits] == sorted(h.distance for h in hits)
    assert all(h.explanation.query_sentence and h.explanation.candidate_sentence for h in hits)


def test_a_paper_in_two_groups_is_never_its_own_negative():
    """Co-citation groups put a paper's abstract in a second group: the copy of the anchor's
    (or the positive's) paper in another group gives no triple, every other paper does."""
    from scholarly_aspect_embedder.loss import aspect_triplet_loss, triplet_indices

    groups = ["A", "A", "cocited:A+B", "cocited:A+B", "C", "C"]
    papers = ["A", "A#citances", "A", "B", "C", "C#citances"]
    triples = triplet_indices(groups, papers)
    assert (0, 1, 2) not in triples and (2, 3, 0) not in triples and (3, 2, 0) not in triples
    assert (0, 1, 3) in triples and (2, 3, 4) in triples and (4, 5, 0) in triples
    # Without paper ids every other group is a negative, as before.
    assert (0, 1, 2) in triplet_indices(groups)
    assert all(papers[n] not in {papers[a], papers[p]} for a, p, n in triples)
    with pytest.raises(ValueError, match="paper ids"):
        triplet_indices(groups, papers[:-1])
    # A batch whose only other group is the same paper has nothing to learn from.
    vectors = numpy.random.default_rng(0).normal(size=(4, 4, 8)).astype("float32")
    loss, grad = aspect_triplet_loss(vectors, ["A", "A", "co", "co"], papers=["A", "A#c", "A", "A#c"])
    assert loss == 0.0 and not grad.any()


def test_a_group_that_names_its_aspects_teaches_only_those():
    """A co-citation from a methods context (``aspects=["method"]``) moves only the method
    vectors and leaves the other groups' hinges as they were; no restriction is the old loss."""
    import torch
    from scholarly_aspect_embedder.loss import aspect_triplet_loss, triplet_indices
    from scholarly_nlp import ASPECTS, QUERY_ASPECTS

    vectors = numpy.random.default_rng(1).normal(size=(6, len(ASPECTS), 8)).astype("float32")
    groups = ["co", "co", "A", "A", "D", "E"]
    papers = ["A", "B", "A", "A#citances", "D", "E"]
    restricted = [["method"], ["method"], None, None, None, None]
    margin = 5.0

    def moved(grad):
        return {aspect for i, aspect in enumerate(ASPECTS) if numpy.abs(grad[:, i]).max() > 0}

    # The same loss computed by hand: the paper mean and background/result over group A's
    # triples only, method over group A's and the co-citation's.
    triples = triplet_indices(groups, papers)
    normed = torch.nn.functional.normalize(torch.tensor(vectors), dim=-1)
    mean = torch.nn.functional.normalize(normed.mean(dim=1), dim=-1)

    def hinge(v, chosen):
        return float(numpy.mean([max(0.0, margin + float((v[a] - v[p]).norm() - (v[a] - v[n]).norm()))
                                 for a, p, n in chosen]))

    own = [t for t in triples if groups[t[0]] == "A"]
    expected = hinge(mean, own) + sum(
        hinge(normed[:, ASPECTS.index(aspect)], triples if aspect == "method" else own) for aspect in QUERY_ASPECTS)
    loss, grad = aspect_triplet_loss(vectors, groups, papers=papers, margin=margin, aspects=restricted)
    assert loss == pytest.approx(expected, rel=1e-5)
    # Only the co-citation group is restricted, so on its own it moves only the method vectors.
    only_co = aspect_triplet_loss(vectors[[0, 1, 4, 5]], ["co", "co", "D", "E"], papers=["A", "B", "D", "E"],
                                  margin=margin, aspects=[["method"], ["method"], None, None])
    assert only_co[0] > 0 and moved(only_co[1]) == {"method"}
    # One aspect may be given as a bare name; no restriction at all is the unrestricted loss.
    named = aspect_triplet_loss(vectors, groups, papers=papers, margin=margin,
                                aspects=["method", "method", None, None, None, None])
    assert numpy.array_equal(named[1], grad)
    unrestricted = aspect_triplet_loss(vectors, groups, papers=papers, margin=margin)
    none_listed = aspect_triplet_loss(vectors, groups, papers=papers, margin=margin, aspects=[None] * 6)
    assert unrestricted[0] == none_listed[0] and numpy.array_equal(unrestricted[1], none_listed[1])
    assert moved(unrestricted[1]) >= set(QUERY_ASPECTS)


@pytest.mark.parametrize("aspects, message", [
    ([["title"]] * 2 + [None, None], "names \\['title'\\]"),
    ([[]] * 2 + [None, None], "empty list"),
    ([["method"], None, None, None], "name different aspects"),
    ([None], "aspect restrictions"),
])
def test_bad_aspect_restrictions_fail_whatever_the_batch(aspects, message):
    """Checked before the triples, so a batch with nothing to learn still reports them."""
    from scholarly_aspect_embedder.loss import aspect_triplet_loss

    vectors = numpy.zeros((4, 4, 8), dtype="float32")
    with pytest.raises(ValueError, match=message):
        aspect_triplet_loss(vectors, ["co", "co", "co", "co"], aspects=aspects)


def test_the_component_reads_restrictions_and_papers_from_paper_meta(make_nlp, records):
    """``get_loss`` takes ``aspect_group_aspects`` and ``aspect_paper`` from the reference Docs,
    as aspect_pairs.py writes them."""
    from scholarly_nlp import ASPECTS

    nlp = make_nlp()
    embedder = nlp.get_pipe("aspect_embedder")
    docs = []
    for i, meta in enumerate([{"aspect_group": "co", "aspect_group_aspects": ["method"]},
                              {"aspect_group": "co", "aspect_group_aspects": ["method"]},
                              {"aspect_group": "X"}, {"aspect_group": "Y"}]):
        doc = nlp.make_doc(f"Paper {i}.")
        doc._.paper_meta = {"paper_id": f"P{i}", **meta}
        docs.append(doc)
    examples = [Example(doc, doc) for doc in docs]
    scores = [numpy.random.default_rng(i).normal(size=(len(ASPECTS), 8)).astype("float32") for i in range(4)]
    loss, grads = embedder.get_loss(examples, scores)
    grad = numpy.stack(grads)
    assert loss > 0
    assert {a for i, a in enumerate(ASPECTS) if numpy.abs(grad[:, i]).max() > 0} <= {"method"}
    # A Doc that is a view of P0 (its citances) is not P0's negative, whatever its paper_id.
    docs[2]._.paper_meta = {"paper_id": "P0#citances", "aspect_group": "X", "aspect_paper": "P0"}
    docs[3]._.paper_meta = {"paper_id": "P1#citances", "aspect_group": "Y", "aspect_paper": "P1"}
    assert embedder.get_loss([Example(doc, doc) for doc in docs], scores)[0] == 0.0
