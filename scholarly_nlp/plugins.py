"""Discovering, loading and querying scholarly_nlp plugins.

Plugins are found through the ``scholarly_nlp`` entry-point group. Each one is loaded and
asked to register under a guard: a plugin that fails to import, raises inside a
registration hook, implements a hook scholarly_nlp does not define, or registers a
component name already taken by another factory is named in a warning and skipped (its
other hooks are not used, and the readers, metrics and components it had registered are
withdrawn), and the others load normally. The built-in reader names are the built-in
plugin's alone; a component factory the registry registers with spaCy names its plugin
in the errors it raises; a ``sniff_format`` that raised is not asked again. Environment
variables:

``SCHOLARLY_NLP_STRICT_PLUGINS=1``
    raise :class:`~scholarly_nlp.errors.PluginError` instead of warning (CI, development);
    ``0``, ``false``, ``no``, ``off`` or empty leave it off.
``SCHOLARLY_NLP_PLUGINS=name,name``
    allow-list of entry-point names to load (the built-in plugin is always loaded).
``SCHOLARLY_NLP_DISABLE_PLUGINS=name,name``
    entry-point names never to load.
"""

from __future__ import annotations

import functools
import os
import warnings
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, Iterable, Optional

import pluggy

from . import hookspecs
from .component_spec import ComponentSpec
from .errors import PluginError, ScholarlyNLPError, UnknownNameError
from .hookspecs import PROJECT_NAME

ENTRY_POINT_GROUP = "scholarly_nlp"
BUILTIN_PLUGIN = "builtin"
ENV_STRICT = "SCHOLARLY_NLP_STRICT_PLUGINS"
ENV_ALLOW = "SCHOLARLY_NLP_PLUGINS"
ENV_DISABLE = "SCHOLARLY_NLP_DISABLE_PLUGINS"
REGISTRATION_HOOKS = ("register_components", "register_readers", "register_extensions", "register_metrics")
_FALSE_VALUES = ("", "0", "false", "no", "off")


class PluginWarning(UserWarning):
    """A plugin failed to load or register and was skipped."""


@dataclass
class PluginRecord:
    """What one plugin is and what it registered (``scholarly-nlp plugins`` prints these)."""

    name: str
    version: Optional[str] = None
    module: Optional[str] = None
    status: str = "loaded"
    error: Optional[str] = None
    registered: dict[str, list[str]] = field(default_factory=dict)

    def to_dict(self) -> dict:
        """JSON-able form."""
        return {
            "name": self.name,
            "version": self.version,
            "module": self.module,
            "status": self.status,
            "error": self.error,
            "registered": {k: list(v) for k, v in self.registered.items() if v},
        }


@dataclass
class ComponentRecord:
    """A pipeline component a plugin registered: its factory, its spec and who registered it."""

    name: str
    factory: Callable[..., Any]
    plugin: str
    spec: ComponentSpec

    @property
    def default_config(self) -> dict:
        """The factory's default config (from its spec)."""
        return dict(self.spec.default_config)


@dataclass
class ReaderSpec:
    """A paper reader a plugin registered for one format."""

    name: str
    function: Callable[..., Any]
    plugin: str
    extensions: tuple[str, ...] = ()
    description: str = ""
    io_bound: bool = False


@dataclass
class MetricSpec:
    """An evaluation metric a plugin registered."""

    name: str
    function: Callable[..., Any]
    plugin: str
    description: str = ""


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in _FALSE_VALUES


def _entry_points(group: str) -> list[metadata.EntryPoint]:
    """The entry points of one group (``metadata.entry_points`` has no ``group=`` before 3.10)."""
    try:
        return list(metadata.entry_points(group=group))
    except TypeError:  # Python 3.9: a dict of group -> entry points
        return list(metadata.entry_points().get(group, ()))


def _same_function(a: Any, b: Any) -> bool:
    """The same function, also after a module reload (same module and qualified name)."""
    if a is b:
        return True
    key = lambda f: (getattr(f, "__module__", None), getattr(f, "__qualname__", None))  # noqa: E731
    return key(a)[1] is not None and key(a) == key(b)


def _env_list(name: str) -> Optional[set[str]]:
    value = os.environ.get(name, "").strip()
    return {item.strip() for item in value.split(",") if item.strip()} if value else None


