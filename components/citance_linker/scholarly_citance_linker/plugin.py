"""The citance linker's scholarly_nlp plugin: its component (declared in :data:`.factory.SPEC`)."""

from __future__ import annotations

from scholarly_nlp import hookimpl


@hookimpl
def register_components(register):
    """The ``citance_linker`` pipe and its ``doc._.citance_links``."""
    from .factory import SPEC, make_citance_linker

    register(SPEC, make_citance_linker)
