"""``citation_density``: how many sentences of each body section cite something.

A rule-based spaCy component that reads the paper structure scholarly_nlp puts on a Doc
(``doc._.sections``, ``doc._.citances``) and stores one summary on the Doc::

    doc._.citation_density == {
        "sections": [
            {"number": "1", "title": "Introduction", "level": 1,
             "sentences": 20, "citances": 5, "markers": 7, "density": 0.25},
            ...
        ],
        "outside_sections": 2,   # citances in the abstract, captions, footnotes ...
        "total": 32,             # len(doc._.citances)
    }

Config: ``rollup`` (default False) adds each subsection's counts to its level-1 section
and lists level-1 sections only. ``sentences`` counts a section's sentences without its
heading; ``density`` is ``citances / sentences`` (0.0 for a section without sentences).
A Doc without sections (plain text) gets an empty ``sections`` list and zero counts.
The component has no state besides its config, which spaCy saves in ``config.cfg``.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Any, Optional

from scholarly_nlp import ComponentSpec

DOC_ATTRIBUTE = "citation_density"

SPEC = ComponentSpec(
    name="citation_density",
    default_config={"rollup": False},
    assigns=[f"doc._.{DOC_ATTRIBUTE}"],
    extensions={f"doc._.{DOC_ATTRIBUTE}": {"default": None}},
)
"""The component's one declaration: its factory, the plugin hook and its ``._`` attribute read it."""


def _row(section: Any) -> dict[str, Any]:
    return {"number": section.number, "title": section.title, "level": section.level,
            "sentences": 0, "citances": 0, "markers": 0}


def citation_density(doc: Any, rollup: bool = False) -> dict[str, Any]:
    """The summary the component stores, computed from the Doc's sections and citances."""
    sections = list(doc._.sections)
    if not doc.has_annotation("SENT_START"):
        return {"sections": [_finish(_row(s)) for s in sections], "outside_sections": 0, "total": 0}
    rows = [_row(s) for s in sections]
    owner = list(range(len(sections)))  # the row each section's counts go to
    if rollup:
        top: Optional[int] = None
        for i, section in enumerate(sections):
            if section.level <= 1 or top is None:
                top = i
            owner[i] = top
    starts = [s.span.start for s in sections]

    def section_of(token_index: int) -> Optional[int]:
        i = bisect_right(starts, token_index) - 1
        return i if i >= 0 and token_index < sections[i].span.end else None

    for sent in doc.sents:
        i = section_of(sent.start)
        heading = sections[i].heading if i is not None else None
        if i is not None and not (heading is not None and sent.start == heading.start):
            rows[owner[i]]["sentences"] += 1  # the heading is not a sentence of the section
    citances = list(doc._.citances)
    outside = 0
    for citance in citances:
        i = section_of(citance.sentence.start)
        if i is None:
            outside += 1
            continue
        rows[owner[i]]["citances"] += 1
        rows[owner[i]]["markers"] += len(citance.markers)
    kept = [rows[i] for i in sorted(set(owner))]
    return {"sections": [_finish(r) for r in kept], "outside_sections": outside, "total": len(citances)}


def _finish(row: dict[str, Any]) -> dict[str, Any]:
    row["density"] = round(row["citances"] / row["sentences"], 4) if row["sentences"] else 0.0
    return row


class CitationDensity:
    """Sets ``doc._.citation_density`` (see the module docstring)."""

    def __init__(self, nlp: Any, name: str, rollup: bool):
        self.name = name
        self.rollup = bool(rollup)
        SPEC.install_extensions()  # also when spaCy builds the pipe before any plugin hook ran

    def __call__(self, doc: Any) -> Any:
        """Summarise one Doc in place and return it."""
        doc._.set(DOC_ATTRIBUTE, citation_density(doc, rollup=self.rollup))
        return doc


@SPEC.factory
def make_citation_density(nlp: Any, name: str, rollup: bool) -> CitationDensity:
    """spaCy factory of ``citation_density`` (``factory(nlp, name, **config)``)."""
    return CitationDensity(nlp, name, rollup=rollup)
