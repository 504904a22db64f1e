"""Issue 15, output side: no paper stops a ``parse`` or ``analyze`` batch (hostile file names,
an output folder that refuses writes, a full disk, values a DocBin cannot hold, a failing
pipeline component), and a second run over the same output resumes instead of redoing.

Every hostile input is made here, in tmp_path, from the demo TEI or real ACL TEI.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from spacy.language import Language

import scholarly_nlp
from scholarly_nlp import cli as cli_module
from scholarly_nlp.cli import cli
from scholarly_nlp.doc.serialize import load_docbin, save_docbin, write_atomic
from scholarly_nlp.naming import MAX_NAME_BYTES, fitted_name, output_names, truncate_bytes
from scholarly_nlp.resume import MANIFEST_NAME, Manifest, input_digest

from conftest import REPO, shared

DEMO_TEI = REPO / "corpora" / "demo" / "demo_paper.tei.xml"
NAME_MAX = 255


def run(*args: str):
    """``scholarly-nlp`` with ``args``, in process."""
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def make_inputs(folder: Path, *names: str, source: Path = DEMO_TEI) -> list[Path]:
    """Copies of a valid TEI under ``names`` in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / name for name in names]
    for path in paths:
        shutil.copyfile(source, path)
    return paths


def outputs(out: Path) -> list[str]:
    """The output files of a folder (no manifest, no image folder), sorted."""
    return sorted(p.name for p in out.iterdir() if p.is_file() and p.name != MANIFEST_NAME)


def no_temp_files(out: Path) -> bool:
    return not any(p.name.endswith(".tmp") for p in out.iterdir())


# -- hostile names -----------------------------------------------------------------------


def test_an_input_name_that_is_not_utf8_is_written_under_its_own_bytes(tmp_path):
    folder = tmp_path / "in"
    make_inputs(folder, "good.tei.xml")
    bad = os.fsencode(folder) + b"/bad\xff.tei.xml"
    shutil.copyfile(DEMO_TEI, bad)
    broken = os.fsencode(folder) + b"/broken\xfe.tei.xml"
    with open(broken, "wb") as handle:
        handle.write(b"<TEI><text><body><p>unclosed")
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["parse", str(folder), "--out", str(out)])
    assert result.exit_code == 1, result.output
    assert "parsed 3 file(s): 2 ok, 1 failed" in result.stdout
    assert "failed: " in result.stderr and "broken" in result.stderr  # its failure line prints too
    written = os.listdir(os.fsencode(out))
    assert b"bad\xff.json" in written and b"good.json" in written
    with open(os.fsencode(out) + b"/bad\xff.json", "rb") as handle:
        data = json.loads(handle.read().decode("utf-8"))  # valid UTF-8, the name as its \udcff escape
    meta = next(value for name, start, _end, value in data["doc"]["extensions"] if name == "paper_meta")
    assert os.fsencode(meta["source"]) == bad  # the exact path comes back

    result = CliRunner().invoke(cli, ["parse", str(folder), "--out", str(tmp_path / "bin"), "--format", "docbin"])
    assert "2 ok, 1 failed" in result.stdout
    (doc,) = load_docbin(os.fsdecode(os.fsencode(tmp_path / "bin") + b"/bad\xff.spacy"))
    assert doc._.paper_meta["source"].endswith("bad\ufffd.tei.xml")  # msgpack keeps only valid UTF-8


def test_a_245_byte_input_name_gets_a_short_predictable_output_name(tmp_path):
    (long_input,) = make_inputs(tmp_path / "in", "a" * 241 + ".tei.xml")
    assert len(os.fsencode(long_input.name)) == 249
    name = output_names([long_input])[0]
    digest = hashlib.sha256(("a" * 241).encode()).hexdigest()[:10]
    assert name == "a" * (MAX_NAME_BYTES - 11) + "~" + digest
    for command, suffix in (("parse", ".json"), ("parse-docbin", ".spacy")):
        out = tmp_path / command
        args = ["parse", str(long_input), "--out", str(out)] + (["--format", "docbin"] if "docbin" in command else [])
        result = run(*args)
        assert result.exit_code == 0, result.output
        assert outputs(out) == [name + suffix] and no_temp_files(out)


