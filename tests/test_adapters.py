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


def fully_trained_cross_encoder(backbone, **settings):
    model = CrossEncoder(name=backbone, **settings)
    model.initialize()
    train_a_step(model)
    return model


def test_a_fully_fine_tuned_encoder_saves_as_a_weight_delta_and_loads_back(backbone, tmp_path):
    """A rank at least every matrix's smaller side stores each change whole: exact."""
    model = fully_trained_cross_encoder(backbone, delta_rank=64)
    trained = model.predict(PAIRS)
    assert save_cross_encoder(model, tmp_path / "enc") == "delta"
    names = sorted(p.name for p in (tmp_path / "enc").iterdir())
    assert names == [BACKBONE_FILE, "weight_delta.safetensors"]
    record = json.loads((tmp_path / "enc" / BACKBONE_FILE).read_text())
    assert record["layout"] == "delta" and record["delta_rank"] == 64 and record["backbone"] == backbone
    loaded = reloaded(lambda: CrossEncoder(name=backbone, delta_rank=64), tmp_path / "enc")
    numpy.testing.assert_allclose(loaded.predict(PAIRS), trained, rtol=1e-5, atol=1e-6)
    # loaded back, it is still fine-tuned weights: saved again, a delta, never a bare reference
    assert save_cross_encoder(loaded, tmp_path / "again") == "delta"
    # also by a model whose config names no rank: the folder's rank is kept, not 88 MB written
    plain = reloaded(lambda: CrossEncoder(name=backbone), tmp_path / "enc")
    assert save_cross_encoder(plain, tmp_path / "plain") == "delta"
    assert json.loads((tmp_path / "plain" / BACKBONE_FILE).read_text())["delta_rank"] == 64


def moved_sequence_classifier(backbone, scale=0.05):
    """(tuned, start, new keys): the backbone as a one-output classifier, every backbone weight
    moved by a random full-rank change, and the backbone as loaded."""
    import torch

    from scholarly_nlp.ml.cross_encoder import _sequence_classifier

    tuned, new_keys = _sequence_classifier(backbone)
    start, _ = _sequence_classifier(backbone)
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for name, weight in tuned.named_parameters():
            if name not in new_keys:
                weight.add_(scale * torch.randn(weight.shape, generator=generator))
    return tuned, start, new_keys


def test_a_weight_delta_keeps_the_best_low_rank_change_of_each_matrix(backbone, tmp_path):
    import torch

    from scholarly_nlp.ml.cross_encoder import _sequence_classifier
    from scholarly_nlp.ml.weight_delta import apply_weight_delta, write_weight_delta

    tuned, start, new_keys = moved_sequence_classifier(backbone)
    counts = write_weight_delta(tuned, start, tmp_path, rank=2, new_keys=new_keys)
    assert counts["factored"] > 0 and counts["weights"] > 0  # matrices as factors; vectors and the head whole
    rebuilt, _ = _sequence_classifier(backbone)
    apply_weight_delta(rebuilt, tmp_path)
    tuned_state, start_state, rebuilt_state = tuned.state_dict(), start.state_dict(), rebuilt.state_dict()
    for name in new_keys:  # a head the backbone lacked is the trained one, not a change to a random one
        torch.testing.assert_close(rebuilt_state[name], tuned_state[name])
    matrix = "bert.encoder.layer.0.attention.self.query.weight"
    change = (tuned_state[matrix] - start_state[matrix]).double()
    u, s, vh = torch.linalg.svd(change)
    best = (u[:, :2] * s[:2]) @ vh[:2]
    kept = (rebuilt_state[matrix] - start_state[matrix]).double()
    torch.testing.assert_close(kept, best, rtol=0, atol=2e-3)  # float16 factors
    # the rank-2 change is an approximation: what it drops is the change's other singular values
    dropped = torch.linalg.norm(change - kept) / torch.linalg.norm(change)
    assert 0 < dropped < 1
    torch.testing.assert_close(rebuilt_state[matrix.replace("weight", "bias")],
                               tuned_state[matrix.replace("weight", "bias")])


