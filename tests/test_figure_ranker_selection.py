"""The figure ranker's selection set (annotation packets, Borda merge) and the benchmark rule
that chooses the fused signals on it."""

from __future__ import annotations

import importlib.util
import json

import pytest

from scholarly_nlp import MalformedInputError
from conftest import REPO, benchmark_modules, shared

SCRIPTS = REPO / "projects" / "figure_ranker" / "scripts"
SELECTION = REPO / "projects" / "figure_ranker" / "selection"


def script(name: str):
    """A module of the figure_ranker project's scripts folder, imported from its file."""
    spec = importlib.util.spec_from_file_location(f"figure_ranker_{name}", SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def merge_annotations():
    return script("merge_annotations")


@pytest.fixture(scope="module")
def packets():
    return json.loads((SELECTION / "packets.json").read_text(encoding="utf-8"))


LABEL_FOLDERS = [(SELECTION, 63, 55), (SELECTION / "biomed", 100, 87), (SELECTION / "round3", 81, 67)]
"""Each committed selection folder: its papers and how often all three annotators agree on the
first figure (as the selection README says)."""


def test_borda_points_then_first_places_then_figure_order(merge_annotations):
    order = ["fig_0", "fig_1", "fig_2", "fig_3"]
    # fig_1: 3+2+2 = 7, fig_2: 2+3+1 = 6, fig_0: 1+1+3 = 5; fig_3 unranked.
    merged, firsts = merge_annotations.borda([["fig_1", "fig_2", "fig_0"], ["fig_2", "fig_1", "fig_0"],
                                              ["fig_0", "fig_1", "fig_2"]], order)
    assert merged == ["fig_1", "fig_2", "fig_0"] and firsts == {"fig_1": 1, "fig_2": 1, "fig_0": 1}
    # fig_1, fig_2 and fig_3 tie on points (4 each): fig_2 and fig_3 have a first place, fig_1 none;
    # fig_2 and fig_3 then go by figure order.
    merged, _ = merge_annotations.borda([["fig_3", "fig_1", "fig_2"], ["fig_2", "fig_1", "fig_3"]], order)
    assert merged == ["fig_2", "fig_3", "fig_1"]
    # A full tie goes to the earlier figure.
    merged, _ = merge_annotations.borda([["fig_3"], ["fig_1"]], order)
    assert merged == ["fig_1", "fig_3"]


@pytest.mark.parametrize("folder, papers, agree", LABEL_FOLDERS)
def test_the_committed_labels_are_the_merge_of_the_committed_annotations(merge_annotations, folder, papers, agree):
    packets = json.loads((folder / "packets.json").read_text(encoding="utf-8"))
    assert_merged_labels(merge_annotations, folder, packets, papers, agree)


def test_the_pdf_pairs_labels_are_the_merge_of_annotations_on_packets_rebuilt_from_the_data(merge_annotations):
    # The pdf-pairs papers' licences keep their packets out of git: rebuild them as the README says.
    data = shared("pdf-pairs").parent
    packets = script("annotation_packets").packets(data, shared("gold", "central_figures_dev.jsonl"), "pdf-pairs")
    assert_merged_labels(merge_annotations, SELECTION / "round3_pdf_pairs", packets, 30, 23)
    assert all(p["source"].startswith("pdf-pairs/") for p in packets)


def assert_merged_labels(merge_annotations, folder, packets, papers, agree):
    """The folder's merged labels are the Borda merge of its three annotators on ``packets``,
    one per paper, top 3 of the paper's own figures; ``agree`` papers have one first figure."""
    annotators = [merge_annotations.read_rankings(folder / f"annotator_{x}.jsonl") for x in "ABC"]
    merged = merge_annotations.merge(annotators, packets)
    committed = [json.loads(line) for line in (folder / "central_figures_selection.jsonl").read_text().splitlines()]
    assert merged == committed
    assert len(committed) == papers == len({r["paper_id"] for r in committed})
    figures = {p["paper_id"]: {f["id"] for f in p["figures"]} for p in packets}
    assert all(len(r["ranking"]) == 3 and set(r["ranking"]) <= figures[r["paper_id"]] for r in committed)
    assert sum(r["annotator_top1_agree"] for r in committed) == agree


def test_merge_refuses_an_annotator_who_skipped_a_paper_or_named_a_stranger(merge_annotations, packets):
    complete = {p["paper_id"]: [f["id"] for f in p["figures"]][:3] for p in packets}
    skipped = dict(complete)
    skipped.pop(packets[5]["paper_id"])
    with pytest.raises(ValueError, match=f"annotator 2: paper {packets[5]['paper_id']}"):
        merge_annotations.merge([complete, skipped], packets)
    stranger = dict(complete, **{packets[0]["paper_id"]: ["fig_99"]})
    with pytest.raises(ValueError, match="annotator 1"):
        merge_annotations.merge([stranger, complete], packets)


def test_repeated_paper_in_an_annotator_file_is_refused(merge_annotations, tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_text('{"paper_id": "p", "ranking": ["fig_0"]}\n{"paper_id": "p", "ranking": ["fig_1"]}\n')
    with pytest.raises(MalformedInputError, match="line 2"):
        merge_annotations.read_rankings(path)


@pytest.mark.parametrize("folder", [SELECTION, SELECTION / "biomed", SELECTION / "round3"])
def test_packets_text_is_what_the_annotators_read(folder):
    packets = json.loads((folder / "packets.json").read_text(encoding="utf-8"))
    text = script("annotation_packets").packet_text(packets)
    assert text == (folder / "packets.txt").read_text(encoding="utf-8")
    assert "ABSTRACT: " in text and "  [fig_0] Figure " in text


def test_packet_papers_are_real_files_left_out_of_training_and_gold(packets):
    preprocess = script("preprocess")
    gold = preprocess.gold_ids(str(shared("gold", "central_figures_dev.jsonl")))
    for paper in packets:
        assert shared(paper["source"]).is_file()
        assert paper["paper_id"] not in gold and len(paper["figures"]) >= 3 and paper["abstract"]
        if paper["source"].startswith("tei/"):
            assert preprocess.is_dev(paper["paper_id"], 10)  # held out of the ranker's training


def report(**sets):
    """A benchmark report with (map, acc_at_1) per signal set; every other set scores 0."""
    from itertools import combinations

    names = ["+".join(c) for n in (1, 2, 3) for c in combinations(("caption", "mentions", "context"), n)]
    return {name: {"map": sets.get(name, (0.0, 0.0))[0], "acc_at_1": sets.get(name, (0.0, 0.0))[1]}
            for name in names}


def test_the_rule_takes_acc_at_1_then_map_then_the_previous_default():
    with benchmark_modules("figure_ranker_selection") as (bench,):
        previous = "caption+mentions+context"
        assert bench.choose(report(caption=(0.80, 0.60), **{previous: (0.90, 0.50)})) == "caption"
        assert bench.choose(report(caption=(0.80, 0.50), **{"caption+mentions": (0.85, 0.50),
                                                            previous: (0.84, 0.50)})) == "caption+mentions"
        assert bench.choose(report(caption=(0.85, 0.50), **{previous: (0.85, 0.50)})) == previous
        # A set without the trained caption score is never chosen, however well it does.
        assert bench.choose(report(mentions=(1.0, 1.0), caption=(0.5, 0.5))) == "caption"


def test_rankings_by_one_signal_or_their_fusion_put_unscored_figures_last():
    from scholarly_figure_ranker.signals import fuse_ranks

    values = {"fig_0": {"caption": 1.0, "mentions": 3.0}, "fig_1": {"caption": 2.0, "mentions": 0.0},
              "fig_2": {"caption": 0.5, "mentions": 2.0}}
    ids = ["fig_0", "fig_1", "fig_2", "fig_3"]  # fig_3 has no caption text, so no signals
    with benchmark_modules("figure_ranker_selection") as (bench,):
        assert bench.ranking_by(("caption",), ids, values) == ["fig_1", "fig_0", "fig_2", "fig_3"]
        fused = fuse_ranks({"caption": {f: v["caption"] for f, v in values.items()},
                            "mentions": {f: v["mentions"] for f, v in values.items()}}, list(values))
        expected = sorted(values, key=lambda f: -fused[f]) + ["fig_3"]
        assert bench.ranking_by(("caption", "mentions"), ids, values) == expected == ["fig_0", "fig_1", "fig_2", "fig_3"]
        ap, acc = bench.per_paper({"p": expected, "q": []}, {"p": ["fig_1", "fig_0"], "q": ["fig_0"], "r": []})
        assert acc == [0.0, 0.0] and ap == [pytest.approx(1.0), 0.0]  # "r" has no gold figure: not counted
        ap, acc = bench.per_paper({"p": expected}, {"p": ["fig_0", "fig_3", "fig_2", "fig_1"]})
        assert acc == [1.0] and ap == [pytest.approx((1 + 2 / 3 + 3 / 4) / 3)]  # fig_1, the 4th gold, is not relevant


def built_paper(columns: dict, ids: list[str]) -> dict:
    """A paper record as the learned-fusion benchmark builds it (every figure scored)."""
    import numpy

    return {"ids": ids, "scored": ids, "columns": {k: numpy.asarray(v, dtype=float) for k, v in columns.items()}}


def test_learned_fusion_targets_zscores_and_fit():
    with benchmark_modules("figure_ranker_learned_fusion") as (bench,):
        assert list(bench.zscore([1.0, 1.0])) == [0.0, 0.0]
        assert bench.zscore([1.0, 3.0]).tolist() == [-1.0, 1.0]
        paper = built_paper({"caption": [0.0, 1.0, 2.0], "first": [1.0, 0.0, 0.0]}, ["fig_0", "fig_1", "fig_2"])
        assert bench.targets(paper, ["fig_2", "fig_0", "fig_9"]).tolist() == pytest.approx([0.4, 0.0, 0.6])
        assert bench.targets(paper, ["fig_9"]).tolist() == [0.0, 0.0, 0.0]
        # The annotators always pick the first figure, whatever the caption score says: the fit
        # learns a positive weight for "first" and ranks the first figure first.
        papers = [built_paper({"caption": [0.0, 1.0, 2.0][::s], "first": [1.0, 0.0, 0.0]},
                              ["fig_0", "fig_1", "fig_2"]) for s in (1, -1)]
        weights = bench.fit(papers, [["fig_0"], ["fig_0"]], ("caption", "first"), penalty=0.01)
        assert weights[1] > 1.0 and abs(weights[0]) < weights[1]
        assert all(bench.learned_ranking(p, ("caption", "first"), weights)[0] == "fig_0" for p in papers)
        unscored = dict(paper, scored=[])
        assert bench.learned_ranking(unscored, ("caption",), weights[:1]) == ["fig_0", "fig_1", "fig_2"]


def test_selection_files_combine_and_papers_are_grouped(tmp_path):
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text('{"paper_id": "P1", "source": "tei/acl/P1.tei.xml", "ranking": ["fig_0"]}\n')
    second.write_text('{"paper_id": "B1", "source": "tei/biomed/B1.tei.xml", "ranking": ["fig_2", "fig_1"]}\n')
    with benchmark_modules("figure_ranker_selection") as (bench,):
        labels, sources = bench.read_selection([first, second])
        assert labels == {"P1": ["fig_0"], "B1": ["fig_2", "fig_1"]}
        assert [bench.group_of(sources[p]) for p in labels] == ["acl", "biomed"]
        assert bench.group_of("pdfs/acl/C02-1025.pdf") == "acl"
        assert bench.group_of("pdf-pairs/colrev_wagner2022.tei.xml") == "pdf-pairs"
        with pytest.raises(ValueError, match="not a file of a selection group"):
            bench.group_of("elsewhere/x.pdf")
        with pytest.raises(ValueError, match="already read"):
            bench.read_selection([first, first])


def test_round_two_adopts_only_a_significant_gain_that_keeps_the_acl_papers():
    def result(acc, acl):
        return {"acc": acc, "ap": acc, "acc_at_1_by_group": {"acl": acl, "biomed": 0.5}}

    with benchmark_modules("figure_ranker_aggregation_selection") as (bench,):
        shipped = result([0.0] * 60 + [1.0] * 40, 0.4)
        better = result([0.0] * 40 + [1.0] * 60, 0.5)
        assert bench.adopt(better, shipped)["adopt"]
        assert not bench.adopt(result(better["acc"], 0.3), shipped)["adopt"]  # lower on the ACL papers
        slightly = result([0.0] * 58 + [1.0] * 42, 0.4)
        decision = bench.adopt(slightly, shipped)
        assert not decision["adopt"] and decision["acc"]["p_value"] >= 0.05
        assert not bench.adopt(result(shipped["acc"], 0.5), better)["adopt"]  # worse, though level on ACL
        assert bench.adopt(result(better["acc"], 0.4), shipped)["adopt"]  # level on the ACL papers is enough
        with pytest.raises(ValueError, match="ACL papers"):
            bench.adopt({**better, "acc_at_1_by_group": {"biomed": 0.6}}, shipped)


def test_learned_fusion_objective_gradient_matches_finite_differences():
    import numpy
    from scipy.optimize import check_grad

    rng = numpy.random.default_rng(0)
    data = [(rng.normal(size=(n, 3)), numpy.array([0.5, 0.5] + [0.0] * (n - 2))) for n in (3, 4, 5)]
    with benchmark_modules("figure_ranker_learned_fusion") as (bench,):
        for penalty in (0.0, 2.0):
            assert check_grad(lambda w: bench.objective(w, data, penalty)[0],
                              lambda w: bench.objective(w, data, penalty)[1], rng.normal(size=3)) < 1e-5
        value, _ = bench.objective(numpy.zeros(3), data, 0.0)
        expected = -sum(0.5 * numpy.log(1 / n) * 2 for n in (3, 4, 5)) / 3  # uniform softmax
        assert value == pytest.approx(expected)


def test_cross_validation_never_ranks_a_paper_with_weights_fitted_on_it(monkeypatch):
    with benchmark_modules("figure_ranker_learned_fusion") as (bench,):
        seen = []

        def fit(papers, golds, names, penalty):
            seen.append({p["ids"][0] for p in papers})
            return __import__("numpy").zeros(len(names))

        monkeypatch.setattr(bench, "fit", fit)
        papers = [built_paper({"caption": [0.0, 1.0]}, [f"p{i}", f"q{i}"]) for i in range(20)]
        rankings = bench.cross_validate(papers, [[p["ids"][0]] for p in papers], ("caption",), 1.0)
        assert len(seen) == bench.FOLDS and all(r is not None for r in rankings)
        for fold, trained_on in enumerate(seen):
            held = {papers[i]["ids"][0] for i in range(fold, len(papers), bench.FOLDS)}
            assert not held & trained_on and len(held | trained_on) == len(papers)


def test_preprocess_holds_out_the_papers_of_every_file_given():
    # The multi-field training run holds out the dev gold and the biomedical selection papers.
    preprocess = script("preprocess")
    dev_gold = shared("gold", "central_figures_dev.jsonl")
    biomed = SELECTION / "biomed" / "central_figures_selection.jsonl"
    both = preprocess.gold_ids(str(dev_gold), str(biomed))
    assert len(preprocess.gold_ids(str(dev_gold))) == 20 and len(preprocess.gold_ids(str(biomed))) == 100
    assert both == preprocess.gold_ids(str(dev_gold)) | preprocess.gold_ids(str(biomed)) and len(both) == 120
    assert preprocess.gold_ids() == set() and preprocess.gold_ids("", "missing.jsonl") == set()


def test_round_three_ships_the_candidate_only_on_a_significant_gain():
    with benchmark_modules("figure_ranker_round3") as (bench,):
        shipped = [0.0] * 70 + [1.0] * 41
        clearly = [0.0] * 50 + [1.0] * 61  # 20 more first figures of 111
        verdict = bench.decide(clearly, shipped)
        assert verdict["ships"] and verdict["test"]["p_value"] < 0.05 and verdict["test"]["delta"] > 0
        slightly = [0.0] * 67 + [1.0] * 44  # 3 more: within noise
        assert not bench.decide(slightly, shipped)["ships"]
        assert not bench.decide(shipped, clearly)["ships"]  # significantly worse never ships
        pooled = bench.pooled({"caption+mentions": {"acc": [0.0, 1.0]}, "x": {"acc": [1.0, 1.0]}},
                              {"caption+mentions": {"acc": [0.0]}, "x": {"acc": [1.0]}, "only_here": {"acc": [1.0]}})
        assert set(pooled) == {"caption+mentions", "x"}  # systems of both runs only
        assert pooled["x"]["first_figures"] == 3 and pooled["x"]["papers"] == 3
        assert pooled["x"]["acc_vs_shipped"]["delta"] == pytest.approx(2 / 3)


def test_round_three_papers_are_new_to_every_earlier_round_and_the_gold():
    earlier = set()
    for folder in (SELECTION, SELECTION / "biomed"):
        earlier |= {p["paper_id"] for p in json.loads((folder / "packets.json").read_text(encoding="utf-8"))}
    gold = script("preprocess").gold_ids(str(shared("gold", "central_figures_dev.jsonl")))
    round3 = json.loads((SELECTION / "round3" / "packets.json").read_text(encoding="utf-8"))
    assert len(round3) == 81 and all(p["source"].startswith("tei/biomed/") for p in round3)
    assert not {p["paper_id"] for p in round3} & (earlier | gold)
    assert all(shared(p["source"]).is_file() and len(p["figures"]) >= 3 and p["abstract"] for p in round3)


def test_round_three_packets_are_the_biomedical_papers_after_round_two(tmp_path):
    build = script("annotation_packets")
    gold = shared("gold", "central_figures_dev.jsonl")
    with pytest.raises(FileNotFoundError, match="label files to exclude not found: .*nowhere.jsonl"):
        build.packets(shared("tei").parent, gold, "biomed", exclude=(tmp_path / "nowhere.jsonl",))
    rebuilt = build.packets(shared("tei").parent, gold, "biomed",
                            exclude=(SELECTION / "biomed" / "central_figures_selection.jsonl",))
    assert rebuilt == json.loads((SELECTION / "round3" / "packets.json").read_text(encoding="utf-8"))


def test_round_three_results_agree_with_the_rule_and_the_readme():
    results = json.loads((REPO / "benchmarks" / "results" / "figure_ranker_round3.json").read_text())
    systems = results["systems"]
    assert results["papers"] == 111 and results["papers_by_field"] == {"biomed": 81, "pdf-pairs": 30}
    assert all(len(s["acc"]) == len(s["ap"]) == 111 for s in systems.values())
    shipped, candidate = systems["caption+mentions"]["acc"], systems["caption+mentions+cap_dense"]["acc"]
    with benchmark_modules("figure_ranker_round3") as (bench,):
        assert bench.decide(candidate, shipped)["ships"] is results["verdict"]["ships"] is False
    # The numbers the selection README quotes.
    assert [systems[n]["first_figures"] for n in ("caption+mentions", "caption+mentions+cap_dense",
                                                  "caption+mentions+context", "baseline:pick_first")] == [39, 39, 48, 33]
    readme = (SELECTION / "README.md").read_text(encoding="utf-8")
    assert all(row in readme for row in ("| 39 (31 / 8) |", "| 39 (30 / 9) |", "| 48 (38 / 10) |", "| 33 (22 / 11) |"))
    pooled = results["pooled_with"]["systems"]
    assert results["pooled_with"]["papers"] == 163 and pooled["caption+mentions"]["first_figures"] == 106
    assert [pooled[n]["first_figures"] for n in ("caption+mentions+cap_dense", "caption+mentions+context")] == [116, 120]