class PluginRegistry:
    """The plugin manager plus everything the plugins registered.

    Create one with :func:`get_registry` (shared, loaded once per process) or directly
    (tests, embedding applications) and call :meth:`load`.
    """

    def __init__(self, strict: Optional[bool] = None, allow: Optional[Iterable[str]] = None,
                 disable: Optional[Iterable[str]] = None):
        self.pm = pluggy.PluginManager(PROJECT_NAME)
        self.pm.add_hookspecs(hookspecs)
        self.strict = strict if strict is not None else _env_flag(ENV_STRICT)
        self.allow = set(allow) if allow is not None else _env_list(ENV_ALLOW)
        self.disable = set(disable) if disable is not None else (_env_list(ENV_DISABLE) or set())
        self.plugins: dict[str, PluginRecord] = {}
        self.components: dict[str, ComponentRecord] = {}
        self.readers: dict[str, ReaderSpec] = {}
        self.metrics: dict[str, MetricSpec] = {}
        #: plugin name -> the error of its ``sniff_format``, which is then no longer asked.
        self.failed_sniffers: dict[str, str] = {}
        self._loaded = False

    # -- loading ----------------------------------------------------------------------
    def load(self) -> "PluginRegistry":
        """Load the built-in plugin and every allowed entry-point plugin (idempotent)."""
        if self._loaded:
            return self
        self._loaded = True
        entry_points = _entry_points(ENTRY_POINT_GROUP)
        if not any(ep.name == BUILTIN_PLUGIN for ep in entry_points):
            from . import builtin_plugin  # running from a source tree without install metadata

            self.add_plugin(builtin_plugin, BUILTIN_PLUGIN, version=_version_of("scholarly-nlp"))
        for ep in sorted(entry_points, key=lambda e: (e.name != BUILTIN_PLUGIN, e.name)):
            if ep.name in self.plugins:
                continue
            if ep.name != BUILTIN_PLUGIN and (ep.name in self.disable or (self.allow is not None and ep.name not in self.allow)):
                self.plugins[ep.name] = PluginRecord(name=ep.name, module=ep.value, status="skipped",
                                                     version=_dist_version(ep))
                continue
            self._load_entry_point(ep)
        try:
            self.pm.check_pending()
        except pluggy.PluginValidationError as exc:
            self._fail(None, f"declares a hook that scholarly_nlp does not define: {exc}")
        return self

    def _load_entry_point(self, ep: metadata.EntryPoint) -> None:
        try:
            plugin = ep.load()
        except Exception as exc:  # a broken plugin must not take the others down
            self.plugins[ep.name] = PluginRecord(name=ep.name, module=ep.value, status="failed",
                                                 error=f"{type(exc).__name__}: {exc}", version=_dist_version(ep))
            self._fail(ep.name, f"failed to import ({type(exc).__name__}: {exc})")
            return
        self.add_plugin(plugin, ep.name, version=_dist_version(ep), module=ep.value)

    def add_plugin(self, plugin: Any, name: str, version: Optional[str] = None, module: Optional[str] = None) -> PluginRecord:
        """Register a plugin object/module and run its registration hooks under a guard.

        Returns the plugin's record; its ``status`` is ``"failed"`` (and a PluginWarning was
        issued, or PluginError raised in strict mode) when the plugin was skipped. A name
        already in use is refused without touching the plugin that holds it.
        """
        record = PluginRecord(name=name, version=version, module=module or getattr(plugin, "__name__", repr(plugin)))
        if name in self.plugins and self.plugins[name].status == "loaded":
            record.status, record.error = "failed", f"a plugin named {name!r} is already registered"
            self._fail(name, "could not be registered (a plugin of that name is already registered)")
            return record
        self.plugins[name] = record
        try:
            self.pm.register(plugin, name=name)
        except Exception as exc:
            record.status, record.error = "failed", f"{type(exc).__name__}: {exc}"
            self._fail(name, f"could not be registered ({exc})")
            return record
        unknown = sorted(caller.name for caller in self.pm.get_hookcallers(plugin) or () if not caller.has_spec())
        if unknown:
            self._skip(plugin, record, f"implements hooks that scholarly_nlp does not define: {', '.join(unknown)}")
            return record
        for hook_name in REGISTRATION_HOOKS:
            for impl in getattr(self.pm.hook, hook_name).get_hookimpls():
                if impl.plugin is not plugin:
                    continue
                try:
                    _call_hookimpl(impl, register=self._registrar(hook_name, record))
                except PluginError as exc:  # a name or metadata clash the registry refused
                    self._skip(plugin, record, f"was refused in {hook_name} ({exc})",
                               error=f"{hook_name}: {type(exc).__name__}: {exc}")
                    return record
                except Exception as exc:
                    self._skip(plugin, record, f"raised in {hook_name} ({type(exc).__name__}: {exc})",
                               error=f"{hook_name}: {type(exc).__name__}: {exc}")
                    return record
        if any(impl.plugin is plugin for impl in self.pm.hook.sniff_format.get_hookimpls()):
            record.registered.setdefault("sniffers", []).append("sniff_format")
        if any(impl.plugin is plugin for impl in self.pm.hook.register_commands.get_hookimpls()):
            record.registered.setdefault("commands", []).append("register_commands")
        if any(impl.plugin is plugin for impl in self.pm.hook.similar_papers.get_hookimpls()):
            record.registered.setdefault("finders", []).append("similar_papers")
        return record

    def _skip(self, plugin: Any, record: PluginRecord, message: str, error: Optional[str] = None) -> None:
        """Mark a plugin failed, unregister its hooks and withdraw what it registered, then warn.

        spaCy factories and ``._`` extensions it installed stay installed (spaCy cannot
        remove them safely) but are no longer listed as the plugin's.
        """
        record.status, record.error = "failed", error or message
        record.registered = {}
        self.pm.unregister(plugin)
        for table in (self.components, self.readers, self.metrics):
            for key in [key for key, spec in table.items() if spec.plugin == record.name]:
                del table[key]
        self._fail(record.name, message)

    def _fail(self, name: Optional[str], message: str, skipped: bool = True) -> None:
        """Warn (or raise PluginError in strict mode) with one line naming the plugin."""
        ending = "; it was skipped." if skipped else "."
        text = f"scholarly_nlp plugin {name!r} {message}{ending}" if name else f"scholarly_nlp plugins: {message}"
        if self.strict:
            raise PluginError(text)
        warnings.warn(text, PluginWarning, stacklevel=3)

    # -- the register callbacks handed to plugins -------------------------------------
    def _registrar(self, hook_name: str, record: PluginRecord) -> Callable[..., None]:
        kind = hook_name[len("register_"):]
        record.registered.setdefault(kind, [])
        handlers = {
            "components": self._register_component,
            "readers": self._register_reader,
            "extensions": self._register_extension,
            "metrics": self._register_metric,
        }

        def register(*args: Any, **kwargs: Any) -> None:
            name = handlers[kind](record.name, *args, **kwargs)
            record.registered[kind].append(name)

        return register

    def _register_component(self, plugin: str, spec: Any, factory: Callable[..., Any], **metadata: Any) -> str:
        """Register a component from its :class:`ComponentSpec` (or, for plugins written before
        specs, from a name plus ``default_config``/``assigns``/``requires``/``default_score_weights``).

        A factory spaCy already knows under that name (the component's module was imported, or
        spaCy's ``spacy_factories`` entry point loaded it) must be the same function with the
        same metadata; anything else is a :class:`PluginError` naming the difference.
        """
        from spacy.language import Language
        from spacy.util import registry as spacy_registry

        if isinstance(spec, ComponentSpec):
            if metadata:
                raise PluginError(f"component {spec.name!r}: pass its metadata in the ComponentSpec, not as "
                                  f"keyword arguments ({', '.join(sorted(metadata))})")
        else:
            spec = ComponentSpec(name=spec, **{key: value for key, value in metadata.items() if value is not None})
        name = spec.name
        _register_spacy_builtin_factories()
        if Language.has_factory(name):
            existing = spacy_registry.factories.get(Language.get_factory_name(name))
            if not _same_function(existing, factory):
                owner = self.components[name].plugin if name in self.components else "spaCy or another package"
                raise PluginError(f"component name {name!r} is already registered by {owner} with another factory")
            differences = spec.differences(Language.get_factory_meta(name))
            if differences:
                raise PluginError(f"component {name!r} is already registered with other metadata: "
                                  + "; ".join(differences))
            if hasattr(existing, "scholarly_plugin"):  # another registry's wrapper: this plugin's now
                _blame_plugin_for_build_errors(name, factory, plugin)
        else:
            spec.factory(factory)
            _blame_plugin_for_build_errors(name, factory, plugin)
        spec.install_extensions()
        if spec.extensions and plugin in self.plugins:
            self.plugins[plugin].registered.setdefault("extensions", []).extend(spec.extensions)
        self.components[name] = ComponentRecord(name=name, factory=factory, plugin=plugin, spec=spec)
        return name

    def _check_free(self, kind: str, table: dict, name: str, function: Callable[..., Any]) -> None:
        """A reader or metric name taken by another function is a PluginError (the same function again is fine)."""
        if name in table and not _same_function(table[name].function, function):
            raise PluginError(f"{kind} name {name!r} is already registered by {table[name].plugin} with another function")

    def _register_reader(self, plugin: str, name: str, function: Callable[..., Any], extensions: Iterable[str] = (),
                         description: str = "", io_bound: bool = False) -> str:
        _check_not_builtin_reader(self.pm.get_plugin(plugin), plugin, name)
        self._check_free("reader", self.readers, name, function)
        self.readers[name] = ReaderSpec(name=name, function=function, plugin=plugin,
                                        extensions=tuple(e.lower() for e in extensions), description=description,
                                        io_bound=bool(io_bound))
        return name

    def _register_extension(self, plugin: str, obj: str, name: str, **kwargs: Any) -> str:
        from .doc.extensions import install_extension

        install_extension(obj, name, owner=f"plugin {plugin!r}", **kwargs)
        return f"{obj}._.{name}"

    def _register_metric(self, plugin: str, name: str, function: Callable[..., Any], description: str = "") -> str:
        self._check_free("metric", self.metrics, name, function)
        self.metrics[name] = MetricSpec(name=name, function=function, plugin=plugin, description=description)
        return name

    # -- queries ----------------------------------------------------------------------
    def reader(self, name: str) -> ReaderSpec:
        """The reader registered for a format; UnknownNameError if none."""
        if name not in self.readers:
            raise UnknownNameError("reader", name, list(self.readers))
        return self.readers[name]

    def metric(self, name: str) -> MetricSpec:
        """The metric registered under a name; UnknownNameError if none."""
        if name not in self.metrics:
            raise UnknownNameError("metric", name, list(self.metrics))
        return self.metrics[name]

    def sniff(self, path: str) -> Optional[str]:
        """Ask the ``sniff_format`` hooks (latest registered first) for the file's format."""
        try:
            with open(path, "rb") as handle:
                head = handle.read(4096)
        except OSError:
            head = b""
        for impl in reversed(self.pm.hook.sniff_format.get_hookimpls()):
            plugin = self.pm.get_name(impl.plugin)
            if plugin in self.failed_sniffers:
                continue
            try:
                result = _call_hookimpl(impl, path=path, head=head)
            except Exception as exc:
                self._retire_sniffer(plugin, f"{type(exc).__name__}: {exc}")
                continue
            if result:
                return result
        return None

    def _retire_sniffer(self, plugin: str, error: str) -> None:
        """Stop asking a sniffer that raised (for this registry's life), and say so once."""
        self.failed_sniffers[plugin] = error
        self._fail(plugin, f"raised in sniff_format ({error}); its sniffer is not asked again in this run",
                   skipped=False)

    def similar_papers(self, doc: Any, corpus: str, nlp: Any, model: str, k: int = 5) -> dict:
        """Papers of ``corpus`` like ``doc``, per aspect, from the first ``similar_papers`` hook
        that answers (plugins registered later first); what a hook raises propagates.
        ScholarlyNLPError when none answers."""
        for impl in reversed(self.pm.hook.similar_papers.get_hookimpls()):
            result = _call_hookimpl(impl, doc=doc, corpus=corpus, nlp=nlp, model=model, k=k)
            if result is not None:
                return result
        raise ScholarlyNLPError(f"no plugin finds papers similar to another with the pipeline {model}: the "
                                "aspect embedder's does for a pipeline with an aspect_embedder (scholarly_core)")

    def add_commands(self, cli: Any) -> None:
        """Let every plugin add its sub-commands to the click group ``cli``."""
        for impl in self.pm.hook.register_commands.get_hookimpls():
            try:
                _call_hookimpl(impl, cli=cli)
            except Exception as exc:
                self._fail(self.pm.get_name(impl.plugin), f"raised in register_commands ({type(exc).__name__}: {exc})")


