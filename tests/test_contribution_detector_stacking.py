"""``benchmarks/contribution_detector_stacking.py`` computes what the contribution_linker
README reports: stage-2 features from hand-checked arrays, out-of-fold scores that never
come from a model fitted on the same paper, and a small end-to-end run on real NCG papers
(with a stand-in encoder) whose choice rests on the training papers only."""

from __future__ import annotations

import hashlib

import numpy
import pytest
from conftest import benchmark_modules, shared


@pytest.fixture(scope="module")
def stacking():
    with benchmark_modules("contribution_detector_stacking") as (module,):
        yield module


def test_split_by_paper_refuses_misaligned_scores(stacking):
    rows_of = {"a": [0, 1], "b": [2]}
    assert {k: v.tolist() for k, v in stacking.split_by_paper(numpy.arange(3), ["a", "b"], rows_of).items()} == \
        {"a": [0, 1], "b": [2]}
    with pytest.raises(ValueError, match="4 scores for 3 rows"):
        stacking.split_by_paper(numpy.arange(4), ["a", "b"], rows_of)


def test_out_of_fold_never_fits_on_the_scored_paper(stacking):
    seen = []

    def predict(train_ids, test_ids):
        seen.append((set(train_ids), set(test_ids)))
        return {pid: numpy.array([len(train_ids)]) for pid in test_ids}

    out = stacking.out_of_fold(list("abcdef"), [{"a", "b"}, {"c", "d"}, {"e", "f"}], predict)
    assert sorted(out) == list("abcdef")
    assert all(not (train & test) and train | test == set("abcdef") for train, test in seen)


def test_paired_bootstrap_identical_systems(stacking):
    outcome = numpy.array([[3, 1, 2], [1, 0, 1], [2, 2, 0]])
    result = stacking.paired_bootstrap(outcome, outcome)
    assert result["delta"] == 0.0 and result["ci_low"] == result["ci_high"] == 0.0
    assert result["p_not_better"] == 1.0


def test_paired_bootstrap_is_ours_minus_theirs(stacking):
    better, worse = numpy.array([[3, 0, 0]] * 5), numpy.array([[1, 2, 2]] * 5)
    result = stacking.paired_bootstrap(better, worse)
    assert result["delta"] == pytest.approx(1.0 - 1 / 3)
    assert result["ci_low"] > 0 and result["p_not_better"] == 0.0
    assert stacking.paired_bootstrap(worse, better)["delta"] == pytest.approx(-result["delta"])


@pytest.mark.needs_data("nlpcontributiongraph")
def test_paper_title_is_the_title_not_the_marker(stacking):
    from scholarly_nlp.readers import iter_ncg_papers

    paper = next(iter(iter_ncg_papers(shared("nlpcontributiongraph", "natural_language_inference"))))
    assert paper.sentences[0] == "title"
    assert stacking.paper_title(paper) == "Large - scale Simple Question Answering with Memory Networks"


class HashEncoder:
    """A stand-in sentence encoder: a fixed unit vector per distinct text."""

    def encode(self, texts):
        rows = []
        for text in texts:
            seed = int(hashlib.sha1(text.encode()).hexdigest()[:8], 16)
            vector = numpy.random.default_rng(seed).standard_normal(8)
            rows.append(vector / numpy.linalg.norm(vector))
        return numpy.asarray(rows, dtype=numpy.float32)


