"""Abstract sentence roles and paper aspects.

Every abstract sentence plays one rhetorical role (the CSAbstruct / CSFCube label set):
``background``, ``objective``, ``method``, ``result`` or ``other``. Roles are stored as the
span group ``roles`` (one span per abstract sentence, its role as the label), so they
survive ``DocBin``, JSON export and multiprocessing like every other span group;
``Span._.role`` reads them back.

A paper has four *aspects* (Kobayashi et al.): its ``title`` and the ``background``,
``method`` and ``result`` of its abstract. A sentence's role maps to an aspect
(``objective`` counts as background, as in CSFCube); ``other`` sentences belong to none.
"""

from __future__ import annotations

from typing import Optional

from spacy.tokens import Doc, Span

from ..errors import UnknownNameError

ROLES = ("background", "objective", "method", "result", "other")
"""Labels of abstract sentences (CSAbstruct, CSFCube ``pred_labels``)."""

ASPECTS = ("title", "background", "method", "result")
"""The aspects a paper is embedded by."""

QUERY_ASPECTS = ("background", "method", "result")
"""The aspects a similarity query can be asked on (what CSFCube calls its query "facets";
in scholarly_nlp a facet is a CL-SciSumm citation facet only)."""

ROLE_GROUP = "roles"
"""The span group that holds one span per abstract sentence, labelled with its role."""

_ROLE_TO_ASPECT = {"background": "background", "objective": "background", "method": "method", "result": "result"}


def aspect_of_role(role: Optional[str]) -> Optional[str]:
    """The aspect a sentence role belongs to (None for ``other`` and unknown roles)."""
    return _ROLE_TO_ASPECT.get(role or "")


def check_aspect(aspect: str) -> str:
    """Return ``aspect`` if it is one of :data:`QUERY_ASPECTS`, else raise UnknownNameError."""
    if aspect not in QUERY_ASPECTS:
        raise UnknownNameError("aspect", aspect, list(QUERY_ASPECTS))
    return aspect


def abstract_sentences(doc: Doc) -> list[Span]:
    """The sentences inside the ``abstract`` span group, in order (empty without abstract)."""
    abstract = sorted(doc.spans.get("abstract", []), key=lambda s: s.start)
    out: list[Span] = []
    for block in abstract:
        for sent in block.sents:
            start, end = max(sent.start, block.start), min(sent.end, block.end)
            span = doc[start:end]
            if span.text.strip():
                out.append(span)
    return out


def title_span(doc: Doc) -> Optional[Span]:
    """The title span, or None when the paper has no title."""
    titles = [s for s in doc.spans.get("title", []) if s.text.strip()]
    return titles[0] if titles else None


def set_roles(doc: Doc, roles: list[str], sentences: Optional[list[Span]] = None) -> None:
    """Store one role per abstract sentence as the ``roles`` span group.

    ``sentences`` defaults to :func:`abstract_sentences`; ValueError when the counts differ
    or a role is not one of :data:`ROLES`.
    """
    sentences = abstract_sentences(doc) if sentences is None else sentences
    if len(roles) != len(sentences):
        raise ValueError(f"{len(roles)} roles for {len(sentences)} abstract sentences")
    unknown = sorted({r for r in roles if r not in ROLES})
    if unknown:
        raise ValueError(f"unknown sentence role(s) {unknown}; expected one of {ROLES}")
    doc.spans[ROLE_GROUP] = [Span(doc, s.start, s.end, label=r) for s, r in zip(sentences, roles)]


def get_span_role(span: Span) -> Optional[str]:
    """``Span._.role``: the role of the ``roles`` span with this span's boundaries, or None."""
    for role_span in span.doc.spans.get(ROLE_GROUP, []):
        if role_span.start == span.start and role_span.end == span.end:
            return role_span.label_
    return None


def aspect_sentences(doc: Doc) -> list[tuple[Span, Optional[str]]]:
    """The title and the abstract sentences with the aspect each belongs to, in order.

    The title comes first with aspect ``"title"``; an abstract sentence's aspect follows its
    role (None for ``other`` or when no role was set). ``doc._.sentence_vectors`` rows, set
    by the aspect embedder, are aligned with this list.
    """
    out: list[tuple[Span, Optional[str]]] = []
    title = title_span(doc)
    if title is not None:
        out.append((title, "title"))
    roles = {(s.start, s.end): s.label_ for s in doc.spans.get(ROLE_GROUP, [])}
    for sent in abstract_sentences(doc):
        out.append((sent, aspect_of_role(roles.get((sent.start, sent.end)))))
    return out