def _blame_plugin_for_build_errors(component: str, factory: Callable[..., Any], plugin: str) -> None:
    """Have spaCy build ``component`` through a wrapper of ``factory`` whose errors name ``plugin``.

    Only for factories this registry registered with spaCy: one that the component's module
    registered itself (``@spec.factory``) stays spaCy's factory, so that spaCy's own door and
    a module reload keep seeing the same function. The wrapper keeps the factory's signature
    (spaCy validates the config against it), name and module, so it counts as the same
    factory; ``ComponentRecord.factory`` stays the plugin's own function.
    """
    from spacy.language import Language
    from spacy.util import registry as spacy_registry

    @functools.wraps(factory)
    def build_component(*args: Any, **kwargs: Any) -> Any:
        try:
            return factory(*args, **kwargs)
        except Exception as exc:
            blamed = _error_naming_plugin(exc, component, plugin)
            if blamed is exc:
                raise
            raise blamed from exc

    build_component.scholarly_plugin = plugin  # type: ignore[attr-defined]
    spacy_registry.factories.register(Language.get_factory_name(component), func=build_component)


def _error_naming_plugin(exc: Exception, component: str, plugin: str) -> Exception:
    """``exc`` with the plugin named in its message (its type kept, so callers that catch a
    ``ValueError`` for a bad setting still do), or a PluginError when its message cannot say it."""
    blame = f"component {component!r} was registered by plugin {plugin!r}"
    if blame in str(exc):
        return exc
    if len(exc.args) == 1 and isinstance(exc.args[0], str):
        original = exc.args
        exc.args = (f"{exc.args[0]} ({blame})",)
        if blame in str(exc):
            return exc
        exc.args = original  # a custom __str__ ignores args
    return PluginError(f"{blame} and failed to build ({type(exc).__name__}: {exc})")


