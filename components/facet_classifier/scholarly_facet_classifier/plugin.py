"""The facet classifier's scholarly_nlp plugin: its component and its Doc attributes."""

from __future__ import annotations

from scholarly_nlp import hookimpl


@hookimpl
def register_components(register):
    """The ``citance_facet_classifier`` pipe."""
    from .factory import make_citance_facet_classifier

    register("citance_facet_classifier", make_citance_facet_classifier,
             assigns=["doc._.citance_facets", "doc._.citance_facet_scores"])


@hookimpl
def register_extensions(register):
    """``doc._.citance_facets`` (citance id -> labels) and ``doc._.citance_facet_scores``
    (citance id -> {label: probability}); None until the pipe ran."""
    register("doc", "citance_facets", default=None)
    register("doc", "citance_facet_scores", default=None)