@pytest.mark.slow
def test_run_on_real_ncg_papers(stacking):
    from scholarly_contribution_detector.data import grouped_split, paper_rows
    from scholarly_contribution_detector.stacking import introduction_context
    from scholarly_nlp.readers import iter_ncg_papers

    papers = list(iter_ncg_papers(shared("nlpcontributiongraph", "natural_language_inference")))[:16]
    train, held_out = grouped_split(papers)
    rows_of = {p.paper_id: [r for r in paper_rows(p) if r.in_introduction] for p in papers}
    papers = [p for p in papers if rows_of[p.paper_id]]
    train = [p for p in train if rows_of[p.paper_id]]
    held_ids = [p.paper_id for p in held_out if rows_of[p.paper_id]]
    encoder = HashEncoder()
    ids = [p.paper_id for p in papers]
    emb_of = stacking.split_by_paper(stacking.neighbour_embeddings([rows_of[pid] for pid in ids], encoder), ids, rows_of)
    titles = encoder.encode([stacking.paper_title(p) for p in papers])
    cues = {pid: [row.cues for row in rows_of[pid]] for pid in ids}
    context = {pid: introduction_context(cues[pid], emb_of[pid][:, :8], t) for pid, t in zip(ids, titles)}
    stacker = stacking.Stacker([p.paper_id for p in train], held_ids, rows_of, emb_of, context, cues)

    fitted_on = []  # paper ids every stage-1 model, stage-2 model and C choice was fitted on
    stage1, stage2, choose_c = stacker.stage1, stacker.stage2, stacking.choose_c
    stacker.stage1 = lambda name, tr, te: fitted_on.append(set(tr)) or stage1(name, tr, te)
    stacker.stage2 = lambda inputs, tr, *rest: fitted_on.append(set(tr)) or stage2(inputs, tr, *rest)

    def recording_choose_c(papers_, *rest):
        fitted_on.append({p.paper_id for p in papers_})
        return choose_c(papers_, *rest)

    stacking.choose_c = recording_choose_c
    try:
        candidates = [("tfidf_context", False, "fast"), ("tfidf_context+embedding", True, "fast")]
        report = stacking.run(stacker, train, seeds=[0], candidates=candidates)
    finally:
        stacking.choose_c = choose_c
    assert fitted_on and all(ids and not ids & set(held_ids) for ids in fitted_on)
    assert len(report["candidates"]) == 2 and set(report["C"]) == {"tfidf_context", "tfidf_context_embedding"}
    chosen = report["chosen"]["candidate"]
    best_cv = max(entry["train_cv"]["f1"] for entry in report["candidates"].values())
    assert report["candidates"][chosen]["train_cv"]["f1"] == best_cv
    assert report["chosen"]["first_seed"] == 0
    for entry in report["candidates"].values():
        assert 0.0 <= entry["held_out_f1_by_seed"]["0"] <= 1.0
    n_held_rows = sum(len(rows_of[pid]) for pid in held_ids)
    summary = report["chosen"]["held_out_first_seed"]
    assert summary["tp"] + summary["fp"] <= n_held_rows
    assert summary["tp"] + summary["fn"] == sum(r.label for pid in held_ids for r in rows_of[pid])


@pytest.mark.slow
def test_bow_stage1_is_the_project_recipe_without_held_out_papers(monkeypatch):
    """The TextCatBOW stage 1 of ``contribution_detector_stacking_bow.py`` trains the project's
    detector config on the given papers only and scores every held-out introduction sentence."""
    import spacy
    from scholarly_contribution_detector import stacking as stacking_module
    from scholarly_contribution_detector.data import paper_rows
    from scholarly_contribution_detector.ncg_docs import ncg_doc
    from scholarly_nlp.readers import iter_ncg_papers

    with benchmark_modules("contribution_detector_stacking_bow") as (bow,):
        papers = [p for p in list(iter_ncg_papers(shared("nlpcontributiongraph", "natural_language_inference")))[:8]]
        rows_of = {p.paper_id: [r for r in paper_rows(p) if r.in_introduction] for p in papers}
        papers = [p for p in papers if rows_of[p.paper_id]]
        nlp = spacy.blank("en")
        docs = {p.paper_id: ncg_doc(p, nlp) for p in papers}
        ids = [p.paper_id for p in papers]
        trained_on = []
        train_stage1 = stacking_module.train_stage1

        def recording(docs_, config, **kwargs):
            trained_on.append(docs_)
            assert config == bow.DETECTOR_CONFIG and kwargs["steps"] == 3
            return train_stage1(docs_, config, **kwargs)

        monkeypatch.setattr(stacking_module, "train_stage1", recording)
        stacker = bow.BowStacker(ids[:-2], ids[-2:], rows_of, {}, {}, {}, docs=docs, steps=3)
        stacker.prepare(bow.BOW, papers[:-2])
        assert stacker.c == {}  # the recipe has no regularisation to choose
        scores = stacker.stage1(bow.BOW, ids[:-2], ids[-2:])
    assert [len(d) for d in trained_on] == [len(ids) - 2]
    assert all(doc._.paper_meta["paper_id"] in ids[:-2] for doc in trained_on[0])
    assert set(scores) == set(ids[-2:])
    for pid in ids[-2:]:
        assert len(scores[pid]) == len(rows_of[pid])
        assert ((scores[pid] >= 0) & (scores[pid] <= 1)).all()
