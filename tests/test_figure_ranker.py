"""The figure_ranker component, its baselines and its evaluation, on real ACL TEI papers.

A tiny random-weight backbone keeps every test fast; the real MiniLM is not loaded here.
"""

from __future__ import annotations

import json
import re
import shutil

import numpy
import pytest
import spacy
import torch
from spacy.training import Example
from thinc.api import Adam, fix_random_seed
from transformers import AutoConfig

import scholarly_nlp
from scholarly_nlp import Block, FigureInfo, InlineRef, Paper, paper_to_doc
from scholarly_nlp.ml.backbones import make_tiny_backbone
from scholarly_nlp.ml.sentence_encoder import SentenceEncoder
from scholarly_figure_ranker.baselines import (
    MentionCountBaseline,
    PickFirstBaseline,
    RandomBaseline,
    ReferringTextBaseline,
    TfidfBaseline,
    ZeroShotBiEncoderBaseline,
    enumerate_random_metrics,
    expected_random_metrics,
)
from scholarly_figure_ranker.evaluation import evaluate_dir, evaluate_rankings, proxy_eval, read_gold
from scholarly_figure_ranker.texts import abstract_sentences, caption_text

from conftest import shared

# D14-1205: all figures captioned; D15-1126, D17-1001: one figure without caption text.
PAPERS = ["D14-1205", "D15-1126", "D17-1001", "P15-1059"]


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def tiny_backbone(tmp_path_factory):
    return make_tiny_backbone(tmp_path_factory.mktemp("backbones") / "tiny")


def ranker_config(backbone, **overrides) -> dict:
    model = {"@architectures": "scholarly_nlp.CrossEncoder.v1", "name": str(backbone), "max_length": 64}
    return {"model": model, **overrides}


def make_ranker_nlp(backbone, **overrides):
    """A blank pipeline with an initialised figure_ranker over the tiny backbone."""
    torch.manual_seed(0)  # the classification head is freshly initialised
    nlp = scholarly_nlp.blank()
    nlp.add_pipe("figure_ranker", config=ranker_config(backbone, **overrides))
    nlp.initialize(lambda: [Example(nlp.make_doc("x"), nlp.make_doc("x"))])
    return nlp


@pytest.fixture(scope="session")
def ranker_nlp(tiny_backbone):
    return make_ranker_nlp(tiny_backbone)


@pytest.fixture(scope="session")
def real_docs(ranker_nlp):
    tei = shared("tei", "acl")
    return [scholarly_nlp.read(tei / f"{pid}.tei.xml", nlp=ranker_nlp) for pid in PAPERS]


@pytest.fixture(scope="session")
def tiny_encoder(tiny_backbone):
    return SentenceEncoder(str(tiny_backbone), max_length=64)


@pytest.fixture(scope="session")
def dev_gold_path():
    return shared("gold", "central_figures_dev.jsonl")


def candidate_ids(doc) -> list[str]:
    return [f.id for f in doc._.figures if f.kind == "figure"]


def captioned_ids(doc) -> list[str]:
    return [f.id for f in doc._.figures if f.kind == "figure" and caption_text(f)]


# --------------------------------------------------------------------------- synthetic papers


def synthetic_paper(title: str = "Neural parsing of scientific papers", abstract: str = "", captions=()) -> Paper:
    """A small paper: optional title and abstract, one paragraph, one figure per caption text."""
    blocks = []
    if title:
        blocks.append(Block("title", title))
    if abstract:
        blocks.append(Block("abstract", abstract))
    paragraph = "We describe the parser in detail. Figure 1 shows the parser architecture and its layers."
    start = paragraph.index("Figure 1")
    refs = [InlineRef(start, start + len("Figure 1"), "figure", "fig_0")] if captions else []
    blocks.append(Block("paragraph", paragraph, refs=refs, section=None))
    figures = []
    for i, caption in enumerate(captions):
        blocks.append(Block("caption", caption, figure_id=f"fig_{i}"))
        figures.append(FigureInfo(id=f"fig_{i}", kind="figure", label=str(i + 1)))
    return Paper(paper_id="synthetic", source="synthetic", reader="test", blocks=blocks, figures=figures)


