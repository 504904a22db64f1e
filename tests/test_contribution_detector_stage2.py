"""The contribution detector's stage 2 (issue #19): the stacking features by hand, fitting on
real NCG papers, prediction through both stages, saving and loading, and out-of-fold scores."""

from __future__ import annotations

import warnings

import numpy
import pytest
import spacy
import srsly
from spacy.training import Example

import scholarly_nlp
from scholarly_contribution_detector import stacking
from scholarly_contribution_detector.data import CUE_PATTERNS, SECTION_KINDS, cue_flags
from scholarly_contribution_detector.ncg_docs import ncg_doc
from scholarly_nlp.ml import LogisticRegression, fit_logistic_regression, has_weights
from scholarly_nlp.readers.ncg import iter_ncg_papers
from test_contribution_detector import train

from conftest import shared

PROJECT_CONFIG = "projects/contribution_linker/configs/detector.cfg"


def _cues(**on):
    return {name: int(on.get(name, 0)) for name in CUE_PATTERNS}


# --------------------------------------------------------------------------- features by hand

def test_relational_features_by_hand():
    rows = stacking.relational_features(numpy.array([0.2, 0.9, 0.6, 0.1]), neighbours=1)
    assert rows.shape == (4, 8)
    own, before, after, ratio, rank, top3, earlier, mean = rows.T
    assert own.tolist() == [0.2, 0.9, 0.6, 0.1]
    assert before.tolist() == [0.0, 0.2, 0.9, 0.6]
    assert after.tolist() == [0.9, 0.6, 0.1, 0.0]
    assert ratio == pytest.approx([0.2 / 0.9, 1.0, 0.6 / 0.9, 0.1 / 0.9])
    assert rank.tolist() == [2 / 4, 0.0, 1 / 4, 3 / 4]
    assert top3.tolist() == [1.0, 1.0, 1.0, 0.0]
    # sentences at or above 0.5 before this one: none, none, one (0.9), two
    assert earlier.tolist() == [0.0, 0.0, 0.2, 0.4]
    assert mean == pytest.approx([0.45] * 4)
    assert stacking.relational_features(numpy.array([])).shape == (0, 2 * stacking.NEIGHBOURS + 6)


def test_introduction_context_first_cue_and_title():
    cues = [_cues(), _cues(we_propose=1), _cues(we_propose=1)]
    vectors = numpy.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]])
    features = stacking.introduction_context(cues, vectors, numpy.array([0.0, 1.0]))
    assert features.shape == (3, 8 + 2 * len(CUE_PATTERNS))
    assert features[:, 0].tolist() == [0.0, 0.5, 1.0]  # position in the introduction
    assert features[:, 5] == pytest.approx([0.0, 1.0, 0.8])  # cosine to the title
    assert features[:, 6].tolist() == [1.0, 1.0, 1.0]  # all three are among the 3 most similar
    first = 8 + list(CUE_PATTERNS).index("we_propose")
    assert features[:, first].tolist() == [0.0, 1.0, 0.0]  # only its first occurrence
    assert features[:, first + len(CUE_PATTERNS)].tolist() == [0.0, 0.0, 0.2]  # one earlier, / 5


def test_cue_window_neighbours_and_empty():
    window = stacking.cue_window([_cues(we=1), _cues(), _cues(number=1)])
    k, we, number = len(CUE_PATTERNS), list(CUE_PATTERNS).index("we"), list(CUE_PATTERNS).index("number")
    assert window.shape == (3, 3 * k)
    assert window[1, k + we] == 1 and window[1, 2 * k + number] == 1 and window[1, :k].sum() == 0
    assert window[0, k:2 * k].sum() == 0 and window[2, 2 * k:].sum() == 0
    assert stacking.cue_window([]).shape == (0, 3 * k)


def test_beside_neighbours_pads_the_ends_with_zeros_and_keeps_the_dtype():
    rows = numpy.array([[1, 2], [3, 4], [5, 6]], dtype=numpy.float32)
    out = stacking.beside_neighbours(rows)
    assert out.dtype == numpy.float32
    assert out.tolist() == [[1, 2, 0, 0, 3, 4], [3, 4, 1, 2, 5, 6], [5, 6, 3, 4, 0, 0]]
    assert stacking.beside_neighbours(numpy.zeros((1, 2))).tolist() == [[0.0] * 6]
    assert stacking.beside_neighbours(numpy.zeros((0, 4))).shape == (0, 12)
    with pytest.raises(ValueError, match=r"beside_neighbours: expected a \(sentences, width\) array"):
        stacking.beside_neighbours(numpy.zeros(3))


