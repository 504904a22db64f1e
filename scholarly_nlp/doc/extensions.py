"""The paper Doc's span groups and ``._`` extensions.

Text-anchored structure lives in span groups (they survive ``DocBin`` and multiprocessing
without user data):

=================  ===========================================  ======================
group              one span per                                 label_ / kb_id_
=================  ===========================================  ======================
``title``          title                                        "title" / ""
``abstract``       abstract paragraph                           "abstract" / ""
``sections``       section, heading through last paragraph      title / number
``section_heads``  section heading                              "heading" / number
``paragraphs``     body paragraph                               "paragraph" / number
``captions``       figure/table caption                         kind / figure id
``figure_refs``    inline figure/table mention                  kind / figure id or ""
``citations``      inline citation marker                       "bibr" / bib id or ""
``formulas``       display formula (its label included)         "formula" / formula id
``formula_refs``   inline formula reference ("Eq. (3)")         "formula" / formula id or ""
``footnotes``      footnote text (after the body)               "footnote" / footnote id
``footnote_refs``  footnote anchor in the text                  "footnote" / footnote id or ""
``back_matter``    back-matter paragraph (acknowledgements,     type / back-matter id
                   funding, availability, ...)                  (``bm3``)
=================  ===========================================  ======================

What is not text (figure labels and boxes, bibliography, section levels, paper id) is one
JSON-able dict in ``doc._.paper_meta``. Typed views are getters: ``doc._.figures``,
``doc._.citances``, ``doc._.sections``, ``doc._.bibliography``, ``doc._.paper_id``, ``doc._.authors``,
``doc._.formulas``, ``doc._.footnotes``, ``doc._.back_matter``.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from typing import Any, Optional

from spacy.tokens import Doc, Span, Token

from .types import BackMatter, Citance, Figure, Footnote, Formula, Section

SPAN_GROUPS = (
    "title", "abstract", "sections", "section_heads", "paragraphs", "captions", "figure_refs", "citations",
    "formulas", "formula_refs", "footnotes", "footnote_refs", "back_matter",
)


def paper_meta(doc: Doc) -> dict:
    """The paper metadata dict (empty dict for a Doc not built from a paper)."""
    return doc._.paper_meta or {}


def get_paper_id(doc: Doc) -> Optional[str]:
    """The paper id (TEI/PDF file stem unless the reader was given one)."""
    return paper_meta(doc).get("paper_id")


def get_authors(doc: Doc) -> list[dict]:
    """The paper's own authors as plain dicts: {name, affiliations, email}."""
    return _plain(paper_meta(doc).get("authors", []))


def get_bibliography(doc: Doc) -> dict:
    """Bibliography as a plain dict: id -> {title, authors, year, venue, doi}."""
    return _plain(paper_meta(doc).get("bibliography", {}))


def _plain(value: Any) -> Any:
    """Lists again where msgpack (DocBin, multiprocessing) turned them into tuples."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def get_figures(doc: Doc) -> list[Figure]:
    """Figures and tables in document order with caption span and mention spans."""
    captions = {span.kb_id_: span for span in doc.spans.get("captions", [])}
    mentions: dict[str, list[Span]] = defaultdict(list)
    for span in doc.spans.get("figure_refs", []):
        if span.kb_id_:
            mentions[span.kb_id_].append(span)
    figures = []
    for info in paper_meta(doc).get("figures", []):
        bbox = info.get("bbox")
        figures.append(
            Figure(
                id=info["id"],
                label=info.get("label", ""),
                kind=info.get("kind", "figure"),
                caption=captions.get(info["id"]),
                mentions=mentions.get(info["id"], []),
                head=info.get("head", ""),
                image_path=info.get("image_path"),
                page=info.get("page"),
                bbox=tuple(bbox) if bbox else None,
            )
        )
    return figures


def get_citances(doc: Doc) -> list[Citance]:
    """Sentences that carry at least one citation marker, with the markers' bibliography ids."""
    markers = sorted(doc.spans.get("citations", []), key=lambda s: s.start)
    if not markers:
        return []
    sentences = list(doc.sents)
    starts = [s.start for s in sentences]
    grouped: dict[int, list[Span]] = defaultdict(list)
    for marker in markers:
        grouped[bisect_right(starts, marker.start) - 1].append(marker)
    citances = []
    for index in sorted(grouped):
        group = grouped[index]
        bib_ids = list(dict.fromkeys(m.kb_id_ for m in group if m.kb_id_))
        citances.append(Citance(sentence=sentences[index], markers=group, bib_ids=bib_ids))
    return citances


def get_sections(doc: Doc) -> list[Section]:
    """Body sections in reading order with their heading and paragraph spans."""
    heads = {span.start: span for span in doc.spans.get("section_heads", [])}
    paragraphs = sorted(doc.spans.get("paragraphs", []), key=lambda s: s.start)
    para_starts = [p.start for p in paragraphs]
    levels = [s.get("level", 1) for s in paper_meta(doc).get("sections", [])]
    spans = list(doc.spans.get("sections", []))
    sections = []
    for i, span in enumerate(spans):
        number = span.kb_id_ or None
        level = levels[i] if len(levels) == len(spans) else (number.count(".") + 1 if number else 1)
        lo = bisect_right(para_starts, span.start - 1)
        hi = bisect_right(para_starts, span.end - 1)
        inside = [p for p in paragraphs[lo:hi] if p.end <= span.end]
        sections.append(
            Section(title=span.label_, number=number, level=level, span=span, paragraphs=inside, heading=heads.get(span.start))
        )
    return sections