ABSTRACT = "We present a neural parser for scientific papers. It reads figures and their captions."
BAD_PAPERS = {
    "no_figures": dict(abstract=ABSTRACT),
    "one_figure": dict(abstract=ABSTRACT, captions=["Figure 1: The parser architecture."]),
    "no_abstract": dict(captions=["Figure 1: The neural parser.", "Figure 2: Parsing speed of papers."]),
    "no_abstract_no_title": dict(title="", captions=["Figure 1: The neural parser.", "Figure 2: Speed."]),
    "empty_captions": dict(abstract=ABSTRACT, captions=["", "Figure 2:"]),
    "some_empty_captions": dict(abstract=ABSTRACT, captions=["", "Figure 2: The parser.", "Fig. 3"]),
}


@pytest.fixture(scope="session")
def bad_docs(ranker_nlp):
    return {name: paper_to_doc(synthetic_paper(**kwargs), ranker_nlp) for name, kwargs in BAD_PAPERS.items()}


# --------------------------------------------------------------------------- the component


def test_component_scores_every_captioned_candidate(ranker_nlp, real_docs):
    for doc in real_docs:
        ranker_nlp(doc)
        scores = doc._.figure_scores
        assert set(scores) == set(captioned_ids(doc))
        assert all(numpy.isfinite(v) for v in scores.values())
        best = max(scores.values())
        assert doc._.central_figure == next(f for f in captioned_ids(doc) if scores[f] == best)
        ranking = doc._.figure_ranking
        assert sorted(ranking) == sorted(candidate_ids(doc))
        scored = ranking[: len(scores)]
        assert [scores[f] for f in scored] == sorted(scores.values(), reverse=True)
        assert ranking[len(scores):] == [f for f in candidate_ids(doc) if f not in scores]


def test_component_defined_results_for_bad_input(ranker_nlp, bad_docs):
    results = {name: ranker_nlp(doc) for name, doc in bad_docs.items()}
    assert results["no_figures"]._.figure_scores == {}
    assert results["no_figures"]._.central_figure is None
    assert results["no_figures"]._.figure_ranking == []
    assert set(results["one_figure"]._.figure_scores) == {"fig_0"}
    assert results["one_figure"]._.central_figure == "fig_0"
    assert abstract_sentences(results["no_abstract"]) == ["Neural parsing of scientific papers"]
    assert set(results["no_abstract"]._.figure_scores) == {"fig_0", "fig_1"}
    for name in ("no_abstract_no_title", "empty_captions"):  # nothing to score: document order
        assert results[name]._.figure_scores == {}
        assert results[name]._.central_figure == "fig_0"
        assert results[name]._.figure_ranking == ["fig_0", "fig_1"]
    some = results["some_empty_captions"]
    assert set(some._.figure_scores) == {"fig_1"}
    assert some._.central_figure == "fig_1"
    assert some._.figure_ranking == ["fig_1", "fig_0", "fig_2"]


def test_training_and_scoring_bad_input_do_not_crash(tiny_backbone, bad_docs):
    ranker = make_ranker_nlp(tiny_backbone).get_pipe("figure_ranker")  # its gradients are not shared
    # Only the two papers with two captioned figures and a mentioning sentence give queries.
    with_queries = {"no_abstract", "no_abstract_no_title"}
    for name, doc in bad_docs.items():
        loss = ranker.update([Example(doc, doc)], sgd=Adam(1e-3))["figure_ranker"]
        scores = ranker.score([Example(doc, doc)])
        if name in with_queries:
            assert loss >= 0.0 and 0.0 <= scores["figure_proxy_acc"] <= 1.0
        else:
            assert loss == 0.0
            assert scores == {"figure_proxy_acc": None, "figure_proxy_mrr": None}


