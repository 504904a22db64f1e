"""One test per hook of ``scholarly_nlp.hookspecs``, named ``test_hook_<hook name>``.

Each registers a small plugin object on a registry holding the built-in plugin alone (strict,
so a failure raises) and checks what ``docs/plugins.md`` says the hook and its ``register``
callback do. ``tests/test_hookspec_docs.py`` fails when a hook has no such test.
"""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from spacy.language import Language
from spacy.tokens import Doc, Span, Token

import scholarly_nlp
from scholarly_nlp import Block, Paper, PluginError, PluginRegistry, UnknownNameError, hookimpl
from scholarly_nlp import plugins


@pytest.fixture(autouse=True)
def no_plugin_environment(monkeypatch):
    for name in (plugins.ENV_STRICT, plugins.ENV_ALLOW, plugins.ENV_DISABLE):
        monkeypatch.delenv(name, raising=False)


def builtin_registry() -> PluginRegistry:
    """The built-in plugin alone, strict: a plugin that fails raises PluginError."""
    return PluginRegistry(strict=True, allow=[]).load()


# --------------------------------------------------------------------------- register_components


class Labeller:
    """A pipe that stores its label in ``doc.user_data``."""

    def __init__(self, name: str, label: str):
        self.name, self.label = name, label

    def __call__(self, doc: Doc) -> Doc:
        doc.user_data["hooktest_label"] = self.label
        return doc


def make_labeller(nlp: Language, name: str, label: str) -> Labeller:
    return Labeller(name, label)


def make_other_labeller(nlp: Language, name: str, label: str) -> Labeller:
    return Labeller(name, label.upper())


class ComponentPlugin:
    @hookimpl
    def register_components(self, register):
        register("hooktest_labeller", make_labeller, default_config={"label": "plain"},
                 assigns=["doc.user_data"], requires=["token.text"], default_score_weights={"hooktest_score": 1.0})


class ClashingComponentPlugin:
    @hookimpl
    def register_components(self, register):
        register("hooktest_labeller", make_other_labeller, default_config={"label": "loud"})


def test_hook_register_components():
    registry = builtin_registry()
    record = registry.add_plugin(ComponentPlugin(), "components")
    assert record.status == "loaded" and record.registered == {"components": ["hooktest_labeller"]}
    spec = registry.components["hooktest_labeller"]
    assert (spec.plugin, spec.factory, spec.default_config) == ("components", make_labeller, {"label": "plain"})
    meta = Language.get_factory_meta("hooktest_labeller")
    assert (meta.assigns, meta.requires, meta.default_score_weights) == (["doc.user_data"], ["token.text"],
                                                                        {"hooktest_score": 1.0})
    nlp = scholarly_nlp.blank()
    nlp.add_pipe("hooktest_labeller")
    nlp.add_pipe("hooktest_labeller", name="second", config={"label": "configured"}, before="hooktest_labeller")
    assert nlp("Some text.").user_data["hooktest_label"] == "plain"  # the default config, run last
    assert nlp.get_pipe("second").label == "configured"
    # The same factory again (another registry, a reload) is fine; another factory under the name is not.
    assert builtin_registry().add_plugin(ComponentPlugin(), "components").status == "loaded"
    with pytest.raises(PluginError, match="'hooktest_labeller' is already registered"):
        registry.add_plugin(ClashingComponentPlugin(), "clash")


# --------------------------------------------------------------------------- register_readers


def read_hooktest(path, paper_id=None, **_other_readers_options) -> Paper:
    """A ``.hooktest`` file: a title line, then paragraphs separated by blank lines."""
    title, _, body = Path(path).read_text(encoding="utf-8").partition("\n")
    paper = Paper(paper_id=paper_id or Path(path).stem, source=str(path), reader="hooktest")
    paper.blocks = [Block(kind="title", text=title.strip())]
    paper.blocks += [Block(kind="paragraph", text=p.strip()) for p in body.split("\n\n") if p.strip()]
    return paper


class ReaderPlugin:
    @hookimpl
    def register_readers(self, register):
        register("hooktest", read_hooktest, extensions=(".HookTest",), description="title line and paragraphs")


def test_hook_register_readers(tmp_path):
    registry = builtin_registry()
    assert registry.add_plugin(ReaderPlugin(), "readers").registered == {"readers": ["hooktest"]}
    spec = registry.reader("hooktest")
    assert (spec.plugin, spec.extensions, spec.description) == ("readers", (".hooktest",), "title line and paragraphs")
    path = tmp_path / "note.hooktest"
    path.write_text("A Short Note\nIt says one thing.\n\nThen another.\n", encoding="utf-8")
    (tmp_path / "ignored.txt").write_text("not a paper\n", encoding="utf-8")
    assert list(scholarly_nlp.expand_inputs([tmp_path], registry)) == [str(path)]  # folders: by extension
    paper = scholarly_nlp.read_paper(path, "hooktest", registry, paper_id="n1", image_dir="unused")
    assert (paper.paper_id, paper.title, len(paper.blocks)) == ("n1", "A Short Note", 3)
    doc = scholarly_nlp.paper_to_doc(paper, scholarly_nlp.blank())
    assert doc.spans["title"][0].text == "A Short Note" and doc._.paper_id == "n1"
    assert [s.text.strip() for s in doc.sents][-1] == "Then another."
    with pytest.raises(UnknownNameError, match="nope"):
        registry.reader("nope")


