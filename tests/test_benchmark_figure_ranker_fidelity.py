"""``benchmarks/figure_ranker_delta_fidelity.py`` measures what its README numbers say.

The benchmark chooses the rank at which the central-figure ranker ships (its weight difference
to the installed backbone) by how faithfully each rank reproduces the whole model's rankings on
unseen papers. Checked here on real ACL TEI papers with a tiny backbone whose weights are moved
by a full-rank change (as full fine-tuning moves them), so low ranks lose something and a rank
high enough to store every change whole loses nothing.
"""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import numpy
import pytest
import torch
from test_figure_ranker import make_ranker_nlp, tiny_backbone  # noqa: F401

from conftest import benchmark_modules, shared

PREPROCESS = Path(__file__).resolve().parents[1] / "projects" / "figure_ranker" / "scripts" / "preprocess.py"


@pytest.fixture(scope="module")
def fidelity():
    with benchmark_modules("figure_ranker_delta_fidelity") as (module,):
        yield module


@pytest.fixture(scope="module")
def whole_model(tiny_backbone, tmp_path_factory):  # noqa: F811
    """A ranker whose every encoder matrix moved by a full-rank change, saved whole."""
    nlp = make_ranker_nlp(tiny_backbone)
    module = nlp.get_pipe("figure_ranker").model.shims[0]._model
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for name, weight in module.named_parameters():
            if weight.dim() == 2 and "classifier" not in name:
                weight.add_(0.2 * torch.randn(weight.shape, generator=generator))
    folder = tmp_path_factory.mktemp("fidelity") / "whole"
    nlp.to_disk(folder)
    assert json.loads((folder / "figure_ranker" / "model" / "backbone.json").read_text())["layout"] == "full"
    return folder


def test_spearman_of_rankings(fidelity):
    assert fidelity.spearman(["a", "b", "c"], ["a", "b", "c"]) == pytest.approx(1.0)
    assert fidelity.spearman(["a", "b", "c"], ["c", "b", "a"]) == pytest.approx(-1.0)
    assert fidelity.spearman(["a", "b"], ["b", "a"]) == pytest.approx(-1.0)  # two figures can disagree
    assert math.isnan(fidelity.spearman(["a"], ["a"]))


def test_unseen_papers_are_the_projects_held_out_acl_papers_and_biomedical_ones(fidelity):
    from figure_ranker_aggregation import paper_id_of, unseen_papers
    from scholarly_figure_ranker.evaluation import read_gold

    spec = importlib.util.spec_from_file_location("figure_ranker_preprocess", PREPROCESS)
    preprocess = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(preprocess)
    data = shared("tei", "acl").parents[1]
    gold = read_gold(data / "gold" / "central_figures_dev.jsonl")
    groups = unseen_papers(data, biomed=2)
    held_out = [pid for pid in map(paper_id_of, sorted((data / "tei" / "acl").glob("*.tei.xml")))
                if preprocess.is_dev(pid, 10) and pid not in gold]  # what the project's preprocess keeps out
    assert [paper_id_of(p) for p in groups["acl"]] == held_out and len(held_out) >= 20
    assert len(groups["biomed"]) == 2 and all(p.parent.name == "biomed" for p in groups["biomed"])


@pytest.fixture(scope="module")
def measured(fidelity, whole_model, tmp_path_factory):
    """The benchmark run once on the held-out ACL papers and the gold texts: (report, JSON written, saved ranks)."""
    data = shared("tei", "acl").parents[1]
    folder = tmp_path_factory.mktemp("measured")
    report = fidelity.main(["--model", str(whole_model), "--ranks", "1,64,2:8", "--max-mb", "1000",
                            "--biomed", "0", "--gold-texts",
                            "--data", str(data), "--keep", str(folder / "ranks"), "--out", str(folder / "fidelity.json")])
    return report, folder / "fidelity.json", folder / "ranks"


def test_each_rank_is_saved_as_the_shipped_weight_difference(measured):
    _, _, ranks = measured
    for rank in (1, 64):
        record = json.loads((ranks / f"rank{rank}" / "figure_ranker" / "model" / "backbone.json").read_text())
        assert (record["layout"], record["delta_rank"]) == ("delta", rank)
        assert f"delta_rank = {rank}" in (ranks / f"rank{rank}" / "config.cfg").read_text()
    record = json.loads((ranks / "rank2x8" / "figure_ranker" / "model" / "backbone.json").read_text())
    assert (record["layout"], record["delta_rank"], record["delta_bits"]) == ("delta", 2, 8)
    assert "delta_bits = 8" in (ranks / "rank2x8" / "config.cfg").read_text()


