"""``scholarly_transformer``: a saved pipeline refers to its backbone instead of copying it
(issue 13, item 2), and loads back to the same outputs in a fresh ``spacy.load``."""

from __future__ import annotations

import json

import numpy
import pytest
import spacy

import scholarly_nlp
from scholarly_nlp.ml.adapters import BACKBONE_FILE

from conftest import shared


@pytest.fixture(scope="module")
def paper():
    return shared("tei", "acl", "D14-1003.tei.xml")


def pipeline(backbone):
    nlp = scholarly_nlp.blank()
    nlp.add_pipe("scholarly_transformer", name="transformer", config={"model": {"name": backbone}})
    nlp.initialize()
    return nlp


def vectors(nlp, path):
    doc = nlp(scholarly_nlp.read(path, nlp=nlp))
    return numpy.asarray(doc._.trf_data.model_output.last_hidden_state).reshape(-1)


def test_a_saved_pipeline_refers_to_its_backbone_and_loads_back(backbone, paper, tmp_path):
    nlp = pipeline(backbone)
    before = vectors(nlp, paper)
    nlp.to_disk(tmp_path / "pipe")
    folder = tmp_path / "pipe" / "transformer"
    assert sorted(p.name for p in folder.iterdir()) == [BACKBONE_FILE, "cfg"]
    record = json.loads((folder / BACKBONE_FILE).read_text())
    assert record["layout"] == "backbone" and record["backbone_digest"]
    loaded = spacy.load(tmp_path / "pipe")
    numpy.testing.assert_allclose(vectors(loaded, paper), before, rtol=1e-5, atol=1e-6)
    # nlp.to_bytes / from_bytes (multiprocessing) take the same path
    again = spacy.blank("en")
    again.add_pipe("scholarly_transformer", name="transformer", config={"model": {"name": backbone}})
    again.from_bytes(nlp.to_bytes())
    numpy.testing.assert_allclose(vectors(again, paper), before, rtol=1e-5, atol=1e-6)


def test_a_fine_tuned_transformer_is_written_whole(backbone, paper, tmp_path):
    import torch

    nlp = pipeline(backbone)
    with torch.no_grad():
        next(nlp.get_pipe("transformer").model.transformer.parameters()).add_(0.5)
    nlp.to_disk(tmp_path / "pipe")
    assert not (tmp_path / "pipe" / "transformer" / BACKBONE_FILE).exists()
    assert (tmp_path / "pipe" / "transformer" / "model").exists()


def test_the_packaged_backbone_is_recorded_by_name_other_folders_absolute(tmp_path, monkeypatch):
    """A pipeline built on the installed MiniLM records ``all-MiniLM-L6-v2``, not this machine's
    site-packages path, so re-packaging elsewhere does not rewrite ``backbone.json``."""
    from scholarly_nlp.ml.backbones import backbone_record_name, default_backbone_path

    assert backbone_record_name(str(default_backbone_path())) == "all-MiniLM-L6-v2"
    (tmp_path / "my_model").mkdir()
    monkeypatch.chdir(tmp_path)
    assert backbone_record_name("my_model") == str((tmp_path / "my_model").resolve())
    assert backbone_record_name("allenai/scibert_scivocab_uncased") == "allenai/scibert_scivocab_uncased"
