"""Plugins that misbehave are refused or named (issue 15, item 5).

A plugin may not take a built-in reader's name, a component factory that raises while spaCy
builds it names the plugin that registered it, and a ``sniff_format`` that raised is not
asked again in that run. Test plugins are plain objects registered in-process on a registry
holding the built-in plugin alone, as in ``tests/test_plugin_hooks.py``.
"""

from __future__ import annotations

import re
import warnings

import pytest
from spacy.language import Language

import scholarly_nlp
from scholarly_nlp import PluginError, PluginRegistry, builtin_plugin, hookimpl, plugins
from scholarly_nlp.errors import UnknownFormatError
from scholarly_nlp.plugins import PluginWarning


@pytest.fixture(autouse=True)
def no_plugin_environment(monkeypatch):
    for name in (plugins.ENV_STRICT, plugins.ENV_ALLOW, plugins.ENV_DISABLE):
        monkeypatch.delenv(name, raising=False)


def builtin_registry(strict: bool) -> PluginRegistry:
    """The built-in plugin alone."""
    return PluginRegistry(strict=strict, allow=[]).load()


def plugin_warnings(caught: list) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, PluginWarning)]


# --------------------------------------------------------------------------- built-in reader names


def read_nothing(path, **_options):
    """A reader that would shadow a built-in one."""
    return None


class ShadowingReaderPlugin:
    """Registers a harmless reader, then one under a built-in name."""

    def __init__(self, name: str):
        self.name = name

    @hookimpl
    def register_readers(self, register):
        register("guardtest_ok", read_nothing, extensions=(".guardtest",))
        register(self.name, read_nothing, extensions=(".pdf", ".xml"))


def test_the_builtin_plugin_registers_exactly_its_reserved_reader_names():
    assert set(builtin_registry(strict=True).readers) == set(builtin_plugin.BUILTIN_READERS)


@pytest.mark.parametrize("name", ["tei", "pdf", "grobid", "clscisumm", "PDF", " tei "])
def test_a_reader_under_a_builtin_name_is_refused_in_strict_mode(name):
    registry = builtin_registry(strict=True)
    with pytest.raises(PluginError, match=rf"plugin 'shadow'.*reader name {re.escape(repr(name))}"):
        registry.add_plugin(ShadowingReaderPlugin(name), "shadow")


@pytest.mark.parametrize("name", ["tei", "pdf", "grobid"])
def test_a_reader_under_a_builtin_name_skips_the_plugin_and_keeps_the_builtin(name):
    registry = builtin_registry(strict=False)
    builtin_function = registry.reader(name).function
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        record = registry.add_plugin(ShadowingReaderPlugin(name), "shadow")
    (message,) = plugin_warnings(caught)
    assert "'shadow'" in message and f"reader name {name!r}" in message and "it was skipped" in message
    assert record.status == "failed" and f"reader name {name!r}" in record.error
    assert registry.reader(name).plugin == "builtin" and registry.reader(name).function is builtin_function
    assert "guardtest_ok" not in registry.readers  # the plugin's other registrations are withdrawn


def test_a_plugin_registered_before_the_builtin_one_cannot_take_its_name():
    registry = PluginRegistry(strict=False, allow=[])
    with pytest.warns(PluginWarning, match="reader name 'tei'"):
        assert registry.add_plugin(ShadowingReaderPlugin("tei"), "early").status == "failed"
    registry.load()
    assert registry.plugins["builtin"].status == "loaded"
    assert registry.reader("tei").plugin == "builtin" and registry.reader("pdf").plugin == "builtin"


def test_the_builtin_function_under_its_own_name_is_refused_from_another_plugin():
    class Copycat:
        @hookimpl
        def register_readers(self, register):
            register("tei", builtin_plugin._read_tei)

    with pytest.raises(PluginError, match="'copycat'.*reader name 'tei'"):
        builtin_registry(strict=True).add_plugin(Copycat(), "copycat")


# --------------------------------------------------------------------------- failing factories


class ModelMissing(RuntimeError):
    """Stands for whatever a factory may raise."""


class OwnStr(Exception):
    """An exception whose message does not come from its arguments."""

    def __str__(self) -> str:
        return "always this text"


def make_missing_model(nlp: Language, name: str, path: str):
    raise ModelMissing(f"no model at {path}")


def make_checked(nlp: Language, name: str, level: int):
    if level < 0:
        raise ValueError("level must be >= 0")
    return lambda doc: doc


def make_own_str(nlp: Language, name: str):
    raise OwnStr("ignored")


def make_nested(nlp: Language, name: str):
    return nlp.add_pipe("guardtest_checked", name=f"{name}_inner", config={"level": -1})


class FactoryPlugin:
    @hookimpl
    def register_components(self, register):
        register("guardtest_missing_model", make_missing_model, default_config={"path": "/nowhere/model.bin"})
        register("guardtest_checked", make_checked, default_config={"level": 1})
        register("guardtest_own_str", make_own_str)


class NestingPlugin:
    @hookimpl
    def register_components(self, register):
        register("guardtest_nested", make_nested)


@pytest.fixture(scope="module")
def factory_registry() -> PluginRegistry:
    registry = PluginRegistry(strict=True, allow=[]).load()
    assert registry.add_plugin(FactoryPlugin(), "factories").status == "loaded"
    assert registry.add_plugin(NestingPlugin(), "nesting").status == "loaded"
    return registry


