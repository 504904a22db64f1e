"""Encoders saved as a backbone reference plus what training changed (issue 13, item 2).

A zero-shot scorer saves as ``backbone.json`` alone; a LoRA-trained one as the reference
plus its adapter (and head); loading either gives the same scores as before saving. Real
tokenizer and architecture, tiny random weights.
"""

from __future__ import annotations

import json

import numpy
import pytest
from thinc.api import Adam

from scholarly_nlp.ml.adapters import BACKBONE_FILE
from scholarly_nlp.ml.backbones import make_tiny_backbone
from scholarly_nlp.ml.bi_encoder_scorer import BiEncoderScorer
from scholarly_nlp.ml.cross_encoder import CrossEncoder, load_cross_encoder, save_cross_encoder

PAIRS = [("Figure 2 shows the parser architecture.", "The architecture of our dependency parser."),
         ("We report BLEU on the test set.", "Results on newstest2014 in BLEU."),
         ("We report BLEU on the test set.", "The architecture of our dependency parser.")]


def folder_bytes(path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def train_a_step(model) -> None:
    optimizer = Adam(0.01)
    scores, backprop = model.begin_update(PAIRS)
    backprop(model.ops.asarray1f(numpy.array([-1.0, -1.0, 1.0], dtype="float32")))
    model.finish_update(optimizer)


def reloaded(make, path):
    model = make()
    load_cross_encoder(model, str(path))
    return model


def test_a_zero_shot_bi_encoder_saves_as_a_reference(backbone, tmp_path):
    model = BiEncoderScorer(name=backbone)
    model.initialize()
    before = model.predict(PAIRS)
    assert save_cross_encoder(model, tmp_path / "enc") == "backbone"
    assert sorted(p.name for p in (tmp_path / "enc").iterdir()) == [BACKBONE_FILE]
    record = json.loads((tmp_path / "enc" / BACKBONE_FILE).read_text())
    assert record["backbone"] == backbone and record["layout"] == "backbone"
    after = reloaded(lambda: BiEncoderScorer(name=backbone), tmp_path / "enc").predict(PAIRS)
    numpy.testing.assert_allclose(after, before, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("make", [
    lambda name: CrossEncoder(name=name, lora_rank=4),
    lambda name: BiEncoderScorer(name=name, lora_rank=4),
], ids=["cross_encoder", "bi_encoder"])
def test_a_lora_trained_encoder_saves_its_adapter_and_loads_back(backbone, tmp_path, make):
    model = make(backbone)
    model.initialize()
    untouched = model.predict(PAIRS)
    train_a_step(model)
    trained = model.predict(PAIRS)
    assert not numpy.allclose(trained, untouched)  # the adapters (and head) learned
    assert save_cross_encoder(model, tmp_path / "enc") == "adapter"
    names = sorted(p.name for p in (tmp_path / "enc").iterdir())
    assert BACKBONE_FILE in names and "adapter_model.safetensors" in names and "model.safetensors" not in names
    assert folder_bytes(tmp_path / "enc") < folder_bytes(make_tiny_backbone(tmp_path / "unused"))
    loaded = reloaded(lambda: make(backbone), tmp_path / "enc")
    numpy.testing.assert_allclose(loaded.predict(PAIRS), trained, rtol=1e-5, atol=1e-6)


def test_a_cross_encoder_with_a_new_head_is_never_a_bare_reference(backbone, tmp_path):
    """Its head was initialised at random: a reference would load another random head."""
    model = CrossEncoder(name=backbone)
    model.initialize()
    assert save_cross_encoder(model, tmp_path / "enc") == "full"
    assert (tmp_path / "enc" / "model.safetensors").exists()


def test_loading_against_another_checkpoint_warns(backbone, tmp_path):
    model = BiEncoderScorer(name=backbone)
    model.initialize()
    save_cross_encoder(model, tmp_path / "enc")
    record = json.loads((tmp_path / "enc" / BACKBONE_FILE).read_text())
    record["backbone_digest"] = "0" * 32
    (tmp_path / "enc" / BACKBONE_FILE).write_text(json.dumps(record))
    with pytest.warns(UserWarning, match="is not the checkpoint these weights were trained on"):
        reloaded(lambda: BiEncoderScorer(name=backbone), tmp_path / "enc")