def _refs_by_target(doc: Doc, group: str) -> dict[str, list[Span]]:
    found: dict[str, list[Span]] = defaultdict(list)
    for span in doc.spans.get(group, []):
        if span.kb_id_:
            found[span.kb_id_].append(span)
    return found


def get_formulas(doc: Doc) -> list[Formula]:
    """Display formulas in document order, each with its printed label and the spans that refer to it."""
    labels = {f.get("id"): f.get("label", "") for f in paper_meta(doc).get("formulas", [])}
    refs = _refs_by_target(doc, "formula_refs")
    return [
        Formula(id=span.kb_id_, label=labels.get(span.kb_id_, ""), span=span, mentions=refs.get(span.kb_id_, []))
        for span in doc.spans.get("formulas", [])
    ]


def get_footnotes(doc: Doc) -> list[Footnote]:
    """Footnotes in document order, each with its printed number and its anchors in the text."""
    numbers = {f.get("id"): f.get("number", "") for f in paper_meta(doc).get("footnotes", [])}
    anchors = _refs_by_target(doc, "footnote_refs")
    return [
        Footnote(id=span.kb_id_, number=numbers.get(span.kb_id_, ""), span=span, anchors=anchors.get(span.kb_id_, []))
        for span in doc.spans.get("footnotes", [])
    ]


def get_back_matter(doc: Doc) -> list[BackMatter]:
    """Back-matter sections (acknowledgements, funding, availability, ...) with their paragraph spans."""
    paragraphs: dict[str, list[Span]] = defaultdict(list)
    for span in doc.spans.get("back_matter", []):
        paragraphs[span.kb_id_].append(span)
    return [
        BackMatter(id=entry["id"], title=entry.get("title", ""), type=entry.get("type", ""),
                   paragraphs=paragraphs.get(entry["id"], []))
        for entry in paper_meta(doc).get("back_matter", [])
    ]


DOC_EXTENSIONS: dict[str, dict[str, Any]] = {
    "paper_meta": {"default": None},
    # Citances that cite this (reference) paper, each a JSON-able dict; see
    # scholarly_nlp.readers.clscisumm.incoming_citance for the keys.
    "incoming_citances": {"default": None},
    "paper_id": {"getter": get_paper_id},
    "authors": {"getter": get_authors},
    "bibliography": {"getter": get_bibliography},
    "figures": {"getter": get_figures},
    "citances": {"getter": get_citances},
    "sections": {"getter": get_sections},
    "formulas": {"getter": get_formulas},
    "footnotes": {"getter": get_footnotes},
    "back_matter": {"getter": get_back_matter},
}

SPAN_EXTENSIONS: dict[str, dict[str, Any]] = {
    # The abstract sentence's role, read from the "roles" span group (see doc/roles.py).
    "role": {"getter": lambda span: _span_role(span)},
}


def _span_role(span: Span) -> Optional[str]:
    from .roles import get_span_role

    return get_span_role(span)


def extension_class(obj: str) -> type:
    """The spaCy class whose ``._`` holds extensions of ``obj`` (``"doc"``, ``"span"`` or ``"token"``)."""
    classes = {"doc": Doc, "span": Span, "token": Token}
    if obj not in classes:
        raise ValueError(f"extensions go on 'doc', 'span' or 'token', not {obj!r}")
    return classes[obj]


def set_extension(obj: str, name: str, **kwargs: Any) -> None:
    """Install one extension on Doc/Span/Token unless it already exists (idempotent)."""
    cls = extension_class(obj)
    if not cls.has_extension(name):
        cls.set_extension(name, **kwargs)


def _function_key(function: Any) -> Any:
    """Functions compare by module and qualified name, so a reloaded module's copy is the same."""
    if function is None:
        return None
    return (getattr(function, "__module__", None), getattr(function, "__qualname__", repr(function)))


def _signature(default: Any = None, method: Any = None, getter: Any = None, setter: Any = None) -> tuple:
    return (repr(default), _function_key(method), _function_key(getter), _function_key(setter))


def install_extension(obj: str, name: str, owner: str = "", **kwargs: Any) -> None:
    """Install one extension, or check that the installed one was declared the same way.

    Unlike :func:`set_extension`, an attribute already installed with another default,
    getter, setter or method raises :class:`~scholarly_nlp.errors.PluginError` (two
    packages would be writing different things under one name); ``owner`` names the
    declaring component or plugin in that message.
    """
    cls = extension_class(obj)
    if cls.has_extension(name):
        if _signature(*cls.get_extension(name)) != _signature(**kwargs):
            from ..errors import PluginError

            who = f"{owner} declares" if owner else "declared"
            raise PluginError(f"{who} {obj}._.{name} with {kwargs!r}, but it is already installed with other "
                              f"arguments")
        return
    cls.set_extension(name, **kwargs)


def install_extensions() -> None:
    """Install the document-model extensions; safe to call any number of times."""
    for name, kwargs in DOC_EXTENSIONS.items():
        set_extension("doc", name, **kwargs)
    for name, kwargs in SPAN_EXTENSIONS.items():
        set_extension("span", name, **kwargs)

