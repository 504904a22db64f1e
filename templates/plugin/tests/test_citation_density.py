"""Tests of the citation_density plugin, run against the installed package (``pip install .``).

They use only scholarly_nlp's public API: a Paper built in code (exact expectations), a small
TEI file read by the core's reader, the command through click, and the plugin as
scholarly_nlp sees it (registry record, strict loading).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import scholarly_nlp
from scholarly_nlp import BibEntry, Block, InlineRef, Paper, PaperSection

HERE = Path(__file__).parent
MINI_TEI = HERE / "data" / "mini.tei.xml"
PLUGIN = "citation_density"


def small_paper() -> Paper:
    """An abstract citing [1], section 1 (two citances, three markers), 1.1 (one), 2 (none)."""
    paper = Paper(paper_id="small", reader="test")
    paper.bibliography = {"b1": BibEntry(id="b1", title="Old parsing"), "b2": BibEntry(id="b2", title="New parsing")}
    paper.sections = [PaperSection(title="Introduction", number="1", level=1),
                      PaperSection(title="Data", number="1.1", level=2, parent=0),
                      PaperSection(title="Conclusion", number="2", level=1)]

    def cite(text: str, *markers: tuple[str, str]) -> list[InlineRef]:
        """Citation markers in text order: each (marker, bib id) is looked for after the previous."""
        refs, position = [], 0
        for marker, target in markers:
            start = text.index(marker, position)
            refs.append(InlineRef(start, start + len(marker), "bibr", target))
            position = start + len(marker)
        return refs

    abstract = "We count citations [1]. Nothing else happens."
    intro = "Parsing is old [1]. Prior work [2] and [1] used a slow model. We do better."
    data = "We use a treebank [2]. It is small."
    paper.blocks = [
        Block(kind="title", text="Counting Citations"),
        Block(kind="abstract", text=abstract, refs=cite(abstract, ("[1]", "b1"))),
        Block(kind="heading", text="Introduction", section=0),
        Block(kind="paragraph", text=intro, section=0, refs=cite(intro, ("[1]", "b1"), ("[2]", "b2"), ("[1]", "b1"))),
        Block(kind="heading", text="Data", section=1),
        Block(kind="paragraph", text=data, section=1, refs=cite(data, ("[2]", "b2"))),
        Block(kind="heading", text="Conclusion", section=2),
        Block(kind="paragraph", text="Our parser wins. It is fast.", section=2),
    ]
    return paper


@pytest.fixture()
def nlp():
    nlp = scholarly_nlp.blank()
    nlp.add_pipe("citation_density")
    return nlp


def counts(summary: dict) -> list[tuple]:
    return [(r["number"], r["sentences"], r["citances"], r["markers"]) for r in summary["sections"]]


def test_counts_citances_per_section(nlp):
    doc = nlp(scholarly_nlp.paper_to_doc(small_paper(), nlp))
    summary = doc._.citation_density
    assert counts(summary) == [("1", 3, 2, 3), ("1.1", 2, 1, 1), ("2", 2, 0, 0)]
    assert [r["density"] for r in summary["sections"]] == [0.6667, 0.5, 0.0]
    assert (summary["outside_sections"], summary["total"]) == (1, 4) == (1, len(doc._.citances))


def test_rollup_counts_subsections_with_their_section():
    nlp = scholarly_nlp.blank()
    nlp.add_pipe("citation_density", config={"rollup": True})
    doc = nlp(scholarly_nlp.paper_to_doc(small_paper(), nlp))
    assert counts(doc._.citation_density) == [("1", 5, 3, 4), ("2", 2, 0, 0)]


def test_plain_text_gets_an_empty_summary(nlp):
    assert nlp("No structure here. None at all.")._.citation_density == {
        "sections": [], "outside_sections": 0, "total": 0}


def test_a_tei_file_read_by_the_core(nlp):
    doc = nlp(scholarly_nlp.read(MINI_TEI, nlp=nlp))
    assert counts(doc._.citation_density) == [("1", 3, 2, 3), ("1.1", 2, 1, 1), ("2", 2, 0, 0)]
    assert doc._.citation_density["outside_sections"] == 1


def test_saved_pipeline_round_trips(nlp, tmp_path):
    nlp.to_disk(tmp_path / "pipeline")
    import spacy

    loaded = spacy.load(tmp_path / "pipeline")
    assert loaded.pipe_names == ["citation_density"]
    doc = loaded(scholarly_nlp.read(MINI_TEI, nlp=loaded))
    assert doc._.citation_density["total"] == 4


def test_command_prints_a_summary_per_paper():
    from scholarly_citation_density.commands import citation_density_command

    result = CliRunner().invoke(citation_density_command, [str(MINI_TEI)])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        "mini: 4 citances, 1 outside body sections",
        "  1 Introduction: 2/3 sentences cite (0.67)",
        "  1.1 Data: 1/2 sentences cite (0.50)",
        "  2 Conclusion: 0/2 sentences cite (0.00)",
    ]
    as_json = CliRunner().invoke(citation_density_command, [str(MINI_TEI), "--json", "--rollup"])
    assert as_json.exit_code == 0, as_json.output
    assert [r["number"] for r in json.loads(as_json.output)["sections"]] == ["1", "2"]


def test_the_plugin_is_registered_and_loads_strictly():
    registry = scholarly_nlp.PluginRegistry(strict=True, allow=[PLUGIN]).load()
    record = registry.plugins[PLUGIN]
    assert record.status == "loaded", record.error
    assert record.to_dict()["registered"] == {
        "components": ["citation_density"],
        "extensions": ["doc._.citation_density"],
        "commands": ["register_commands"],
    }
