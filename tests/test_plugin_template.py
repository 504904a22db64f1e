"""The plugin template (``templates/plugin``) installs, loads in a fresh process and works.

The template is copied to a temporary folder and installed there with
``pip install --no-deps --no-build-isolation --target <tmp>/site`` by the running
interpreter; fresh processes see it through ``PYTHONPATH``. Nothing is installed into the
environment, so nothing can leak into it (nor into other test runs sharing it), the test
passes any number of times, and a copy of the template already installed (editable or not)
is shadowed by the fresh one, which the test checks it imported. The temporary folder is
removed afterwards.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import scholarly_nlp
from scholarly_nlp import plugins

from conftest import REPO, shared

TEMPLATE = REPO / "templates" / "plugin"
DIST = "scholarly-nlp-citation-density"
PACKAGE = "scholarly_citation_density"
PLUGIN = "citation_density"
COMPONENT = "citation_density"
REAL_PAPER = ("tei", "acl", "D14-1003.tei.xml")
PLUGIN_ENV = (plugins.ENV_STRICT, plugins.ENV_ALLOW, plugins.ENV_DISABLE)
TIMEOUT = 300


# --------------------------------------------------------------------------- the template's own rules


def _template_sources() -> list[Path]:
    return sorted(p for p in TEMPLATE.rglob("*.py") if "build" not in p.parts and "__pycache__" not in p.parts)


def test_template_uses_only_the_public_api():
    """Every scholarly_nlp name the template (package and tests) uses is in ``scholarly_nlp.__all__``."""
    public = set(scholarly_nlp.__all__)
    assert _template_sources(), f"no Python files under {TEMPLATE}"
    for source in _template_sources():
        tree = ast.parse(source.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            where = f"{source.relative_to(TEMPLATE)}:{getattr(node, 'lineno', '?')}"
            if isinstance(node, ast.Import):
                private = [a.name for a in node.names if a.name.startswith("scholarly_nlp.")]
                assert not private, f"{where} imports {private}; use `from scholarly_nlp import ...`"
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("scholarly_nlp"):
                assert node.module == "scholarly_nlp", f"{where} imports from {node.module}"
                missing = [a.name for a in node.names if a.name not in public]
                assert not missing, f"{where} imports {missing}, not in scholarly_nlp.__all__"
            elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                  and node.value.id == "scholarly_nlp"):
                assert node.attr in public, f"{where} uses scholarly_nlp.{node.attr}, not in scholarly_nlp.__all__"


def test_template_declares_one_entry_point_in_the_scholarly_nlp_group():
    import tomllib

    project = tomllib.loads((TEMPLATE / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == DIST
    assert project["entry-points"] == {plugins.ENTRY_POINT_GROUP: {PLUGIN: f"{PACKAGE}.plugin"}}


# --------------------------------------------------------------------------- installed, in fresh processes


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(site folder, template copy): the template installed with pip into a temporary folder."""
    root = tmp_path_factory.mktemp("plugin_template")
    copy, site = root / "plugin", root / "site"
    shutil.copytree(TEMPLATE, copy, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", ".pytest_cache"))
    try:
        process = subprocess.run(
            [sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-input",
             "--disable-pip-version-check", "--target", str(site), str(copy)],
            capture_output=True, text=True, timeout=TIMEOUT)
        assert process.returncode == 0, f"pip install of the template failed:\n{process.stdout}\n{process.stderr}"
        assert (site / PACKAGE / "plugin.py").is_file()
        yield site, copy
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _env(site: Path, **extra: str) -> dict[str, str]:
    """The environment of a fresh process: the template on the path, this plugin alone, strict."""
    env = {k: v for k, v in os.environ.items() if k not in PLUGIN_ENV}
    env["PYTHONPATH"] = os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])])
    env[plugins.ENV_ALLOW] = PLUGIN  # the built-in plugin is always loaded; others cannot interfere
    env[plugins.ENV_STRICT] = "1"  # a template that fails to load is an error, not a warning
    env.update(extra)
    return env


def _run(args: list[str], env: dict[str, str], cwd: Path) -> str:
    process = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT)
    assert process.returncode == 0, f"{args[:3]} failed ({process.returncode}):\n{process.stdout}\n{process.stderr}"
    return process.stdout


FRESH_PROCESS = """
import json, sys
import scholarly_nlp
nlp = scholarly_nlp.blank()
nlp.add_pipe("citation_density")
doc = scholarly_nlp.read(sys.argv[1], nlp=nlp)
doc = nlp(doc)
nlp.to_disk(sys.argv[2])
print(json.dumps({
    "summary": doc._.citation_density,
    "record": scholarly_nlp.get_registry().plugins["citation_density"].to_dict(),
    "module": sys.modules["scholarly_citation_density"].__file__,
}))
"""