def test_stage2_matrix_lays_the_blocks_side_by_side():
    cues = [_cues(we=1), _cues()]
    context = stacking.introduction_context(cues, numpy.eye(2), numpy.array([1.0, 0.0]))
    with_cues = stacking.stage2_matrix([[0.7, 0.2]], context, cues)
    without = stacking.stage2_matrix([[0.7, 0.2]], context, None)
    relational = 2 * stacking.NEIGHBOURS + 6
    assert without.shape == (2, relational + context.shape[1])
    assert with_cues.shape == (2, without.shape[1] + 3 * len(CUE_PATTERNS))
    assert numpy.array_equal(with_cues[:, : without.shape[1]], without)
    assert with_cues[:, 0].tolist() == [0.7, 0.2]


def test_introduction_context_of_an_empty_introduction():
    assert stacking.introduction_context([], numpy.zeros((0, 4)), numpy.ones(4)).shape == (0, 8 + 2 * len(CUE_PATTERNS))


def test_id_folds_are_the_benchmarks_grouped_folds():
    from types import SimpleNamespace

    from scholarly_contribution_detector.data import grouped_folds, id_folds

    ids = [f"paper{i}" for i in range(11)]
    folds = id_folds(ids + ids[:3], 3, seed=4)  # a paper listed twice is one paper
    assert sorted(i for fold in folds for i in fold) == sorted(ids)
    assert sorted(len(f) for f in folds) == [3, 4, 4]
    assert folds == grouped_folds([SimpleNamespace(paper_id=i) for i in reversed(ids)], 3, seed=4)
    assert folds != id_folds(ids, 3, seed=5)
    for bad in (1, 12):
        with pytest.raises(ValueError, match="k="):
            id_folds(ids, bad, seed=0)


# --------------------------------------------------------------------------- the component

@pytest.fixture(scope="module")
def ncg_docs():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        papers = list(iter_ncg_papers(shared("nlpcontributiongraph")))[::5][:24]
    vocab = scholarly_nlp.blank().vocab
    docs = [ncg_doc(p, vocab) for p in papers]
    return [d for d in docs if d._.contribution_gold]


@pytest.fixture(scope="module")
def stacked(ncg_docs, backbone):
    """A detector trained on 18 NCG papers, its stage 2 fitted on their stage-1 scores (in-sample:
    the mechanics, not a measurement), and the 6 papers it never saw."""
    nlp = train(ncg_docs[:18], epochs=3, sentence_encoder=backbone)
    detector = nlp.get_pipe("contribution_detector")
    assert not detector.has_stage2
    stage1 = [probs for _, probs in detector.predict_stage1(ncg_docs[:18])]
    fitted = detector.fit_stage2(ncg_docs[:18], stage1, seed=0)
    return nlp, ncg_docs[18:], fitted


def test_an_unfitted_stage2_leaves_stage1_alone(ncg_docs, backbone):
    nlp = train(ncg_docs[:6], epochs=1, sentence_encoder=backbone)
    detector = nlp.get_pipe("contribution_detector")
    assert nlp.config["components"]["contribution_detector"]["stage2"]["@architectures"] == "scholarly_nlp.BoostedTrees.v1"
    both, first = detector.predict(ncg_docs[6:8]), detector.predict_stage1(ncg_docs[6:8])
    assert all(numpy.array_equal(a[1], b[1]) for a, b in zip(both, first))
    assert detector._encoder is None  # no stage 2, no encoder loaded


def test_fit_stage2_learns_from_every_introduction_sentence(stacked, ncg_docs):
    nlp, _, fitted = stacked
    gold = [g for d in ncg_docs[:18] for g in d._.contribution_gold]
    outcome = fitted.pop("embedding_scorer")
    assert fitted.pop("tagger") is None  # no tagger configured
    assert fitted == {"papers": 18, "sentences": len(gold), "positives": sum(int(g["label"]) for g in gold)}
    detector = nlp.get_pipe("contribution_detector")
    # the reported outcomes are those of the out-of-fold probabilities stage 2 learnt from
    docs = ncg_docs[:18]
    labels = [numpy.array([int(g["label"]) for g in d._.contribution_gold]) for d in docs]
    oof = numpy.concatenate(detector.out_of_fold_embedding_probs(docs, detector.embed_introductions(docs), labels,
                                                                 folds=5, seed=0)) >= 0.5
    truth = numpy.concatenate(labels).astype(bool)
    assert outcome == {"tp": int((oof & truth).sum()), "fp": int((oof & ~truth).sum()), "fn": int((~oof & truth).sum())}
    assert outcome["tp"] > 0
    assert detector.has_stage2 and detector.stage2_uses_embeddings and has_weights(detector.embedding_scorer)
    # two probability sets (embedding scorer, n-grams) and the introduction context (no cue window)
    width = 2 * (2 * stacking.NEIGHBOURS + 6) + 8 + 2 * len(CUE_PATTERNS) + stacking.ABSTRACT_COLUMNS
    assert detector.stage2.get_dim("nI") == width == detector.stage2_width()
    dim = detector.sentence_vectors(["x"]).shape[1]
    assert detector.embedding_scorer.get_dim("nI") == 3 * dim + stacking.SENTENCE_CONTEXT_WIDTH


