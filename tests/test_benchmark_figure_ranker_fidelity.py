"""``benchmarks/figure_ranker_delta_fidelity.py`` measures what its README numbers say.

The benchmark chooses the rank at which the central-figure ranker ships (its weight difference
to the installed backbone) by how faithfully each rank reproduces the whole model's rankings on
unseen papers. Checked here on real ACL TEI papers with a tiny backbone whose weights are moved
by a full-rank change (as full fine-tuning moves them), so low ranks lose something and a rank
high enough to store every change whole loses nothing.
"""

from __future__ import annotations

import json

import pytest
import torch
from test_figure_ranker import make_ranker_nlp, tiny_backbone  # noqa: F401

from conftest import benchmark_modules, shared


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
    assert fidelity.spearman(["a", "b"], ["b", "a"]) == 1.0  # too few figures to disagree on an order


def test_unseen_papers_leave_out_the_gold_and_the_training_papers(fidelity):
    from figure_ranker_aggregation import held_out_by_project
    from scholarly_figure_ranker.evaluation import read_gold

    data = shared("tei", "acl").parents[1]
    gold = read_gold(data / "gold" / "central_figures_dev.jsonl")
    papers = fidelity.unseen_papers(data, biomed=2)
    acl = [p for p in papers if p.parent.name == "acl"]
    assert acl and len(papers) == len(acl) + 2
    ids = [p.name[:-len(".tei.xml")] for p in acl]
    assert not set(ids) & set(gold)
    assert all(held_out_by_project(pid) for pid in ids)


@pytest.fixture(scope="module")
def measured(fidelity, whole_model, tmp_path_factory):
    """The benchmark run once on the unseen ACL papers: (report, JSON written, saved ranks)."""
    data = shared("tei", "acl").parents[1]
    folder = tmp_path_factory.mktemp("measured")
    report = fidelity.main(["--model", str(whole_model), "--ranks", "1,64", "--biomed", "0", "--data", str(data),
                            "--keep", str(folder / "ranks"), "--out", str(folder / "fidelity.json")])
    return report, folder / "fidelity.json", folder / "ranks"


def test_a_rank_that_stores_every_change_whole_reproduces_the_model(measured):
    report, out, _ = measured
    assert json.loads(out.read_text()) == report
    assert report["papers"] >= 10
    exact, lossy = report["ranks"]["64"], report["ranks"]["1"]
    assert exact["caption_top1"] == exact["fused_top1"] == 1.0
    assert exact["caption_spearman"] == pytest.approx(1.0)
    assert exact["median_max_score_error"] < 1e-3
    assert lossy["median_max_score_error"] > 10 * exact["median_max_score_error"]
    assert lossy["megabytes"] < exact["megabytes"]
    passing = [int(r) for r, entry in report["ranks"].items() if entry["caption_top1"] >= 0.99]
    assert report["chosen_rank"] == min(passing)


def test_a_model_saved_as_a_weight_difference_is_refused(fidelity, measured, tmp_path):
    _, _, ranks = measured
    with pytest.raises(SystemExit, match="already a weight difference"):
        fidelity.main(["--model", str(ranks / "rank1"), "--out", str(tmp_path / "refused.json")])
    assert not (tmp_path / "refused.json").exists()
