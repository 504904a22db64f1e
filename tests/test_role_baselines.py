"""Role baselines (scholarly_facet_classifier.role_baselines) on real CSAbstruct abstracts, and
the per-abstract counts whose pooled statistics equal role_metrics."""

from __future__ import annotations

import numpy
import pytest

from conftest import shared
from scholarly_facet_classifier.role_baselines import (
    ROLE_BASELINES,
    accuracy_of_counts,
    fit_role_baseline,
    macro_f1_of_counts,
    role_counts,
)
from scholarly_facet_classifier.role_tagger import role_metrics
from scholarly_nlp import ROLES
from scholarly_nlp.readers import AbstractRecord, read_csabstruct


@pytest.fixture(scope="module")
def train():
    return read_csabstruct(shared("csabstruct", "train.jsonl"))


@pytest.fixture(scope="module")
def dev():
    return read_csabstruct(shared("csabstruct", "dev.jsonl"))[:80]


def flat(lists):
    return [item for items in lists for item in items]


def test_pooled_counts_give_role_metrics_accuracy_and_macro_f1(train, dev):
    predicted = fit_role_baseline("position", train).predict(dev)
    gold = [record.roles for record in dev]
    expected = role_metrics(flat(gold), flat(predicted), ROLES)
    counts = numpy.sum([role_counts(g, p) for g, p in zip(gold, predicted)], axis=0)
    assert accuracy_of_counts(counts) == pytest.approx(expected["accuracy"])
    assert macro_f1_of_counts(counts) == pytest.approx(expected["macro_f1"])
    # a label absent from gold and predictions is left out of the macro average, as role_metrics does
    one = ["method", "method", "result"], ["method", "result", "result"]
    assert macro_f1_of_counts(role_counts(*one)) == pytest.approx(role_metrics(*one, ROLES)["macro_f1"])
    assert macro_f1_of_counts(role_counts(*one)) == pytest.approx((2 / 3 + 2 / 3) / 2)
    # many summed vectors at once (as the bootstrap's resamples are)
    stacked = numpy.stack([counts, role_counts(*one)])
    assert accuracy_of_counts(stacked).tolist() == pytest.approx([expected["accuracy"], 2 / 3])
    with pytest.raises(ValueError, match="2 gold roles but 1"):
        role_counts(["method", "result"], ["method"])


def test_position_baseline_reads_only_where_a_sentence_sits(train, dev):
    baseline = fit_role_baseline("position", train)
    predicted = baseline.predict(dev)
    assert [len(p) for p in predicted] == [len(r.sentences) for r in dev]
    # the same position gets the same role whatever the words
    renamed = [AbstractRecord(r.paper_id, r.title, ["x"] * len(r.sentences), r.roles) for r in dev]
    assert baseline.predict(renamed) == predicted
    # CSAbstruct abstracts open with their background far more often than with anything else
    assert predicted[0][0] == "background" and set(flat(predicted)) <= set(ROLES)


def test_tfidf_position_baseline_beats_position_alone(train, dev):
    gold = flat(r.roles for r in dev)
    scores = {}
    for name in ROLE_BASELINES:
        predicted = fit_role_baseline(name, train[:400]).predict(dev)
        assert [len(p) for p in predicted] == [len(r.sentences) for r in dev]
        scores[name] = role_metrics(gold, flat(predicted), ROLES)
    assert scores["tfidf_position"]["macro_f1"] > scores["position"]["macro_f1"] + 0.05
    assert scores["tfidf_position"]["accuracy"] > max(gold.count(role) for role in ROLES) / len(gold)


def test_unknown_baseline_and_unlabelled_records_are_refused():
    with pytest.raises(ValueError, match="unknown role baseline 'majority'"):
        fit_role_baseline("majority", [])
    with pytest.raises(ValueError, match="no abstract with one role per sentence"):
        fit_role_baseline("position", [AbstractRecord("p", "t", ["One.", "Two."], None)])
