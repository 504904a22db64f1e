"""The contribution detector's third stage-1 scorer (issue #19): the fine-tuned introduction tagger
(``scholarly_contribution_detector.IntroductionTagger.v1``), its inputs, fitting, saving, and the
detector fitting it out of fold under stage 2.

Tiny random backbone (conftest's ``backbone``), real NLPContributionGraph introductions.
"""

from __future__ import annotations

import json
import warnings

import numpy
import pytest
import spacy

pytest.importorskip("peft")

import scholarly_nlp  # noqa: E402
from scholarly_contribution_detector import stacking, tagger as tagger_module  # noqa: E402
from scholarly_contribution_detector.data import CUE_PATTERNS, id_folds  # noqa: E402
from scholarly_contribution_detector.features import introduction_features  # noqa: E402
from scholarly_contribution_detector.ncg_docs import ncg_doc  # noqa: E402
from scholarly_contribution_detector.tagger import (TAGGER_ARCH, IntroductionTagger, fit_introduction_tagger,  # noqa: E402
                                                    has_introduction_tagger, load_introduction_tagger,
                                                    save_introduction_tagger)
from scholarly_nlp.ml import fit_boosted_trees, position_features, sentence_windows, sequence_batch  # noqa: E402
from scholarly_nlp.readers.ncg import iter_ncg_papers  # noqa: E402
from test_contribution_detector import train  # noqa: E402

from conftest import shared  # noqa: E402

SMALL = {"lora_rank": 2, "hidden_width": 8, "sentence_tokens": 16, "max_length": 64, "batch_size": 2}


@pytest.fixture(scope="module")
def ncg_docs():
    """Twelve real NCG papers with gold on every introduction sentence."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        papers = list(iter_ncg_papers(shared("nlpcontributiongraph")))[1::7][:12]
    vocab = scholarly_nlp.blank().vocab
    docs = [ncg_doc(p, vocab) for p in papers]
    return [d for d in docs if d._.contribution_gold]


def intros_and_labels(docs):
    """Each doc's introduction sentence texts and their gold labels."""
    intros, labels = [], []
    for doc in docs:
        gold = {(int(g["start"]), int(g["end"])): int(g["label"]) for g in doc._.contribution_gold}
        spans = introduction_features(doc)[0]
        intros.append([s.text for s in spans])
        labels.append(numpy.array([gold[(s.start, s.end)] for s in spans]))
    return intros, labels


@pytest.fixture(scope="module")
def fitted(ncg_docs, backbone):
    """A tagger fitted on the first four papers (120 steps at a high rate: it must overfit them;
    the random tiny backbone gives little to start from)."""
    intros, labels = intros_and_labels(ncg_docs[:4])
    model = IntroductionTagger(name=backbone, epochs=30, learn_rate=5e-3, **{**SMALL, "batch_size": 1})
    losses = fit_introduction_tagger(model, intros, labels, seed=0)
    return model, intros, labels, losses


# --------------------------------------------------------------------------- inputs


def test_sentence_windows_keep_sentences_whole_and_cut_long_ones(backbone):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(backbone)
    sentences = ["We propose a new parser.", "It is fast.", "word " * 40]
    pieces = [tokenizer(s, add_special_tokens=False)["input_ids"] for s in sentences]
    windows, spans = sentence_windows(tokenizer, sentences, sentence_tokens=16, max_length=24)
    # the first two fit one window of 24 pieces; the third (cut to 16) opens a second window
    assert spans[0] == (0, 1, 1 + len(pieces[0]))
    assert spans[1] == (0, spans[0][2] + 1, spans[0][2] + 1 + len(pieces[1]))
    assert spans[2] == (1, 1, 17)
    assert windows[0] == [tokenizer.cls_token_id, *pieces[0], tokenizer.sep_token_id, *pieces[1], tokenizer.sep_token_id]
    assert windows[1] == [tokenizer.cls_token_id, *pieces[2][:16], tokenizer.sep_token_id]
    with pytest.raises(ValueError, match="max_length"):
        sentence_windows(tokenizer, sentences, sentence_tokens=16, max_length=17)


