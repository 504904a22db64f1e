"""``scholarly-nlp parse``: sniffing, batches that go on past bad files, summaries, atomic output."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import scholarly_nlp
from scholarly_nlp.cli import cli
from scholarly_nlp.resume import MANIFEST_NAME

from conftest import shared


@pytest.fixture()
def bad_inputs(tmp_path: Path) -> dict[str, Path]:
    """One file per kind of bad input, made from real files where a real file is the base."""
    real_tei = shared("tei", "acl", "D14-1003.tei.xml").read_bytes()
    files = {
        "malformed.tei.xml": real_tei[: len(real_tei) // 2],  # truncated mid-element
        "nobody.tei.xml": b"<TEI xmlns='http://www.tei-c.org/ns/1.0'><teiHeader/><text><body/></text></TEI>",
        "empty.tei.xml": b"",
        "notes.pdf": b"These are plain-text notes that someone renamed to .pdf\n",
        "empty.pdf": b"",
        "bomb.tei.xml": b'<?xml version="1.0"?><!DOCTYPE TEI [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]><TEI>&b;</TEI>',
    }
    paths = {}
    for name, payload in files.items():
        path = tmp_path / "in" / name
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(payload)
        paths[name] = path
    return paths


def _run(args: list[str]):
    return CliRunner().invoke(cli, args, catch_exceptions=False)


def test_parse_folder_of_tei_writes_one_json_per_paper(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name in ("D14-1003.tei.xml", "D14-1010.tei.xml"):
        shutil.copy(shared("tei", "acl", name), src / name)
    result = _run(["parse", str(src), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "2 ok, 0 failed" in result.output
    data = json.loads((tmp_path / "out" / "D14-1003.json").read_text())
    assert data["title"] == "Translation Modeling with Bidirectional Recurrent Neural Networks"


def test_parse_glob_and_docbin_format(tmp_path):
    pattern = str(shared("tei", "with-pdf")) + "/*.tei.xml"
    result = _run(["parse", pattern, "--out", str(tmp_path), "--format", "docbin"])
    assert result.exit_code == 0, result.output
    outputs = sorted(p.name for p in tmp_path.glob("*.spacy"))
    assert outputs == ["2020.acl-main.207.tei.spacy", "N18-3011.tei.spacy", "journal.pone.0319315.tei.spacy"] or len(outputs) == 3
    nlp = scholarly_nlp.blank()
    (doc,) = list(scholarly_nlp.load_docbin(next(tmp_path.glob("N18-3011*.spacy")), nlp.vocab))
    assert doc._.paper_id == "N18-3011" and doc._.sections


def test_batch_goes_on_past_every_bad_file_and_reports_each(tmp_path, bad_inputs):
    good = tmp_path / "in" / "D14-1003.tei.xml"
    shutil.copy(shared("tei", "acl", "D14-1003.tei.xml"), good)
    missing = tmp_path / "in" / "missing.tei.xml"
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["parse", str(tmp_path / "in"), str(missing), "--out", str(out)])
    assert result.exit_code == 1
    assert f"{len(bad_inputs) + 2} file(s): 1 ok, {len(bad_inputs) + 1} failed" in result.output
    for path in list(bad_inputs.values()) + [missing]:
        assert f"failed: {path}" in result.output, f"{path.name} not reported"
    reasons = result.output
    assert "not well-formed" in reasons and "is empty" in reasons and "does not exist" in reasons
    assert "entities" in reasons
    # Only the good paper produced output; no temporary files left behind.
    assert sorted(p.name for p in out.iterdir()) == [MANIFEST_NAME, "D14-1003.json"]


def test_unreadable_file_is_reported(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root can read a chmod 000 file")
    path = tmp_path / "locked.tei.xml"
    shutil.copy(shared("tei", "acl", "D14-1003.tei.xml"), path)
    path.chmod(0)
    result = CliRunner().invoke(cli, ["parse", str(path), "--out", str(tmp_path / "out")])
    assert result.exit_code == 1 and "cannot be read" in result.output


def test_unknown_format_is_named(tmp_path):
    path = tmp_path / "notes.docx"
    path.write_bytes(b"PK\x03\x04 not a paper")
    with pytest.raises(scholarly_nlp.UnknownFormatError) as info:
        scholarly_nlp.read_paper(path)
    assert "notes.docx" in str(info.value)


def test_read_many_api_reports_failures_and_continues(bad_inputs):
    results = list(scholarly_nlp.read_many([*bad_inputs.values(), shared("tei", "acl", "D14-1003.tei.xml")]))
    assert [r.ok for r in results] == [False] * len(bad_inputs) + [True]
    assert all(isinstance(r.error, scholarly_nlp.ScholarlyNLPError) and r.path in str(r.error) for r in results[:-1])


def test_atomic_write_leaves_nothing_when_interrupted(tmp_path, monkeypatch):
    target = tmp_path / "out.json"

    def boom(*_args, **_kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(KeyboardInterrupt):
        scholarly_nlp.write_atomic(target, "{}")
    assert list(tmp_path.iterdir()) == []


def test_grobid_down_is_one_clear_line(tmp_path):
    pdf = shared("tei", "with-pdf", "N18-3011.pdf")
    result = CliRunner().invoke(cli, ["parse", str(pdf), "--out", str(tmp_path), "--grobid-url", "http://127.0.0.1:9"])
    assert result.exit_code == 1
    assert "No GROBID server answers at http://127.0.0.1:9" in result.output and "docker run" in result.output


def test_console_script_runs(tmp_path):
    exe = shutil.which("scholarly-nlp")
    if exe is None:
        pytest.skip("scholarly-nlp console script not installed")
    proc = subprocess.run([exe, "parse", str(shared("tei", "acl", "D14-1003.tei.xml")), "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "1 ok, 0 failed" in proc.stdout


def test_module_entry_point_prints_help():
    proc = subprocess.run([sys.executable, "-m", "scholarly_nlp.cli", "--help"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "parse" in proc.stdout


def test_mixed_batch_shares_options_across_readers(tmp_path):
    """image_dir applies to PDFs and is ignored by the TEI reader in the same batch."""
    inputs = [shared("tei", "with-pdf", "N18-3011.tei.xml"), shared("tei", "with-pdf", "2020.acl-main.207.pdf")]
    results = list(scholarly_nlp.read_many(inputs, image_dir=str(tmp_path / "images")))
    assert [r.ok for r in results] == [True, True], [str(r.error) for r in results]
    pdf_doc = results[1].doc
    assert pdf_doc._.paper_meta["reader"] == "pdf"
    images = [f.image_path for f in pdf_doc._.figures if f.image_path]
    assert images and all(Path(p).is_file() for p in images)