def test_predict_rescores_with_stage2(stacked):
    nlp, unseen, _ = stacked
    detector = nlp.get_pipe("contribution_detector")
    first = detector.predict_stage1(unseen)
    both = detector.predict(unseen)
    matrices = detector.stage2_features(unseen, [p for _, p in first], embeddings=True, abstract=True)
    for (spans1, p1), (spans2, p2), matrix in zip(first, both, matrices):
        assert [s.start for s in spans1] == [s.start for s in spans2]
        expected = detector.stage2.predict(matrix.astype("float32"))[:, 0]
        assert p2 == pytest.approx(expected, abs=1e-6)
        assert ((p2 >= 0) & (p2 <= 1)).all()
    assert not all(numpy.allclose(p1, p2) for (_, p1), (_, p2) in zip(first, both))
    # the pipe's annotations are the rescored probabilities
    doc = nlp(unseen[0].copy())
    assert doc._.contribution_scores == pytest.approx([float(p) for p in both[0][1]])


def test_count_outcomes_without_annotations_predicts_both_stages(stacked):
    nlp, unseen, _ = stacked
    detector = nlp.get_pipe("contribution_detector")
    annotated = [Example(nlp(d.copy()), d) for d in unseen]
    bare = [Example(d.copy(), d) for d in unseen]
    assert all(eg.predicted._.contribution_sentence_offsets is None for eg in bare)
    assert detector.count_outcomes(bare) == detector.count_outcomes(annotated)


def test_a_doc_without_an_introduction_gets_empty_output_after_stage2(stacked):
    nlp, unseen, _ = stacked
    plain = nlp(nlp.make_doc("A text with no sections at all."))
    assert plain._.contribution_scores == [] and plain._.contribution_sentence_offsets == []
    # and in a batch with a paper, the paper is still rescored
    detector = nlp.get_pipe("contribution_detector")
    batch = detector.predict([nlp.make_doc("No sections."), unseen[0]])
    assert len(batch[0][1]) == 0
    assert batch[1][1] == pytest.approx(detector.predict([unseen[0]])[0][1])


def test_stage2_features_are_the_benchmarks(stacked):
    """The shipped detector computes the rows the stacking benchmark measured: cue flags of the
    NCG rows, and the title of ``paper_title`` (the title sentences, not the marker)."""
    from scholarly_contribution_detector.data import paper_rows

    nlp, _, _ = stacked
    detector = nlp.get_pipe("contribution_detector")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        papers = list(iter_ncg_papers(shared("nlpcontributiongraph")))[::5][:3]
    for paper in papers:
        doc = ncg_doc(paper, nlp.vocab)
        rows = [r for r in paper_rows(paper) if r.in_introduction]
        probs = numpy.linspace(0.1, 0.9, len(rows))
        (ours,) = detector.stage2_features([doc], [probs], abstract=False)
        title = " ".join(t for t, section, heading in zip(paper.sentences, paper.sections, paper.is_heading)
                         if section == "title" and not heading)
        vectors = detector.sentence_vectors([title] + [r.sentence for r in rows])
        cues = [r.cues for r in rows]
        theirs = stacking.stage2_matrix([probs], stacking.introduction_context(cues, vectors[1:], vectors[0]),
                                        cues if detector.stage2_cue_window else None)
        assert ours.shape == theirs.shape and ours == pytest.approx(theirs, abs=1e-5)
        # with the abstract: the benchmark's abstract sentences (section "abstract", no heading)
        (with_abstract,) = detector.stage2_features([doc], [probs], abstract=True)
        abstract = [t for t, section, heading in zip(paper.sentences, paper.sections, paper.is_heading)
                    if section == "abstract" and not heading]
        assert abstract
        expected = stacking.abstract_similarity(vectors[1:], detector.sentence_vectors(abstract))
        assert with_abstract[:, : ours.shape[1]] == pytest.approx(ours, abs=1e-6)
        assert with_abstract[:, ours.shape[1] :] == pytest.approx(expected, abs=1e-5)


def test_a_fitted_stage2_refuses_other_features_and_warns_of_another_encoder(stacked, monkeypatch):
    nlp, unseen, _ = stacked
    detector = nlp.get_pipe("contribution_detector")
    monkeypatch.setattr(detector, "stage2_cue_window", True)
    with pytest.raises(ValueError, match="stage2_cue_window=False"):
        detector.predict(unseen[:1])
    monkeypatch.setattr(detector, "stage2_cue_window", False)
    monkeypatch.setattr(detector, "sentence_encoder", "some-other-encoder")
    with pytest.warns(UserWarning, match="some-other-encoder"):
        detector.check_stage2()


