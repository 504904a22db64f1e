"""The citance_facet_classifier component (CL-SciSumm Task 1B), its models and baselines.

Real data: the gold-faceted citances of the 40 train-manual reference papers (30 train,
10 held out). The transformer variant runs on a tiny random-weight backbone; the real
MiniLM is not loaded here (benchmarks/facet_cv.py measures it).
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys

import numpy
import pytest
import spacy
import torch
from spacy.tokens import Doc
from spacy.training import Example
from thinc.api import Adam, fix_random_seed

import scholarly_nlp
from scholarly_nlp.metrics.facets import facet_f1
from scholarly_nlp.ml.backbones import make_tiny_backbone
from scholarly_facet_classifier.baselines import majority_baseline, tfidf_ovr_baseline
from scholarly_facet_classifier.data import labelled_citances, load_reference_docs
from scholarly_facet_classifier.factory import bce_with_logits
from scholarly_facet_classifier.labels import FACET_LABELS, decide_labels

from conftest import shared

PIPE = "citance_facet_classifier"
N_TRAIN = 30


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def facet_docs():
    """The 40 train-manual reference papers, each with its incoming citances (sorted by id)."""
    docs = load_reference_docs(shared("clscisumm", "train-manual"), spacy.blank("en"))
    assert len(docs) == 40
    return docs


@pytest.fixture(scope="session")
def split(facet_docs):
    return facet_docs[:N_TRAIN], facet_docs[N_TRAIN:]


def texts_and_gold(docs):
    items = labelled_citances(docs)
    return [c["text"] for _, c in items], [c["facets"] for _, c in items]


def train_tfidf(docs, epochs=10, learn_rate=0.05):
    """A blank pipeline with the default (TF-IDF) facet classifier trained on ``docs``; and its losses."""
    fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe(PIPE)
    examples = [Example(doc, doc) for doc in docs]
    nlp.initialize(lambda: examples)
    optimizer, rng, history = Adam(learn_rate), random.Random(0), []
    for _ in range(epochs):
        rng.shuffle(examples)
        losses = {}
        for start in range(0, len(examples), 4):
            nlp.update(examples[start : start + 4], sgd=optimizer, losses=losses)
        history.append(losses[PIPE])
    return nlp, history


@pytest.fixture(scope="session")
def trained(split):
    return train_tfidf(split[0])


@pytest.fixture(scope="session")
def tiny_backbone(tmp_path_factory):
    return make_tiny_backbone(tmp_path_factory.mktemp("facet_backbones") / "tiny")


def annotated(nlp, docs):
    """Copies of ``docs`` run through ``nlp`` (the session docs stay unannotated)."""
    return list(nlp.pipe(doc.copy() for doc in docs))


# --------------------------------------------------------------------------- TF-IDF model


def test_tfidf_pipe_learns_and_holds_the_majority_level_on_held_out_papers(trained, split):
    nlp, history = trained
    pipe = nlp.get_pipe(PIPE)
    train_texts, train_gold = texts_and_gold(split[0])
    test_texts, test_gold = texts_and_gold(split[1])
    # The linear layer learns: the loss falls, and the training citances are fitted far
    # beyond the majority rule (all "Method").
    assert history[-1] < 0.25 * history[0]
    fitted = facet_f1(train_gold, pipe.classify(train_texts))["f1_micro"]
    majority_train = facet_f1(train_gold, majority_baseline(train_gold, train_texts))["f1_micro"]
    assert fitted > majority_train + 0.15
    # Held-out papers. Measured: majority 0.745, this model 0.745 (identical at threshold
    # 0.5), sklearn one-vs-rest 0.743. 75% of the citances are "Method": on micro F1 no
    # system here beats "Method for everything" (see benchmarks/facet_cv.py).
    examples = [Example(doc, ref) for doc, ref in zip(annotated(nlp, split[1]), split[1])]
    scores = pipe.score(examples)
    majority = facet_f1(test_gold, majority_baseline(train_gold, test_texts))["f1_micro"]
    assert majority == pytest.approx(0.745, abs=0.01)
    assert scores["citance_facets_f1"] >= majority - 0.02
    assert scores["citance_facets_f1"] > 0.70
    assert 0.0 < scores["citance_facets_p"] <= 1.0 and 0.0 < scores["citance_facets_r"] <= 1.0
    assert set(scores["citance_facets_per_type"]) == set(FACET_LABELS)


def test_annotations_match_scores_and_ids(trained, split):
    nlp, _ = trained
    pipe = nlp.get_pipe(PIPE)
    doc = annotated(nlp, split[1][:1])[0]
    citances = doc._.incoming_citances
    assert set(doc._.citance_facets) == {c["id"] for c in citances}
    assert set(doc._.citance_facet_scores) == {c["id"] for c in citances}
    probs = pipe.predict_proba([c["text"] for c in citances])
    for citance, row in zip(citances, probs):
        scores = doc._.citance_facet_scores[citance["id"]]
        assert list(scores) == list(FACET_LABELS)
        assert numpy.allclose([scores[label] for label in FACET_LABELS], row)
        assert all(0.0 <= p <= 1.0 for p in scores.values())
        assert doc._.citance_facets[citance["id"]] == decide_labels(row, FACET_LABELS, 0.5, 1)


def test_at_least_one_facet_rule(trained, split):
    probs = [0.10, 0.20, 0.05, 0.30, 0.10]
    assert decide_labels(probs, FACET_LABELS) == ["Method"]
    assert decide_labels(probs, FACET_LABELS, min_labels=0) == []
    assert decide_labels(probs, FACET_LABELS, min_labels=2) == ["Hypothesis", "Method"]
    assert decide_labels([0.9, 0.1, 0.1, 0.6, 0.5], FACET_LABELS) == ["Aim", "Method", "Results"]

    pipe = trained[0].get_pipe(PIPE)
    texts, _ = texts_and_gold(split[1])
    probs = pipe.predict_proba(texts)
    pipe.cfg["threshold"] = 0.9999  # nothing passes: each citance keeps exactly its argmax facet
    try:
        labels = pipe.classify(texts)
    finally:
        pipe.cfg["threshold"] = 0.5
    assert labels == [[FACET_LABELS[int(numpy.argmax(row))]] for row in probs]


def test_doc_without_incoming_citances_gets_empty_dicts(trained):
    nlp = trained[0]
    doc = nlp("A paper nobody cites.")
    assert doc._.incoming_citances is None
    assert doc._.citance_facets == {} and doc._.citance_facet_scores == {}
    empty = nlp.make_doc("Another one.")
    empty._.incoming_citances = []
    empty = nlp(empty)
    assert empty._.citance_facets == {} and empty._.citance_facet_scores == {}
    # An uninitialised pipe never runs its model on such docs, and says what is missing otherwise.
    blank = spacy.blank("en")
    blank.add_pipe(PIPE)
    assert blank("Not cited.")._.citance_facets == {}
    cited = blank.make_doc("Cited.")
    cited._.incoming_citances = [{"id": "1", "text": "We use their parser.", "facets": []}]
    with pytest.raises(ValueError, match="not initialised"):
        blank(cited)


def test_initialize_without_citances_explains():
    blank = spacy.blank("en")
    blank.add_pipe(PIPE)
    doc = blank.make_doc("No citances here.")
    with pytest.raises(ValueError, match="incoming_citances"):
        blank.initialize(lambda: [Example(doc, doc)])


def test_loss_and_gradient(trained, split):
    logits = numpy.array([[2.0, -1.0, 0.5, 0.0, -3.0], [0.3, 0.2, -0.1, 4.0, 1.0]], dtype="float32")
    gold = numpy.array([[1, 0, 0, 1, 0], [0, 0, 1, 1, 0]], dtype="float32")
    loss, grad = bce_with_logits(logits, gold, 2)
    t_logits = torch.tensor(logits, requires_grad=True)
    t_loss = torch.nn.functional.binary_cross_entropy_with_logits(t_logits, torch.tensor(gold), reduction="sum") / 2
    t_loss.backward()
    assert loss == pytest.approx(float(t_loss.detach()), rel=1e-5)
    assert numpy.allclose(grad, t_logits.grad.numpy(), atol=1e-6)
    # get_loss on the model's logits equals the loss update() reports before its step.
    pipe = trained[0].get_pipe(PIPE)
    examples = [Example(doc, doc) for doc in split[1][:3]]
    texts, _ = pipe.training_data(examples)
    expected, d_scores = pipe.get_loss(examples, pipe.model.predict(texts))
    assert d_scores.shape == (len(texts), len(FACET_LABELS))
    assert pipe.update(examples, sgd=None)[PIPE] == pytest.approx(expected, rel=1e-4)


def test_score_classifies_reference_citances_when_predicted_doc_has_none(trained, split):
    nlp = trained[0]
    pipe = nlp.get_pipe(PIPE)
    direct = pipe.score([Example(doc, ref) for doc, ref in zip(annotated(nlp, split[1]), split[1])])
    # spaCy's corpus readers build the predicted doc from the text alone
    from_text = pipe.score([Example(nlp.make_doc(ref.text), ref) for ref in split[1]])
    assert from_text["citance_facets_f1"] == pytest.approx(direct["citance_facets_f1"])
    assert pipe.score([Example(nlp.make_doc("x"), nlp.make_doc("x"))])["citance_facets_f1"] is None


# --------------------------------------------------------------------------- serialisation


def test_tfidf_save_load_round_trip(trained, split, tmp_path):
    nlp = trained[0]
    texts, _ = texts_and_gold(split[1])
    before = nlp.get_pipe(PIPE).predict_proba(texts)
    nlp.to_disk(tmp_path / "pipeline")
    loaded = spacy.load(tmp_path / "pipeline")
    assert numpy.array_equal(loaded.get_pipe(PIPE).predict_proba(texts), before)
    docs_a, docs_b = annotated(nlp, split[1][:2]), annotated(loaded, split[1][:2])
    assert [d._.citance_facets for d in docs_a] == [d._.citance_facets for d in docs_b]
    fresh = spacy.blank("en")
    restored = fresh.add_pipe(PIPE).from_bytes(nlp.get_pipe(PIPE).to_bytes())
    assert numpy.array_equal(restored.predict_proba(texts), before)
    assert restored.cfg == nlp.get_pipe(PIPE).cfg


def test_fresh_process_finds_plugin_and_loads_saved_pipeline(trained, split, tmp_path):
    nlp = trained[0]
    texts, _ = texts_and_gold(split[1][:1])
    nlp.to_disk(tmp_path / "pipeline")
    script = f"""
