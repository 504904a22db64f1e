"""The plugin system, hook by hook, through a real third-party plugin.

The example plugin lives in ``tests/example_plugin`` (``pip install -e tests/example_plugin``).
Tests that need it skip when it is not installed, unless
``SCHOLARLY_NLP_REQUIRE_EXAMPLE_PLUGIN=1`` (CI), where they fail. Each test starts and ends
with a forgotten shared registry and no plugin environment variables.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from click.testing import CliRunner
from spacy.tokens import Doc, Span

import scholarly_nlp
from scholarly_nlp import cli as cli_module
from scholarly_nlp import hookimpl, plugins
from scholarly_nlp.components_api import add_component
from scholarly_nlp.errors import PluginError, ScholarlyNLPError, UnknownComponentError, UnknownFormatError
from scholarly_nlp.plugins import PluginRegistry, PluginWarning, get_registry, reset_registry

from conftest import shared

EXAMPLE = "example"
EXAMPLE_DIST = "scholarly-nlp-example-plugin"
EXAMPLE_PACKAGE = "scholarly_example_plugin"
REQUIRE_ENV = "SCHOLARLY_NLP_REQUIRE_EXAMPLE_PLUGIN"
PLUGIN_ENV = (plugins.ENV_STRICT, plugins.ENV_ALLOW, plugins.ENV_DISABLE)
REAL_PAPER = ("tei", "acl", "D14-1003.tei.xml")
REAL_PDF = ("pdfs", "acl", "C02-1025.pdf")

PAPERMD = """\
# Fast Parsers for Scientific Text

## Abstract
We present a parser for papers. It is fast, see Figure 1.

## 1 Introduction
Parsing is old [1]. Prior work [1, 2] used a slow model.
Table 1 lists the results.

### 1.1 Data
We use a treebank (Fig. 1).

## 2 Conclusion
Our parser wins.

Figure 1: Parsing speed per sentence.
Table 1: Accuracy of each parser.

## References
[1] Smith. Old parsing.
  Journal of Parsing, 1990.
[2] Jones. New parsing.
"""

PLAIN_TEXT = "We train a Parser on papers. The model is slow.\n\nA parser is fast. Neural  networks help."


# --------------------------------------------------------------------------- fixtures


def example_installed() -> bool:
    """True when the example plugin's distribution and package are importable."""
    try:
        metadata.distribution(EXAMPLE_DIST)
    except metadata.PackageNotFoundError:
        return False
    return importlib.util.find_spec(EXAMPLE_PACKAGE) is not None


@pytest.fixture(autouse=True)
def clean_plugin_state(monkeypatch):
    """No plugin environment variables and a fresh shared registry, before and after."""
    for name in PLUGIN_ENV:
        monkeypatch.delenv(name, raising=False)
    reset_registry()
    yield
    reset_registry()


@pytest.fixture()
def example_plugin():
    """The example plugin's package; skip (or fail under REQUIRE_ENV=1) when not installed."""
    if not example_installed():
        message = f"{EXAMPLE_DIST} is not installed (pip install -e tests/example_plugin)"
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(message)
        pytest.skip(message)
    return importlib.import_module(EXAMPLE_PACKAGE)


@pytest.fixture()
def papermd_file(tmp_path: Path) -> Path:
    """A small paper in the example plugin's format."""
    path = tmp_path / "fast-parsers.papermd"
    path.write_text(PAPERMD, encoding="utf-8")
    return path


def keyword_pipeline(keyword: str, **config):
    """A blank pipeline: the scientific sentencizer, then the example keyword tagger."""
    nlp = scholarly_nlp.blank()
    nlp.add_pipe("scholarly_sentencizer")
    nlp.add_pipe("example_keyword_tagger", config={"keyword": keyword, **config})
    return nlp


def flagged(doc: Doc) -> list[str]:
    """The texts of the sentences the tagger flagged."""
    return [sent.text.strip() for sent in doc._.example_keyword_sents]


# --------------------------------------------------------------------------- discovery


