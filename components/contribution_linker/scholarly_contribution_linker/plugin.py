"""The contribution linker's scholarly_nlp plugin: its component (declared in :data:`.factory.SPEC`)."""

from __future__ import annotations

from scholarly_nlp import hookimpl


@hookimpl
def register_components(register):
    """The ``contribution_linker`` pipe and its ``doc._.contributions`` (plus the attributes it reads)."""
    from .factory import SPEC, make_contribution_linker

    register(SPEC, make_contribution_linker)
