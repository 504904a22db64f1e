"""The figure ranker's scholarly_nlp plugin: its component (declared in :data:`.factory.SPEC`)."""

from __future__ import annotations

from scholarly_nlp import hookimpl


@hookimpl
def register_components(register):
    """The ``figure_ranker`` pipe: ``doc._.figure_scores``, ``doc._.central_figure``, ``doc._.figure_ranking``."""
    from .factory import SPEC, make_figure_ranker

    register(SPEC, make_figure_ranker)