import json, spacy
from spacy.tokens import Doc
nlp = spacy.blank("en")
nlp.add_pipe("citance_facet_classifier")
loaded = spacy.load({str(tmp_path / "pipeline")!r})
from scholarly_nlp import get_registry
record = get_registry().plugins["facet_classifier"].to_dict()
print(json.dumps({{"pipes": nlp.pipe_names, "registered": record["registered"],
                   "extension": Doc.has_extension("citance_facets"),
                   "labels": loaded.get_pipe("citance_facet_classifier").classify({texts!r})}}))
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["pipes"] == [PIPE]
    assert out["registered"]["components"] == [PIPE, "sentence_role_tagger"]
    assert set(out["registered"]["extensions"]) == {"doc._.citance_facets", "doc._.citance_facet_scores",
                                                    "doc._.role_scores"}
    assert out["extension"] is True
    assert out["labels"] == nlp.get_pipe(PIPE).classify(texts)


# --------------------------------------------------------------------------- transformer


def test_transformer_trains_and_round_trips_without_its_backbone(tiny_backbone, split, tmp_path):
    backbone = tmp_path / "backbone"
    shutil.copytree(tiny_backbone, backbone)
    torch.manual_seed(0)
    fix_random_seed(0)
    nlp = spacy.blank("en")
    config = {"model": {"@architectures": "scholarly_facet_classifier.TransformerClassifier.v1", "name": str(backbone),
                        "max_length": 48}, "batch_size": 8}
    pipe = nlp.add_pipe(PIPE, config=config)
    examples = [Example(doc, doc) for doc in split[0][:2]]
    nlp.initialize(lambda: examples)
    torch_model = pipe.model.shims[0]._model
    assert torch_model.config.num_labels == len(FACET_LABELS)
    head = torch_model.classifier.weight.detach().clone()
    losses = nlp.update(examples, sgd=Adam(1e-3))
    assert numpy.isfinite(losses[PIPE]) and losses[PIPE] > 0
    assert not torch.equal(head, torch_model.classifier.weight.detach())

    texts, _ = texts_and_gold(split[1][:1])
    before = pipe.predict_proba(texts)
    assert before.shape == (len(texts), len(FACET_LABELS))
    assert all(labels for labels in pipe.classify(texts))
    nlp.to_disk(tmp_path / "pipeline")
    shutil.rmtree(backbone)  # the saved pipeline must not need the original backbone
    loaded = spacy.load(tmp_path / "pipeline")
    assert numpy.allclose(loaded.get_pipe(PIPE).predict_proba(texts), before, atol=1e-5)
    restored = spacy.blank("en").add_pipe(PIPE, config=config).from_bytes(pipe.to_bytes())
    assert numpy.allclose(restored.predict_proba(texts), before, atol=1e-5)


