"""The role tagger with its own LoRA-fine-tuned encoder (``scholarly_facet_classifier.AbstractRoleEncoder.v1``).

Tiny random backbone (conftest's ``backbone``), real CSAbstruct abstracts from ../shared/data.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy
import pytest

from conftest import REPO, shared

pytest.importorskip("peft")
pytest.importorskip("scholarly_facet_classifier.role_encoder")

from spacy.training import Example  # noqa: E402

from scholarly_nlp import ROLE_GROUP, ROLES, abstract_sentences  # noqa: E402
from scholarly_nlp.ml import backbone_record_name  # noqa: E402
from scholarly_nlp.readers import AbstractRecord, abstract_doc, read_csabstruct  # noqa: E402

ARCH = "scholarly_facet_classifier.AbstractRoleEncoder.v1"


@pytest.fixture(scope="module")
def records():
    """Eight real CSAbstruct training abstracts."""
    return read_csabstruct(shared("csabstruct", "train.jsonl"))[:8]


def make_nlp(backbone: str, records, lora_rank: int = 4, **model_config):
    """A pipeline of the role tagger alone (no transformer pipe), initialised on ``records``."""
    import scholarly_nlp

    nlp = scholarly_nlp.blank()
    nlp.add_pipe("sentence_role_tagger", config={"overwrite": True, "model": {
        "@architectures": ARCH, "name": backbone, "lora_rank": lora_rank, "hidden_width": 16, "dropout": 0.0,
        **model_config}})
    docs = [abstract_doc(r, nlp) for r in records]
    examples = [Example(d.copy(), d) for d in docs]
    optimizer = nlp.initialize(lambda: examples)
    return nlp, examples, optimizer


def test_encode_abstract_keeps_every_sentence_within_max_length(backbone, records):
    from transformers import AutoTokenizer

    from scholarly_facet_classifier.role_encoder import encode_abstract

    tokenizer = AutoTokenizer.from_pretrained(backbone)
    sentences = records[0].sentences
    ids, spans = encode_abstract(tokenizer, sentences, sentence_tokens=64, max_length=512)
    assert len(spans) == len(sentences) and ids[0] == tokenizer.cls_token_id
    assert all(ids[end] == tokenizer.sep_token_id for _, end in spans)
    short, short_spans = encode_abstract(tokenizer, sentences, sentence_tokens=64, max_length=8 * len(sentences))
    assert len(short) <= 8 * len(sentences)
    assert all(end > start for start, end in short_spans)  # every sentence keeps tokens
    assert short_spans[0][1] - short_spans[0][0] < spans[0][1] - spans[0][0]


def test_shapes_without_a_transformer_pipe(backbone, records):
    nlp, _, _ = make_nlp(backbone, records)
    assert "transformer" not in nlp.pipe_names
    docs = [abstract_doc(records[0], nlp), abstract_doc(AbstractRecord("one", "T", records[1].sentences[:1]), nlp),
            abstract_doc(AbstractRecord("none", "Only a title", []), nlp)]
    probs = nlp.get_pipe("sentence_role_tagger").model.predict(docs)
    assert [p.shape for p in probs] == [(len(records[0].sentences), len(ROLES)), (1, len(ROLES)), (0, len(ROLES))]
    numpy.testing.assert_allclose(probs[0].sum(axis=1), 1.0, rtol=1e-5)


def test_a_docs_output_does_not_depend_on_its_batch(backbone, records):
    nlp, _, _ = make_nlp(backbone, records)
    model = nlp.get_pipe("sentence_role_tagger").model
    alone = model.predict([abstract_doc(records[2], nlp)])[0]
    together = model.predict([abstract_doc(r, nlp) for r in records[:4]])[2]
    numpy.testing.assert_allclose(alone, together, atol=1e-5)


def test_training_lowers_the_loss_and_only_adapters_and_head_learn(backbone, records):
    nlp, examples, optimizer = make_nlp(backbone, records)
    tagger = nlp.get_pipe("sentence_role_tagger")
    module = tagger.model.shims[0]._model
    base = {n: p.detach().clone() for n, p in module.encoder.named_parameters() if "lora_" not in n}
    optimizer.learn_rate = 0.01
    losses = [tagger.update(examples, sgd=optimizer, losses={})["sentence_role_tagger"] for _ in range(25)]
    assert losses[-1] < 0.6 * losses[0], losses
    assert all(numpy.array_equal(p.detach(), base[n]) for n, p in module.encoder.named_parameters() if n in base)
    assert tagger.is_trained


def test_saves_adapter_and_head_not_the_backbone_and_loads_in_a_fresh_process(backbone, records, tmp_path):
    nlp, examples, optimizer = make_nlp(backbone, records)
    tagger = nlp.get_pipe("sentence_role_tagger")
    optimizer.learn_rate = 0.01
    for _ in range(5):
        tagger.update(examples, sgd=optimizer)
    docs = list(nlp.pipe([abstract_doc(r, nlp) for r in records[:3]]))
    expected = [[s.label_ for s in sorted(d.spans[ROLE_GROUP], key=lambda s: s.start)] for d in docs]
    nlp.to_disk(tmp_path / "pipeline")
    saved = tmp_path / "pipeline" / "sentence_role_tagger" / "model"
    assert (saved / "encoder" / "backbone.json").exists() and (saved / "encoder" / "adapter_model.safetensors").exists()
    assert json.loads((saved / "encoder" / "backbone.json").read_text())["backbone"] == backbone_record_name(backbone)
    assert (saved / "head.safetensors").exists()
    assert not list(saved.rglob("model.safetensors")) and not list(saved.rglob("pytorch_model.bin"))
    script = (
        "import json, sys, spacy\n"
        "from scholarly_nlp import ROLE_GROUP\n"
        "from scholarly_nlp.readers import abstract_doc, read_csabstruct\n"
        "nlp = spacy.load(sys.argv[1])\n"
        "records = read_csabstruct(sys.argv[2])[:3]\n"
        "docs = list(nlp.pipe([abstract_doc(r, nlp) for r in records]))\n"
        "print(json.dumps([[s.label_ for s in sorted(d.spans[ROLE_GROUP], key=lambda s: s.start)] for d in docs]))\n")
    result = subprocess.run([sys.executable, "-c", script, str(tmp_path / "pipeline"),
                             str(shared("csabstruct", "train.jsonl"))], capture_output=True, text=True, cwd=REPO,
                            env=dict(os.environ, SCHOLARLY_NLP_DISABLE_PLUGINS="facet_classifier"), timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(result.stdout.strip().splitlines()[-1]) == expected


def test_bytes_round_trip_keeps_the_predictions(backbone, records):
    nlp, examples, optimizer = make_nlp(backbone, records)
    tagger = nlp.get_pipe("sentence_role_tagger")
    optimizer.learn_rate = 0.01
    tagger.update(examples, sgd=optimizer)
    doc = abstract_doc(records[0], nlp)
    before = tagger.model.predict([doc])[0]
    other, _, _ = make_nlp(backbone, records)
    copy = other.get_pipe("sentence_role_tagger").from_bytes(tagger.to_bytes())
    numpy.testing.assert_allclose(copy.model.predict([doc])[0], before, atol=1e-5)
    assert copy.is_trained and len(abstract_sentences(doc)) == len(before)


def test_fully_fine_tuned_saves_as_a_weight_delta_and_loads_back(backbone, records, tmp_path):
    """lora_rank 0 trains every weight; delta_rank saves the change, not a copy of the backbone."""
    import spacy

    nlp, examples, optimizer = make_nlp(backbone, records, lora_rank=0, delta_rank=64)
    tagger = nlp.get_pipe("sentence_role_tagger")
    module = tagger.model.shims[0]._model
    before = {n: p.detach().clone() for n, p in module.encoder.named_parameters()}
    optimizer.learn_rate = 0.01
    for _ in range(5):
        tagger.update(examples, sgd=optimizer)
    assert any(not numpy.array_equal(p.detach(), before[n]) for n, p in module.encoder.named_parameters())
    doc = abstract_doc(records[0], nlp)
    expected = tagger.model.predict([doc])[0]
    nlp.to_disk(tmp_path / "pipeline")
    encoder = tmp_path / "pipeline" / "sentence_role_tagger" / "model" / "encoder"
    record = json.loads((encoder / "backbone.json").read_text())
    assert record["layout"] == "delta" and record["delta_rank"] == 64
    assert record["backbone"] == backbone_record_name(backbone)
    assert (encoder / "weight_delta.safetensors").exists() and not list(encoder.rglob("model.safetensors"))
    loaded = spacy.load(tmp_path / "pipeline")
    again = loaded.get_pipe("sentence_role_tagger")
    # the tiny backbone's matrices have rank <= 64: the difference is kept exactly (up to float16)
    numpy.testing.assert_allclose(again.model.predict([abstract_doc(records[0], loaded)])[0], expected, atol=2e-3)
    # loaded back, it saves again as a difference of the same rank, never as a bare reference
    loaded.to_disk(tmp_path / "again")
    record = json.loads((tmp_path / "again" / "sentence_role_tagger" / "model" / "encoder" / "backbone.json").read_text())
    assert record["layout"] == "delta" and record["delta_rank"] == 64
    assert record["backbone"] == backbone_record_name(backbone)
    twice = spacy.load(tmp_path / "again")
    numpy.testing.assert_allclose(twice.get_pipe("sentence_role_tagger").model.predict([abstract_doc(records[0], twice)])[0],
                                  expected, atol=2e-3)
    # with int8 factors (delta_bits 8): saved at that width, close to the trained tagger, and a
    # load-and-save writes the same bytes
    spacy.load(tmp_path / "again", config={"components": {"sentence_role_tagger": {"model": {
        "delta_rank": 8, "delta_bits": 8}}}}).to_disk(tmp_path / "int8")
    int8_encoder = tmp_path / "int8" / "sentence_role_tagger" / "model" / "encoder"
    record = json.loads((int8_encoder / "backbone.json").read_text())
    assert (record["layout"], record["delta_rank"], record["delta_bits"]) == ("delta", 8, 8)
    quantized = spacy.load(tmp_path / "int8")
    probabilities = quantized.get_pipe("sentence_role_tagger").model.predict([abstract_doc(records[0], quantized)])[0]
    assert numpy.abs(probabilities - expected).max() < 0.2
    quantized.to_disk(tmp_path / "int8_again")
    assert (tmp_path / "int8_again" / "sentence_role_tagger" / "model" / "encoder" / "weight_delta.safetensors"
            ).read_bytes() == (int8_encoder / "weight_delta.safetensors").read_bytes()


def test_a_negative_delta_rank_is_refused(backbone):
    from scholarly_facet_classifier.role_encoder import AbstractRoleEncoder

    with pytest.raises(ValueError, match="delta_rank"):
        AbstractRoleEncoder(name=backbone, lora_rank=0, delta_rank=-1)
    with pytest.raises(ValueError, match="delta_bits must be 8 or 16"):
        AbstractRoleEncoder(name=backbone, lora_rank=0, delta_rank=8, delta_bits=4)


def test_a_whole_fine_tuned_tagger_saved_again_as_a_delta_refers_to_its_backbone(backbone, records, tmp_path):
    """Not to the training output it was loaded from: the delta must load once that folder is gone."""
    import shutil

    import spacy

    nlp, examples, optimizer = make_nlp(backbone, records, lora_rank=0)
    tagger = nlp.get_pipe("sentence_role_tagger")
    optimizer.learn_rate = 0.01
    for _ in range(5):
        tagger.update(examples, sgd=optimizer)
    doc = abstract_doc(records[1], nlp)
    expected = tagger.model.predict([doc])[0]
    nlp.to_disk(tmp_path / "whole")
    encoder = tmp_path / "whole" / "sentence_role_tagger" / "model" / "encoder"
    assert json.loads((encoder / "backbone.json").read_text())["layout"] == "full"
    whole = spacy.load(tmp_path / "whole", config={"components": {"sentence_role_tagger": {"model": {"delta_rank": 64}}}})
    whole.to_disk(tmp_path / "delta")
    shutil.rmtree(tmp_path / "whole")
    record = json.loads((tmp_path / "delta" / "sentence_role_tagger" / "model" / "encoder" / "backbone.json").read_text())
    assert record["layout"] == "delta" and record["backbone"] == backbone_record_name(backbone)
    loaded = spacy.load(tmp_path / "delta")
    numpy.testing.assert_allclose(loaded.get_pipe("sentence_role_tagger").model.predict([abstract_doc(records[1], loaded)])[0],
                                  expected, atol=2e-3)
