"""The facet classifier's scholarly_nlp plugin: its component and its Doc attributes."""

from __future__ import annotations

from scholarly_nlp import hookimpl


@hookimpl
def register_components(register):
    """The ``citance_facet_classifier`` and ``sentence_role_tagger`` pipes."""
    from .factory import make_citance_facet_classifier

    register("citance_facet_classifier", make_citance_facet_classifier,
             assigns=["doc._.citance_facets", "doc._.citance_facet_scores"])
    from .role_tagger import ASSIGNS, SCORE_WEIGHTS, make_sentence_role_tagger

    register("sentence_role_tagger", make_sentence_role_tagger, assigns=ASSIGNS,
             default_score_weights=SCORE_WEIGHTS)


@hookimpl
def register_extensions(register):
    """``doc._.citance_facets`` (citance id -> labels) and ``doc._.citance_facet_scores``
    (citance id -> {label: probability}); ``doc._.role_scores`` (one {role: probability}
    dict per abstract sentence, set by the sentence_role_tagger). None until the pipe ran."""
    register("doc", "citance_facets", default=None)
    register("doc", "citance_facet_scores", default=None)
    register("doc", "role_scores", default=None)