# --------------------------------------------------------------------------- register_extensions


class ExtensionPlugin:
    @hookimpl
    def register_extensions(self, register):
        register("doc", "hooktest_n_tokens", getter=len)
        register("span", "hooktest_flag", default=False)
        register("token", "hooktest_shout", getter=lambda token: token.text.upper())
        register("doc", "hooktest_first", method=lambda doc, n: doc[:n].text)


def test_hook_register_extensions():
    registry = builtin_registry()
    record = registry.add_plugin(ExtensionPlugin(), "extensions")
    assert record.registered == {"extensions": ["doc._.hooktest_n_tokens", "span._.hooktest_flag",
                                                "token._.hooktest_shout", "doc._.hooktest_first"]}
    getter = Doc.get_extension("hooktest_n_tokens")
    assert builtin_registry().add_plugin(ExtensionPlugin(), "extensions").status == "loaded"  # idempotent
    assert Doc.get_extension("hooktest_n_tokens") == getter
    doc = scholarly_nlp.blank()("two words")
    assert doc._.hooktest_n_tokens == 2 and doc._.hooktest_first(1) == "two"
    assert doc[0:1]._.hooktest_flag is False and doc[1]._.hooktest_shout == "WORDS"
    assert Span.has_extension("hooktest_flag") and Token.has_extension("hooktest_shout")


# --------------------------------------------------------------------------- register_metrics


def hooktest_accuracy(predicted, gold) -> float:
    """Fraction of equal items."""
    return sum(p == g for p, g in zip(predicted, gold)) / len(gold) if gold else 0.0


class MetricPlugin:
    @hookimpl
    def register_metrics(self, register):
        register("hooktest_accuracy", hooktest_accuracy, description="fraction of equal items")


def test_hook_register_metrics():
    registry = builtin_registry()
    assert registry.add_plugin(MetricPlugin(), "metrics").registered == {"metrics": ["hooktest_accuracy"]}
    metric = registry.metric("hooktest_accuracy")
    assert (metric.plugin, metric.description) == ("metrics", "fraction of equal items")
    assert metric.function("abcd", "abce") == 0.75
    assert "precision_at_k" in registry.metrics  # the built-in plugin's, registered the same way
    with pytest.raises(UnknownNameError, match="hooktest_accurcy"):
        registry.metric("hooktest_accurcy")


# --------------------------------------------------------------------------- register_commands


class CommandPlugin:
    @hookimpl
    def register_commands(self, cli):
        @cli.command(name="hooktest-hello")
        @click.argument("name")
        def hello(name):
            """Greet NAME."""
            click.echo(f"hello {name}")


def test_hook_register_commands():
    registry = builtin_registry()
    assert registry.add_plugin(CommandPlugin(), "commands").registered == {"commands": ["register_commands"]}
    group = click.Group("scholarly-nlp")
    registry.add_commands(group)  # what scholarly-nlp's main() does with its own click group
    assert "hooktest-hello" in group.commands
    result = CliRunner().invoke(group, ["hooktest-hello", "paper"])
    assert (result.exit_code, result.output) == (0, "hello paper\n")


# --------------------------------------------------------------------------- sniff_format


class MagicSniffer:
    """Claims files that start with ``HOOKTEST``; says nothing about others."""

    @hookimpl
    def sniff_format(self, path, head):
        return "hooktest" if head.startswith(b"HOOKTEST") else None


class GreedySniffer:
    """Claims every ``.hooktest`` file, whatever its content."""

    @hookimpl
    def sniff_format(self, path, head):
        return "greedy" if str(path).endswith(".hooktest") else None


def test_hook_sniff_format(tmp_path):
    magic, pdf, plain = tmp_path / "a.hooktest", tmp_path / "b.hooktest", tmp_path / "c.unknown"
    magic.write_bytes(b"HOOKTEST\nTitle\n")
    pdf.write_bytes(b"%PDF-1.4\n")
    plain.write_bytes(b"nothing\n")
    registry = builtin_registry()
    assert registry.add_plugin(MagicSniffer(), "magic").registered == {"sniffers": ["sniff_format"]}
    assert registry.sniff(str(magic)) == "hooktest"
    assert registry.sniff(str(pdf)) == "pdf"  # None: the next sniffer (here the built-in one) is asked
    assert registry.sniff(str(plain)) is None
    registry.add_plugin(GreedySniffer(), "greedy")  # registered later, so asked first; first answer wins
    assert registry.sniff(str(magic)) == registry.sniff(str(pdf)) == "greedy"
    assert registry.sniff(str(plain)) is None