SPACY_ONLY = """
import json, sys
import spacy
nlp = spacy.load(sys.argv[1])  # scholarly_nlp is not imported by hand: spaCy's entry points do it
print(json.dumps({"pipe_names": nlp.pipe_names, "summary": nlp("Plain text. Two sentences.")._.citation_density}))
"""


def expected_summary(path: Path) -> tuple[list[tuple], int, int]:
    """Citances per section of a paper, computed here by a plain scan (the oracle)."""
    doc = scholarly_nlp.read(path)
    sections = doc._.sections
    per_section = {i: 0 for i in range(len(sections))}
    outside = 0
    for citance in doc._.citances:
        owners = [i for i, s in enumerate(sections) if s.span.start <= citance.sentence.start < s.span.end]
        if owners:
            per_section[owners[0]] += 1
        else:
            outside += 1
    rows = [(s.number, s.title, per_section[i]) for i, s in enumerate(sections)]
    return rows, outside, len(doc._.citances)


@pytest.mark.slow
def test_template_installs_and_runs_on_a_real_paper_in_a_fresh_process(installed, tmp_path):
    site, _copy = installed
    paper = shared(*REAL_PAPER)
    out = _run([sys.executable, "-c", FRESH_PROCESS, str(paper), str(tmp_path / "pipeline")], _env(site), tmp_path)
    result = json.loads(out.strip().splitlines()[-1])
    assert Path(result["module"]).resolve().is_relative_to(site.resolve()), result["module"]  # the fresh copy
    record = result["record"]
    assert (record["status"], record["version"], record["module"]) == ("loaded", "0.1.0", f"{PACKAGE}.plugin")
    assert record["registered"] == {"components": [COMPONENT], "extensions": ["doc._.citation_density"],
                                    "commands": ["register_commands"]}
    summary = result["summary"]
    rows, outside, total = expected_summary(paper)
    assert [(r["number"], r["title"], r["citances"]) for r in summary["sections"]] == rows
    assert (summary["outside_sections"], summary["total"]) == (outside, total)
    assert total > 0 and sum(r["citances"] for r in summary["sections"]) > 0
    assert all(0 <= r["citances"] <= r["sentences"] and r["markers"] >= r["citances"] for r in summary["sections"])

    # spaCy alone finds the factory in another fresh process, through scholarly_nlp's bridge.
    out = _run([sys.executable, "-c", SPACY_ONLY, str(tmp_path / "pipeline")], _env(site), tmp_path)
    loaded = json.loads(out.strip().splitlines()[-1])
    assert loaded == {"pipe_names": [COMPONENT], "summary": {"sections": [], "outside_sections": 0, "total": 0}}


def _cli() -> list[str]:
    """The ``scholarly-nlp`` console script of this interpreter, or the same entry called directly."""
    script = Path(sys.executable).parent / "scholarly-nlp"
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from scholarly_nlp.cli import main; sys.argv[0] = 'scholarly-nlp'; main()"]


@pytest.mark.slow
def test_cli_lists_the_template_and_runs_its_command(installed, tmp_path):
    site, copy = installed
    records = {r["name"]: r for r in json.loads(_run([*_cli(), "plugins", "--json"], _env(site), tmp_path))}
    assert records[PLUGIN]["status"] == "loaded" and records[PLUGIN]["version"] == "0.1.0"
    assert records[PLUGIN]["registered"]["components"] == [COMPONENT]
    assert records["builtin"]["status"] == "loaded"
    text = _run([*_cli(), "plugins"], _env(site), tmp_path)
    assert f"{PLUGIN} 0.1.0 ({PACKAGE}.plugin)" in text and f"  components: {COMPONENT}" in text

    tei = copy / "tests" / "data" / "mini.tei.xml"
    lines = _run([*_cli(), "citation-density", str(tei)], _env(site), tmp_path).splitlines()
    assert lines[0] == "mini: 4 citances, 1 outside body sections"

    # Not allowed: listed as skipped, and its command does not exist.
    records = {r["name"]: r for r in json.loads(_run([*_cli(), "plugins", "--json"],
                                                     _env(site, **{plugins.ENV_ALLOW: "builtin"}), tmp_path))}
    assert records[PLUGIN]["status"] == "skipped"


@pytest.mark.slow
def test_the_templates_own_tests_pass_against_the_installed_copy(installed):
    site, copy = installed
    out = _run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], _env(site), copy)
    summary = out.strip().splitlines()[-1]
    assert re.match(r"\d+ passed", summary) and "failed" not in summary and "error" not in summary, out