def test_sequence_batch_pools_each_sentence_from_its_window():
    # text 0: two windows of 3 and 2 pieces; text 1: one window; pieces padded to 4 per window
    encoded = [([[101, 7, 102], [101, 102]], [(0, 1, 2), (1, 1, 1)]), ([[101, 5, 6, 102]], [(0, 1, 3)])]
    inputs = sequence_batch(encoded)
    assert inputs["input_ids"].tolist() == [[101, 7, 102, 0], [101, 102, 0, 0], [101, 5, 6, 102]]
    assert inputs["attention_mask"].sum(dim=1).tolist() == [3, 2, 4]
    # each text's own windows among the batch's three; 3 is the zero window that pads text 1
    assert inputs["windows"].tolist() == [[0, 1], [2, 3]]
    pooling = inputs["pooling"].numpy()
    assert pooling.shape == (2, 2, 8)  # over the text's own windows x 4 pieces, not the batch's
    assert pooling[0, 0].nonzero()[0].tolist() == [1]  # window 0, piece 1
    assert not pooling[0, 1].any()  # a sentence without pieces pools nothing: its position alone
    assert pooling[1, 0].nonzero()[0].tolist() == [1, 2] and pooling[1, 0, 1] == pytest.approx(0.5)
    assert inputs["positions"][0].numpy() == pytest.approx(position_features(2))
    assert inputs["positions"][1, 0].tolist() == [0.0, 1.0, 1.0] and not inputs["positions"][1, 1].any()
    assert inputs["lengths"].tolist() == [2, 1] and inputs["lengths"].device.type == "cpu"


# --------------------------------------------------------------------------- the model


@pytest.mark.parametrize("bad, match", [({"lora_rank": 0}, "lora_rank"), ({"hidden_width": 7}, "hidden_width"),
                                        ({"max_length": 10, "sentence_tokens": 16}, "max_length"),
                                        ({"epochs": 0}, "epochs"), ({"learn_rate": 0.0}, "learn_rate")])
def test_bad_settings_are_refused(bad, match):
    with pytest.raises(ValueError, match=match):
        IntroductionTagger(**bad)


def test_an_unfitted_tagger_cannot_predict_and_no_tagger_trains_by_backprop(backbone, fitted):
    model = IntroductionTagger(name=backbone, **SMALL)
    assert not has_introduction_tagger(model)
    with pytest.raises(ValueError, match="not fitted"):
        model.predict([["We propose X."]])
    with pytest.raises(ValueError, match="not by backprop"):
        fitted[0].begin_update([["We propose X."]])


def test_fitting_overfits_four_real_introductions(fitted):
    model, intros, labels, losses = fitted
    assert len(losses) == 30 and losses[-1] < 0.8 * losses[0]
    probs = model.predict(intros)
    assert [len(p) for p in probs] == [len(s) for s in intros]
    scores, truth = numpy.concatenate(probs), numpy.concatenate(labels).astype(bool)
    assert truth.any() and (~truth).any()
    # ranking: a gold contribution sentence outscores a non-contribution one in most pairs
    auc = (scores[truth][:, None] > scores[~truth][None, :]).mean()
    assert auc > 0.85
    assert scores[truth].mean() > scores[~truth].mean() + 0.2


def test_an_introductions_probabilities_do_not_depend_on_its_batch(fitted):
    model, intros, _, _ = fitted
    windows, _ = sentence_windows(model.attrs["tokenizer"], intros[1], SMALL["sentence_tokens"], SMALL["max_length"])
    assert len(windows) > 3  # several windows: their hidden states pool into one introduction
    together = model.predict([intros[0], [], intros[1]])
    assert together[1].shape == (0,)
    alone = model.predict([intros[1]])[0]
    assert together[2] == pytest.approx(alone, abs=1e-5)


def test_fitting_refuses_misaligned_labels(backbone):
    model = IntroductionTagger(name=backbone, **SMALL)
    with pytest.raises(ValueError, match="one label per sentence"):
        fit_introduction_tagger(model, [["a.", "b."]], [[1]])
    with pytest.raises(ValueError, match="no introduction"):
        fit_introduction_tagger(model, [[]], [[]])
    longer = IntroductionTagger(name=backbone, **{**SMALL, "max_length": 100_000})
    with pytest.raises(ValueError, match="positions of the encoder"):
        fit_introduction_tagger(longer, [["a."]], [[1]])
    assert not has_introduction_tagger(model) and not has_introduction_tagger(longer)