def test_stage2_survives_disk_and_bytes(stacked, tmp_path):
    nlp, unseen, _ = stacked
    expected = [p for _, p in nlp.get_pipe("contribution_detector").predict(unseen)]
    nlp.to_disk(tmp_path / "pipeline")
    assert (tmp_path / "pipeline" / "contribution_detector" / "stage2").is_file()
    assert (tmp_path / "pipeline" / "contribution_detector" / "embedding_scorer").is_file()
    loaded = spacy.load(tmp_path / "pipeline").get_pipe("contribution_detector")
    assert loaded.has_stage2
    assert all(numpy.allclose(a, b) for a, b in zip(expected, [p for _, p in loaded.predict(unseen)]))
    blank = scholarly_nlp.blank()
    blank.add_pipe("contribution_detector", config={"sentence_encoder": loaded.sentence_encoder})
    blank.get_pipe("contribution_detector").from_bytes(nlp.get_pipe("contribution_detector").to_bytes())
    restored = blank.get_pipe("contribution_detector")
    assert restored.has_stage2 and has_weights(restored.embedding_scorer)
    assert all(numpy.allclose(a, b) for a, b in zip(expected, [p for _, p in restored.predict(unseen)]))


def test_loading_a_detector_saved_without_stage2_drops_the_trees(stacked, ncg_docs, backbone, tmp_path):
    """A folder or bytes written before stage 2 existed (spaCy's plain TrainablePipe format)
    load, and leave no trees from before."""
    from spacy.pipeline import TrainablePipe

    nlp, unseen, _ = stacked
    old = train(ncg_docs[:4], epochs=1, sentence_encoder=backbone)
    old_detector = old.get_pipe("contribution_detector")
    old_bytes = TrainablePipe.to_bytes(old_detector)
    fitted_bytes = nlp.get_pipe("contribution_detector").to_bytes()
    target = scholarly_nlp.blank()
    target.add_pipe("contribution_detector", config={"sentence_encoder": backbone})
    detector = target.get_pipe("contribution_detector")
    detector.from_bytes(fitted_bytes)
    assert detector.has_stage2
    detector.from_bytes(old_bytes)
    assert not detector.has_stage2
    assert detector.predict(unseen[:1])[0][1] == pytest.approx(old_detector.predict(unseen[:1])[0][1])
    old.to_disk(tmp_path / "old")
    detector.from_bytes(fitted_bytes)
    detector.from_disk(tmp_path / "old" / "contribution_detector", exclude=["vocab"])
    assert not detector.has_stage2
    # saving an unfitted detector over a fitted one's folder leaves no stale trees behind
    nlp.to_disk(tmp_path / "fitted")
    assert (tmp_path / "fitted" / "contribution_detector" / "stage2").exists()
    old_detector.to_disk(tmp_path / "fitted" / "contribution_detector", exclude=["vocab"])
    assert not (tmp_path / "fitted" / "contribution_detector" / "stage2").exists()


def test_stage2_must_be_boosted_trees():
    nlp = scholarly_nlp.blank()
    with pytest.raises(ValueError, match="BoostedTrees"):
        nlp.add_pipe("contribution_detector", config={"stage2": {"@architectures": "spacy.LinearLogistic.v1", "nO": 1}})


def test_fit_stage2_refuses_misaligned_scores_and_missing_gold(stacked):
    nlp, unseen, _ = stacked
    detector = nlp.get_pipe("contribution_detector")
    probs = [p for _, p in detector.predict_stage1(unseen[:2])]
    paper_id = unseen[0]._.paper_meta["paper_id"]
    with pytest.raises(ValueError, match=f"{len(probs[0]) - 1} stage-1 probabilities .*{paper_id}"):
        detector.fit_stage2(unseen[:2], [probs[0][:-1], probs[1]])
    stripped = unseen[0].copy()
    stripped._.contribution_gold = stripped._.contribution_gold[1:]
    with pytest.raises(ValueError, match="no gold label"):
        detector.fit_stage2([stripped, unseen[1]], probs)


# --------------------------------------------------------------------------- out of fold