def test_int8_factors_store_the_same_change_in_half_the_bytes(backbone, tmp_path):
    """``bits=8``: each factor is int8 with one scale per rank component, and rebuilds the
    float16 factors' change within int8's rounding."""
    import torch
    from safetensors.torch import load_file

    from scholarly_nlp.ml.cross_encoder import _sequence_classifier
    from scholarly_nlp.ml.weight_delta import apply_weight_delta, write_weight_delta

    tuned, start, new_keys = moved_sequence_classifier(backbone)
    rebuilt = {}
    for bits in (16, 8):
        write_weight_delta(tuned, start, tmp_path / str(bits), rank=2, new_keys=new_keys, bits=bits)
        rebuilt[bits], _ = _sequence_classifier(backbone)
        apply_weight_delta(rebuilt[bits], tmp_path / str(bits))
    half, quarter = (load_file(str(tmp_path / str(bits) / "weight_delta.safetensors")) for bits in (16, 8))
    matrix = "bert.encoder.layer.0.attention.self.query.weight"
    a, b = quarter["a:" + matrix], quarter["b:" + matrix]
    assert a.dtype == b.dtype == torch.int8 and a.abs().max() == b.abs().max() == 127
    assert quarter["scale:a:" + matrix].shape == (1, 2) and quarter["scale:b:" + matrix].shape == (2, 1)
    factor_bytes = {bits: sum(t.numel() * t.element_size() for k, t in stored.items() if k[:2] in ("a:", "b:"))
                    for bits, stored in ((16, half), (8, quarter))}
    assert factor_bytes[8] * 2 == factor_bytes[16]
    start_state = start.state_dict()
    change = (rebuilt[16].state_dict()[matrix] - start_state[matrix]).double()
    error = (rebuilt[8].state_dict()[matrix] - start_state[matrix]).double() - change
    assert 0 < torch.linalg.norm(error) < 0.02 * torch.linalg.norm(change)
    for name in new_keys:  # the head the backbone lacked is stored whole at either width
        torch.testing.assert_close(rebuilt[8].state_dict()[name], tuned.state_dict()[name])
    bias = matrix.replace("weight", "bias")  # and so are vectors
    torch.testing.assert_close(rebuilt[8].state_dict()[bias], tuned.state_dict()[bias])


def test_at_equal_bytes_int8_at_twice_the_rank_keeps_more_of_the_change(backbone, tmp_path):
    """Why int8 exists: the truncation to rank r loses far more than int8's rounding, so at the
    same bytes rank 2r in int8 is closer to the trained weights than rank r in float16."""
    import torch

    from scholarly_nlp.ml.cross_encoder import _sequence_classifier
    from scholarly_nlp.ml.weight_delta import apply_weight_delta, write_weight_delta

    tuned, start, new_keys = moved_sequence_classifier(backbone)
    errors = {}
    for rank, bits in ((4, 16), (8, 8)):
        folder = tmp_path / f"{rank}x{bits}"
        write_weight_delta(tuned, start, folder, rank=rank, new_keys=new_keys, bits=bits)
        rebuilt, _ = _sequence_classifier(backbone)
        apply_weight_delta(rebuilt, folder)
        errors[bits] = sum(float(torch.linalg.norm(rebuilt.state_dict()[name] - weight.detach()))
                           for name, weight in tuned.named_parameters() if weight.dim() == 2)
    assert errors[8] < 0.95 * errors[16]