def test_fitted_names_keep_short_names_and_never_cut_a_character():
    assert fitted_name("D14-1003") == "D14-1003"
    long = "é" * 150  # 300 bytes
    fitted = fitted_name(long)
    assert fitted == fitted_name(long) and len(fitted.encode()) <= MAX_NAME_BYTES
    assert fitted.startswith("é" * 94) and fitted[94] == "~"
    assert fitted_name(long + "x") != fitted  # distinct names stay distinct
    assert truncate_bytes("ab\udcffcd", 3) == "ab\udcff"  # an undecodable byte counts as one


def test_write_atomic_takes_a_target_of_the_longest_allowed_name(tmp_path):
    target = tmp_path / ("x" * (NAME_MAX - 4) + ".txt")
    write_atomic(target, "text")
    assert target.read_text() == "text" and [p.name for p in tmp_path.iterdir()] == [target.name]


# -- output folders that refuse writes ---------------------------------------------------


def _refusing_os_open(monkeypatch, should_refuse, opener):
    """Make ``os.open`` of write_atomic's temporary files for which ``should_refuse(name)``
    call ``opener(path)`` instead; every other open is the real one."""
    real_open = os.open

    def fake_open(path, flags, mode=0o777, *, dir_fd=None):
        name = os.path.basename(os.fsdecode(path))
        if name.endswith(".tmp") and should_refuse(name):
            return opener(path)
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", fake_open)


def test_a_read_only_output_folder_fails_each_paper_and_the_batch_ends(tmp_path, monkeypatch):
    # As root, chmod cannot make a folder read-only: refuse the writes as the kernel would.
    def refuse(path):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), path)

    _refusing_os_open(monkeypatch, lambda name: True, refuse)
    inputs = make_inputs(tmp_path / "in", "one.tei.xml", "two.tei.xml")
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["parse", *map(str, inputs), "--out", str(out)])
    assert result.exit_code == 1
    assert "parsed 2 file(s): 0 ok, 2 failed" in result.stdout
    lines = result.stderr.splitlines()
    assert len(lines) == 2 and all(line.startswith("failed: ") and "PermissionError" in line for line in lines)
    assert outputs(out) == [] and not (out / MANIFEST_NAME).exists()


def test_a_full_disk_fails_that_paper_and_the_others_are_written(tmp_path, monkeypatch):
    real_open = os.open
    _refusing_os_open(monkeypatch, lambda name: name.startswith(".full."),
                      lambda path: real_open("/dev/full", os.O_WRONLY))  # every write: ENOSPC
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    inputs = make_inputs(tmp_path / "in", "first.tei.xml", "full.tei.xml", "last.tei.xml")
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["parse", *map(str, inputs), "--out", str(out)])
    assert result.exit_code == 1
    assert "parsed 3 file(s): 2 ok, 1 failed" in result.stdout
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"failed: {inputs[1]}: could not be written (OSError: [Errno 28] No space left")
    assert outputs(out) == ["first.json", "last.json"] and no_temp_files(out)


# -- values a format cannot hold ---------------------------------------------------------


def _with_page(page: int, marker: str):
    """A read_many that gives the first figure of each paper whose path holds ``marker`` this page."""
    real_read_many = cli_module.read_many

    def read_many(*args, **kwargs):
        for result in real_read_many(*args, **kwargs):
            if result.ok and marker in result.path:
                result.doc._.paper_meta["figures"][0]["page"] = page
            yield result

    return read_many


def test_a_docbin_page_number_of_2_to_the_64_fails_that_paper_only(tmp_path, monkeypatch):
    monkeypatch.setattr(cli_module, "read_many", _with_page(2**64, "huge"))
    inputs = make_inputs(tmp_path / "in", "huge.tei.xml", "fine.tei.xml")
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["parse", *map(str, inputs), "--out", str(out), "--format", "docbin"])
    assert result.exit_code == 1
    assert "parsed 2 file(s): 1 ok, 1 failed" in result.stdout
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"failed: {inputs[0]}: could not be written (")
    assert "the doc extension ._.paper_meta holds a value msgpack cannot store" in line
    assert outputs(out) == ["fine.spacy"] and no_temp_files(out)