@pytest.mark.slow
def test_out_of_fold_scores_never_score_a_paper_a_model_was_trained_on(ncg_docs, monkeypatch):
    from pathlib import Path

    from scholarly_contribution_detector.data import id_folds

    config = Path(__file__).resolve().parents[1] / PROJECT_CONFIG
    runs = []  # per stage-1 model: (paper ids it trained on, paper ids it scored)
    original = stacking.train_stage1

    def recording(docs, *args, **kwargs):
        nlp = original(docs, *args, **kwargs)
        trained = {d._.paper_meta["paper_id"] for d in docs}
        detector = nlp.get_pipe("contribution_detector")
        predict = detector.predict_stage1

        def scoring(scored_docs):
            runs.append((trained, {d._.paper_meta["paper_id"] for d in scored_docs}))
            return predict(scored_docs)

        detector.predict_stage1 = scoring
        return nlp

    monkeypatch.setattr(stacking, "train_stage1", recording)
    docs = ncg_docs[:6]
    ids = [d._.paper_meta["paper_id"] for d in docs]
    scores = stacking.out_of_fold_scores(docs, config, folds=3, steps=2, seed=0)
    assert len(runs) == 3
    for trained, scored in runs:
        assert not trained & scored and trained | scored == set(ids)
    assert sorted(map(sorted, (scored for _, scored in runs))) == sorted(map(sorted, id_folds(ids, 3, seed=0)))
    for doc, probs in zip(docs, scores):
        assert len(probs) == len(doc._.contribution_gold)
        assert ((probs >= 0) & (probs <= 1)).all()


def test_training_stage1_again_drops_the_trees_it_was_fitted_on(stacked, ncg_docs, tmp_path):
    """Trees fitted on one stage 1's scores are wrong for another: ``update`` and ``initialize``
    drop them, with a warning."""
    from thinc.api import Adam

    nlp, _, _ = stacked
    nlp.to_disk(tmp_path / "stacked")
    copy = spacy.load(tmp_path / "stacked")
    detector = copy.get_pipe("contribution_detector")
    assert detector.has_stage2
    with pytest.warns(UserWarning, match="update changes stage 1"):
        copy.update([Example(d.copy(), d) for d in ncg_docs[:2]], sgd=Adam(0.001))
    assert not detector.has_stage2
    detector.from_disk(tmp_path / "stacked" / "contribution_detector", exclude=["vocab"])
    assert detector.has_stage2
    with pytest.warns(UserWarning, match="initialize changes stage 1"):
        detector.initialize(lambda: [Example(d.copy(), d) for d in ncg_docs[:2]])
    assert not detector.has_stage2


def test_loading_trees_of_another_width_over_fitted_ones(stacked, backbone):
    """Bytes of a detector fitted with the cue window load over one fitted without it (and back),
    and the config's switch is then checked against what the trees record."""
    nlp, unseen, _ = stacked
    fitted_bytes = nlp.get_pipe("contribution_detector").to_bytes()
    other = scholarly_nlp.blank()
    other.add_pipe("contribution_detector", config={"sentence_encoder": backbone, "stage2_cue_window": True})
    wide = other.get_pipe("contribution_detector")
    wide.from_bytes(fitted_bytes)
    stage1 = [p for _, p in wide.predict_stage1(unseen)]
    wide.fit_stage2(unseen, stage1)
    narrow = nlp.get_pipe("contribution_detector")
    assert wide.stage2.get_dim("nI") == wide.stage2_width() == narrow.stage2_width() + 3 * len(CUE_PATTERNS)
    copy = scholarly_nlp.blank()
    copy.add_pipe("contribution_detector", config={"sentence_encoder": backbone})
    target = copy.get_pipe("contribution_detector")
    target.from_bytes(wide.to_bytes())
    assert target.stage2.get_dim("nI") == wide.stage2_width()
    with pytest.raises(ValueError, match="stage2_cue_window=True"):
        target.predict(unseen[:1])
    target.from_bytes(fitted_bytes)  # a narrower ensemble replaces the wider one
    assert target.stage2.get_dim("nI") == narrow.stage2_width()
    target.predict(unseen[:1])
    assert narrow.has_stage2


def test_the_shipped_detector_carries_its_fitted_stage2():
    from conftest import REPO

    from scholarly_contribution_detector.tagger import has_introduction_tagger

    pipeline = REPO / "pipelines" / "scholarly_core" / "scholarly_core" / "pipeline"
    config = spacy.util.load_config(pipeline / "config.cfg")["components"]["contribution_detector"]
    nlp = scholarly_nlp.blank()
    detector = nlp.add_pipe("contribution_detector", config={k: v for k, v in config.items() if k != "factory"})
    detector.from_disk(pipeline / "contribution_detector", exclude=["vocab"])
    assert detector.has_stage2
    assert detector.stage2.attrs["cue_window"] is False and detector.stage2.attrs["sentence_encoder"] == "all-MiniLM-L6-v2"
    assert detector.stage2_uses_embeddings and has_weights(detector.embedding_scorer)
    # the third scorer: the fine-tuned introduction tagger, a LoRA adapter over the packaged MiniLM
    assert detector.stage2_uses_tagger and has_introduction_tagger(detector.tagger)
    assert detector.tagger.attrs["backbone"] == "all-MiniLM-L6-v2"
    assert detector.stage2.get_dim("nI") == detector.stage2_width()
    detector.check_stage2()  # the shipped config matches what the trees were fitted with


