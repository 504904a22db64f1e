"""Never silently untrained (issue 13, item 7): a component whose answers mean nothing before
training warns once, by name, with what to do; training clears it, and the flag survives
saving; zero-shot components stay quiet."""

from __future__ import annotations

import warnings

import pytest
from spacy.training import Example

import scholarly_nlp
from scholarly_nlp.ml import UntrainedComponentWarning

from conftest import shared


@pytest.fixture(scope="module")
def paper_path():
    return shared("tei", "acl", "D14-1003.tei.xml")


def untrained_warnings(nlp, path, times: int = 2) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(times):
            nlp(scholarly_nlp.read(path, nlp=nlp))
    return [str(w.message) for w in caught if issubclass(w.category, UntrainedComponentWarning)]


def ranker(backbone):
    pytest.importorskip("scholarly_figure_ranker")
    nlp = scholarly_nlp.blank()
    model = {"@architectures": "scholarly_nlp.CrossEncoder.v1", "name": backbone, "max_length": 64}
    nlp.add_pipe("figure_ranker", config={"model": model})
    nlp.initialize(lambda: [Example(nlp.make_doc("x"), nlp.make_doc("x"))])
    return nlp


def test_an_untrained_cross_encoder_ranker_warns_once_by_name(backbone, paper_path):
    messages = untrained_warnings(ranker(backbone), paper_path)
    assert len(messages) == 1
    assert messages[0].startswith("figure_ranker has not been trained") and "projects/figure_ranker" in messages[0]


def test_an_untrained_ranker_still_warns_after_saving_and_loading(backbone, paper_path, tmp_path):
    import spacy

    ranker(backbone).to_disk(tmp_path / "pipe")
    (message,) = untrained_warnings(spacy.load(tmp_path / "pipe"), paper_path)
    assert message.startswith("figure_ranker has not been trained")


def test_training_clears_the_warning_and_the_flag_is_saved(backbone, paper_path, tmp_path):
    import spacy

    nlp = ranker(backbone)
    doc = scholarly_nlp.read(paper_path, nlp=nlp)
    losses = nlp.get_pipe("figure_ranker").update([Example(doc, doc)], sgd=nlp.create_optimizer())
    assert losses["figure_ranker"] > 0
    assert untrained_warnings(nlp, paper_path) == []
    nlp.to_disk(tmp_path / "pipe")
    assert untrained_warnings(spacy.load(tmp_path / "pipe"), paper_path) == []


def test_a_zero_shot_bi_encoder_linker_is_quiet(backbone, paper_path):
    pytest.importorskip("scholarly_contribution_linker")
    nlp = scholarly_nlp.blank()
    model = {"@architectures": "scholarly_nlp.BiEncoderScorer.v1", "name": backbone, "max_length": 64}
    nlp.add_pipe("contribution_linker", config={"model": model})
    nlp.initialize(lambda: [Example(nlp.make_doc("x"), nlp.make_doc("x"))])
    assert untrained_warnings(nlp, paper_path) == []


def test_an_untrained_contribution_detector_warns(paper_path):
    pytest.importorskip("scholarly_contribution_detector")
    nlp = scholarly_nlp.blank()
    nlp.add_pipe("contribution_detector")
    nlp.initialize(lambda: [Example(nlp.make_doc("x"), nlp.make_doc("x"))])
    (message,) = untrained_warnings(nlp, paper_path)
    assert message.startswith("contribution_detector has not been trained")
