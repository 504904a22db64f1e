"""``scholarly-nlp analyze`` (issue 13, item 5) over a saved pipeline of tiny components:
one record per paper with the core fields and each pipe's ``analysis(doc)``; bad files are
reported and skipped; an unknown pipeline is one clear line."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from spacy.language import Language

import scholarly_nlp
from scholarly_nlp.cli import cli

from conftest import shared

PAPERS = ("D14-1003", "D14-1010")


@pytest.fixture
def inputs(tmp_path):
    files = [str(shared("tei", "acl", f"{pid}.tei.xml")) for pid in PAPERS]
    broken = tmp_path / "broken.tei.xml"
    broken.write_text("<TEI><text><body><p>unclosed", encoding="utf-8")
    return files + [str(broken)]


def test_analyze_writes_one_record_per_paper_and_reports_bad_files(pipeline_dir, inputs, tmp_path):
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["analyze", *inputs, "--out", str(out), "--pipeline", str(pipeline_dir)])
    assert result.exit_code == 1, result.output
    assert f"analyzed 3 file(s) with {pipeline_dir}: 2 ok, 1 failed" in result.output
    assert "failed: " in result.output and "broken.tei.xml" in result.output
    assert sorted(p.name for p in out.glob("*.json")) == sorted(f"{pid}.analysis.json" for pid in PAPERS)
    record = json.loads((out / f"{PAPERS[0]}.analysis.json").read_text())
    assert record["paper_id"] == PAPERS[0] and record["title"]
    assert record["abstract_roles"] and all(set(r) >= {"text", "role"} for r in record["abstract_roles"])
    assert record["citances"] and all(set(c) >= {"text", "bib_ids"} for c in record["citances"])
    figures = record["figures"]
    assert figures and record["central_figure"] == next(f["id"] for f in figures if f["rank"] == 1)
    scored = [f for f in figures if f["score"] is not None]
    assert [f["rank"] for f in sorted(scored, key=lambda f: -f["score"])] == list(range(1, len(scored) + 1))
    assert isinstance(record["contributions"], list) and isinstance(record["detected_contributions"], list)
    for contribution in record["contributions"]:
        scores = [p["score"] for p in contribution["paragraphs"]]
        assert scores == sorted(scores, reverse=True)  # best first
    assert f"{PAPERS[0]}: " in result.output  # the per-paper summary


def test_an_unknown_pipeline_is_one_clear_line(tmp_path, inputs):
    result = CliRunner().invoke(cli, ["analyze", inputs[0], "--out", str(tmp_path), "--pipeline", "no_such_pipeline"])
    assert result.exit_code == 1
    (line,) = result.output.strip().splitlines()
    assert line.startswith("error: no trained pipeline at no_such_pipeline: it is neither an installed pipeline package")
    assert "pip install -r requirements.txt" in line and "weasel run all" in line


class Titled:
    """A pipe that adds a field to the analysis."""

    def __init__(self, key):
        self.key = key

    def __call__(self, doc):
        return doc

    def analysis(self, doc):
        return {self.key: len(doc)}


@Language.factory("test_analyze_field", default_config={"key": "tokens"})
def make_titled(nlp, name, key):
    return Titled(key)


def test_pipes_add_fields_and_a_clash_is_an_error():
    nlp = scholarly_nlp.blank()
    nlp.add_pipe("test_analyze_field")
    doc = nlp(scholarly_nlp.read(shared("tei", "acl", f"{PAPERS[0]}.tei.xml"), nlp=nlp))
    assert scholarly_nlp.analysis_record(doc, nlp)["tokens"] == len(doc)
    nlp.add_pipe("test_analyze_field", name="again")
    with pytest.raises(ValueError, match="pipes 'test_analyze_field' and 'again' both write 'tokens'"):
        scholarly_nlp.analysis_record(doc, nlp)
    nlp.remove_pipe("again")
    nlp.add_pipe("test_analyze_field", name="core_clash", config={"key": "title"})
    with pytest.raises(ValueError, match="pipes 'core' and 'core_clash' both write 'title'"):
        scholarly_nlp.analysis_record(doc, nlp)


class CitanceTexts:
    """A pipe that (wrongly) rewrites a field the core already set on each citance."""

    def __call__(self, doc):
        return doc

    def analysis(self, doc):
        return {"citances": [{"text": "x"} for _ in doc._.citances]}


@Language.factory("test_analyze_citance_texts")
def make_citance_texts(nlp, name):
    return CitanceTexts()


def test_a_pipe_may_add_fields_to_each_citance_but_not_rewrite_them():
    nlp = scholarly_nlp.blank()
    nlp.add_pipe("test_analyze_citance_texts")
    doc = nlp(scholarly_nlp.read(shared("tei", "acl", f"{PAPERS[0]}.tei.xml"), nlp=nlp))
    with pytest.raises(ValueError, match=r"pipes 'core' and 'test_analyze_citance_texts' both write 'citances\[\]\.text'"):
        scholarly_nlp.analysis_record(doc, nlp)


def test_the_summary_names_the_central_figure_by_its_caption():
    from scholarly_nlp.analysis import summary_lines

    caption = "Figure 2: Overview of the model:   an encoder reads the paper and a decoder writes its summary."
    record = {"paper_id": "p", "title": "T", "central_figure": "fig_1",
              "counts": {"sections": 1, "figures": 2, "citances": 0, "references": 0},
              "figures": [{"id": "fig_0", "caption": "Figure 1: Results."}, {"id": "fig_1", "caption": caption}]}
    line = next(line for line in summary_lines(record) if "central figure" in line)
    shown = " ".join(caption.split())[:60].rstrip()  # whitespace collapsed, cut at 60 characters
    assert shown.endswith("reads the paper") and line == f'  central figure: fig_1 ("{shown}...")'
    record["figures"] = [{"id": "fig_1", "caption": ""}]  # nothing to show beside the id
    assert "  central figure: fig_1" in summary_lines(record)
    del record["figures"]
    assert "  central figure: fig_1" in summary_lines(record)