# --------------------------------------------------------------------------- the embedding scorer

def test_the_embedding_scorer_is_scored_out_of_fold(stacked):
    """Stage 2 learns from embedding-scorer probabilities of papers that scorer never saw: each
    fold's probabilities are those of a regression fitted on the other folds only."""
    from scholarly_contribution_detector.data import id_folds

    nlp, unseen, _ = stacked
    detector = nlp.get_pipe("contribution_detector")
    docs = unseen[:6]
    embedded = detector.embed_introductions(docs)
    labels = [numpy.array([int(g["label"]) for g in d._.contribution_gold]) for d in docs]
    oof = detector.out_of_fold_embedding_probs(docs, embedded, labels, folds=3, seed=1)
    ids = [d._.paper_meta["paper_id"] for d in docs]
    rows = detector.embedding_features(docs, embedded)
    assert all(numpy.array_equal(r[:, : 3 * v.shape[1]], stacking.neighbour_vectors(v)) for r, (_, _, v, _) in zip(rows, embedded))
    for fold in id_folds(ids, 3, seed=1):
        train_rows = [i for i, pid in enumerate(ids) if pid not in fold]
        alone = fit_logistic_regression(LogisticRegression(C=detector.embedding_scorer.attrs["C"]),
                                        numpy.vstack([rows[i] for i in train_rows]),
                                        numpy.concatenate([labels[i] for i in train_rows]), seed=1)
        for i, pid in enumerate(ids):
            if pid in fold:
                assert oof[i] == pytest.approx(alone.predict(rows[i])[:, 0], abs=1e-6)
    # the pipe's own fitted scorer is untouched by the folds (fitted on the 18 training papers)
    assert detector.embedding_scorer.get_param("W").shape[1] == rows[0].shape[1]
    assert not numpy.allclose(detector.embedding_probs(docs, embedded)[0], oof[0])


def test_stage2_without_an_embedding_scorer(ncg_docs, backbone):
    """``embedding_scorer = null`` fits stage 2 on the n-gram probabilities alone; a detector
    configured with a scorer loads such trees (as it loads those shipped before the scorer)
    and leaves its unfitted scorer out."""
    nlp = train(ncg_docs[:12], epochs=1, sentence_encoder=backbone, embedding_scorer=None)
    detector = nlp.get_pipe("contribution_detector")
    stage1 = [p for _, p in detector.predict_stage1(ncg_docs[:12])]
    fitted = detector.fit_stage2(ncg_docs[:12], stage1, folds=3)
    assert fitted["embedding_scorer"] is None
    assert not detector.stage2_uses_embeddings
    assert detector.stage2.get_dim("nI") == detector.stage2_width() == detector.stage2_width(True) - (2 * stacking.NEIGHBOURS + 6)
    expected = detector.predict(ncg_docs[12:14])
    other = scholarly_nlp.blank()
    configured = other.add_pipe("contribution_detector", config={"sentence_encoder": backbone})
    configured.from_bytes(detector.to_bytes())
    assert configured.has_stage2 and not configured.stage2_uses_embeddings
    assert not has_weights(configured.embedding_scorer)
    for (_, a), (_, b) in zip(expected, configured.predict(ncg_docs[12:14])):
        assert a == pytest.approx(b, abs=1e-6)


def test_old_trees_load_over_trees_fitted_with_embeddings(stacked, ncg_docs, backbone):
    """Trees saved before they recorded ``embedding_scorer`` load over a detector whose trees were
    fitted with the scorer, and run on the n-gram scores alone: thinc keeps attrs that loaded
    bytes lack, so the old record must not leak. (These trees do read the abstract; trees from
    before the ``abstract`` record: ``test_trees_fitted_before_the_abstract_cosines_run_without_them``.)"""
    nlp, unseen, _ = stacked
    old = train(ncg_docs[:12], epochs=1, sentence_encoder=backbone, embedding_scorer=None)
    old_detector = old.get_pipe("contribution_detector")
    old_detector.fit_stage2(ncg_docs[:12], [p for _, p in old_detector.predict_stage1(ncg_docs[:12])], folds=3)
    del old_detector.stage2.attrs["embedding_scorer"]  # as trees saved before the record existed
    old_bytes = old_detector.to_bytes()
    target = scholarly_nlp.blank().add_pipe("contribution_detector", config={"sentence_encoder": backbone})
    target.from_bytes(nlp.get_pipe("contribution_detector").to_bytes())
    assert target.stage2_uses_embeddings
    target.from_bytes(old_bytes)
    assert target.has_stage2 and not target.stage2_uses_embeddings
    assert "embedding_scorer" not in target.stage2.attrs
    for (_, a), (_, b) in zip(target.predict(unseen[:2]), old_detector.predict(unseen[:2])):
        assert a == pytest.approx(b, abs=1e-6)


