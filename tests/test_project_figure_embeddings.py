"""The figure_embeddings Weasel project: its config builds the pipeline, its smoke workflow runs end to end."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
import spacy
import srsly

from conftest import REPO, shared

PROJECT = REPO / "projects" / "figure_embeddings"


def test_project_declares_the_workflows_and_outputs():
    project = srsly.read_yaml(PROJECT / "project.yml")
    commands = {c["name"]: c for c in project["commands"]}
    assert project["workflows"]["all"] == ["preprocess", "train", "package", "evaluate", "record-metrics"]
    assert project["workflows"]["smoke"] == ["smoke-backbone", "smoke-preprocess", "smoke-train", "smoke-evaluate"]
    assert "metrics/figure_embeddings.json" in commands["evaluate"]["outputs"]
    assert "spacy train" in commands["train"]["script"][0]


@pytest.mark.parametrize("loss", ["mse", "cross_entropy", "triplet"])
def test_training_config_builds_the_pipeline(loss):
    config = spacy.util.load_config(PROJECT / "configs" / "figure_embedder.cfg",
                                    overrides={"components.figure_embedder.loss": loss,
                                               "paths.train": "corpus/train.spacy", "paths.dev": "corpus/dev.spacy"})
    nlp = spacy.util.load_model_from_config(config, auto_fill=True, validate=True)
    embedder = nlp.get_pipe("figure_embedder")
    assert embedder.cfg["loss"] == loss
    assert (embedder.cfg["same_paper_target"], embedder.cfg["citation_target"], embedder.cfg["random_target"]) \
        == (1.0, 0.6, 0.0)
    assert embedder.model.attrs["encoder_width"] == 384
    assert config["corpora"]["train"]["@readers"] == "scholarly_nlp.PaperCorpus.v1"
    assert set(config["initialize"]["components"]["figure_embedder"]) == {"relations_path", "text_cache_path"}


@pytest.mark.slow
def test_smoke_workflow(tmp_path):
    data = shared()
    project = tmp_path / "figure_embeddings"
    shutil.copytree(PROJECT, project, ignore=shutil.ignore_patterns("corpus", "training", "metrics", "smoke", "assets"))
    overrides = [f"--vars.pdf_dir={data / 'pdfs' / 'acl'}", f"--vars.tei_dir={data / 'tei' / 'acl'}",
                 f"--vars.clscisumm_dir={data / 'clscisumm'}"]
    proc = subprocess.run([sys.executable, "-m", "weasel", "run", "smoke", str(project), *overrides],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads((project / "smoke" / "metrics" / "figure_embeddings.json").read_text())
    assert report["data"]["test"]["papers"] >= 2 and report["data"]["dev"]["papers"] >= 2
    assert list((project / "smoke" / "corpus" / "images").glob("*.png"))  # the PDFs' figure crops
    for method in ("embedding", "tfidf"):
        assert 0.0 <= report["pairs"]["same"][method]["accuracy"] <= 1.0
    for relevance in ("same_paper", "same_or_citing"):
        result = report["recommendation"][relevance]
        assert result["n_queries"] > 0
        for method in ("tfidf", "tfidf_rerank"):
            for k in (3, 5):
                assert 0.0 <= result[method][f"p@{k}"] <= 1.0
    relations = json.loads((project / "smoke" / "corpus" / "relations.json").read_text())["relations"]
    assert relations  # the first PDFs include CL-SciSumm reference papers and their citers
    assert (project / "smoke" / "training" / "model-last" / "figure_embedder" / "model").exists()
