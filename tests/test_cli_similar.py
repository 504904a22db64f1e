"""``scholarly-nlp similar``: abstracts and TEI corpora, saved index reuse and rebuilds, bad inputs."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import spacy
from click.testing import CliRunner

from scholarly_aspect_embedder.cli import ASPECT_MODEL_ENV
from scholarly_aspect_embedder.index import AspectIndex, index_path_for
from scholarly_aspect_embedder.search import similar
from scholarly_nlp import get_registry
from scholarly_nlp.cli import cli
from scholarly_nlp.readers.abstracts import abstract_doc, read_csfcube_abstracts

from conftest import shared
from similarity_support import embed, light_nlp, save_embedder_pipeline

N_PAPERS = 25


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    """Indexes go to a per-test cache, never to the user's."""
    monkeypatch.setenv("SCHOLARLY_NLP_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture(scope="module", autouse=True)
def plugin_commands():
    """``similar`` is the aspect embedder plugin's command: add the plugins' commands as main() does."""
    get_registry().add_commands(cli)


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    """A saved pipeline whose only component is the hashed stand-in aspect embedder."""
    return save_embedder_pipeline(tmp_path_factory.mktemp("model") / "hashed-embedder")


@pytest.fixture()
def corpus(tmp_path) -> Path:
    """The first 25 lines of CSFCube's abstracts file."""
    lines = shared("csfcube", "abstracts-csfcube-preds.jsonl").read_text(encoding="utf-8").splitlines()
    path = tmp_path / "abstracts.jsonl"
    path.write_text("\n".join(lines[:N_PAPERS]) + "\n", encoding="utf-8")
    return path


def _run(args, env=None):
    return CliRunner().invoke(cli, args, env=env, catch_exceptions=False)


def test_jsonl_corpus_json_output_matches_the_api(corpus, model):
    with open(corpus, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"paper_id": "empty-paper", "title": "", "abstract": [], "pred_labels": []}) + "\n")
    result = _run(["similar", "7898033", str(corpus), "--aspect", "result", "-k", "4", "--model", str(model), "--json"])
    assert result.exit_code == 0, result.output
    assert "skipped: paper empty-paper has no text to embed (empty document)" in result.stderr
    assert "built an index of 25 papers" in result.stderr
    hits = [json.loads(line) for line in result.stdout.splitlines()]
    nlp = light_nlp()
    docs = [embed(abstract_doc(r, nlp)) for r in read_csfcube_abstracts(corpus)][:-1]
    expected = similar(docs[0], docs, "result", k=4)
    assert [h["paper_id"] for h in hits] == [h.paper_id for h in expected]
    assert [h["rank"] for h in hits] == [1, 2, 3, 4]
    assert hits[0]["explanation"] == expected[0].to_dict()["explanation"]
    assert (index_path_for(corpus, str(model.resolve())) / "meta.json").exists()


def test_index_is_reused_then_rebuilt_when_the_corpus_changes(corpus, model):
    args = ["similar", "7898033", str(corpus), "--model", str(model), "-k", "3"]
    assert "built an index of 25 papers" in _run(args).stderr
    second = _run(args)
    assert "reused the index of 25 papers" in second.stderr
    assert second.stdout.count("distance") == 3 and "query [method]" in second.stdout
    lines = corpus.read_text(encoding="utf-8").splitlines()
    corpus.write_text("\n".join(lines[:-5]) + "\n", encoding="utf-8")
    third = _run(args)
    assert "built an index of 20 papers" in third.stderr
    assert "built" in _run(args + ["--rebuild"]).stderr
    os.utime(model / "meta.json", ns=(10**18, 10**18))  # the pipeline was saved again
    assert "built" in _run(args).stderr
    (index_path_for(corpus, str(model.resolve())) / "search-method.npy").unlink()
    damaged = _run(args)
    assert "rebuilding a damaged index" in damaged.stderr and "built an index of 20 papers" in damaged.stderr
    papers = (index_path_for(corpus, str(model.resolve())) / "papers.jsonl").read_text().splitlines()
    assert json.loads(papers[0])["source"] == str(corpus)


def test_model_from_environment_and_missing_model(corpus, model, monkeypatch):
    monkeypatch.delenv(ASPECT_MODEL_ENV, raising=False)
    missing = _run(["similar", "7898033", str(corpus), "--model", "no_such_pipeline"])
    assert missing.exit_code == 1
    assert "weasel run all" in missing.stderr and "--model" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1
    from_env = _run(["similar", "7898033", str(corpus), "-k", "2"], env={ASPECT_MODEL_ENV: str(model)})
    assert from_env.exit_code == 0 and from_env.stdout.count("distance") == 2