def test_trees_fitted_with_embeddings_need_the_fitted_scorer(stacked, backbone):
    nlp, unseen, _ = stacked
    data = srsly.msgpack_loads(nlp.get_pipe("contribution_detector").to_bytes())
    data["embedding_scorer"] = None
    other = scholarly_nlp.blank()
    detector = other.add_pipe("contribution_detector", config={"sentence_encoder": backbone})
    detector.from_bytes(srsly.msgpack_dumps(data))
    assert detector.has_stage2 and detector.stage2_uses_embeddings
    with pytest.raises(ValueError, match="no fitted embedding_scorer"):
        detector.predict(unseen[:1])
    nowhere = scholarly_nlp.blank()
    without = nowhere.add_pipe("contribution_detector", config={"sentence_encoder": backbone, "embedding_scorer": None})
    with pytest.raises(ValueError, match="holds a fitted embedding_scorer but the config has no embedding_scorer"):
        without.from_bytes(nlp.get_pipe("contribution_detector").to_bytes())


def test_embedding_scorer_must_be_a_logistic_regression():
    nlp = scholarly_nlp.blank()
    with pytest.raises(ValueError, match="LogisticRegression"):
        nlp.add_pipe("contribution_detector", config={"embedding_scorer": {"@architectures": "scholarly_nlp.BoostedTrees.v1"}})


def test_the_sentence_encoder_follows_the_pipe_onto_the_gpu(monkeypatch):
    """The frozen encoder of stage 2 runs where the pipe's thinc model runs (after
    ``spacy.require_gpu(n)``, thinc's ops are on GPU n), not always on the CPU."""
    from types import SimpleNamespace

    detector = scholarly_nlp.blank().add_pipe("contribution_detector")
    assert detector.encoder_device() is None
    monkeypatch.setattr(detector.model, "ops", SimpleNamespace(device_type="gpu", device_id=1))
    assert detector.encoder_device() == "cuda:1"


def test_sentence_context_is_the_baselines_dense_context():
    """The embedding scorer's context columns equal the dense features of the TF-IDF baseline's
    Featurizer (what ``benchmarks/contribution_detector_embeddings.py`` measured as
    ``embedding_context``) on the introduction rows of real NCG papers."""
    from scholarly_contribution_detector.baselines import Featurizer
    from scholarly_contribution_detector.data import paper_rows
    from scholarly_contribution_detector.features import introduction_features

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        papers = list(iter_ncg_papers(shared("nlpcontributiongraph")))[1::9][:12]
    vocab = scholarly_nlp.blank().vocab
    checked = 0
    for paper in papers:
        rows = [r for r in paper_rows(paper) if r.in_introduction]
        doc = ncg_doc(paper, vocab)
        ours = stacking.sentence_context(doc, introduction_features(doc)[0])
        assert ours.shape == (len(rows), stacking.SENTENCE_CONTEXT_WIDTH)
        assert ours == pytest.approx(Featurizer(context=True)._dense(rows))
        checked += len(rows)
    assert checked > 200
    # a TEI paper gets the same columns from its own headings: its introduction's kind, paper
    # positions that grow, the cue flags of each sentence and of the one before it
    doc = scholarly_nlp.read(shared("tei", "acl", "D14-1205.tei.xml"))
    sentences = introduction_features(doc)[0]
    context = stacking.sentence_context(doc, sentences)
    kinds = [kind for kind, _ in SECTION_KINDS] + ["other"]
    assert len(sentences) > 5 and (context[:, kinds.index("introduction")] == 1).all()
    bins = context[:, len(kinds) : len(kinds) + 10].argmax(axis=1)
    assert (numpy.diff(bins) >= 0).all() and bins[0] <= 2
    cues_at = len(kinds) + 13
    for span, row in zip(sentences[1:], context[1:]):
        assert row[cues_at : cues_at + len(CUE_PATTERNS)].tolist() == list(cue_flags(span.text).values())
    # without heading spans, a sentence's section is the title of the section span that holds it
    headless = doc.copy()
    headless.spans["section_heads"] = []
    fallback = stacking.sentence_context(headless, introduction_features(headless)[0])
    assert len(fallback) == len(sentences) and (fallback[:, kinds.index("introduction")] == 1).all()