def test_an_int8_delta_saves_its_width_and_is_resaved_at_it(backbone, tmp_path):
    model = fully_trained_cross_encoder(backbone, delta_rank=8, delta_bits=8)
    trained = model.predict(PAIRS)
    assert save_cross_encoder(model, tmp_path / "enc") == "delta"
    record = json.loads((tmp_path / "enc" / BACKBONE_FILE).read_text())
    assert (record["delta_rank"], record["delta_bits"]) == (8, 8)
    as_fp16 = fully_trained_cross_encoder(backbone, delta_rank=8)
    save_cross_encoder(as_fp16, tmp_path / "fp16")
    assert folder_bytes(tmp_path / "enc") < folder_bytes(tmp_path / "fp16")
    # a config naming no rank keeps the folder's rank and width, so a load-and-save writes the same layout
    plain = reloaded(lambda: CrossEncoder(name=backbone), tmp_path / "enc")
    assert numpy.abs(plain.predict(PAIRS) - trained).max() < 0.1 * numpy.abs(trained).max()
    save_cross_encoder(plain, tmp_path / "again")
    again = json.loads((tmp_path / "again" / BACKBONE_FILE).read_text())
    assert (again["delta_rank"], again["delta_bits"]) == (8, 8)
    # a config that names a rank and no width keeps the loaded width; one that names both, both
    for settings, expected in (({"delta_rank": 4}, (4, 8)), ({"delta_rank": 4, "delta_bits": 16}, (4, 16))):
        named = reloaded(lambda: CrossEncoder(name=backbone, **settings), tmp_path / "enc")
        save_cross_encoder(named, tmp_path / "named")
        named_record = json.loads((tmp_path / "named" / BACKBONE_FILE).read_text())
        assert (named_record["delta_rank"], named_record["delta_bits"]) == expected


def test_a_delta_loaded_and_saved_unchanged_is_written_byte_for_byte(backbone, tmp_path):
    """Factoring and rounding rebuilt weights again would move them at every save (packaging one
    component re-saves the others): while the weights are as loaded, the file is copied."""
    save_cross_encoder(fully_trained_cross_encoder(backbone, delta_rank=8, delta_bits=8), tmp_path / "enc")
    loaded = reloaded(lambda: CrossEncoder(name=backbone), tmp_path / "enc")
    save_cross_encoder(loaded, tmp_path / "again")
    original = (tmp_path / "enc" / "weight_delta.safetensors").read_bytes()
    assert (tmp_path / "again" / "weight_delta.safetensors").read_bytes() == original
    assert json.loads((tmp_path / "again" / BACKBONE_FILE).read_text()) == json.loads(
        (tmp_path / "enc" / BACKBONE_FILE).read_text())
    train_a_step(loaded)  # trained further: the difference is taken again
    save_cross_encoder(loaded, tmp_path / "trained")
    assert (tmp_path / "trained" / "weight_delta.safetensors").read_bytes() != original
    # saved against another backbone than the one it was taken against: taken again, against it
    other = str(make_tiny_backbone(tmp_path / "other", seed=1))
    moved = reloaded(lambda: CrossEncoder(name=other), tmp_path / "enc")
    save_cross_encoder(moved, tmp_path / "moved")
    assert json.loads((tmp_path / "moved" / BACKBONE_FILE).read_text())["backbone"] == other
    assert (tmp_path / "moved" / "weight_delta.safetensors").read_bytes() != original
    assert "data" not in repr(moved.shims[0].stored_delta)  # 5 MB of bytes never printed


def test_a_delta_saved_before_int8_factors_existed_loads_as_float16(backbone, tmp_path):
    model = fully_trained_cross_encoder(backbone, delta_rank=4)
    trained = model.predict(PAIRS)
    save_cross_encoder(model, tmp_path / "enc")
    record_file = tmp_path / "enc" / BACKBONE_FILE
    record = json.loads(record_file.read_text())
    del record["delta_bits"]
    record_file.write_text(json.dumps(record))
    loaded = reloaded(lambda: CrossEncoder(name=backbone), tmp_path / "enc")
    numpy.testing.assert_allclose(loaded.predict(PAIRS), reloaded(
        lambda: CrossEncoder(name=backbone), tmp_path / "enc").predict(PAIRS))
    assert numpy.abs(loaded.predict(PAIRS) - trained).max() < numpy.abs(trained).max()
    save_cross_encoder(loaded, tmp_path / "again")
    assert json.loads((tmp_path / "again" / BACKBONE_FILE).read_text())["delta_bits"] == 16
    record["delta_bits"] = 4
    record_file.write_text(json.dumps(record))
    with pytest.raises(ValueError, match=r"enc: backbone.json records delta_bits must be 8 or 16"):
        reloaded(lambda: CrossEncoder(name=backbone), tmp_path / "enc")


