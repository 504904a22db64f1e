"""The contribution detector's scholarly_nlp plugin: its component (declared in :data:`.factory.SPEC`)."""

from __future__ import annotations

from scholarly_nlp import hookimpl


@hookimpl
def register_components(register):
    """The ``contribution_detector`` pipe and its ``doc._.contribution_*`` attributes."""
    from .factory import SPEC, make_contribution_detector

    register(SPEC, make_contribution_detector)
