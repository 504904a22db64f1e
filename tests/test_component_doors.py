"""One door per component (issue 16, item 1).

Every component is declared once, in a :class:`scholarly_nlp.ComponentSpec` next to its
factory. The doors (``@spec.factory`` at import, spaCy's ``spacy_factories`` entry point,
the pluggy ``register_components`` hook) all read it; a registration that differs is an
error; each pipe installs its own ``._`` attributes when it is built.
"""

from __future__ import annotations

import ast
from importlib import metadata
from pathlib import Path

import pytest
from spacy.language import Language
from spacy.tokens import Doc
from spacy.util import registry as spacy_registry

import scholarly_nlp
from scholarly_nlp import ComponentSpec, PluginError, PluginRegistry, hookimpl
from scholarly_nlp import plugins

ROOT = Path(__file__).resolve().parents[1]
FIRST_PARTY = {
    "aspect_embedder", "citance_linker", "contribution_detector", "contribution_linker",
    "citance_facet_classifier", "sentence_role_tagger", "figure_embedder", "figure_ranker",
    "scholarly_sentencizer",
}


@pytest.fixture(autouse=True)
def no_plugin_environment(monkeypatch):
    for name in (plugins.ENV_STRICT, plugins.ENV_ALLOW, plugins.ENV_DISABLE):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def registry() -> PluginRegistry:
    """Every installed plugin, strict: a door that disagrees with another raises here."""
    return PluginRegistry(strict=True).load()


def installed_components(registry: PluginRegistry) -> list[str]:
    names = sorted(FIRST_PARTY & set(registry.components))
    if "sentence_role_tagger" not in names:
        pytest.skip("the first-party component packages are not installed")
    return names


def test_every_first_party_component_is_registered_from_its_spec(registry):
    for name in installed_components(registry):
        record = registry.components[name]
        assert isinstance(record.spec, ComponentSpec) and record.spec.name == name
        meta = Language.get_factory_meta(name)
        assert record.spec.differences(meta) == [], name
        assert spacy_registry.factories.get(Language.get_factory_name(name)) is record.factory
        # the hook's listing carries the spec's attributes
        listed = set(registry.plugins[record.plugin].registered.get("extensions", []))
        assert listed >= set(record.spec.extensions), name


def test_hook_metadata_reaches_spacy(registry):
    """The defect of issue 16: the hook's requires were dropped when the factory existed."""
    installed_components(registry)
    meta = Language.get_factory_meta("aspect_embedder")
    assert meta.requires == ["doc._.trf_data"]
    assert "doc._.aspect_vectors" in meta.assigns


def test_spacy_factories_entry_points_are_the_spec_factories(registry):
    installed_components(registry)
    ours = [ep for ep in metadata.entry_points(group="spacy_factories") if ep.name in FIRST_PARTY]
    assert len(ours) >= 8
    for ep in ours:
        factory = ep.load()
        record = registry.components[ep.name]
        assert factory is record.factory, ep.name


@pytest.mark.parametrize("name", sorted(FIRST_PARTY - {"scholarly_sentencizer"}))
def test_a_pipe_installs_its_own_extensions(registry, name):
    if name not in registry.components:
        pytest.skip("the first-party component packages are not installed")
    spec = registry.components[name].spec
    doc_names = [key.split("._.", 1)[1] for key in spec.extensions if key.startswith("doc._.")]
    assert doc_names, f"{name} declares no Doc attribute"
    for attribute in doc_names:
        Doc.remove_extension(attribute)
    try:
        assert not any(Doc.has_extension(a) for a in doc_names)
        nlp = scholarly_nlp.blank()
        nlp.add_pipe(name)
        assert all(Doc.has_extension(a) for a in doc_names)
        spec.install_extensions()  # idempotent
    finally:
        for other in registry.components.values():
            other.spec.install_extensions()


def make_probe(nlp, name, level):
    return lambda doc: doc


