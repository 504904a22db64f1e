"""Outputs a user can rely on: distinct output names, file modes, movable image paths,
short reprs, and one-line errors (plugins in strict mode and GROBID included)."""

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
from scholarly_nlp import cli as cli_module
from scholarly_nlp.cli import cli
from scholarly_nlp.errors import GrobidUnavailableError
from scholarly_nlp.naming import output_names, paper_stem
from scholarly_nlp.readers import grobid_service
from scholarly_nlp.readers.grobid_service import CACHE_ENV, URL_ENV, GrobidService
from scholarly_nlp.resume import MANIFEST_NAME
from scholarly_nlp.schema import validate_export

from conftest import REPO, shared

try:
    from grobid_standin import StandinGrobid, closed_port_url
except ImportError:  # pragma: no cover
    from tests.grobid_standin import StandinGrobid, closed_port_url

DEMO = REPO / "corpora" / "demo"
EXTENSIONS = (".tei.xml", ".xml", ".tei", ".pdf")


def _run(args: list[str]):
    return CliRunner().invoke(cli, args, catch_exceptions=False)


def paper_meta(data: dict) -> dict:
    """The ``doc._.paper_meta`` value stored in an export."""
    return next(value for name, start, _end, value in data["doc"]["extensions"] if name == "paper_meta" and start is None)


