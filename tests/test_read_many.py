"""``read_many``/``read_papers``: concurrency, per-reader options, and one bad file never stops
a batch (issue 16, item 6; the CLI's ``parse`` is a thin wrapper over it)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from spacy.language import Language

import scholarly_nlp
from scholarly_nlp import Block, InputError, Paper, PluginRegistry, UnknownNameError, hookimpl
from scholarly_nlp.cli import cli

from conftest import shared


def acl_teis(n: int) -> list[Path]:
    return sorted(shared("tei", "acl").glob("*.tei.xml"))[:n]


def batch(tmp_path: Path) -> list[str]:
    """Four real TEI files with a broken one and a missing one in between."""
    teis = [str(p) for p in acl_teis(4)]
    broken = tmp_path / "broken.tei.xml"
    broken.write_text("<TEI><text><body><p>unclosed", encoding="utf-8")
    return [teis[0], str(broken), teis[1], str(tmp_path / "missing.tei.xml"), teis[2], teis[3]]


def summary(results) -> list[tuple[str, object]]:
    return [(r.path, r.doc.text if r.ok else type(r.error).__name__) for r in results]


def test_workers_give_the_same_results_in_input_order(nlp, tmp_path):
    paths = batch(tmp_path)
    serial = summary(scholarly_nlp.read_many(paths, nlp))
    parallel = summary(scholarly_nlp.read_many(paths, nlp, workers=2))
    assert [p for p, _ in serial] == paths
    assert parallel == serial
    kinds = [value if not value.startswith(" ") and len(value) < 40 else "doc" for _, value in serial]
    assert kinds[1] == "MalformedInputError" and kinds[3] == "InputError"
    assert all(len(serial[i][1]) > 1000 for i in (0, 2, 4, 5))


def test_reader_options_go_to_their_reader_only(nlp, tmp_path):
    pdf = shared("tei", "with-pdf", "N18-3011.pdf")
    tei = acl_teis(1)[0]
    images = tmp_path / "images"
    seen = []

    def per_path(path):
        seen.append(path)
        return {"image_dir": str(images)}

    results = list(scholarly_nlp.read_many([str(tei), str(pdf)], nlp, reader_options={"pdf": per_path}))
    assert all(r.ok for r in results)
    assert seen == [str(pdf)]  # asked for the PDF alone
    assert any(images.glob("*.png"))
    pdf_doc = results[1].doc
    assert all(f["image_path"] for f in pdf_doc._.paper_meta["figures"] if f["kind"] == "figure")
    assert all(f["image_path"] is None for f in results[0].doc._.paper_meta["figures"])


# -- plugin readers that misbehave --------------------------------------------------------


def read_probe(path, **_options):
    """A ``.probe`` file: its first line says how to misbehave."""
    text = Path(path).read_text(encoding="utf-8")
    if text.startswith("raise"):
        raise RuntimeError("reader bug")
    if text.startswith("none"):
        return None
    if text.startswith("die"):
        os._exit(3)  # what pdfium does on a hostile file: the process is gone
    return Paper(paper_id=Path(path).stem, source=str(path), reader="probe",
                 blocks=[Block(kind="title", text=text.strip())])


class ProbePlugin:
    @hookimpl
    def register_readers(self, register):
        register("probe", read_probe, extensions=(".probe",))


@pytest.fixture
def probe_registry() -> PluginRegistry:
    registry = PluginRegistry(strict=True, allow=[]).load()
    registry.add_plugin(ProbePlugin(), "probe")
    return registry


def probe_files(tmp_path: Path, kinds: list[str]) -> list[str]:
    paths = []
    for i, kind in enumerate(kinds):
        path = tmp_path / f"{i}_{kind}.probe"
        path.write_text(kind if kind in ("raise", "none", "die") else f"Title {i}", encoding="utf-8")
        paths.append(str(path))
    return paths


@pytest.mark.parametrize("workers", [1, 3])
def test_a_reader_that_raises_or_returns_none_fails_its_file_only(probe_registry, tmp_path, workers):
    paths = probe_files(tmp_path, ["ok", "raise", "ok", "none", "ok"])
    results = list(scholarly_nlp.read_papers(paths, "probe", probe_registry, workers=workers))
    assert [r.path for r in results] == paths
    assert [r.ok for r in results] == [True, False, True, False, True]
    assert str(results[1].error) == f"{paths[1]}: could not be read by the 'probe' reader (RuntimeError: reader bug)"
    assert str(results[3].error) == f"{paths[3]}: the 'probe' reader returned NoneType, not a Paper"
    assert [r.paper.title for r in results if r.ok] == ["Title 0", "Title 2", "Title 4"]


def test_a_worker_process_that_dies_costs_its_file_only(probe_registry, tmp_path):
    paths = probe_files(tmp_path, ["ok", "ok", "die", "ok", "ok", "ok"])
    results = list(scholarly_nlp.read_papers(paths, "probe", probe_registry, workers=2))
    assert [r.path for r in results] == paths
    assert [r.ok for r in results] == [True, True, False, True, True, True]
    assert "worker process died" in str(results[2].error) and paths[2] in str(results[2].error)


def test_an_error_about_the_batch_stops_it(nlp, tmp_path):
    with pytest.raises(UnknownNameError, match="nope"):
        list(scholarly_nlp.read_many([str(p) for p in acl_teis(2)], nlp, format="nope"))


@Language.component("test_read_many_fragile")
def fragile(doc):
    if "broken" in doc._.paper_meta["paper_id"]:
        raise ValueError("component bug")
    return doc


def test_a_failing_pipeline_component_fails_its_paper_only(tmp_path):
    nlp = scholarly_nlp.blank()
    teis = acl_teis(2)
    odd = tmp_path / "broken_copy.tei.xml"
    odd.write_bytes(teis[0].read_bytes())
    nlp.add_pipe("test_read_many_fragile")
    results = list(scholarly_nlp.read_many([str(teis[0]), str(odd), str(teis[1])], nlp, run_pipeline=True))
    assert [r.ok for r in results] == [True, False, True]
    assert isinstance(results[1].error, InputError)
    assert "the pipeline failed on it (ValueError: component bug)" in str(results[1].error)


def test_cli_parse_with_jobs_writes_what_one_job_writes(tmp_path):
    teis = [str(p) for p in acl_teis(4)]
    outputs = {}
    for jobs in ("1", "2"):
        out = tmp_path / f"out{jobs}"
        result = CliRunner().invoke(cli, ["parse", *teis, "--out", str(out), "-j", jobs, "--quiet"])
        assert result.exit_code == 0, result.output
        outputs[jobs] = {p.name: json.loads(p.read_text()) for p in sorted(out.glob("*.json"))}
    assert len(outputs["1"]) == 4 and outputs["1"] == outputs["2"]


def test_every_error_crosses_process_boundaries_intact():
    import pickle

    from scholarly_nlp import errors

    samples = [errors.MalformedInputError("a.pdf", "truncated"), errors.EmptyDocumentError("b.tei.xml", "no body"),
               errors.GrobidUnavailableError("http://h:8070", "refused", "env"),
               errors.UnknownNameError("reader", "nope", ["pdf", "tei"]), errors.UnknownComponentError("x", ["y"])]
    for error in samples:
        copy = pickle.loads(pickle.dumps(error))
        assert type(copy) is type(error) and str(copy) == str(error)
