"""The ``similar_papers`` hook (issue 17's similar-papers panel): how the registry asks it, the
aspect embedder's implementation on real ACL papers, and ``analyze --similar``."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

import scholarly_nlp
from scholarly_nlp import ScholarlyNLPError, hookimpl
from scholarly_nlp.cli import cli
from scholarly_nlp.plugins import PluginRegistry

from conftest import shared

CORPUS = ("P17-1001", "P16-1029", "P17-1014", "P17-1021")


class Finder:
    """A ``similar_papers`` implementation that answers with a fixed panel (or None)."""

    def __init__(self, answer):
        self.answer = answer
        self.calls = []

    @hookimpl
    def similar_papers(self, doc, corpus, nlp, model, k):
        self.calls.append((corpus, model, k))
        return self.answer


def test_hook_similar_papers_asks_later_plugins_first_and_skips_none():
    registry = PluginRegistry(strict=True, allow=[]).load()
    first, silent = Finder({"method": [{"rank": 1, "paper_id": "a"}]}), Finder(None)
    registry.add_plugin(first, "first_finder")
    registry.add_plugin(silent, "silent_finder")  # registered later: asked first, says None
    nlp = scholarly_nlp.blank()
    assert registry.similar_papers(nlp.make_doc("x"), "corpus/", nlp, "model", k=3) == first.answer
    assert silent.calls == [("corpus/", "model", 3)] and first.calls == [("corpus/", "model", 3)]
    assert registry.plugins["first_finder"].registered["finders"] == ["similar_papers"]


def test_hook_similar_papers_without_an_answer_is_one_clear_error():
    registry = PluginRegistry(strict=True, allow=[]).load()
    registry.add_plugin(Finder(None), "silent_finder")
    nlp = scholarly_nlp.blank()
    with pytest.raises(ScholarlyNLPError, match="no plugin finds papers similar .* with the pipeline tiny"):
        registry.similar_papers(nlp.make_doc("x"), "corpus/", nlp, "tiny", k=3)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus")
    for paper_id in CORPUS:
        shutil.copy(shared("tei", "acl", f"{paper_id}.tei.xml"), folder)
    return folder


def test_hook_similar_papers_of_the_aspect_embedder_ranks_a_real_corpus(corpus, tmp_path, monkeypatch):
    """With the shipped pipeline: per query aspect, the other three papers (never the query),
    each with aspect scores and the sentence pair that explains the match; the corpus index
    goes to the cache, not into the corpus folder."""
    pytest.importorskip("scholarly_aspect_embedder")
    monkeypatch.setenv("SCHOLARLY_NLP_CACHE", str(tmp_path / "cache"))
    nlp = scholarly_nlp.load("scholarly_core", components=["transformer", "sentence_role_tagger", "aspect_embedder"])
    doc = nlp(scholarly_nlp.read(corpus / f"{CORPUS[0]}.tei.xml", nlp=nlp))
    model = str(scholarly_nlp.pipeline_path("scholarly_core"))
    panel = scholarly_nlp.plugins.get_registry().similar_papers(doc, str(corpus), nlp, model, k=5)
    assert set(panel) == set(scholarly_nlp.QUERY_ASPECTS)
    for aspect, hits in panel.items():
        assert sorted(h["paper_id"] for h in hits) == sorted(CORPUS[1:]), aspect
        assert [h["rank"] for h in hits] == [1, 2, 3]
        assert all(h["explanation"]["candidate_sentence"] and h["explanation"]["query_sentence"] for h in hits)
        assert all(aspect in h["aspect_scores"] for h in hits)
        json.dumps(hits)  # JSON-able, for the analysis record
    assert not any(p.name.startswith(".") for p in corpus.iterdir()), "no index inside the corpus"
    assert any((tmp_path / "cache").rglob("*")), "the index is cached"


def test_analyze_similar_needs_a_corpus_and_a_pipeline_that_can_answer(pipeline_dir, corpus, tmp_path):
    paper = str(shared("tei", "acl", "D14-1003.tei.xml"))
    missing = CliRunner().invoke(cli, ["analyze", paper, "--out", str(tmp_path / "a"), "--pipeline",
                                       str(pipeline_dir), "--similar", str(tmp_path / "nowhere" / "*.pdf")])
    assert missing.exit_code == 2 and "--similar: no paper files found" in missing.output
    result = CliRunner().invoke(cli, ["analyze", paper, "--out", str(tmp_path / "b"), "--pipeline",
                                      str(pipeline_dir), "--similar", str(corpus), "--quiet"])
    assert result.exit_code == 1
    assert "D14-1003.tei.xml" in result.output and "no plugin finds papers similar" in result.output