def test_an_all_zero_factor_slice_stays_zero_in_int8():
    import torch

    from scholarly_nlp.ml.weight_delta import quantized_int8

    values = torch.tensor([[0.0, 0.5], [0.0, -1.0]], dtype=torch.float64)
    quantized, scales = quantized_int8(values, dim=0)
    assert quantized.dtype == torch.int8 and quantized[:, 0].tolist() == [0, 0]
    assert scales.dtype == torch.float32 and scales[0].tolist() == pytest.approx([1.0, 1.0 / 127.0])
    assert quantized[:, 1].tolist() == [64, -127]
    torch.testing.assert_close(quantized.double() * scales.double(), values, atol=0.5 / 127, rtol=0)


def test_an_int8_factor_without_its_scales_is_a_clear_error(backbone, tmp_path):
    from safetensors.torch import load_file, save_file

    save_cross_encoder(fully_trained_cross_encoder(backbone, delta_rank=4, delta_bits=8), tmp_path / "enc")
    file = tmp_path / "enc" / "weight_delta.safetensors"
    tensors = load_file(str(file))
    save_file({k: v for k, v in tensors.items() if not k.startswith("scale:b:")}, str(file))
    with pytest.raises(ValueError, match="int8 factor .* has no scales"):
        reloaded(lambda: CrossEncoder(name=backbone), tmp_path / "enc")


@pytest.mark.parametrize("bits", [4, 32, -8])
def test_a_delta_width_other_than_8_or_16_bits_is_refused(bits):
    with pytest.raises(ValueError, match="delta_bits must be 8 or 16"):
        CrossEncoder(delta_rank=4, delta_bits=bits)


def test_a_saved_fine_tuned_folder_is_never_resaved_as_a_reference(backbone, tmp_path):
    """A whole saved model (also one written before ``backbone.json`` named the layout) loads as
    fine-tuned weights: saving it again writes them, not a pointer to the backbone."""
    model = fully_trained_cross_encoder(backbone)
    trained = model.predict(PAIRS)
    assert save_cross_encoder(model, tmp_path / "full") == "full"
    assert json.loads((tmp_path / "full" / BACKBONE_FILE).read_text())["layout"] == "full"
    again = reloaded(lambda: CrossEncoder(name=backbone), tmp_path / "full")
    numpy.testing.assert_allclose(again.predict(PAIRS), trained, rtol=1e-5, atol=1e-6)
    assert save_cross_encoder(again, tmp_path / "full2") == "full"
    (tmp_path / "full" / BACKBONE_FILE).unlink()  # a folder saved before the record existed
    legacy = reloaded(lambda: CrossEncoder(name=backbone, delta_rank=64), tmp_path / "full")
    assert save_cross_encoder(legacy, tmp_path / "delta") == "delta"
    numpy.testing.assert_allclose(reloaded(lambda: CrossEncoder(name=backbone), tmp_path / "delta").predict(PAIRS),
                                  trained, rtol=1e-5, atol=1e-6)


def test_a_negative_delta_rank_is_refused():
    with pytest.raises(ValueError, match="delta_rank"):
        CrossEncoder(delta_rank=-1)


def test_a_low_rank_delta_saves_factors_and_loads_back_close(backbone, tmp_path):
    """The layout that ships: most matrices as two factors of their change."""
    from safetensors.torch import load_file, save_file

    model = fully_trained_cross_encoder(backbone, delta_rank=4)
    trained = model.predict(PAIRS)
    assert save_cross_encoder(model, tmp_path / "enc") == "delta"
    keys = list(load_file(str(tmp_path / "enc" / "weight_delta.safetensors")))
    assert any(k.startswith("a:") for k in keys) and any(k.startswith("b:") for k in keys)
    loaded = reloaded(lambda: CrossEncoder(name=backbone, delta_rank=4), tmp_path / "enc").predict(PAIRS)
    # the same folder without the matrices' changes (vectors and head only) scores further off:
    # the rank-4 factors carry what training changed in the matrices
    tensors = load_file(str(tmp_path / "enc" / "weight_delta.safetensors"))
    (tmp_path / "vectors_only").mkdir()
    (tmp_path / "vectors_only" / BACKBONE_FILE).write_text((tmp_path / "enc" / BACKBONE_FILE).read_text())
    save_file({k: v for k, v in tensors.items() if k.startswith("weight:")},
              str(tmp_path / "vectors_only" / "weight_delta.safetensors"))
    without = reloaded(lambda: CrossEncoder(name=backbone), tmp_path / "vectors_only").predict(PAIRS)
    assert numpy.abs(loaded - trained).mean() < numpy.abs(without - trained).mean()