def test_example_plugin_is_listed_with_version_and_registrations(example_plugin):
    record = get_registry().plugins[EXAMPLE]
    assert record.status == "loaded" and record.error is None
    assert record.version == metadata.version(EXAMPLE_DIST) == "0.1.0"
    assert record.module == f"{EXAMPLE_PACKAGE}.plugin"
    assert record.to_dict()["registered"] == {
        "components": ["example_keyword_tagger"],
        "readers": ["papermd"],
        "extensions": ["span._.has_example_keyword", "doc._.example_keyword_sents"],
        "metrics": ["example_precision_at_1"],
        "sniffers": ["sniff_format"],
        "commands": ["register_commands"],
    }
    assert get_registry().plugins["builtin"].status == "loaded"


def test_example_plugin_declares_both_entry_point_groups(example_plugin):
    ours = {ep.group: ep for ep in metadata.distribution(EXAMPLE_DIST).entry_points}
    assert ours["scholarly_nlp"].name == EXAMPLE
    assert ours["spacy_factories"].name == "example_keyword_tagger"
    assert ours["spacy_factories"].value == f"{EXAMPLE_PACKAGE}.spacy_factories:example_keyword_tagger"


# --------------------------------------------------------------------------- the declared author API

REPO = Path(__file__).resolve().parent.parent
COMPONENTS = REPO / "components"
DECLARED_MODULES = ("scholarly_nlp", "scholarly_nlp.ml", "scholarly_nlp.retrieval", "scholarly_nlp.metrics",
                    "scholarly_nlp.readers")
"""The modules a plugin or component may import from, each by the names in its ``__all__``."""


def _declared_api() -> dict:
    import importlib

    return {name: set(importlib.import_module(name).__all__) for name in DECLARED_MODULES}


def _component_packages() -> dict:
    """Import name -> folder of every package under ``components/<name>/``."""
    return {pkg.name: pkg for pkg in sorted(COMPONENTS.glob("*/*"))
            if pkg.is_dir() and (pkg / "__init__.py").exists() and not pkg.name.endswith(".egg-info")}


def _declared_api_violations(source: Path, relative_to: Path, own_package: str = "",
                             forbidden_packages: frozenset = frozenset(), allowed_fallbacks=frozenset()) -> list:
    """``file:line: what`` for every import of ``source`` outside the declared API.

    ``import scholarly_nlp.X`` and ``from scholarly_nlp.X import Y`` need X in
    :data:`DECLARED_MODULES` and Y in X's ``__all__`` (or a declared sub-module);
    ``scholarly_nlp.Y`` after ``import scholarly_nlp`` needs Y in ``scholarly_nlp.__all__``;
    a top-level import of any package in ``forbidden_packages`` (another component) is one too.
    """
    api = _declared_api()
    submodules = {m.rsplit(".", 1)[1] for m in DECLARED_MODULES if "." in m}
    found = []
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        where = f"{source.relative_to(relative_to)}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                if top == "scholarly_nlp" and alias.name not in api and alias.name not in allowed_fallbacks:
                    found.append(f"{where}: import {alias.name} (not a declared module)")
                elif top in forbidden_packages:
                    found.append(f"{where}: import {alias.name} (components never import each other)")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            top = node.module.split(".")[0]
            if top in forbidden_packages:
                found.append(f"{where}: from {node.module} import ... (components never import each other)")
            if top != "scholarly_nlp" or node.module in allowed_fallbacks:
                continue
            if node.module not in api:
                found.append(f"{where}: from {node.module} import ... (not a declared module: {', '.join(DECLARED_MODULES)})")
                continue
            public = api[node.module] | (submodules if node.module == "scholarly_nlp" else set())
            missing = [a.name for a in node.names if a.name not in public]
            if missing:
                found.append(f"{where}: from {node.module} import {', '.join(missing)} (not in its __all__)")
        elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
              and node.value.id == "scholarly_nlp" and node.attr not in api["scholarly_nlp"] | submodules
              and not node.attr.startswith("__")):
            found.append(f"{where}: scholarly_nlp.{node.attr} (not in scholarly_nlp.__all__)")
    return found