def test_abstract_similarity_columns_from_hand_checked_vectors():
    sentences = numpy.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]])
    abstract = numpy.array([[1.0, 0.0], [0.8, 0.6]])
    out = stacking.abstract_similarity(sentences, abstract)
    assert out.shape == (3, stacking.ABSTRACT_COLUMNS)
    assert out[:, 0] == pytest.approx([1.0, 0.6, 0.96])  # best cosine to an abstract sentence
    assert out[:, 1] == pytest.approx([0.9, 0.3, 0.78])  # mean of the two best
    assert out[:, 2].tolist() == [1.0, 1.0, 1.0] and out[:, 3].tolist() == [1.0, 1.0, 1.0]
    assert out[:, 4] == pytest.approx([1.0, 0.6, 0.96])  # ratio to the introduction's highest
    assert stacking.abstract_similarity(sentences, numpy.zeros((0, 2))).tolist() == [[0.0] * 5] * 3
    assert stacking.abstract_similarity(numpy.zeros((0, 2)), abstract).shape == (0, 5)
    # ranks: 7 sentences at angles 0..60 degrees from the one abstract sentence (1, 0)
    angles = numpy.radians(numpy.array([30, 0, 60, 10, 50, 20, 40]))
    ranked = stacking.abstract_similarity(numpy.column_stack([numpy.cos(angles), numpy.sin(angles)]), abstract[:1])
    assert ranked[:, 2].tolist() == [0, 1, 0, 1, 0, 1, 0]  # the 3 closest: 0, 10, 20 degrees
    assert ranked[:, 3].tolist() == [1, 1, 0, 1, 1, 1, 1]  # all but the farthest (60 degrees)
    assert stacking.abstract_similarity(numpy.array([[-1.0, 0.0]]), abstract[:1])[0, 4] == 0.0  # no blow-up


def test_embed_introductions_slices_each_docs_abstract_from_one_batch(stacked):
    """A batch of a doc without sections, a paper without its abstract span and two papers:
    each paper's abstract vectors are those of its own abstract sentences."""
    nlp, unseen, _ = stacked
    detector = nlp.get_pipe("contribution_detector")
    no_abstract = unseen[1].copy()
    no_abstract.spans["abstract"] = []
    docs = [nlp.make_doc("No sections at all."), unseen[0], no_abstract, unseen[2]]
    assert scholarly_nlp.abstract_sentences(unseen[0]) and scholarly_nlp.abstract_sentences(unseen[2])
    embedded = detector.embed_introductions(docs)
    assert embedded[0][0] == [] and embedded[0][3].shape[0] == 0
    assert embedded[2][3].shape[0] == 0 and len(embedded[2][0]) > 0
    for doc, (spans, _, vectors, abstract) in zip(docs, embedded):
        if doc is not docs[0]:
            assert vectors == pytest.approx(detector.sentence_vectors([s.text for s in spans]), abs=1e-5)
        texts = [s.text for s in scholarly_nlp.abstract_sentences(doc)] if doc is not no_abstract else []
        if texts:
            assert abstract == pytest.approx(detector.sentence_vectors(texts), abs=1e-5)
    assert all(len(e[3]) == 0 for e in detector.embed_introductions(docs, abstract=False))


def test_trees_fitted_before_the_abstract_cosines_run_without_them(stacked, backbone):
    """Trees saved before stage 2 read the abstract (no ``abstract`` record) run on the features
    they were fitted on, also when loaded over trees that record it (thinc keeps attrs that
    loaded bytes lack, so the newer record must not leak)."""
    from scholarly_nlp.ml import fit_boosted_trees

    nlp, unseen, _ = stacked
    detector = nlp.get_pipe("contribution_detector")
    assert detector.stage2_uses_abstract and detector.stage2.attrs["abstract"] is True
    stage1 = [p for _, p in detector.predict_stage1(unseen)]
    rows = detector.stage2_features(unseen, stage1, embeddings=True, abstract=False)
    labels = numpy.zeros(sum(len(r) for r in rows), dtype=int)
    labels[::4] = 1
    old_trees = fit_boosted_trees(detector.stage2.copy(), numpy.vstack(rows), labels, seed=0)
    del old_trees.attrs["abstract"]  # as trees saved before the record existed
    data = srsly.msgpack_loads(detector.to_bytes())
    data["stage2"] = old_trees.to_bytes()
    target = scholarly_nlp.blank().add_pipe("contribution_detector", config={"sentence_encoder": backbone})
    target.from_bytes(detector.to_bytes())
    assert target.stage2_uses_abstract
    target.from_bytes(srsly.msgpack_dumps(data))
    assert target.has_stage2 and not target.stage2_uses_abstract and "abstract" not in target.stage2.attrs
    assert target.stage2.get_dim("nI") == target.stage2_width(True, abstract=False) == rows[0].shape[1]
    for (_, got), matrix in zip(target.predict(unseen), rows):
        assert got == pytest.approx(old_trees.predict(matrix.astype("float32"))[:, 0], abs=1e-6)
