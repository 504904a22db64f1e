"""The citance linker's scholarly_nlp plugin: its component and its Doc attribute."""

from __future__ import annotations

from scholarly_nlp import hookimpl


@hookimpl
def register_components(register):
    """The ``citance_linker`` pipe."""
    from .factory import make_citance_linker

    register("citance_linker", make_citance_linker, assigns=["doc._.citance_links"])


@hookimpl
def register_extensions(register):
    """``doc._.citance_links``: citance id -> ``[{"sid", "index", "score"}, ...]``, best first."""
    register("doc", "citance_links", default=None)
