"""The figure ranker's scholarly_nlp plugin: its component and its Doc attributes."""

from __future__ import annotations

from spacy.tokens import Doc

from scholarly_nlp import hookimpl


def get_figure_ranking(doc: Doc) -> list[str]:
    """Candidate figure ids, best first (empty when the ranker has not run)."""
    from .factory import rank_figures

    scores = doc._.figure_scores
    if scores is None:
        return []
    candidates = [f.id for f in doc._.figures if f.id in scores or f.kind == "figure"]
    return rank_figures(candidates, scores)


@hookimpl
def register_components(register):
    """The ``figure_ranker`` pipe."""
    from .factory import make_figure_ranker

    register("figure_ranker", make_figure_ranker, assigns=["doc._.figure_scores", "doc._.central_figure"])


@hookimpl
def register_extensions(register):
    """``doc._.figure_scores`` (id -> score), ``doc._.central_figure`` (id), ``doc._.figure_ranking``."""
    register("doc", "figure_scores", default=None)
    register("doc", "central_figure", default=None)
    register("doc", "figure_ranking", getter=get_figure_ranking)