@pytest.fixture(scope="session")
def tiny_backbone_without_dropout(tiny_backbone, tmp_path_factory):
    """The tiny backbone with dropout off: at lr 1e-3 its noise hides 8 steps of progress."""
    path = tmp_path_factory.mktemp("backbones") / "tiny_no_dropout"
    shutil.copytree(tiny_backbone, path)
    config = AutoConfig.from_pretrained(path)
    config.hidden_dropout_prob = config.attention_probs_dropout_prob = 0.0
    config.save_pretrained(path)
    return path


def test_update_reduces_loss_on_a_fixed_batch(tiny_backbone_without_dropout, real_docs):
    fix_random_seed(0)
    # No sampling of queries or negatives: the same batch at every step.
    nlp = make_ranker_nlp(tiny_backbone_without_dropout, max_queries_per_doc=1000, max_negatives=1000)
    ranker = nlp.get_pipe("figure_ranker")
    examples = [Example(real_docs[0], real_docs[0])]  # D14-1205: 4 mention queries, 16 pairs
    assert ranker.training_queries(real_docs[0], None)
    optimizer = Adam(1e-3)
    losses = [ranker.update(examples, sgd=optimizer, losses={})["figure_ranker"] for _ in range(8)]
    assert all(numpy.isfinite(losses)) and losses[0] > 0
    assert numpy.mean(losses[-2:]) < numpy.mean(losses[:2])


def assert_same_scores(actual, expected):
    """Per doc, the same figure ids, None where expected is None, floats approximately equal,
    and the same signals.

    (pytest.approx takes no list of dicts: pytest 9 raises TypeError on one.)
    """
    assert [sorted(p.scores) for p in actual] == [sorted(p.scores) for p in expected]
    for got, want in zip(actual, expected):
        for figure_id, score in want.scores.items():
            if score is None:
                assert got.scores[figure_id] is None, figure_id
            else:
                assert got.scores[figure_id] == pytest.approx(score), figure_id
        assert sorted(got.signals) == sorted(want.signals)
        for name, values in want.signals.items():
            assert got.signals[name] == pytest.approx(values), name


def test_serialisation_round_trips_give_identical_scores(ranker_nlp, real_docs, tiny_backbone, tmp_path):
    ranker = ranker_nlp.get_pipe("figure_ranker")
    docs = real_docs[:1]
    expected = ranker.predict(docs)
    assert any(score is not None for prediction in expected for score in prediction.scores.values())
    ranker_nlp.to_disk(tmp_path / "pipeline")

    loaded = spacy.load(tmp_path / "pipeline")
    assert_same_scores(loaded.get_pipe("figure_ranker").predict(docs), expected)

    fresh = make_ranker_nlp(tiny_backbone).get_pipe("figure_ranker")
    fresh.from_disk(tmp_path / "pipeline" / "figure_ranker")
    assert_same_scores(fresh.predict(docs), expected)
    restored = make_ranker_nlp(tiny_backbone).get_pipe("figure_ranker").from_bytes(ranker.to_bytes())
    assert_same_scores(restored.predict(docs), expected)


def test_proxy_eval_on_held_out_papers(ranker_nlp, real_docs):
    scores = proxy_eval(real_docs[:2], ranker_nlp)
    assert set(scores) == {"figure_proxy_acc", "figure_proxy_mrr"}
    assert 0.0 <= scores["figure_proxy_acc"] <= scores["figure_proxy_mrr"] <= 1.0


# --------------------------------------------------------------------------- baselines


def test_pick_first_is_document_order(real_docs):
    for doc in real_docs:
        uncaptioned = [f for f in candidate_ids(doc) if f not in captioned_ids(doc)]
        assert PickFirstBaseline().rank(doc) == captioned_ids(doc) + uncaptioned
    all_captioned = real_docs[0]  # D14-1205
    assert PickFirstBaseline().rank(all_captioned) == candidate_ids(all_captioned)


