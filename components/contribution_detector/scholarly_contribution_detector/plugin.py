"""The contribution detector's scholarly_nlp plugin: its component and its Doc attributes."""

from __future__ import annotations

from scholarly_nlp import hookimpl


@hookimpl
def register_components(register):
    """The ``contribution_detector`` pipe."""
    from .factory import ASSIGNS, make_contribution_detector

    register("contribution_detector", make_contribution_detector, assigns=list(ASSIGNS))


@hookimpl
def register_extensions(register):
    """``doc._.contribution_scores`` (one probability per introduction sentence),
    ``doc._.contribution_sentence_offsets`` ([start, end] token offsets of the detected
    sentences), ``doc._.contribution_sentences`` (their Spans; a getter) and
    ``doc._.contribution_gold`` (training labels of NCG Docs)."""
    from .features import EXTENSIONS

    for name, kwargs in EXTENSIONS.items():
        register("doc", name, **kwargs)
