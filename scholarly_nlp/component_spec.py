"""One declaration per pipeline component, read by every door that registers it.

A component is reachable three ways: ``spacy.load`` (through spaCy's ``spacy_factories``
entry point or an import of the component's module), ``nlp.add_pipe`` after the
scholarly_nlp plugins loaded (the ``register_components`` hook), and a config that names
the factory. Each door used to restate the name, default config and ``assigns``/``requires``,
and the restatements drifted apart. Now the component's module holds one
:class:`ComponentSpec`; its :meth:`ComponentSpec.factory` decorator registers the factory
with spaCy, the plugin hook passes the same spec to ``register``, and the plugin registry
refuses a second registration whose metadata differs.

The spec also lists the ``._`` attributes the component sets or offers; its pipe calls
:meth:`ComponentSpec.install_extensions` when it is built (idempotent, as
spacy-transformers installs ``doc._.trf_data``), so a pipeline loaded without the plugin
registry still has them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional

_EXTENSION_OBJECTS = ("doc", "span", "token")


def _extension_key(key: str) -> tuple[str, str]:
    """``"doc._.name"`` -> ``("doc", "name")``; anything else is a declaration error."""
    obj, sep, name = key.partition("._.")
    if not sep or obj not in _EXTENSION_OBJECTS or not name.isidentifier():
        raise ValueError(f"extension {key!r} must be written '<doc|span|token>._.<name>'")
    return obj, name


@dataclass(frozen=True)
class ComponentSpec:
    """What a pipeline component is: its factory name and everything spaCy records about it.

    ``default_config``, ``assigns``, ``requires`` and ``default_score_weights`` are those of
    ``spacy.Language.factory``. ``extensions`` maps ``"doc._.name"`` (or ``span``/``token``)
    to the keyword arguments of ``set_extension`` (``default``, ``getter``, ``setter``,
    ``method``).
    """

    name: str
    default_config: Mapping[str, Any] = field(default_factory=dict)
    assigns: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()
    default_score_weights: Mapping[str, Optional[float]] = field(default_factory=dict)
    extensions: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "assigns", tuple(self.assigns))
        object.__setattr__(self, "requires", tuple(self.requires))
        for key in self.extensions:
            _extension_key(key)

    def factory(self, function: Callable[..., Any]) -> Callable[..., Any]:
        """Decorator: register ``function`` as this component's spaCy factory, with this spec's metadata."""
        from spacy.language import Language

        Language.factory(self.name, default_config=dict(self.default_config), assigns=list(self.assigns),
                         requires=list(self.requires),
                         default_score_weights=dict(self.default_score_weights))(function)
        return function

    def install_extensions(self) -> None:
        """Install the spec's ``._`` attributes (idempotent).

        Raises :class:`~scholarly_nlp.errors.PluginError` when an attribute of that name is
        already installed with another default, getter, setter or method: two packages
        would be writing different things under one name.
        """
        from .doc.extensions import install_extension

        for key, kwargs in self.extensions.items():
            obj, name = _extension_key(key)
            install_extension(obj, name, owner=f"component {self.name!r}", **kwargs)

    def differences(self, meta: Any) -> list[str]:
        """How a spaCy ``FactoryMeta`` differs from this spec (empty when it matches)."""
        pairs = [
            ("default_config", dict(self.default_config), dict(meta.default_config or {})),
            ("assigns", list(self.assigns), list(meta.assigns or [])),
            ("requires", list(self.requires), list(meta.requires or [])),
            ("default_score_weights", dict(self.default_score_weights), dict(meta.default_score_weights or {})),
        ]
        return [f"{label} {theirs!r} registered, {mine!r} here" for label, mine, theirs in pairs if mine != theirs]