def test_text_baselines_rank_all_candidates_uncaptioned_last(real_docs, tiny_encoder):
    rankers = [TfidfBaseline(), ZeroShotBiEncoderBaseline(encoder=tiny_encoder), RandomBaseline(seed=1),
               MentionCountBaseline(), ReferringTextBaseline()]
    for doc in real_docs:
        captioned = captioned_ids(doc)
        for ranker in rankers:
            ranking = ranker.rank(doc)
            assert sorted(ranking) == sorted(candidate_ids(doc)), ranker.name
            assert sorted(ranking[: len(captioned)]) == sorted(captioned), ranker.name
            assert ranking[len(captioned):] == [f for f in candidate_ids(doc) if f not in captioned]


def test_tfidf_prefers_the_caption_that_shares_the_abstract_words(ranker_nlp):
    doc = paper_to_doc(synthetic_paper(
        abstract="We parse chemical reaction diagrams into reaction graphs.",
        captions=["Figure 1: Training time per epoch.", "Figure 2: A chemical reaction diagram and its graph."],
    ), ranker_nlp)
    assert TfidfBaseline().rank(doc) == ["fig_1", "fig_0"]


def test_baselines_never_crash_on_bad_input(bad_docs, tiny_encoder):
    rankers = [PickFirstBaseline(), TfidfBaseline(), ZeroShotBiEncoderBaseline(encoder=tiny_encoder), RandomBaseline(),
               MentionCountBaseline(), ReferringTextBaseline()]
    for name, doc in bad_docs.items():
        for ranker in rankers:
            assert sorted(ranker.rank(doc)) == candidate_ids(doc), (name, ranker.name)
        expected = RandomBaseline().expected(doc, ["fig_0"])
        assert all(0.0 <= v <= 1.0 for v in expected.values())
    assert RandomBaseline().expected(bad_docs["no_figures"], ["fig_0"]) == {
        "ap": 0.0, "rr": 0.0, "acc_at_1": 0.0, "acc_at_3": 0.0}
    for name in ("no_abstract_no_title", "empty_captions"):
        assert TfidfBaseline().rank(bad_docs[name]) == ["fig_0", "fig_1"]


def test_random_expected_hand_computed():
    # 4 candidates, one gold figure: uniform over ranks 1..4.
    four = expected_random_metrics(["b"], ["a", "b", "c", "d"])
    assert four["acc_at_1"] == pytest.approx(1 / 4)
    assert four["acc_at_3"] == pytest.approx(3 / 4)
    assert four["rr"] == pytest.approx((1 + 1 / 2 + 1 / 3 + 1 / 4) / 4)
    assert four["ap"] == pytest.approx(four["rr"])
    # 3 candidates, 2 gold: gold ranks {1,2}, {1,3}, {2,3} are equally likely.
    three = expected_random_metrics(["a", "b"], ["a", "b", "c"])
    assert three["ap"] == pytest.approx((1 + (1 + 2 / 3) / 2 + (1 / 2 + 2 / 3) / 2) / 3)
    assert three["rr"] == pytest.approx((1 + 1 + 1 / 2) / 3)
    assert three["acc_at_3"] == 1.0
    # A gold id that is no candidate is never found but still counts in AP's denominator.
    assert expected_random_metrics(["a", "zz"], ["a"]) == {"ap": 0.5, "rr": 1.0, "acc_at_1": 1.0, "acc_at_3": 1.0}


@pytest.mark.parametrize("gold,candidates,tail", [
    (["c", "a", "e"], ["a", "b", "c", "d", "e", "f"], []),
    (["b", "t2"], ["a", "b", "c"], ["t1", "t2"]),
    (["t1", "x"], ["a", "b"], ["t1"]),
    (["t2"], [], ["t1", "t2"]),
    (["x"], ["a", "b"], []),
])
def test_random_expected_matches_enumeration(gold, candidates, tail):
    exact = expected_random_metrics(gold, candidates, tail)
    assert exact == pytest.approx(enumerate_random_metrics(gold, candidates, tail))