def test_a_saved_tagger_is_an_adapter_beside_a_backbone_reference(fitted, backbone, tmp_path):
    model, intros, _, _ = fitted
    save_introduction_tagger(model, tmp_path / "tagger")
    files = {p.name for p in (tmp_path / "tagger").rglob("*") if p.is_file()}
    assert {"tagger.json", "head.safetensors", "backbone.json", "adapter_model.safetensors"} <= files
    assert not files & {"model.safetensors", "pytorch_model.bin"}  # never a copy of the backbone
    record = json.loads((tmp_path / "tagger" / "tagger.json").read_text())
    assert record["encoder_layout"] == "adapter" and record["settings"]["hidden_width"] == 8
    loaded = IntroductionTagger(name=backbone, **SMALL)
    load_introduction_tagger(loaded, tmp_path / "tagger")
    for a, b in zip(model.predict(intros), loaded.predict(intros)):
        assert a == pytest.approx(b, abs=1e-5)
    # a loaded tagger saves again as the same adapter and head
    save_introduction_tagger(loaded, tmp_path / "again")
    reloaded = IntroductionTagger(name=backbone, **SMALL)
    load_introduction_tagger(reloaded, tmp_path / "again")
    for a, b in zip(model.predict(intros), reloaded.predict(intros)):
        assert a == pytest.approx(b, abs=1e-5)
    assert (tmp_path / "again" / "head.safetensors").read_bytes() == (tmp_path / "tagger" / "head.safetensors").read_bytes()
    assert json.loads((tmp_path / "again" / "encoder" / "backbone.json").read_text())["layout"] == "adapter"
    for setting, value in (("hidden_width", 16), ("sentence_tokens", 32)):
        other = IntroductionTagger(name=backbone, **{**SMALL, setting: value})
        with pytest.raises(ValueError, match=f"{setting} {SMALL[setting]}"):
            load_introduction_tagger(other, tmp_path / "tagger")
    wider = IntroductionTagger(name=backbone, **{**SMALL, "hidden_width": 16})
    with pytest.raises(ValueError, match="not a saved introduction tagger"):
        load_introduction_tagger(wider, tmp_path)


# --------------------------------------------------------------------------- in the detector


def tagger_config(backbone, **settings):
    return {"@architectures": TAGGER_ARCH, "name": backbone, "epochs": 2, **SMALL, **settings}


@pytest.fixture(scope="module")
def stacked(ncg_docs, backbone):
    """A detector with the tagger, trained and stage-2 fitted on ten papers (in-sample: the
    mechanics, not a measurement), and the papers it never saw."""
    nlp = train(ncg_docs[:10], epochs=2, sentence_encoder=backbone, tagger=tagger_config(backbone))
    detector = nlp.get_pipe("contribution_detector")
    stage1 = [probs for _, probs in detector.predict_stage1(ncg_docs[:10])]
    report = detector.fit_stage2(ncg_docs[:10], stage1, seed=0)
    return nlp, ncg_docs[10:], report


