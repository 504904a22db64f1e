"""The contribution linker's scholarly_nlp plugin: its component and its Doc attributes."""

from __future__ import annotations

from scholarly_nlp import hookimpl


@hookimpl
def register_components(register):
    """The ``contribution_linker`` pipe."""
    from .factory import make_contribution_linker

    register("contribution_linker", make_contribution_linker, assigns=["doc._.contributions"])


@hookimpl
def register_extensions(register):
    """``doc._.contributions`` (the output), ``doc._.contribution_scores`` (the detector's
    per-introduction-sentence probabilities, read when set) and ``doc._.contribution_pairs``
    (training pairs on reference Docs); all default to None."""
    register("doc", "contributions", default=None)
    register("doc", "contribution_scores", default=None)
    register("doc", "contribution_pairs", default=None)