# --------------------------------------------------------------------------- evaluation


def test_evaluate_rankings_hand_computed():
    gold = {"p1": ["a", "b", "c", "d"], "p2": ["x"], "p3": ["q"]}
    predictions = {"p1": ["b", "a", "d", "c"], "p2": ["y", "x"], "other": ["z"]}  # p3 missing
    # p1: relevant {a, b, c} (d is 4th gold, not relevant); AP = (1/1 + 2/2 + 3/4) / 3, RR = 1.
    # p2: AP = RR = 1/2. p3: no ranking, 0 everywhere.
    result = evaluate_rankings(predictions, gold)
    assert result["map"] == pytest.approx(((1 + 1 + 3 / 4) / 3 + 1 / 2 + 0) / 3)
    assert result["mrr"] == pytest.approx((1 + 1 / 2 + 0) / 3)
    assert result["acc_at_1"] == 0.0  # p1's first gold "a" is at rank 2
    assert result["acc_at_3"] == pytest.approx(2 / 3)
    assert result["n_papers"] == 3
    assert list(result["per_paper"]) == ["p1", "p2", "p3"]  # gold papers only, in gold order
    assert result["per_paper"]["p2"] == {"ap": 0.5, "rr": 0.5, "acc_at_1": 0.0, "acc_at_3": 1.0}
    assert result["per_paper"]["p3"] == {"ap": 0.0, "rr": 0.0, "acc_at_1": 0.0, "acc_at_3": 0.0}


def test_read_gold_rejects_bad_lines(tmp_path):
    path = tmp_path / "gold.jsonl"
    path.write_text('{"paper_id": "p1", "ranking": ["fig_1"]}\n\n{"paper_id": "p2"}\n')
    with pytest.raises(scholarly_nlp.MalformedInputError, match="line 3"):
        read_gold(path)


LABEL = re.compile(r"^\s*(fig(ure)?|table)\.?\s*\d+[a-z]?\s*[:.]?", re.IGNORECASE)


def first_captioned_figure(paper: Paper) -> str:
    """The id of the first figure (kind "figure") whose caption is more than its label."""
    captions = {b.figure_id: b.text for b in paper.blocks if b.kind == "caption"}
    return next(f.id for f in paper.figures
                if f.kind == "figure" and LABEL.sub("", captions.get(f.id, "")).strip())


def test_evaluate_dir_dev_gold_baselines(dev_gold_path, tiny_encoder, tmp_path):
    tei = shared("tei", "acl")
    # The tiny encoder stands in for MiniLM in the zero-shot baseline (code path, not quality).
    report = evaluate_dir(tei, dev_gold_path, output_dir=tmp_path, encoder=tiny_encoder)
    gold = read_gold(dev_gold_path)
    assert report["n_papers"] == len(gold) == 20 and report["missing"] == []
    assert report["map"] is None  # no model
    assert set(report["baselines"]) == {"random", "pick_first", "tfidf", "mention_count", "referring_text_tfidf",
                                        "zero_shot_minilm"}
    for name, metrics in report["baselines"].items():
        for metric in ("map", "mrr", "acc_at_1", "acc_at_3"):
            assert 0.0 <= metrics[metric] <= 1.0, (name, metric)
        assert metrics["acc_at_1"] <= metrics["acc_at_3"] and metrics["n_papers"] == 20

    # Pick-first Acc@1, independently (from the reader's Paper, not the Doc): is the first
    # figure whose caption has text beyond its label the first gold figure?
    hits = [first_captioned_figure(scholarly_nlp.read_paper(tei / f"{pid}.tei.xml")) == ranking[0]
            for pid, ranking in gold.items()]
    assert report["baselines"]["pick_first"]["acc_at_1"] == pytest.approx(sum(hits) / len(hits))
    lines = [json.loads(line) for line in (tmp_path / "baseline_tfidf.jsonl").read_text().splitlines()]
    assert [line["paper_id"] for line in lines] == list(gold)