# --------------------------------------------------------------------------- baselines


def test_sklearn_tfidf_ovr_baseline(split):
    train_texts, train_gold = texts_and_gold(split[0])
    test_texts, test_gold = texts_and_gold(split[1])
    predicted = tfidf_ovr_baseline(train_texts, train_gold, test_texts)
    assert len(predicted) == len(test_texts)
    assert all(labels and set(labels) <= set(FACET_LABELS) for labels in predicted)
    assert any(labels != ["Method"] for labels in predicted)  # balanced weights: minority facets appear
    assert facet_f1(test_gold, predicted)["f1_micro"] > 0.65  # measured 0.743
    assert majority_baseline(train_gold, test_texts) == [["Method"]] * len(test_texts)
    loose = tfidf_ovr_baseline(train_texts, train_gold, test_texts, threshold=0.2)
    assert sum(map(len, loose)) > sum(map(len, predicted))


def test_plugin_registers_component_and_core_provides_incoming_citances():
    registry = scholarly_nlp.get_registry()
    assert registry.components[PIPE].plugin == "facet_classifier"
    assert scholarly_nlp.blank().add_pipe(PIPE).name == PIPE
    assert Doc.has_extension("citance_facets") and Doc.has_extension("citance_facet_scores")
    assert Doc.has_extension("incoming_citances")
    assert Doc.get_extension("incoming_citances")[0] is None


def test_a_paper_without_incoming_citances_gets_facets_for_its_own(trained):
    """``analyze`` on an ordinary paper: why it cites each work, merged into its citances."""
    nlp, _ = trained
    doc = scholarly_nlp.read(shared("tei", "acl", "D14-1003.tei.xml"), nlp=nlp)
    assert doc._.citances and not doc._.incoming_citances
    doc = nlp(doc)
    assert list(doc._.citance_facets) == [f"c{i}" for i in range(len(doc._.citances))]
    assert all(labels and set(labels) <= set(FACET_LABELS) for labels in doc._.citance_facets.values())
    record = scholarly_nlp.analysis_record(doc, nlp)
    assert [c["facets"] for c in record["citances"]] == list(doc._.citance_facets.values())
    assert all({"text", "bib_ids", "facets"} <= set(c) for c in record["citances"])
    assert "incoming_citance_facets" not in record