def test_a_registration_with_other_metadata_is_an_error():
    spec = ComponentSpec("door_test_probe", default_config={"level": 1}, assigns=["doc._.door_test"],
                         extensions={"doc._.door_test": {"default": None}})
    spec.factory(make_probe)

    class Same:
        @hookimpl
        def register_components(self, register):
            register(spec, make_probe)

    class OtherRequires:
        @hookimpl
        def register_components(self, register):
            register("door_test_probe", make_probe, default_config={"level": 1}, assigns=["doc._.door_test"],
                     requires=["token.is_sent_start"])

    class SpecAndKeywords:
        @hookimpl
        def register_components(self, register):
            register(spec, make_probe, assigns=["doc._.other"])

    registry = PluginRegistry(strict=True, allow=[]).load()
    assert registry.add_plugin(Same(), "same").status == "loaded"
    assert registry.plugins["same"].registered == {"components": ["door_test_probe"], "extensions": ["doc._.door_test"]}
    with pytest.raises(PluginError, match=r"other metadata: requires \[\] registered, \['token.is_sent_start'\] here"):
        registry.add_plugin(OtherRequires(), "other_requires")
    with pytest.raises(PluginError, match="pass its metadata in the ComponentSpec"):
        registry.add_plugin(SpecAndKeywords(), "spec_and_keywords")


def test_an_attribute_declared_twice_with_other_arguments_is_an_error():
    first = ComponentSpec("door_test_a", extensions={"doc._.door_test_shared": {"default": None}})
    same = ComponentSpec("door_test_b", extensions={"doc._.door_test_shared": {"default": None}})
    other = ComponentSpec("door_test_c", extensions={"doc._.door_test_shared": {"default": 0}})
    first.install_extensions()
    same.install_extensions()
    with pytest.raises(PluginError, match=r"component 'door_test_c' declares doc._.door_test_shared"):
        other.install_extensions()
    with pytest.raises(ValueError, match="must be written"):
        ComponentSpec("door_test_d", extensions={"door_test_shared": {"default": None}})


def test_reader_and_metric_names_are_guarded():
    class Clash:
        @hookimpl
        def register_readers(self, register):
            register("tei", lambda path, **_: None)

    class MetricClash:
        @hookimpl
        def register_metrics(self, register):
            register("map", lambda *a: 0.0)

    registry = PluginRegistry(strict=True, allow=[]).load()
    with pytest.raises(PluginError, match="reader name 'tei' is already registered by builtin"):
        registry.add_plugin(Clash(), "reader_clash")
    with pytest.raises(PluginError, match="metric name 'map' is already registered by builtin"):
        registry.add_plugin(MetricClash(), "metric_clash")


def test_a_hook_implementation_may_take_a_subset_of_the_parameters(tmp_path):
    class PathOnly:
        @hookimpl
        def sniff_format(self, path):
            return "door_test" if path.endswith(".doortest") else None

    registry = PluginRegistry(strict=True, allow=[]).load()
    registry.add_plugin(PathOnly(), "path_only")
    probe = tmp_path / "x.doortest"
    probe.write_text("x")
    assert registry.sniff(str(probe)) == "door_test"


def _calls(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        target = node.func if isinstance(node, ast.Call) else node if isinstance(node, ast.Attribute) else None
        if isinstance(target, ast.Attribute):
            owner = target.value.id if isinstance(target.value, ast.Name) else ""
            if (owner, target.attr) == ("Language", "factory") or target.attr == "set_extension":
                found.append((node.lineno, f"{owner}.{target.attr}"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "set_extension":
            found.append((node.lineno, "set_extension"))
    return found


def test_components_declare_through_specs_only():
    """No second door: no ``Language.factory`` or ``set_extension`` under ``components/``."""
    offenders = []
    for path in sorted((ROOT / "components").rglob("*.py")):
        for line, call in _calls(ast.parse(path.read_text(encoding="utf-8"))):
            offenders.append(f"{path.relative_to(ROOT)}:{line}: {call}")
    assert offenders == []