def test_evaluate_dir_with_model_and_missing_papers(ranker_nlp, tmp_path):
    tei = tmp_path / "tei"
    tei.mkdir()
    for pid in PAPERS[:2]:
        shutil.copy(shared("tei", "acl", f"{pid}.tei.xml"), tei)
    (tei / "BROKEN.tei.xml").write_text("<TEI><text><body><div>not closed")
    gold_path = tmp_path / "gold.jsonl"
    gold_lines = [{"paper_id": PAPERS[0], "ranking": ["fig_2", "fig_4"]}, {"paper_id": PAPERS[1], "ranking": ["fig_3"]},
                  {"paper_id": "BROKEN", "ranking": ["fig_0"]}, {"paper_id": "ABSENT", "ranking": ["fig_1"]}]
    gold_path.write_text("".join(json.dumps(line) + "\n" for line in gold_lines))

    report = evaluate_dir(tei, gold_path, nlp=ranker_nlp, output_dir=tmp_path / "out",
                          baselines=["random", "pick_first"])
    assert sorted(report["missing"]) == ["ABSENT", "BROKEN"]
    assert report["n_papers"] == 4
    for metric in ("map", "mrr", "acc_at_1", "acc_at_3"):
        assert 0.0 <= report[metric] <= 0.5  # the two missing papers are misses
    predictions = [json.loads(line) for line in (tmp_path / "out" / "predictions.jsonl").read_text().splitlines()]
    assert [p["paper_id"] for p in predictions] == PAPERS[:2]
    for prediction in predictions:
        doc = scholarly_nlp.read(tei / f"{prediction['paper_id']}.tei.xml", nlp=ranker_nlp)
        assert sorted(prediction["ranking"]) == sorted(candidate_ids(doc))
    # Pick-first by hand: D14-1205 ranks fig_1, fig_2, fig_4, fig_5 (gold fig_2, fig_4): AP 7/12,
    # RR 1/2; D15-1126 ranks fig_0, fig_1, fig_3, fig_5 (gold fig_3): AP = RR = 1/3; the two
    # missing papers score 0 and still count in the denominator of 4.
    pick_first = report["baselines"]["pick_first"]
    assert {key: pick_first[key] for key in ("map", "mrr", "acc_at_1", "acc_at_3", "n_papers")} == pytest.approx(
        {"map": (7 / 12 + 1 / 3) / 4, "mrr": (1 / 2 + 1 / 3) / 4, "acc_at_1": 0.0, "acc_at_3": 2 / 4, "n_papers": 4})
    by_hand = {PAPERS[0]: {"ap": 7 / 12, "rr": 1 / 2, "acc_at_1": 0.0, "acc_at_3": 1.0},
               PAPERS[1]: {"ap": 1 / 3, "rr": 1 / 3, "acc_at_1": 0.0, "acc_at_3": 1.0},
               "BROKEN": {"ap": 0.0, "rr": 0.0, "acc_at_1": 0.0, "acc_at_3": 0.0},
               "ABSENT": {"ap": 0.0, "rr": 0.0, "acc_at_1": 0.0, "acc_at_3": 0.0}}
    assert list(pick_first["per_paper"]) == list(by_hand)  # gold order
    for pid, values in by_hand.items():
        assert pick_first["per_paper"][pid] == pytest.approx(values), pid
    # the model against each baseline, paper by paper over the same 4 papers
    assert list(report["per_paper"]) == list(pick_first["per_paper"])
    assert set(report["vs_baselines"]) == {"random", "pick_first"}
    for name, test in report["vs_baselines"].items():
        assert test["n_items"] == 4
        for metric in ("map", "mrr", "acc_at_1", "acc_at_3"):
            assert test[metric]["delta"] == pytest.approx(report[metric] - report["baselines"][name][metric])
            assert 0.0 < test[metric]["p_value"] <= 1.0
    assert "unparsable" in report["missing_reasons"]["BROKEN"]