def test_a_delta_that_does_not_fit_the_backbone_is_a_clear_error(backbone, tmp_path):
    from safetensors.torch import load_file, save_file

    model = fully_trained_cross_encoder(backbone, delta_rank=4)
    save_cross_encoder(model, tmp_path / "enc")
    file = tmp_path / "enc" / "weight_delta.safetensors"
    tensors = load_file(str(file))
    factor = next(k for k in tensors if k.startswith("b:"))
    del tensors[factor]
    save_file(tensors, str(file))
    with pytest.raises(ValueError, match="lacks its second factor"):
        reloaded(lambda: CrossEncoder(name=backbone), tmp_path / "enc")
    tensors["weight:bert.not_a_weight"] = tensors[next(iter(tensors))].clone()
    tensors = {k: v for k, v in tensors.items() if not k.startswith("a:")}
    save_file(tensors, str(file))
    with pytest.raises(ValueError, match="which the backbone lacks|does not fit the backbone"):
        reloaded(lambda: CrossEncoder(name=backbone), tmp_path / "enc")


def test_an_old_whole_bi_encoder_folder_is_not_resaved_as_a_reference(backbone, tmp_path):
    model = BiEncoderScorer(name=backbone, lora_rank=0)
    model.initialize()
    train_a_step(model)
    trained = model.predict(PAIRS)
    assert save_cross_encoder(model, tmp_path / "full") == "full"
    (tmp_path / "full" / BACKBONE_FILE).unlink()  # saved before backbone.json named the layout
    again = reloaded(lambda: BiEncoderScorer(name=backbone), tmp_path / "full")
    numpy.testing.assert_allclose(again.predict(PAIRS), trained, rtol=1e-5, atol=1e-6)
    assert save_cross_encoder(again, tmp_path / "resaved") == "full"


def test_each_layout_reports_the_backbone_its_weights_come_from(backbone, tmp_path):
    """``LoadedEncoder.origin`` is what a re-save refers to: the backbone, never a saved folder."""
    from scholarly_nlp.ml.adapters import load_encoder
    from scholarly_nlp.ml.cross_encoder import _sequence_classifier

    lora = CrossEncoder(name=backbone, lora_rank=4)
    lora.initialize()
    train_a_step(lora)
    zero_shot = BiEncoderScorer(name=backbone)
    zero_shot.initialize()
    saved = {"adapter": lora, "backbone": zero_shot, "full": fully_trained_cross_encoder(backbone),
             "delta": fully_trained_cross_encoder(backbone, delta_rank=4)}
    def plain_encoder(source):  # the bi-encoder's loader: no task head
        from transformers import AutoModel

        from scholarly_nlp.ml.adapters import load_pretrained
        return load_pretrained(AutoModel.from_pretrained, source)

    for layout, model in saved.items():
        assert save_cross_encoder(model, tmp_path / layout) == layout
        loader = plain_encoder if layout == "backbone" else _sequence_classifier
        loaded = load_encoder(tmp_path / layout, loader, backbone=backbone)
        assert loaded.origin == backbone, layout
    (tmp_path / "full" / BACKBONE_FILE).unlink()  # a whole folder saved before the record existed
    assert load_encoder(tmp_path / "full", _sequence_classifier, backbone=backbone).origin == backbone
    plain = load_encoder(tmp_path / "full", _sequence_classifier)  # no configured backbone: the folder is one
    assert plain.origin == str(tmp_path / "full") and plain.digest is not None