def test_fit_stage2_fits_the_tagger_out_of_fold_then_on_all_papers(ncg_docs, backbone, monkeypatch):
    """Each fold's tagger learns from the other folds' papers only and scores its own; the
    pipe's tagger learns from all of them; stage 2 learns from the out-of-fold probabilities."""
    docs = ncg_docs[:10]
    nlp = train(docs, epochs=1, sentence_encoder=backbone, tagger=tagger_config(backbone, epochs=1))
    detector = nlp.get_pipe("contribution_detector")
    intro_of = {tuple(intros_and_labels([d])[0][0]): d._.paper_meta["paper_id"] for d in docs}
    fits, tree_inputs = [], []
    real_fit, real_trees = tagger_module.fit_introduction_tagger, fit_boosted_trees

    def recording_fit(model, intros, labels, **kwargs):
        fits.append(({intro_of[tuple(s)] for s in intros}, model))
        return real_fit(model, intros, labels, **kwargs)

    def recording_trees(model, X, y, **kwargs):
        tree_inputs.append(X)
        return real_trees(model, X, y, **kwargs)

    monkeypatch.setattr("scholarly_contribution_detector.factory.fit_introduction_tagger", recording_fit)
    monkeypatch.setattr("scholarly_contribution_detector.factory.fit_boosted_trees", recording_trees)
    stage1 = [probs for _, probs in detector.predict_stage1(docs)]
    report = detector.fit_stage2(docs, stage1, seed=3, folds=5)
    ids = [d._.paper_meta["paper_id"] for d in docs]
    folds = id_folds(ids, 5, 3)
    assert [trained for trained, _ in fits[:5]] == [set(ids) - fold for fold in folds]
    assert fits[5][0] == set(ids)
    assert detector.stage2_uses_tagger and has_introduction_tagger(detector.tagger)
    # the trees' tagger column holds, for each paper, the probabilities of the fold model that
    # never saw it, not those of the final tagger fitted on all papers
    intros, labels = intros_and_labels(docs)
    fold_of = {paper_id: k for k, fold in enumerate(folds) for paper_id in fold}
    expected = numpy.concatenate([fits[fold_of[pid]][1].predict([intro])[0] for pid, intro in zip(ids, intros)])
    final = numpy.concatenate(detector.tagger.predict(intros))
    column = tree_inputs[0][:, 2 * (2 * stacking.NEIGHBOURS + 6)]
    assert column == pytest.approx(expected, abs=1e-5)
    assert not numpy.allclose(column, final, atol=1e-3)
    truth = numpy.concatenate(labels).astype(bool)
    oof = expected >= 0.5
    assert report["tagger"] == {"tp": int((oof & truth).sum()), "fp": int((oof & ~truth).sum()),
                                "fn": int((~oof & truth).sum())}


def test_a_failed_tagger_fit_leaves_the_fitted_pipe_as_it_was(stacked, monkeypatch):
    nlp, unseen, _ = stacked
    detector = nlp.get_pipe("contribution_detector")
    before = [p for _, p in detector.predict(unseen)]
    docs = [eg for eg in unseen]  # any papers with gold will do; the fit fails before it ends
    calls = []
    real_fit = tagger_module.fit_introduction_tagger

    def failing_final_fit(model, intros, labels, **kwargs):
        calls.append(len(intros))
        if len(calls) > 2:  # the folds' fits run; the final one fails (out of memory, say)
            raise RuntimeError("out of memory")
        return real_fit(model, intros, labels, **kwargs)

    monkeypatch.setattr("scholarly_contribution_detector.factory.fit_introduction_tagger", failing_final_fit)
    with pytest.raises(RuntimeError, match="out of memory"):
        detector.fit_stage2(docs, [p for _, p in detector.predict_stage1(docs)], folds=2)
    assert all(a == pytest.approx(b, abs=1e-6) for a, b in zip(before, [p for _, p in detector.predict(unseen)]))


def test_stage2_reads_three_probability_sets(stacked):
    nlp, unseen, report = stacked
    detector = nlp.get_pipe("contribution_detector")
    width = 3 * (2 * stacking.NEIGHBOURS + 6) + 8 + 2 * len(CUE_PATTERNS) + stacking.ABSTRACT_COLUMNS
    assert detector.stage2.get_dim("nI") == width == detector.stage2_width()
    assert detector.stage2.attrs["tagger"] is True
    # the tagger's probabilities (and their relations) follow stage 1's in each row
    docs = unseen[:2]
    spans = [introduction_features(d)[0] for d in docs]
    stage1 = [p for _, p in detector.predict_stage1(docs)]
    rows = detector.stage2_features(docs, stage1, embeddings=True, tagger=True)
    tagged = detector.tagger_probs(spans)
    relational = 2 * stacking.NEIGHBOURS + 6
    for matrix, probs in zip(rows, tagged):
        assert matrix[:, 2 * relational] == pytest.approx(probs)
    predicted = detector.predict(docs)
    assert [len(p) for _, p in predicted] == [len(s) for s in spans]