def test_the_shipped_pipeline_is_the_default_model(corpus, monkeypatch):
    from scholarly_nlp import pipeline_path

    monkeypatch.delenv(ASPECT_MODEL_ENV, raising=False)
    assert pipeline_path("scholarly_core") is not None, "pip install -r requirements.txt"
    shipped = _run(["similar", "7898033", str(corpus), "-k", "2"])
    assert shipped.exit_code == 0, shipped.stderr
    assert shipped.stdout.count("distance") == 2
    assert index_path_for(corpus, str(pipeline_path("scholarly_core").resolve())).exists()


def test_bad_query_and_options(corpus, model):
    unknown = _run(["similar", "no-such-paper", str(corpus), "--model", str(model)])
    assert unknown.exit_code == 1 and "no-such-paper" in unknown.stderr
    assert _run(["similar", "7898033", str(corpus), "--model", str(model), "--aspect", "novelty"]).exit_code == 2
    assert _run(["similar", "7898033", str(corpus), "--model", str(model), "--facet", "novelty"]).exit_code == 2
    both = _run(["similar", "7898033", str(corpus), "--model", str(model), "--aspect", "method", "--facet", "result"])
    assert both.exit_code == 2 and "disagree" in both.stderr
    usage = _run(["similar", "--help"]).stdout
    assert "--aspect [background|method|result]" in usage and "--facet" not in usage  # a hidden, deprecated alias
    assert _run(["similar", "7898033", str(corpus), "--model", str(model), "-k", "0"]).exit_code == 2
    not_a_model = _run(["similar", "7898033", str(corpus), "--model", str(corpus)])
    assert not_a_model.exit_code == 1 and "not a spaCy pipeline folder" in not_a_model.stderr
    no_embedder = corpus.parent / "no-embedder"
    spacy.blank("en").to_disk(no_embedder)
    result = _run(["similar", "7898033", str(corpus), "--model", str(no_embedder)])
    assert result.exit_code == 1 and "has no aspect vectors; run the aspect_embedder first" in result.stderr
    assert not index_path_for(corpus, str(no_embedder.resolve())).exists()


def test_tei_folder_skips_bad_files_and_excludes_the_query(tmp_path, model, cache):
    folder = tmp_path / "papers"
    folder.mkdir()
    names = ["D14-1003.tei.xml", "D14-1010.tei.xml", "D14-1018.tei.xml", "D14-1036.tei.xml"]
    for name in names:
        shutil.copy(shared("tei", "acl", name), folder / name)
    (folder / "broken.tei.xml").write_bytes(b"<TEI><text>")
    query = folder / names[0]
    result = _run(["similar", str(query), str(folder), "--model", str(model), "--json", "--facet", "background"])
    assert result.exit_code == 0, result.output
    assert "--facet is deprecated, use --aspect" in result.stderr
    assert "broken.tei.xml" in result.stderr and "1 file(s) or paper(s) skipped" in result.stderr
    hits = [json.loads(line) for line in result.stdout.splitlines()]
    assert sorted(h["paper_id"] for h in hits) == sorted(n.split(".")[0] for n in names[1:])
    index = AspectIndex.load(index_path_for(folder, os.path.abspath(model)))
    assert len(index) == 4
    assert index.path.is_relative_to(cache) and not (folder / ".scholarly-index").exists()
    (folder / "broken.tei.xml").unlink()
    assert "built an index of 4 papers" in _run(["similar", str(query), str(folder), "--model", str(model)]).stderr
    by_glob = _run(["similar", str(query), str(folder / "*.tei.xml"), "--model", str(model), "-k", "1"])
    assert "reused the index of 4 papers" in by_glob.stderr and by_glob.stdout.count("distance") == 1


def test_index_in_corpus_keeps_the_index_next_to_the_corpus(corpus, model, cache):
    pid = json.loads(corpus.read_text(encoding="utf-8").splitlines()[0])["paper_id"]
    result = _run(["similar", pid, str(corpus), "--model", str(model), "--index-in-corpus", "-k", "2"])
    assert result.exit_code == 0, result.output
    assert (corpus.parent / "abstracts.jsonl.scholarly-index").is_dir() and not cache.exists()