def test_declared_modules_have_an_all_of_importable_names():
    """Each declared module has an ``__all__``, every name in it resolves, and importing the
    ML and readers packages stays cheap (no transformers, no dataset reader)."""
    import importlib

    for name, public in _declared_api().items():
        module = importlib.import_module(name)
        assert public, f"{name}.__all__ is empty"
        for item in public:
            assert getattr(module, item, None) is not None, f"{name}.__all__ lists {item}, which does not resolve"
    code = ("import sys, scholarly_nlp.ml, scholarly_nlp.readers, scholarly_nlp.retrieval, scholarly_nlp.metrics; "
            "heavy = [m for m in ('transformers', 'spacy_transformers', 'bm25s', 'sklearn', "
            "'scholarly_nlp.readers.abstracts', 'scholarly_nlp.readers.clscisumm', 'scholarly_nlp.readers.ncg') "
            "if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_top_level_is_the_document_api():
    """Dataset readers are not at the top level; they are scholarly_nlp.readers'."""
    dataset = {"AbstractRecord", "abstract_doc", "read_csabstruct", "read_csfcube_abstracts"}
    assert not dataset & set(scholarly_nlp.__all__)
    assert dataset <= set(scholarly_nlp.readers.__all__)


def test_components_use_only_the_declared_api():
    """Every .py of every package under components/ imports scholarly_nlp only through the
    declared modules' ``__all__``, and never another component's package."""
    packages = _component_packages()
    assert len(packages) >= 7, f"components not found under {COMPONENTS}: {sorted(packages)}"
    found = []
    for name, folder in packages.items():
        others = frozenset(packages) - {name}
        for source in sorted(folder.rglob("*.py")):
            found += _declared_api_violations(source, REPO, name, others)
    assert not found, "imports outside the declared API:\n" + "\n".join(found)


def test_the_declared_api_check_catches_private_imports(tmp_path):
    """The checker itself: private modules, undeclared names and cross-component imports fail."""
    source = tmp_path / "bad.py"
    source.write_text("import scholarly_nlp\n"
                      "import scholarly_nlp.doc.roles\n"
                      "from scholarly_nlp.ml.backbones import resolve_backbone\n"
                      "from scholarly_nlp.ml import resolve_backbone, _private\n"
                      "from scholarly_nlp import read_csfcube_abstracts, ml\n"
                      "from scholarly_other_component.factory import X\n"
                      "scholarly_nlp.abstract_doc\n", encoding="utf-8")
    found = _declared_api_violations(source, tmp_path, "mine", frozenset({"scholarly_other_component"}))
    assert [f.split(":")[1] for f in found] == ["2", "3", "4", "5", "6", "7"], found


def test_example_plugin_uses_only_the_public_api(example_plugin):
    """Every scholarly_nlp import is from a declared module and in its ``__all__``, bar one
    documented fallback (an ImportError fallback for scholarly_nlp releases without PaperSection)."""
    allowed_fallbacks = frozenset({"scholarly_nlp.paper"})
    package = Path(example_plugin.__file__).parent
    found = []
    for source in package.glob("*.py"):
        found += _declared_api_violations(source, package, allowed_fallbacks=allowed_fallbacks)
    assert not found, "\n".join(found)


def test_cli_plugins_lists_the_example_plugin(example_plugin):
    runner = CliRunner()
    text = runner.invoke(cli_module.cli, ["plugins"])
    assert text.exit_code == 0, text.output
    assert f"{EXAMPLE} 0.1.0 ({EXAMPLE_PACKAGE}.plugin)" in text.output
    assert "components: example_keyword_tagger" in text.output
    assert "metrics: example_precision_at_1" in text.output
    as_json = runner.invoke(cli_module.cli, ["plugins", "--json"])
    assert as_json.exit_code == 0, as_json.output
    records = {r["name"]: r for r in json.loads(as_json.output)}
    assert records[EXAMPLE]["version"] == "0.1.0"
    assert records[EXAMPLE]["registered"]["readers"] == ["papermd"]
    assert records["builtin"]["status"] == "loaded"


# --------------------------------------------------------------------------- register_components


def test_keyword_tagger_flags_sentences_of_a_real_paper(example_plugin):
    nlp = scholarly_nlp.blank()
    doc = scholarly_nlp.read(shared(*REAL_PAPER), nlp)
    sentences = list(doc.sents)
    nlp.add_pipe("example_keyword_tagger", config={"keyword": "model"})
    doc = nlp(doc)
    expected = [s.text for s in sentences if re.search(r"\bmodel\b", s.text, re.IGNORECASE)]
    assert 0 < len(expected) < len(sentences)
    assert [s.text for s in doc._.example_keyword_sents] == expected
    assert all(s._.has_example_keyword == (s.text in expected) for s in doc.sents)


def test_keyword_tagger_config(example_plugin):
    assert flagged(keyword_pipeline("parser")(PLAIN_TEXT)) == ["We train a Parser on papers.", "A parser is fast."]
    assert flagged(keyword_pipeline("parser", case_sensitive=True)(PLAIN_TEXT)) == ["A parser is fast."]
    assert flagged(keyword_pipeline("neural networks")(PLAIN_TEXT)) == ["Neural  networks help."]
    assert flagged(keyword_pipeline("pars")(PLAIN_TEXT)) == []  # whole words only
    default = scholarly_nlp.blank().add_pipe("example_keyword_tagger")
    assert default.keyword == "model"
    with pytest.raises(ValueError, match="keyword"):
        scholarly_nlp.blank().add_pipe("example_keyword_tagger", config={"keyword": "  "})


def test_keyword_tagger_without_sentence_boundaries_treats_the_doc_as_one(example_plugin):
    nlp = scholarly_nlp.blank()
    nlp.add_pipe("example_keyword_tagger", config={"keyword": "parser"})
    assert flagged(nlp("A parser. Another sentence.")) == ["A parser. Another sentence."]
    assert flagged(nlp("Nothing here.")) == []


SPACY_ONLY_SCRIPT = """
import json, sys
import spacy
nlp = spacy.load(sys.argv[1])
doc = nlp(sys.argv[2])
registry = sys.modules["scholarly_nlp.plugins"].get_registry()
print(json.dumps({
    "pipe_names": nlp.pipe_names,
    "flagged": [s.text.strip() for s in doc._.example_keyword_sents],
    "example_status": registry.plugins["example"].status,
}))
"""


def test_saved_pipeline_loads_with_plain_spacy_in_a_fresh_process(example_plugin, tmp_path):
    """Both discovery paths: scholarly_nlp's bridge, and the plugin's own spacy_factories entry."""
    nlp = keyword_pipeline("parser")
    nlp.to_disk(tmp_path / "pipeline")
    expected = flagged(nlp(PLAIN_TEXT))
    runs = {"pluggy": "", "spacy_factories only": EXAMPLE}  # value: SCHOLARLY_NLP_DISABLE_PLUGINS
    processes = {label: _spawn(SPACY_ONLY_SCRIPT, [str(tmp_path / "pipeline"), PLAIN_TEXT], disable, tmp_path)
                 for label, disable in runs.items()}
    for label, process in processes.items():
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, f"{label}: {err}"
        result = json.loads(out.strip().splitlines()[-1])
        assert result["pipe_names"] == ["scholarly_sentencizer", "example_keyword_tagger"], label
        assert result["flagged"] == expected, label
        assert result["example_status"] == ("skipped" if runs[label] else "loaded"), label


def _spawn(script: str, args: list[str], disable: str, cwd: Path) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in PLUGIN_ENV}
    if disable:
        env[plugins.ENV_DISABLE] = disable
    return subprocess.Popen([sys.executable, "-c", script, *args], cwd=cwd, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


# --------------------------------------------------------------------------- readers and sniffing


def test_papermd_reader_is_used_for_papermd_files(example_plugin, papermd_file):
    assert get_registry().sniff(str(papermd_file)) == "papermd"
    doc = scholarly_nlp.read(papermd_file)
    assert doc._.paper_meta["reader"] == "papermd"
    assert doc._.paper_id == "fast-parsers"
    assert doc.spans["title"][0].text == "Fast Parsers for Scientific Text"
    assert [s.text for s in doc.spans["abstract"]] == ["We present a parser for papers. It is fast, see Figure 1."]
    assert [(s.title, s.number, s.level) for s in doc._.sections] == [
        ("Introduction", "1", 1), ("Data", "1.1", 2), ("Conclusion", "2", 1)]
    assert [p.text for p in doc._.sections[0].paragraphs] == [
        "Parsing is old [1]. Prior work [1, 2] used a slow model. Table 1 lists the results.",
        "We use a treebank (Fig. 1)."]
    figures = {f.id: f for f in doc._.figures}
    assert figures["fig_1"].caption.text == "Parsing speed per sentence."
    assert [m.text for m in figures["fig_1"].mentions] == ["Figure 1", "Fig. 1"]
    assert [m.text for m in figures["tab_1"].mentions] == ["Table 1"]
    assert [(c.sentence.text.strip(), c.bib_ids) for c in doc._.citances] == [
        ("Parsing is old [1].", ["b1"]), ("Prior work [1, 2] used a slow model.", ["b1", "b2"])]
    assert doc._.bibliography["b1"]["title"] == "Smith. Old parsing. Journal of Parsing, 1990."


def test_papermd_files_are_found_in_folders_and_bad_ones_are_named(example_plugin, papermd_file, tmp_path):
    assert str(papermd_file) in list(scholarly_nlp.expand_inputs([tmp_path]))
    empty = tmp_path / "empty.papermd"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises(ScholarlyNLPError, match="empty.papermd"):
        scholarly_nlp.read(empty)


@pytest.mark.parametrize("name, expected", [
    ("paper.pdf", "pdf"), ("paper.xml", "pdf"), ("paper.tei.xml", "pdf"), ("paper", "pdf"), ("paper.papermd", "pdf"),
])
def test_sniffing_a_pdf_is_by_content(name, expected, tmp_path):
    path = tmp_path / name
    shutil.copy(shared(*REAL_PDF), path)
    assert get_registry().sniff(str(path)) == expected


@pytest.mark.parametrize("name", ["paper.tei.xml", "paper.xml", "paper.tei", "paper.txt"])
def test_sniffing_a_tei_file_is_by_content(name, tmp_path):
    path = tmp_path / name
    shutil.copy(shared(*REAL_PAPER), path)
    assert get_registry().sniff(str(path)) == "tei"


@pytest.mark.parametrize("head", [
    b"\xef\xbb\xbf<?xml version='1.0'?>\n<TEI xmlns='http://www.tei-c.org/ns/1.0'>",  # UTF-8 BOM
    b"<tei:TEI xmlns:tei='http://www.tei-c.org/ns/1.0'>",  # prefixed root
])
def test_sniffing_recognises_tei_variants_by_content(head, tmp_path):
    path = tmp_path / "paper.txt"
    path.write_bytes(head + b"<teiHeader/></TEI>")
    assert builtin_only().sniff(str(path)) == "tei"


def test_sniffing_falls_back_on_extensions_and_unknown_files_are_refused(tmp_path):
    registry = PluginRegistry(allow=[]).load()  # built-in only
    for name, expected in [("a.pdf", "pdf"), ("a.tei.xml", "tei"), ("a.xml", "tei"), ("a.txt", None)]:
        (tmp_path / name).write_text("not what the name says\n", encoding="utf-8")
        assert registry.sniff(str(tmp_path / name)) == expected, name
    with pytest.raises(UnknownFormatError, match="a.txt"):
        scholarly_nlp.read(tmp_path / "a.txt")


# --------------------------------------------------------------------------- extensions, metrics, commands


def test_extensions_exist_and_installing_twice_is_harmless(example_plugin):
    get_registry()
    getter = Doc.get_extension("example_keyword_sents")
    assert Span.has_extension("has_example_keyword")
    for _ in range(2):
        PluginRegistry().load()
        importlib.import_module(f"{EXAMPLE_PACKAGE}.keyword_tagger").install_extensions()
        scholarly_nlp.install_extensions()
    assert Doc.get_extension("example_keyword_sents") == getter
    doc = scholarly_nlp.blank()("Some text. More text.")
    assert doc[0:2]._.has_example_keyword is False


def test_metric_computes_precision_at_one(example_plugin):
    rankings = {"q1": ["a", "b"], "q2": ["c", "a"], "q3": ["d", "e"], "q4": ["x"]}
    qrels = {
        "q1": {"a"},  # top relevant: 1
        "q2": {"a": 2, "c": 0},  # top judged 0, not relevant: 0
        "q3": {"d": 1},  # 1
        "q4": {"x": 0},  # nothing relevant: skipped
        "q5": {"z"},  # no ranking: 0
    }
    metric = get_registry().metric("example_precision_at_1")
    assert metric.plugin == EXAMPLE
    assert metric.function(rankings, qrels) == pytest.approx(2 / 4)
    assert metric.function(rankings, qrels) == pytest.approx(get_registry().metric("precision_at_k").function(rankings, qrels, 1))
    assert metric.function({}, {}) == 0.0


def test_plugin_command_is_hidden_from_help_and_runs(example_plugin, papermd_file, monkeypatch, capsys):
    # The example plugin is installed for the test run only; its command must not leak into a
    # user's `scholarly-nlp --help` (click hidden=True), yet it is registered and runs.
    monkeypatch.setattr(cli_module.cli, "commands", dict(cli_module.cli.commands))  # restored afterwards
    monkeypatch.setattr(sys, "argv", ["scholarly-nlp", "--help"])
    with pytest.raises(SystemExit) as exit_info:
        cli_module.main()
    assert exit_info.value.code == 0
    help_text = capsys.readouterr().out
    assert "parse" in help_text and "example-papermd" not in help_text
    assert "example-papermd" in cli_module.cli.commands  # registered by the plugin all the same
    result = CliRunner().invoke(cli_module.cli, ["example-papermd", str(papermd_file), "--keyword", "parser"])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == (
        "fast-parsers: 13 sentences, 3 sections, 2 figures/tables, 2 citances, 3 with 'parser'")


# --------------------------------------------------------------------------- guarded loading


class BrokenPlugin:
    """Registers a metric, then raises; its sniffer would claim every file."""

    @hookimpl
    def register_metrics(self, register):
        register("broken_metric", lambda *a: 0.0)
        raise RuntimeError("boom")

    @hookimpl
    def sniff_format(self, path, head):
        return "broken"


class TypoPlugin:
    """Implements a hook that does not exist."""

    @hookimpl
    def register_component(self, register):
        register("never", None)


class ClashingPlugin:
    """Registers a component name the built-in plugin already uses, with another factory."""

    @hookimpl
    def register_components(self, register):
        register("scholarly_sentencizer", lambda nlp, name: (lambda doc: doc))


def builtin_only() -> PluginRegistry:
    """A loaded registry with the built-in plugin alone, warnings off."""
    return PluginRegistry(strict=False, allow=[]).load()


def test_a_plugin_whose_hook_raises_warns_and_is_skipped(tmp_path):
    registry = builtin_only()
    with pytest.warns(PluginWarning, match=r"'broken' raised in register_metrics \(RuntimeError: boom\)"):
        record = registry.add_plugin(BrokenPlugin(), "broken")
    assert record.status == "failed" and "boom" in record.error
    assert "broken_metric" not in registry.metrics  # withdrawn
    (tmp_path / "a.pdf").write_bytes(b"%PDF-1.4\n")
    assert registry.sniff(str(tmp_path / "a.pdf")) == "pdf"  # its sniffer is not asked
    assert registry.plugins["builtin"].status == "loaded" and "map" in registry.metrics


@pytest.mark.parametrize("plugin, message", [
    (TypoPlugin(), "does not define: register_component"),
    (ClashingPlugin(), "'scholarly_sentencizer' is already registered by builtin"),
])
def test_plugins_with_unknown_hooks_or_clashing_components_are_skipped(plugin, message):
    registry = builtin_only()
    with pytest.warns(PluginWarning, match=re.escape(message)):
        assert registry.add_plugin(plugin, "odd").status == "failed"
    assert registry.components["scholarly_sentencizer"].plugin == "builtin"
    assert scholarly_nlp.blank().add_pipe("scholarly_sentencizer").__class__.__name__ == "ScholarlySentencizer"


def test_a_plugin_name_in_use_is_refused_without_harming_the_holder():
    registry = builtin_only()
    with pytest.warns(PluginWarning, match="'builtin' could not be registered"):
        assert registry.add_plugin(BrokenPlugin(), "builtin").status == "failed"
    assert registry.plugins["builtin"].status == "loaded"


def test_entry_points_are_found_with_the_python_3_9_api(monkeypatch):
    """Before Python 3.10, ``metadata.entry_points()`` takes no ``group`` and returns a dict."""
    ours = metadata.EntryPoint(name="old", value="scholarly_nlp.builtin_plugin", group=plugins.ENTRY_POINT_GROUP)

    def entry_points():
        return {plugins.ENTRY_POINT_GROUP: (ours,), "other": ()}

    monkeypatch.setattr(plugins.metadata, "entry_points", entry_points)
    assert plugins._entry_points(plugins.ENTRY_POINT_GROUP) == [ours]


def test_strict_mode_raises(monkeypatch):
    with pytest.raises(PluginError, match="'broken'"):
        PluginRegistry(strict=True, allow=[]).load().add_plugin(BrokenPlugin(), "broken")
    for value, strict in [("1", True), ("yes", True), ("0", False), ("False", False), ("off", False), ("", False)]:
        monkeypatch.setenv(plugins.ENV_STRICT, value)
        assert PluginRegistry().strict is strict, value


@pytest.fixture()
def bad_entry_point(monkeypatch):
    """The ``scholarly_nlp`` group as: builtin, the example plugin, and a module that does not exist.

    Other installed plugins are left out, so that they cannot change the outcome.
    """
    real = metadata.entry_points
    bad = metadata.EntryPoint(name="bad", value="scholarly_nlp_no_such_plugin.plugin", group=plugins.ENTRY_POINT_GROUP)

    def entry_points(**selection):
        found = list(real(**selection))
        if selection.get("group") != plugins.ENTRY_POINT_GROUP:
            return found
        return [ep for ep in found if ep.name in ("builtin", EXAMPLE)] + [bad]

    monkeypatch.setattr(plugins.metadata, "entry_points", entry_points)
    return bad


def test_an_entry_point_that_fails_to_import_warns_and_the_others_load(bad_entry_point):
    with pytest.warns(PluginWarning, match="'bad' failed to import"):
        registry = PluginRegistry().load()
    assert registry.plugins["bad"].status == "failed"
    assert "ModuleNotFoundError" in registry.plugins["bad"].error
    loaded = {name for name, record in registry.plugins.items() if record.status == "loaded"}
    assert loaded == ({"builtin", EXAMPLE} if example_installed() else {"builtin"})


def test_strict_mode_raises_on_an_import_failure_and_the_next_call_retries(bad_entry_point, monkeypatch):
    monkeypatch.setenv(plugins.ENV_STRICT, "1")
    with pytest.raises(PluginError, match="'bad' failed to import"):
        get_registry()
    monkeypatch.setenv(plugins.ENV_STRICT, "0")
    with pytest.warns(PluginWarning, match="'bad'"):
        assert get_registry().plugins["bad"].status == "failed"


@pytest.mark.parametrize("variable, value", [(plugins.ENV_DISABLE, "bad"), (plugins.ENV_ALLOW, "builtin")])
def test_allow_and_disable_lists_skip_plugins(bad_entry_point, variable, value, monkeypatch, recwarn):
    monkeypatch.setenv(variable, value)
    registry = PluginRegistry().load()
    assert registry.plugins["bad"].status == "skipped"
    assert registry.plugins["builtin"].status == "loaded"
    assert not [w for w in recwarn if issubclass(w.category, PluginWarning) and "'bad'" in str(w.message)]


@pytest.mark.parametrize("variable, value, status", [
    (plugins.ENV_DISABLE, EXAMPLE, "skipped"), (plugins.ENV_ALLOW, "builtin", "skipped"), (plugins.ENV_ALLOW, EXAMPLE, "loaded"),
])
def test_allow_and_disable_lists_apply_to_the_example_plugin(example_plugin, variable, value, status, monkeypatch):
    monkeypatch.setenv(variable, value)
    registry = PluginRegistry().load()
    record = registry.plugins[EXAMPLE]
    assert (record.status, record.version) == (status, "0.1.0")
    assert ("example_precision_at_1" in registry.metrics) is (status == "loaded")
    assert registry.plugins["builtin"].status == "loaded"


# --------------------------------------------------------------------------- unknown components


def test_an_unknown_component_name_gives_a_clear_error():
    nlp = scholarly_nlp.blank()
    with pytest.raises(ValueError, match=r"\[E002\].*'example_keyword_taggr'"):
        nlp.add_pipe("example_keyword_taggr")
    with pytest.raises(UnknownComponentError, match="'example_keyword_taggr'.*scholarly_sentencizer") as error:
        add_component(nlp, "example_keyword_taggr")
    assert isinstance(error.value, ScholarlyNLPError) and error.value.name == "example_keyword_taggr"


def test_add_component_adds_known_components(example_plugin):
    nlp = scholarly_nlp.blank()
    add_component(nlp, "scholarly_sentencizer")
    tagger = add_component(nlp, "example_keyword_tagger", {"keyword": "parser"}, name="tagger")
    assert nlp.pipe_names == ["scholarly_sentencizer", "tagger"] and tagger.keyword == "parser"
    with pytest.raises(UnknownComponentError, match="example_keyword_tagger"):
        add_component(nlp, "nope")