def _check_not_builtin_reader(plugin: Any, plugin_name: str, name: str) -> None:
    """No plugin but the built-in module may take a built-in reader's name (in any case),
    whatever order the plugins load in: ``tei`` always means the core TEI reader."""
    from . import builtin_plugin

    if plugin is not builtin_plugin and str(name).strip().lower() in builtin_plugin.BUILTIN_READERS:
        raise PluginError(f"reader name {name!r} is already registered by {BUILTIN_PLUGIN} (a built-in reader, "
                          f"which plugin {plugin_name!r} cannot replace); register yours under another name")


def _call_hookimpl(impl: Any, **arguments: Any) -> Any:
    """Call a hook implementation with the arguments it declares (pluggy's "any subset" rule)."""
    return impl.function(**{name: value for name, value in arguments.items() if name in impl.argnames})


def _register_spacy_builtin_factories() -> None:
    """Make spaCy register its own factories (lazy since spaCy 3.8) so name clashes show."""
    try:
        from spacy.pipeline.factories import register_factories
    except ImportError:  # older spaCy registers them at import time
        return
    register_factories()


def _dist_version(ep: metadata.EntryPoint) -> Optional[str]:
    dist = getattr(ep, "dist", None)
    return dist.version if dist is not None else None


def _version_of(dist_name: str) -> Optional[str]:
    try:
        return metadata.version(dist_name)
    except metadata.PackageNotFoundError:
        return None


_shared_registry: Optional[PluginRegistry] = None


def get_registry() -> PluginRegistry:
    """The process-wide registry, loaded on first use.

    While it loads, a plugin that calls this gets the registry being loaded. If loading
    raises (strict mode), the registry is forgotten so the next call tries again.
    """
    global _shared_registry
    if _shared_registry is None:
        _shared_registry = PluginRegistry()
        try:
            _shared_registry.load()
        except BaseException:
            _shared_registry = None
            raise
    return _shared_registry


def reset_registry() -> None:
    """Forget the process-wide registry (tests; after installing a plugin at run time)."""
    global _shared_registry
    _shared_registry = None


def package_root() -> Path:
    """Directory of the installed scholarly_nlp package."""
    return Path(__file__).resolve().parent