def _python(args: list[str], env: dict[str, str], cwd: Path = REPO, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


# -- output names ----------------------------------------------------------------------


@pytest.mark.parametrize("paths, expected", [
    (["p/D14-1003.tei.xml", "p/N18-3011.pdf"], ["D14-1003", "N18-3011"]),
    (["demo/demo_paper.pdf", "demo/demo_paper.tei.xml"], ["demo_paper.pdf", "demo_paper.tei.xml"]),
    (["a/D10-1042.pdf", "b/D10-1042.pdf", "c/other.pdf"], ["a__D10-1042.pdf", "b__D10-1042.pdf", "other"]),
    (["x/a/D10-1042.pdf", "x/b/c/D10-1042.pdf"], ["a__D10-1042.pdf", "b__c__D10-1042.pdf"]),
    (["a/Paper.pdf", "b/paper.pdf"], ["a__Paper.pdf", "b__paper.pdf"]),  # apart on case-insensitive disks too
    (["a/x.pdf", "a/x.pdf", "x-2.pdf"], ["x.pdf", "x.pdf-2", "x-2"]),  # the same file twice
    (["notes"], ["notes"]),
])
def test_output_names_are_distinct_and_predictable(paths, expected):
    names = output_names(paths, EXTENSIONS)
    assert names == expected
    assert len({n.casefold() for n in names}) == len(names)
    if len(set(paths)) == len(paths):  # the order of distinct inputs does not change anyone's name
        assert output_names(list(reversed(paths)), EXTENSIONS) == list(reversed(expected))


def test_paper_stem_strips_the_longest_format_extension():
    assert paper_stem("a/D14-1003.tei.xml", EXTENSIONS) == "D14-1003"
    assert paper_stem("a/2020.acl-main.207.PDF", EXTENSIONS) == "2020.acl-main.207"
    assert paper_stem("a/paper.md", EXTENSIONS) == "paper"


def test_pdf_and_tei_of_one_paper_both_get_an_output(tmp_path):
    out = tmp_path / "out"
    result = _run(["parse", str(DEMO), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "2 file(s): 2 ok, 0 failed" in result.output
    assert sorted(p.name for p in out.glob("*.json")) == ["demo_paper.pdf.json", "demo_paper.tei.xml.json"]
    readers = {paper_meta(json.loads(p.read_text()))["reader"] for p in out.glob("*.json")}
    assert readers == {"pdf", "tei"}


def test_same_file_name_in_two_folders_keeps_both_and_their_images(tmp_path):
    for folder in ("a", "b"):
        (tmp_path / "in" / folder).mkdir(parents=True)
        shutil.copy(DEMO / "demo_paper.pdf", tmp_path / "in" / folder / "demo_paper.pdf")
    out = tmp_path / "out"
    result = _run(["parse", str(tmp_path / "in"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "2 file(s): 2 ok" in result.output
    assert sorted(p.name for p in out.glob("*.json")) == ["a__demo_paper.pdf.json", "b__demo_paper.pdf.json"]
    for name in ("a__demo_paper.pdf", "b__demo_paper.pdf"):
        meta = paper_meta(json.loads((out / f"{name}.json").read_text()))
        images = [f["image_path"] for f in meta["figures"] if f["image_path"]]
        assert images and all(p.startswith(f"images/{name}/") for p in images), images
        assert all((out / p).is_file() for p in images)


def test_a_folder_and_a_glob_naming_the_same_file_parse_it_once(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(shared("tei", "acl", "D14-1003.tei.xml"), src / "D14-1003.tei.xml")
    result = _run(["parse", str(src), str(src / "*.xml"), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0 and "parsed 1 file(s): 1 ok" in result.output
    assert [p.name for p in (tmp_path / "out").iterdir() if p.name != MANIFEST_NAME] == ["D14-1003.json"]


def test_demo_writes_both_exports_and_they_validate(tmp_path):
    result = _run(["demo", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    for name in ("demo_paper.pdf.json", "demo_paper.tei.xml.json"):
        validate_export(json.loads((tmp_path / name).read_text()))
        assert name in result.output


def test_parse_writes_validating_exports_and_full_ones_on_request(tmp_path):
    tei = shared("tei", "biomed")
    paths = [str(p) for p in sorted(tei.glob("*.tei.xml"))[:2]] + [str(shared("tei", "acl", "D14-1010.tei.xml"))]
    assert _run(["parse", *paths, "--out", str(tmp_path / "c")]).exit_code == 0
    assert _run(["parse", *paths, "--out", str(tmp_path / "f"), "--json-full"]).exit_code == 0
    for compact in sorted((tmp_path / "c").glob("*.json")):
        full = tmp_path / "f" / compact.name
        data, full_data = json.loads(compact.read_text()), json.loads(full.read_text())
        validate_export(data)
        validate_export(full_data)
        assert "spacy" not in data and "spacy" in full_data
        assert compact.stat().st_size < full.stat().st_size / 2
    result = CliRunner().invoke(cli, ["parse", paths[0], "--out", str(tmp_path / "d"), "--format", "docbin", "--json-full"])
    assert result.exit_code == 2 and "--json-full applies to --format json" in result.output


# -- file modes and movable outputs ----------------------------------------------------


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664)])
def test_written_files_get_the_umask_mode(tmp_path, umask, mode):
    previous = os.umask(umask)
    try:
        scholarly_nlp.write_atomic(tmp_path / "x.json", "{}")
        result = _run(["parse", str(shared("tei", "acl", "D14-1003.tei.xml")), "--out", str(tmp_path / "out"),
                       "--format", "docbin"])
    finally:
        os.umask(previous)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "x.json").stat().st_mode & 0o777 == mode
    assert (tmp_path / "out" / "D14-1003.spacy").stat().st_mode & 0o777 == mode
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "x.json"]  # no temporary file left


def test_an_output_folder_can_be_moved_with_its_images(tmp_path):
    pdf = tmp_path / "in" / "demo_paper.pdf"
    pdf.parent.mkdir()
    shutil.copy(DEMO / "demo_paper.pdf", pdf)
    out = tmp_path / "out"
    assert _run(["parse", str(pdf), "--out", str(out)]).exit_code == 0
    assert _run(["parse", str(pdf), "--out", str(tmp_path / "bin"), "--format", "docbin"]).exit_code == 0
    moved = tmp_path / "elsewhere" / "moved"
    moved.parent.mkdir()
    shutil.move(str(out), moved)
    shutil.move(str(tmp_path / "bin"), tmp_path / "elsewhere" / "bin")
    for doc in (scholarly_nlp.load_json(moved / "demo_paper.json"),
                next(scholarly_nlp.load_docbin(tmp_path / "elsewhere" / "bin" / "demo_paper.spacy"))):
        images = [f.image_path for f in doc._.figures if f.image_path]
        assert images and all(Path(p).is_file() for p in images), images


def test_saving_does_not_change_the_docs_image_paths(tmp_path):
    doc = scholarly_nlp.read(DEMO / "demo_paper.pdf", image_dir=str(tmp_path / "out" / "images"))
    before = [f.image_path for f in doc._.figures]
    scholarly_nlp.save_json(doc, tmp_path / "out" / "p.json")
    scholarly_nlp.save_docbin([doc], tmp_path / "out" / "p.spacy")
    assert [f.image_path for f in doc._.figures] == before
    stored = paper_meta(json.loads((tmp_path / "out" / "p.json").read_text()))
    assert [f["image_path"] for f in stored["figures"] if f["image_path"]] == [
        os.path.relpath(p, tmp_path / "out") for p in before if p]
    assert stored["image_paths_relative_to_file"] is True
    loaded = scholarly_nlp.load_json(tmp_path / "out" / "p.json")
    assert "image_paths_relative_to_file" not in loaded._.paper_meta
    assert [os.path.abspath(f.image_path) for f in loaded._.figures if f.image_path] == [
        os.path.abspath(p) for p in before if p]


def test_image_paths_outside_the_output_folder_are_stored_absolute(tmp_path):
    doc = scholarly_nlp.read(DEMO / "demo_paper.pdf", image_dir=str(tmp_path / "images"))
    scholarly_nlp.save_json(doc, tmp_path / "out" / "p.json")
    stored = paper_meta(json.loads((tmp_path / "out" / "p.json").read_text()))
    assert all(os.path.isabs(f["image_path"]) for f in stored["figures"] if f["image_path"])


def test_exports_of_the_previous_format_keep_their_image_paths_as_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    doc = scholarly_nlp.read(DEMO / "demo_paper.pdf", image_dir="some/where")  # relative to the working folder
    data = {key: value for key, value in scholarly_nlp.doc_to_json(doc).items() if key != "doc"}
    data.update(format_version=1, spacy=doc.to_json(),
                extensions=[[k[1], k[2], k[3], v] for k, v in doc.user_data.items() if k[0] == "._."])
    (tmp_path / "old.json").write_text(json.dumps(data))
    loaded = scholarly_nlp.load_json(tmp_path / "old.json")
    assert [f.image_path for f in loaded._.figures] == [f.image_path for f in doc._.figures]


# -- reprs -----------------------------------------------------------------------------


def test_reprs_are_short_and_name_what_they_are(nlp):
    doc = scholarly_nlp.read(shared("tei", "acl", "D14-1003.tei.xml"), nlp=nlp)
    figure, citance, section = doc._.figures[1], doc._.citances[0], doc._.sections[0]
    assert repr(figure).startswith(f"Figure(id={figure.id!r}, kind={figure.kind!r}, label={figure.label!r}, mentions=")
    assert repr(section) == (f"Section(number={section.number!r}, title={section.title!r}, level={section.level}, "
                             f"paragraphs={len(section.paragraphs)})")
    assert repr(citance).startswith("Citance(start_char=") and repr(citance.bib_ids[:2])[:-1] in repr(citance)
    for value in (*doc._.figures, *doc._.citances, *doc._.sections):
        assert len(repr(value)) < 200 and "\n" not in repr(value)
    assert figure.caption_text not in repr(figure) and citance.text not in repr(citance)


# -- one-line errors -------------------------------------------------------------------


def test_unexpected_errors_are_one_line_unless_debugging(tmp_path, monkeypatch):
    def broken(*_args, **_kwargs):
        raise RuntimeError("disk\nis full")

    monkeypatch.setattr(cli_module, "expand_inputs", broken)  # an error of the whole run, not of one paper
    args = ["parse", str(shared("tei", "acl", "D14-1003.tei.xml")), "--out", str(tmp_path)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        "error: unexpected RuntimeError: disk is full (set SCHOLARLY_NLP_DEBUG=1 for the traceback)"]
    monkeypatch.setenv("SCHOLARLY_NLP_DEBUG", "1")
    assert isinstance(CliRunner().invoke(cli, args).exception, RuntimeError)


def test_an_unexpected_error_writing_one_paper_is_its_failed_line(tmp_path, monkeypatch):
    def broken(*_args, **_kwargs):
        raise RuntimeError("disk\nis full")

    monkeypatch.setattr(cli_module, "save_json", broken)
    paper = shared("tei", "acl", "D14-1003.tei.xml")
    result = CliRunner().invoke(cli, ["parse", str(paper), "--out", str(tmp_path)])
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        f"failed: {paper}: could not be written (RuntimeError: disk is full)"]
    assert "parsed 1 file(s): 0 ok, 1 failed" in result.stdout
    monkeypatch.setenv("SCHOLARLY_NLP_DEBUG", "1")  # the traceback too, and the batch still ends normally
    result = CliRunner().invoke(cli, ["parse", str(paper), "--out", str(tmp_path)])
    assert result.exit_code == 1 and "Traceback" in result.stderr and "0 ok, 1 failed" in result.stdout


def test_an_output_folder_that_cannot_be_made_is_one_line(tmp_path):
    (tmp_path / "file").write_text("not a folder")
    result = CliRunner().invoke(cli, ["parse", str(shared("tei", "acl", "D14-1003.tei.xml")), "--out",
                                      str(tmp_path / "file" / "out")])
    assert result.exit_code == 1
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: ") and "file/out" in line


@pytest.fixture()
def broken_plugin_env(tmp_path) -> dict[str, str]:
    """An installed-looking plugin (a dist-info with an entry point) that fails on import."""
    site = tmp_path / "site"
    (site / "broken_scholarly_plugin-0.1.dist-info").mkdir(parents=True)
    (site / "broken_scholarly_plugin.py").write_text('raise RuntimeError("broken on purpose\\nsecond line")\n')
    info = site / "broken_scholarly_plugin-0.1.dist-info"
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-scholarly-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[scholarly_nlp]\nbroken = broken_scholarly_plugin\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def test_a_broken_plugin_in_strict_mode_is_one_error_line(broken_plugin_env):
    env = {**broken_plugin_env, "SCHOLARLY_NLP_STRICT_PLUGINS": "1"}
    proc = _python(["-m", "scholarly_nlp.cli", "plugins"], env)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.splitlines() == ["error: scholarly_nlp plugin 'broken' failed to import "
                                        "(RuntimeError: broken on purpose second line); it was skipped."]
    assert proc.stdout == ""


def test_a_broken_plugin_without_strict_mode_is_one_warning_line(broken_plugin_env):
    env = {**broken_plugin_env, "SCHOLARLY_NLP_STRICT_PLUGINS": "0"}
    proc = _python(["-m", "scholarly_nlp.cli", "plugins"], env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == ["warning: scholarly_nlp plugin 'broken' failed to import "
                                        "(RuntimeError: broken on purpose second line); it was skipped."]
    assert "builtin" in proc.stdout


# -- GROBID: advice that fits, and a quiet client --------------------------------------


@pytest.mark.parametrize("source", ["argument", "env", "default"])
def test_no_grobid_server_advice_fits_where_the_url_came_from(source, monkeypatch, tmp_path):
    url = closed_port_url()
    monkeypatch.delenv(URL_ENV, raising=False)
    if source == "env":
        monkeypatch.setenv(URL_ENV, url)
    if source == "default":
        monkeypatch.setattr(grobid_service, "DEFAULT_URL", url)
    service = GrobidService(url=url if source == "argument" else None, cache_dir=tmp_path)
    with pytest.raises(GrobidUnavailableError) as info:
        service.check()
    message = str(info.value)
    assert message.startswith(f"No GROBID server answers at {url}") and "docker run" in message
    assert ("--grobid-url" in message) == (source == "default")
    assert ("SCHOLARLY_NLP_GROBID_URL" in message) == (source != "argument")


def test_cli_with_grobid_url_does_not_tell_to_pass_it(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    url = closed_port_url()
    result = CliRunner().invoke(cli, ["parse", str(shared("tei", "with-pdf", "N18-3011.pdf")), "--out",
                                      str(tmp_path / "out"), "--grobid-url", url])
    assert result.exit_code == 1
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"error: No GROBID server answers at {url}") and "--grobid-url" not in line


@pytest.mark.needs_data("tei/with-pdf")
def test_grobid_clients_own_messages_never_reach_the_terminal(tmp_path):
    """A busy server (503, retried) and a failing file: only our summary and failure lines."""
    with_pdf = shared("tei", "with-pdf")
    pdfs = [str(with_pdf / f"{stem}.pdf") for stem in ("2020.acl-main.207", "N18-3011", "journal.pone.0319315")]
    env = {key: value for key, value in os.environ.items() if key != URL_ENV}
    env.update({CACHE_ENV: str(tmp_path / "cache"), "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"})
    with StandinGrobid(with_pdf) as standin:
        standin.busy_first = 2
        standin.fail_names = {"N18-3011.pdf"}
        script = tmp_path / "run_cli.py"
        script.write_text(
            "from scholarly_nlp.readers import grobid_service\n"
            "grobid_service.GrobidService.__init__.__kwdefaults__['busy_retry_wait'] = 0.01  # no 5 s waits\n"
            "from scholarly_nlp.cli import main\n"
            "main()\n")
        proc = _python([str(script), "parse", *pdfs, "--out", str(tmp_path / "out"), "--grobid-url", standin.url], env)
        assert standin.fulltext_count >= 5  # two 503s were retried
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.splitlines() == [f"parsed 3 file(s): 2 ok, 1 failed; output in {tmp_path / 'out'}"]
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"failed: {pdfs[1]}: GROBID failed on it (HTTP 500")
