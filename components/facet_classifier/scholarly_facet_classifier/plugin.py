"""The facet classifier's scholarly_nlp plugin: its two components, each declared in its
module's ``SPEC`` (:mod:`.factory`, :mod:`.role_tagger`)."""

from __future__ import annotations

from scholarly_nlp import hookimpl


@hookimpl
def register_components(register):
    """The ``citance_facet_classifier`` (``doc._.citance_facets``, ``doc._.citance_facet_scores``)
    and ``sentence_role_tagger`` (the ``roles`` span group, ``doc._.role_scores``) pipes."""
    from . import factory, role_tagger

    register(factory.SPEC, factory.make_citance_facet_classifier)
    register(role_tagger.SPEC, role_tagger.make_sentence_role_tagger)
