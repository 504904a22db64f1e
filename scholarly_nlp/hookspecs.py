"""Hook specifications of scholarly_nlp plugins (pluggy project name ``scholarly_nlp``).

A plugin is a module or object with functions decorated by :data:`hookimpl`. Registration
hooks receive a ``register`` callback, so a plugin states what it adds and the core keeps
track of who added what (``scholarly-nlp plugins`` lists it)::

    from scholarly_nlp import ComponentSpec, hookimpl

    SPEC = ComponentSpec("my_component", default_config={"threshold": 0.5})

    @hookimpl
    def register_components(register):
        register(SPEC, make_my_component)

Plugins are found through the ``scholarly_nlp`` entry-point group of installed packages.
"""

from __future__ import annotations

from typing import Any, Optional

import pluggy

PROJECT_NAME = "scholarly_nlp"
hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec
def register_components(register: Any) -> None:
    """Register spaCy pipeline components.

    Call ``register(spec, factory)`` with the component's
    :class:`~scholarly_nlp.ComponentSpec` (name, default config, assigns/requires, score
    weights, ``._`` extensions), the same spec whose ``@spec.factory`` decorates
    ``factory`` in the component's module; ``factory(nlp, name, **config)`` returns the
    pipe, exactly as for ``spacy.Language.factory``. The short form ``register(name,
    factory, default_config=None, assigns=(), requires=(), default_score_weights=None)``
    builds the spec from its arguments. A name spaCy already knows with another factory
    or other metadata is a :class:`~scholarly_nlp.PluginError`.
    """


@hookspec
def register_readers(register: Any) -> None:
    """Register paper readers.

    Call ``register(format_name, read_function, extensions=(".pdf",), description="",
    io_bound=False)``; ``read_function(path, **options)`` returns a
    :class:`scholarly_nlp.Paper`. ``io_bound=True`` says the reader waits on I/O (a server),
    so concurrent batches run it in threads instead of worker processes. The built-in names
    (``tei``, ``pdf``, ``grobid``, ``clscisumm``) are refused like a taken name.
    """


@hookspec
def register_extensions(register: Any) -> None:
    """Register ``._`` attributes.

    Call ``register(obj, name, default=..., getter=..., setter=..., method=...)`` with
    ``obj`` one of ``"doc"``, ``"span"``, ``"token"``. Installing is idempotent.
    """


@hookspec
def register_metrics(register: Any) -> None:
    """Register evaluation metrics: ``register(name, function, description="")``."""


@hookspec
def register_commands(cli: Any) -> None:
    """Add sub-commands to the ``scholarly-nlp`` click group ``cli``."""


@hookspec(firstresult=True)
def sniff_format(path: str, head: bytes) -> Optional[str]:
    """Return the format name of the file at ``path`` (first bytes in ``head``), or None.

    The first plugin that answers wins; plugins registered later are asked first. An
    implementation that raises is reported once and not asked again by that registry.
    """


@hookspec
def similar_papers(doc: Any, corpus: str, nlp: Any, model: str, k: int) -> Optional[dict]:
    """Papers of ``corpus`` (a folder, glob or abstracts file) most like the processed ``doc``:
    ``{aspect: [hit, ...]}``, each hit a dict with at least ``rank``, ``paper_id``,
    ``title``, ``aspect_scores`` and ``explanation`` (the query and matched sentences), best
    first, at most ``k`` per aspect; the query paper itself is never among them. ``nlp`` is
    the pipeline that processed ``doc``, ``model`` names it (for caching a corpus index).
    Return None when this plugin cannot answer for that pipeline; the first answer wins,
    plugins registered later asked first (``scholarly-nlp analyze --similar``).
    """