def test_a_rank_that_stores_every_change_whole_reproduces_the_model(measured):
    report, out, _ = measured
    assert json.loads(out.read_text()) == report
    assert report["papers"]["acl"] >= 20 and report["papers"]["gold"] >= 15 and "biomed" not in report["papers"]
    exact, lossy = report["ranks"]["64"], report["ranks"]["1"]
    for group in ("acl", "gold"):
        assert exact["groups"][group]["caption_top1"] == exact["groups"][group]["fused_top1"] == 1.0
        assert exact["groups"][group]["caption_first_changed"] == exact["groups"][group]["fused_first_changed"] == []
        assert exact["groups"][group]["caption_spearman"] == pytest.approx(1.0)
        assert exact["groups"][group]["median_max_score_error"] < 1e-3
        assert exact["groups"][group]["non_finite_scores"] == 0
        # rank 1 of a full-rank change moves every score and reorders some papers
        assert lossy["groups"][group]["median_max_score_error"] > 100 * exact["groups"][group]["median_max_score_error"]
    changed = lossy["groups"]["acl"]["caption_first_changed"]
    assert changed and lossy["groups"]["acl"]["caption_top1"] == pytest.approx(1 - len(changed) / report["papers"]["acl"])
    assert lossy["choosing_caption_top1"] == lossy["groups"]["acl"]["caption_top1"] < 0.99  # gold never chooses
    assert lossy["megabytes"] < exact["megabytes"]
    assert report["chosen_rank"] == 64  # int8 formats are not ranks of the float16 rule
    assert set(report["ranks"]) == {"1", "64", "2:8"}
    assert report["most_faithful_within_budget"] == "64"  # the exact one, when size allows it
    assert lossy["choosing_score_error"] == pytest.approx(
        float(numpy.median(lossy["groups"]["acl"]["max_score_errors"])))


def test_formats_name_a_rank_and_the_factors_width(fidelity, tmp_path):
    assert fidelity.parse_format("32") == (32, 16)
    assert fidelity.parse_format(" 64:8") == (64, 8)
    assert fidelity.parse_formats("32,64:8,64") == [(32, 16), (64, 8), (64, 16)]
    for wrong, reason in (("64:4", "delta_bits must be 8 or 16"), ("0", "rank >= 1"),
                          ("64,64:16", "names 64 more than once")):
        with pytest.raises(ValueError, match=reason):
            fidelity.parse_formats(wrong)
    # refused before any model is read
    with pytest.raises(SystemExit, match="delta_bits must be 8 or 16"):
        fidelity.main(["--model", str(tmp_path / "absent"), "--ranks", "64:4", "--out", str(tmp_path / "x.json")])


def test_the_most_faithful_format_fits_the_budget_and_keeps_the_first_figures(fidelity):
    report = {"ranks": {
        "32": {"megabytes": 4.9, "choosing_caption_top1": 1.0, "choosing_score_error": 0.4},
        "64:8": {"megabytes": 4.9, "choosing_caption_top1": 1.0, "choosing_score_error": 0.2},
        "64": {"megabytes": 9.6, "choosing_caption_top1": 1.0, "choosing_score_error": 0.19},
        "48:8": {"megabytes": 3.7, "choosing_caption_top1": 0.98, "choosing_score_error": 0.1}}}
    assert fidelity.most_faithful_within(report, 5.0, 0.99) == "64:8"
    assert fidelity.most_faithful_within(report, 10.0, 0.99) == "64"
    assert fidelity.most_faithful_within(report, 10.0, 0.97) == "48:8"
    assert fidelity.most_faithful_within(report, 3.0, 0.99) is None
    report["ranks"]["64:8"]["choosing_score_error"] = float("nan")  # never chosen for a NaN
    assert fidelity.most_faithful_within(report, 5.0, 0.99) == "32"


def test_a_model_not_stored_whole_is_refused(fidelity, measured, tmp_path):
    _, _, ranks = measured
    with pytest.raises(SystemExit, match="not stored whole"):
        fidelity.main(["--model", str(ranks / "rank1"), "--out", str(tmp_path / "refused.json")])
    assert not (tmp_path / "refused.json").exists()