def test_save_docbin_names_the_value_and_leaves_the_doc_as_it_was(tmp_path, nlp):
    doc = scholarly_nlp.read(DEMO_TEI, nlp=nlp)
    doc._.paper_meta["figures"][0]["page"] = 2**64
    before = dict(doc.user_data)
    with pytest.raises(scholarly_nlp.ScholarlyNLPError, match=r"\._\.paper_meta holds a value msgpack cannot store"):
        save_docbin([doc], tmp_path / "x.spacy")
    assert doc.user_data == before and list(tmp_path.iterdir()) == []


# -- analyze: a failing component, a failing analysis, non-finite scores -------------------


class _Hostile:
    """A pipe that fails on papers whose id holds ``boom`` and scores every paper NaN."""

    def __call__(self, doc):
        if "boom" in (doc._.paper_id or ""):
            raise RuntimeError("component exploded")
        return doc

    def analysis(self, doc):
        if "analysis_fails" in (doc._.paper_id or ""):
            raise KeyError("missing field")
        return {"test_score": float("nan"), "test_scores": [float("inf"), 0.5]}


@Language.factory("test_batch_robustness_hostile")
def make_hostile(nlp, name):
    return _Hostile()


@pytest.fixture(scope="module")
def hostile_pipeline(tmp_path_factory) -> Path:
    nlp = scholarly_nlp.blank()
    nlp.add_pipe("test_batch_robustness_hostile")
    path = tmp_path_factory.mktemp("pipelines") / "hostile"
    nlp.to_disk(path)
    return path


def test_analyze_fails_only_the_papers_a_component_or_its_analysis_fails_on(tmp_path, hostile_pipeline):
    inputs = make_inputs(tmp_path / "in", "boom.tei.xml", "good.tei.xml", "analysis_fails.tei.xml")
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["analyze", *map(str, inputs), "--out", str(out), "--pipeline",
                                      str(hostile_pipeline), "--quiet"])
    assert result.exit_code == 1
    assert f"analyzed 3 file(s) with {hostile_pipeline}: 1 ok, 2 failed" in result.stdout
    failures = sorted(result.stderr.splitlines())
    assert failures[0].startswith(f"failed: {inputs[2]}: could not be analysed (KeyError: 'missing field')")
    assert failures[1].startswith(f"failed: {inputs[0]}: ") and "RuntimeError: component exploded" in failures[1]
    assert outputs(out) == ["good.analysis.json"]
    text = (out / "good.analysis.json").read_text(encoding="utf-8")
    record = json.loads(text, parse_constant=lambda word: pytest.fail(f"{word} in strict JSON"))
    assert record["test_score"] is None and record["test_scores"] == [None, 0.5]


# -- resume --------------------------------------------------------------------------------


def _inode(path: Path) -> int:
    return path.stat().st_ino  # write_atomic renames a new file into place: a rewrite changes it


def test_a_second_parse_skips_what_is_written_and_redoes_what_changed(tmp_path):
    a, b, c = make_inputs(tmp_path / "in", "a.tei.xml", "b.tei.xml", "c.tei.xml")
    c.write_text("<TEI><text><body><p>unclosed", encoding="utf-8")
    out = tmp_path / "out"
    args = ["parse", str(tmp_path / "in"), "--out", str(out)]
    assert "parsed 3 file(s): 2 ok, 1 failed; output" in run(*args).output

    shutil.copyfile(shared("tei", "acl", "D14-1003.tei.xml"), a)  # changed content
    (out / "b.json").unlink()  # a deleted output
    shutil.copyfile(DEMO_TEI, c)  # the failed paper, now fixed
    result = run(*args)
    assert result.exit_code == 0
    assert "parsed 3 file(s): 3 ok, 0 failed; output" in result.output
    assert json.loads((out / "a.json").read_text())["paper_id"] == "a"
    assert "Bidirectional Recurrent" in json.loads((out / "a.json").read_text())["title"]

    inodes = {name: _inode(out / name) for name in ("a.json", "b.json", "c.json")}
    result = run(*args)
    assert result.exit_code == 0
    assert "parsed 3 file(s): 0 ok, 0 failed, skipped 3 already written (use --force to redo)" in result.output
    assert inodes == {name: _inode(out / name) for name in inodes}


