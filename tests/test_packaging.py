"""Shipped pipeline packages (issue 13, items 1-3): ``scholarly_nlp.packaging`` copies trained
components into a pipeline package in canonical order, refuses random heads, records metrics
and the model card; ``scholarly_nlp.load`` loads a subset of pipes and refuses a pipeline
built for another release line, with one clear error."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from spacy.training import Example

import scholarly_nlp
from scholarly_nlp import IncompatiblePipelineError
from scholarly_nlp.packaging import MAX_PIPELINE_BYTES, PackagingError, add_components, main, record_metrics
from scholarly_nlp.pipelines import check_compatible, compatible_range, pipeline_path

from conftest import shared

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_INIT = ROOT / "pipelines" / "scholarly_core" / "scholarly_core" / "__init__.py"


@pytest.fixture(scope="module")
def paper():
    return shared("tei", "acl", "D14-1003.tei.xml")


@pytest.fixture()
def package(tmp_path) -> Path:
    """An empty pipeline package laid out as pipelines/scholarly_core."""
    root = tmp_path / "tiny_core"
    (root / "tiny_core").mkdir(parents=True)
    shutil.copy(PACKAGE_INIT, root / "tiny_core" / "__init__.py")
    return root


def trained_ranker(backbone, paper, path: Path) -> Path:
    """A figure ranker with LoRA adapters, updated once on a real paper, saved to ``path``."""
    pytest.importorskip("scholarly_figure_ranker")
    nlp = scholarly_nlp.blank()
    model = {"@architectures": "scholarly_nlp.CrossEncoder.v1", "name": backbone, "max_length": 64, "lora_rank": 2}
    nlp.add_pipe("figure_ranker", config={"model": model})
    nlp.initialize(lambda: [Example(nlp.make_doc("x"), nlp.make_doc("x"))])
    doc = scholarly_nlp.read(paper, nlp=nlp)
    nlp.get_pipe("figure_ranker").update([Example(doc, doc)], sgd=nlp.create_optimizer())
    nlp.to_disk(path)
    return path


def zero_shot_linker(backbone, path: Path) -> Path:
    """A contribution linker over the (tiny) backbone as it is: meaningful without training."""
    pytest.importorskip("scholarly_contribution_linker")
    nlp = scholarly_nlp.blank()
    model = {"@architectures": "scholarly_nlp.BiEncoderScorer.v1", "name": backbone, "max_length": 64}
    nlp.add_pipe("contribution_linker", config={"model": model})
    nlp.initialize(lambda: [Example(nlp.make_doc("x"), nlp.make_doc("x"))])
    nlp.to_disk(path)
    return path


def figure_scores(nlp, paper) -> list:
    doc = nlp(scholarly_nlp.read(paper, nlp=nlp))
    return sorted((key, round(float(score), 5)) for key, score in (doc._.figure_scores or {}).items())


def test_components_of_two_projects_make_one_pipeline_in_canonical_order(backbone, paper, package, tmp_path):
    ranker = trained_ranker(backbone, paper, tmp_path / "ranker")
    linker = zero_shot_linker(backbone, tmp_path / "linker")
    add_components(linker, package, ["contribution_linker"], project="contribution_linker",
                   sources=[{"name": "ACL Anthology", "license": "CC BY 4.0", "url": "https://aclanthology.org"}])
    target = add_components(ranker, package, ["figure_ranker"], project="figure_ranker")

    nlp = scholarly_nlp.load(target)
    assert nlp.pipe_names == ["figure_ranker", "contribution_linker"]
    scores = figure_scores(nlp, paper)
    assert scores and scores == figure_scores(scholarly_nlp.load(ranker), paper)  # the trained weights moved

    meta = json.loads((target / "meta.json").read_text())
    record = meta["scholarly_nlp"]
    assert record["components"]["figure_ranker"]["project"] == "figure_ranker"
    assert record["requires"] == compatible_range(scholarly_nlp.__version__)
    assert meta["sources"][0]["license"] == "CC BY 4.0"
    card = (package / "README.md").read_text()
    assert "`figure_ranker`" in card and "`contribution_linker`" in card and "ACL Anthology (CC BY 4.0)" in card
    # the backbone is a reference, never a copy: the whole pipeline is a few megabytes at most
    assert sum(f.stat().st_size for f in target.rglob("*") if f.is_file()) < 5 * 2**20


def test_packaging_again_replaces_a_component_and_keeps_the_others(backbone, paper, package, tmp_path):
    linker = zero_shot_linker(backbone, tmp_path / "linker")
    add_components(linker, package, ["contribution_linker"], project="contribution_linker")
    add_components(trained_ranker(backbone, paper, tmp_path / "ranker"), package, ["figure_ranker"], project="figure_ranker")
    target = add_components(linker, package, ["contribution_linker"], project="contribution_linker")
    assert scholarly_nlp.load(target).pipe_names == ["figure_ranker", "contribution_linker"]
    assert not any(p.name.startswith(".pipeline") for p in target.parent.iterdir())  # no staging left


def test_an_untrained_component_is_refused(backbone, package, tmp_path):
    pytest.importorskip("scholarly_figure_ranker")
    nlp = scholarly_nlp.blank()
    nlp.add_pipe("figure_ranker", config={"model": {"@architectures": "scholarly_nlp.CrossEncoder.v1",
                                                    "name": backbone, "max_length": 64}})
    nlp.initialize(lambda: [Example(nlp.make_doc("x"), nlp.make_doc("x"))])
    nlp.to_disk(tmp_path / "untrained")
    with pytest.raises(PackagingError, match="figure_ranker never trained"):
        add_components(tmp_path / "untrained", package, ["figure_ranker"], project="figure_ranker")
    assert not (package / "tiny_core" / "pipeline").exists()


def test_a_missing_component_and_a_folder_that_is_no_package_are_named(backbone, package, tmp_path):
    linker = zero_shot_linker(backbone, tmp_path / "linker")
    with pytest.raises(PackagingError, match="no component figure_ranker"):
        add_components(linker, package, ["figure_ranker"], project="figure_ranker")
    with pytest.raises(PackagingError, match="not a pipeline package"):
        add_components(linker, tmp_path / "nowhere", ["contribution_linker"], project="x")


def test_load_with_components_reads_only_those_pipes(backbone, paper, package, tmp_path):
    add_components(zero_shot_linker(backbone, tmp_path / "linker"), package, ["contribution_linker"], project="c")
    target = add_components(trained_ranker(backbone, paper, tmp_path / "ranker"), package, ["figure_ranker"],
                            project="figure_ranker")
    nlp = scholarly_nlp.load(target, components=["figure_ranker", "sentence_role_tagger"])
    assert nlp.pipe_names == ["figure_ranker"]  # absent names are ignored


def test_metrics_are_recorded_with_dotted_keys_and_shown_in_the_card(backbone, package, tmp_path):
    add_components(zero_shot_linker(backbone, tmp_path / "linker"), package, ["contribution_linker"],
                   project="contribution_linker")
    metrics = tmp_path / "m.json"
    metrics.write_text(json.dumps({"hit_at_1": 0.5, "baselines": {"bm25": {"hit_at_1": 0.38}}, "n": 68, "ok": True}))
    assert main(["metrics", str(package), "--project", "contribution_linker", "--metrics", str(metrics),
                 "--keys", "hit_at_1,baselines.bm25.hit_at_1"]) == 0
    meta = json.loads((package / "tiny_core" / "pipeline" / "meta.json").read_text())
    assert meta["performance"]["contribution_linker"] == {"hit_at_1": 0.5, "baselines.bm25.hit_at_1": 0.38}
    assert "hit_at_1 0.500" in (package / "README.md").read_text()
    assert record_metrics(package, "all_numbers", json.loads(metrics.read_text())) == {"hit_at_1": 0.5, "n": 68}
    assert main(["metrics", str(package), "--project", "x", "--metrics", str(metrics), "--keys", "nope"]) == 1


def test_a_pipeline_of_another_release_line_gets_one_clear_error(backbone, package, tmp_path):
    target = add_components(zero_shot_linker(backbone, tmp_path / "linker"), package, ["contribution_linker"],
                            project="contribution_linker")
    meta_file = target / "meta.json"
    meta = json.loads(meta_file.read_text())
    meta["scholarly_nlp"].update(requires=">=9.0.0,<9.1.0", built_with="9.0.3")
    meta_file.write_text(json.dumps(meta))
    with pytest.raises(IncompatiblePipelineError, match=r"needs scholarly_nlp >=9.0.0,<9.1.0 \(built with 9.0.3\)"):
        scholarly_nlp.load(target)
    with pytest.raises(IncompatiblePipelineError):
        check_compatible(target)


def test_a_pipeline_needs_at_least_the_release_that_built_it():
    """A patch release may add a storage format (0.1.1: int8 weight differences) that an earlier
    one would load as wrong weights without a word, so the range starts at the builder's release."""
    assert compatible_range("0.1.1") == ">=0.1.1,<0.2.0"
    assert compatible_range("0.1.0") == ">=0.1.0,<0.2.0"
    assert compatible_range("2.3") == ">=2.3.0,<2.4.0"
    assert compatible_range("0.1.2.dev1") == ">=0.1.2.dev1,<0.2.0"


def test_pipeline_path_knows_folders_packages_and_nothing_else(tmp_path):
    assert pipeline_path(tmp_path) is None
    assert pipeline_path("no_such_pipeline_package") is None
    (tmp_path / "config.cfg").write_text("[nlp]\n")
    assert pipeline_path(tmp_path) == tmp_path


def test_the_size_limit_is_the_issue_s():
    assert MAX_PIPELINE_BYTES == 30 * 2**20