def test_a_factory_that_raises_names_its_plugin_and_keeps_its_type(factory_registry):
    with pytest.raises(ModelMissing) as raised:
        scholarly_nlp.blank().add_pipe("guardtest_missing_model")
    assert str(raised.value) == ("no model at /nowhere/model.bin "
                                 "(component 'guardtest_missing_model' was registered by plugin 'factories')")


def test_a_bad_setting_is_still_a_value_error_and_names_the_plugin(factory_registry):
    nlp = scholarly_nlp.blank()
    with pytest.raises(ValueError, match=r"level must be >= 0 \(component 'guardtest_checked' was registered by "
                                         r"plugin 'factories'\)"):
        nlp.add_pipe("guardtest_checked", config={"level": -1})
    nlp.add_pipe("guardtest_checked", config={"level": 2})  # the wrapped factory still builds
    assert nlp.pipe_names == ["guardtest_checked"] and nlp("Two words.").text == "Two words."


def test_an_error_whose_message_cannot_be_changed_becomes_a_plugin_error(factory_registry):
    with pytest.raises(PluginError, match=r"component 'guardtest_own_str' was registered by plugin 'factories' and "
                                          r"failed to build \(OwnStr: always this text\)") as raised:
        scholarly_nlp.blank().add_pipe("guardtest_own_str")
    assert isinstance(raised.value.__cause__, OwnStr)


def test_a_factory_failing_inside_another_is_named_by_its_own_plugin(factory_registry):
    with pytest.raises(ValueError) as raised:
        scholarly_nlp.blank().add_pipe("guardtest_nested")
    message = str(raised.value)
    assert message.count("was registered by plugin") == 2, message
    assert "'guardtest_checked' was registered by plugin 'factories'" in message
    assert "'guardtest_nested' was registered by plugin 'nesting'" in message


def test_the_record_keeps_the_plugins_own_factory_and_a_second_registry_accepts_it(factory_registry):
    assert factory_registry.components["guardtest_checked"].factory is make_checked
    again = PluginRegistry(strict=True, allow=[]).load()
    assert again.add_plugin(FactoryPlugin(), "factories_again").status == "loaded"
    with pytest.raises(ValueError, match="registered by plugin 'factories_again'"):
        scholarly_nlp.blank().add_pipe("guardtest_checked", config={"level": -1})


# --------------------------------------------------------------------------- sniffers that raise


class RaisingSniffer:
    """A sniff_format that raises on every file, counting its calls."""

    def __init__(self):
        self.calls = 0

    @hookimpl
    def sniff_format(self, path, head):
        self.calls += 1
        raise RuntimeError("sniffer broke")


def unknown_files(tmp_path, n: int = 3) -> list[str]:
    paths = [tmp_path / f"paper{i}.guardtest" for i in range(n)]
    for path in paths:
        path.write_text("nothing any reader knows\n", encoding="utf-8")
    return [str(path) for path in paths]


def registry_with_raising_sniffer(tmp_path, strict: bool):
    """A registry holding a sniffer that raises, the sniffer, and a PDF the built-in sniffer knows."""
    registry = builtin_registry(strict=strict)
    sniffer = RaisingSniffer()
    registry.add_plugin(sniffer, "bad_sniffer")
    pdf = tmp_path / "a.pdf"
    pdf.write_bytes(b"%PDF-1.4\n")
    return registry, sniffer, pdf


def test_a_sniffer_that_raised_is_warned_about_once_and_not_asked_again(tmp_path):
    registry, sniffer, pdf = registry_with_raising_sniffer(tmp_path, strict=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = list(scholarly_nlp.read_papers(unknown_files(tmp_path), registry=registry))
        assert registry.sniff(str(pdf)) == "pdf"  # the built-in sniffer still answers
    assert sniffer.calls == 1
    (message,) = plugin_warnings(caught)
    assert "'bad_sniffer' raised in sniff_format (RuntimeError: sniffer broke)" in message
    assert "not asked again" in message
    assert [type(result.error) for result in results] == [UnknownFormatError] * 3
    assert registry.failed_sniffers == {"bad_sniffer": "RuntimeError: sniffer broke"}
    assert registry.plugins["bad_sniffer"].status == "loaded"  # its other hooks stay


def test_a_sniffer_that_raised_in_strict_mode_raises_once(tmp_path):
    registry, sniffer, pdf = registry_with_raising_sniffer(tmp_path, strict=True)
    with pytest.raises(PluginError, match="'bad_sniffer' raised in sniff_format"):
        registry.sniff(str(pdf))
    assert registry.sniff(str(pdf)) == "pdf" and sniffer.calls == 1


def test_each_registry_asks_a_failed_sniffer_afresh(tmp_path):
    sniffer = RaisingSniffer()
    pdf = tmp_path / "a.pdf"
    pdf.write_bytes(b"%PDF-1.4\n")
    for _ in range(2):
        registry = builtin_registry(strict=False)
        registry.add_plugin(sniffer, "bad_sniffer")
        with pytest.warns(PluginWarning):
            assert registry.sniff(str(pdf)) == "pdf"
    assert sniffer.calls == 2