def test_the_tagger_survives_disk_and_bytes(stacked, backbone, tmp_path):
    nlp, unseen, _ = stacked
    expected = [p for _, p in nlp.get_pipe("contribution_detector").predict(unseen)]
    nlp.to_disk(tmp_path / "pipeline")
    assert (tmp_path / "pipeline" / "contribution_detector" / "tagger" / "tagger.json").is_file()
    loaded = spacy.load(tmp_path / "pipeline").get_pipe("contribution_detector")
    assert loaded.stage2_uses_tagger and has_introduction_tagger(loaded.tagger)
    assert all(a == pytest.approx(b, abs=1e-5) for a, b in zip(expected, [p for _, p in loaded.predict(unseen)]))
    blank = scholarly_nlp.blank()
    blank.add_pipe("contribution_detector", config={"sentence_encoder": backbone, "tagger": tagger_config(backbone)})
    restored = blank.get_pipe("contribution_detector").from_bytes(nlp.get_pipe("contribution_detector").to_bytes())
    assert restored.stage2_uses_tagger
    assert all(a == pytest.approx(b, abs=1e-5) for a, b in zip(expected, [p for _, p in restored.predict(unseen)]))
    # saving a detector whose tagger is no longer fitted leaves no stale folder behind
    detector = nlp.get_pipe("contribution_detector")
    nlp.to_disk(tmp_path / "again")
    tagger_module.drop_introduction_tagger(detector.tagger)
    # dropped is unfitted: nothing of the fitted tagger is left in its attrs, only the settings
    assert set(detector.tagger.attrs) == set(tagger_module.SETTINGS)
    try:
        detector.to_disk(tmp_path / "again" / "contribution_detector", exclude=["vocab"])
        assert not (tmp_path / "again" / "contribution_detector" / "tagger").exists()
        with pytest.raises(ValueError, match="no fitted tagger"):
            detector.predict(unseen[:1])
    finally:
        detector.from_disk(tmp_path / "pipeline" / "contribution_detector", exclude=["vocab"])


def test_two_scorer_trees_run_in_a_detector_configured_with_a_tagger(ncg_docs, backbone, tmp_path):
    """A pipeline fitted before the tagger existed (trees on two scorers, no tagger folder) loads
    into a config that has a tagger and runs as it was fitted."""
    old = train(ncg_docs[:6], epochs=1, sentence_encoder=backbone)
    old_detector = old.get_pipe("contribution_detector")
    old_detector.fit_stage2(ncg_docs[:6], [p for _, p in old_detector.predict_stage1(ncg_docs[:6])], folds=3)
    old.to_disk(tmp_path / "old")
    nlp = scholarly_nlp.blank()
    detector = nlp.add_pipe("contribution_detector", config={"sentence_encoder": backbone,
                                                             "tagger": tagger_config(backbone)})
    detector.from_disk(tmp_path / "old" / "contribution_detector", exclude=["vocab"])
    assert detector.has_stage2 and not detector.stage2_uses_tagger and not has_introduction_tagger(detector.tagger)
    expected = old_detector.predict(ncg_docs[6:8])
    for (_, a), (_, b) in zip(expected, detector.predict(ncg_docs[6:8])):
        assert a == pytest.approx(b, abs=1e-6)


def test_the_tagger_must_be_an_introduction_tagger():
    nlp = scholarly_nlp.blank()
    with pytest.raises(ValueError, match="IntroductionTagger"):
        nlp.add_pipe("contribution_detector", config={"tagger": {"@architectures": "scholarly_nlp.LogisticRegression.v1"}})


def test_the_tagger_runs_where_the_pipe_runs(stacked, monkeypatch):
    """After ``spacy.require_gpu(n)`` the tagger scores on GPU n (here: the device it is asked
    for is recorded); on the CPU it stays where it is."""
    nlp, unseen, _ = stacked
    detector = nlp.get_pipe("contribution_detector")
    moves = []
    monkeypatch.setattr("scholarly_contribution_detector.factory.move_introduction_tagger",
                        lambda model, device: moves.append((model, device)))
    spans = [introduction_features(unseen[0])[0]]
    detector.tagger_probs(spans)
    monkeypatch.setattr(detector, "encoder_device", lambda: "cuda:1")
    detector.tagger_probs(spans)
    assert moves == [(detector.tagger, None), (detector.tagger, "cuda:1")]