def test_force_and_changed_options_redo_every_paper(tmp_path):
    make_inputs(tmp_path / "in", "a.tei.xml", "b.tei.xml")
    out = tmp_path / "out"
    args = ["parse", str(tmp_path / "in"), "--out", str(out)]
    run(*args)
    assert "0 ok, 0 failed, skipped 2" in run(*args).output
    assert "2 ok, 0 failed; output" in run(*args, "--force").output
    assert "2 ok, 0 failed; output" in run(*args, "--json-full").output  # another export: redone
    assert "skipped 2" in run(*args, "--json-full").output
    assert "2 ok, 0 failed; output" in run(*args, "--format", "docbin").output  # another file each
    assert "skipped 2" in run(*args, "--format", "docbin").output
    assert "spacy" in json.loads((out / "a.json").read_text())
    assert "2 ok, 0 failed; output" in run(*args).output  # the files hold full exports: redone
    assert "spacy" not in json.loads((out / "a.json").read_text())


def test_a_truncated_output_is_redone(tmp_path):
    make_inputs(tmp_path / "in", "a.tei.xml", "b.tei.xml")
    out = tmp_path / "out"
    args = ["parse", str(tmp_path / "in"), "--out", str(out)]
    run(*args)
    whole = (out / "a.json").read_bytes()
    (out / "a.json").write_bytes(whole[: len(whole) // 2])  # a disk filled up, an editor saved half
    result = run(*args)
    assert "1 ok, 0 failed, skipped 1 already written" in result.output
    assert (out / "a.json").read_bytes() == whole


def test_a_failed_paper_is_retried_and_a_written_one_is_not(tmp_path):
    good, bad = make_inputs(tmp_path / "in", "good.tei.xml", "bad.tei.xml")
    bad.write_bytes(b"")
    out = tmp_path / "out"
    args = ["parse", str(tmp_path / "in"), "--out", str(out)]
    assert "1 ok, 1 failed" in run(*args).output
    result = run(*args)  # still broken: tried again, failed again, the good one skipped
    assert result.exit_code == 1 and "0 ok, 1 failed, skipped 1 already written" in result.output


def test_analyze_resumes_and_redoes_all_with_another_pipeline(tmp_path, hostile_pipeline):
    pipeline = tmp_path / "pipeline"
    shutil.copytree(hostile_pipeline, pipeline)
    make_inputs(tmp_path / "in", "a.tei.xml", "b.tei.xml")
    args = ["analyze", str(tmp_path / "in"), "--out", str(tmp_path / "out"), "--pipeline", str(pipeline), "--quiet"]
    assert "2 ok, 0 failed; output" in run(*args).output
    assert "0 ok, 0 failed, skipped 2 already written (use --force to redo)" in run(*args).output
    meta = pipeline / "meta.json"
    meta.write_text(meta.read_text())  # a retrained pipeline: its files change
    os.utime(meta, ns=(meta.stat().st_atime_ns, meta.stat().st_mtime_ns + 10**9))
    assert "2 ok, 0 failed; output" in run(*args).output


def test_the_manifest_survives_a_killed_run_and_a_torn_line(tmp_path):
    (tmp_path / "x.json").write_text("{}")
    (tmp_path / "y.json").write_text("{}")
    manifest = Manifest(tmp_path, {"format": "json"})
    manifest.record("x.json", "1" * 64)
    manifest.record("y.json", "2" * 64)  # no close(): the run was killed here
    with open(tmp_path / MANIFEST_NAME, "a", encoding="utf-8") as handle:
        handle.write('{"output": "z.json", "sha')  # torn last line
    again = Manifest(tmp_path, {"format": "json"})
    assert again.is_done("x.json", "1" * 64) and again.is_done("y.json", "2" * 64)
    assert not again.is_done("x.json", "3" * 64)  # other content
    assert not Manifest(tmp_path, {"format": "docbin"}).is_done("x.json", "1" * 64)  # other options
    (tmp_path / "y.json").unlink()
    assert not again.is_done("y.json", "2" * 64)  # output gone


def test_input_digest_reads_regular_files_only(tmp_path):
    (paper,) = make_inputs(tmp_path, "p.tei.xml")
    assert input_digest(paper) == hashlib.sha256(DEMO_TEI.read_bytes()).hexdigest()
    fifo = tmp_path / "fifo.tei.xml"
    os.mkfifo(fifo)
    assert input_digest(fifo) is None  # returns at once: a FIFO is never waited on
    assert input_digest("/dev/zero") is None and input_digest(tmp_path / "missing") is None
