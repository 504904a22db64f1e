"""Registered names share one scheme (issue 16, item 6), and every name a config uses resolves.

The scheme follows spaCy (``spacy.TextCatBOW.v3``) and spacy-transformers
(``spacy-transformers.TransformerListener.v1``): ``<namespace>.<Name>.v<N>``, where the
namespace is the package that registers it: ``scholarly_nlp.`` for the core,
``scholarly_<component>.`` (the component's import package, e.g.
``scholarly_facet_classifier.``) for a component. Names from before the scheme stay
registered as aliases (``OLD_ALIASES``) so pipelines and configs saved with them still load.
"""

from __future__ import annotations

import re
from importlib.metadata import entry_points
from pathlib import Path

import pytest
import spacy
from spacy.util import load_config
from spacy_transformers.util import registry  # spaCy's registry plus span_getters

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = sorted(ROOT.glob("projects/*/configs/*.cfg"))
GROUPS = ("architectures", "readers", "callbacks", "misc", "layers", "span_getters", "batchers", "loggers")

#: Old name -> current name (renamed by issue 16; the old ones remain registered).
OLD_ALIASES = {
    "scholarly_aspects.AttentionAspectPooler.v1": "scholarly_aspect_embedder.AttentionAspectPooler.v1",
    "scholarly_facets.TfidfLinear.v1": "scholarly_facet_classifier.TfidfLinear.v1",
    "scholarly_facets.TransformerClassifier.v1": "scholarly_facet_classifier.TransformerClassifier.v1",
    "scholarly_facets.SentenceRoleTagger.v1": "scholarly_facet_classifier.SentenceRoleTagger.v1",
    "scholarly_facets.init_frozen_transformer.v1": "scholarly_facet_classifier.init_frozen_transformer.v1",
}
ALIAS_GROUP = {"scholarly_facets.init_frozen_transformer.v1": "callbacks"}


def _registered_names(section, found):
    for key, value in section.items():
        if isinstance(value, dict):
            _registered_names(value, found)
        elif key.startswith("@"):
            found.append((key[1:], value))
    return found


def _ours():
    """(group, name, module) of every spaCy registry entry point our packages declare."""
    out = []
    for group in GROUPS:
        for ep in entry_points(group=f"spacy_{group}"):
            if ep.value.split(".")[0].startswith("scholarly_"):
                out.append((group, ep.name, ep.value.split(".")[0].split(":")[0]))
    return out


@pytest.fixture(scope="module", autouse=True)
def populated():
    """spaCy registers its own functions lazily; a blank pipeline registers them all."""
    populate = getattr(registry, "ensure_populated", None)
    populate() if populate else spacy.blank("en")


def test_configs_exist():
    assert CONFIGS


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_every_name_in_every_project_config_resolves(path):
    names = _registered_names(load_config(path, interpolate=False), [])
    for group, name in names:
        # registry.get also maps spaCy's retired names to spacy-legacy, as config loading does.
        assert callable(registry.get(group, name)), f"{path.name}: @{group} = {name!r} does not resolve"
        assert name not in OLD_ALIASES, f"{path.name} uses the old name {name!r}; use {OLD_ALIASES[name]!r}"


def test_our_names_follow_the_scheme():
    ours = _ours()
    assert ours
    for group, name, package in ours:
        if name in OLD_ALIASES:
            continue
        match = re.fullmatch(r"(scholarly_[a-z_]+)\.[A-Za-z_]+\.v\d+", name)
        assert match, f"{group} {name!r} is not <namespace>.<Name>.v<N>"
        assert match.group(1) == package, f"{group} {name!r} is registered by {package}: prefix it {package}."


@pytest.mark.parametrize("old,new", sorted(OLD_ALIASES.items()))
def test_old_names_still_resolve_to_the_same_function(old, new):
    group = ALIAS_GROUP.get(old, "architectures")
    assert registry.get(group, old) is registry.get(group, new)
