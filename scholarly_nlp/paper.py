"""The reader-neutral paper model.

Every reader (GROBID TEI, the built-in PDF reader, a GROBID server, third-party readers)
produces a :class:`Paper`; :func:`scholarly_nlp.doc.builder.paper_to_doc` turns it into a
spaCy ``Doc``. Keeping this layer plain dataclasses means a reader never touches spaCy and
the Doc layout is decided in exactly one place.

Offsets (``InlineRef.start/end``, ``Block.sentences``) are character offsets into
``Block.text``; :meth:`Block.check` verifies them, and the builder calls it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from .errors import MalformedInputError

#: Kinds of text block. Reading order in the Doc: title, abstract, the body's headings,
#: paragraphs and display formulas, back matter (headings and paragraphs of sections whose
#: ``Section.kind`` is not "body"), footnotes, then captions.
BLOCK_KINDS = ("title", "abstract", "heading", "paragraph", "formula", "footnote", "caption")
#: Kinds of inline reference.
REF_KINDS = ("bibr", "figure", "table", "formula", "footnote", "other")
#: ``Section.kind`` of body sections; any other kind is back matter ("acknowledgement",
#: "funding", "availability", "contributions", "competing_interests", ...).
BODY = "body"
#: Kinds of figure-like floats.
FIGURE_KINDS = ("figure", "table")


@dataclass
class InlineRef:
    """An inline reference inside a block: a citation marker or a figure/table mention.

    ``target`` is the id of what it points to (``b12``, ``fig_3``, ``tab_1``, ``formula_2``,
    ``foot_0``), or None when the source gave none and it could not be resolved.
    """

    start: int
    end: int
    kind: str
    target: Optional[str] = None


@dataclass
class Block:
    """One block of text: the title, an abstract paragraph, a heading, a paragraph or a caption.

    ``sentences`` holds (start, end) offsets when the source segmented the text (TEI ``<s>``);
    None means the builder's segmenter decides. ``section`` indexes ``Paper.sections`` for
    headings, body paragraphs and formulas; ``figure_id`` names the figure of a caption;
    ``id`` and ``label`` name a formula (``formula_3``, "3") or a footnote (``foot_0``, "1").
    """

    kind: str
    text: str
    refs: list[InlineRef] = field(default_factory=list)
    sentences: Optional[list[tuple[int, int]]] = None
    section: Optional[int] = None
    figure_id: Optional[str] = None
    id: Optional[str] = None
    label: str = ""

    def check(self, source: Optional[str] = None) -> None:
        """Raise MalformedInputError when an offset falls outside the text or overlaps badly."""
        n = len(self.text)
        for ref in self.refs:
            if not (0 <= ref.start < ref.end <= n):
                raise MalformedInputError(
                    source, f"{self.kind} block has a {ref.kind} reference at {ref.start}-{ref.end} "
                    f"outside its text of {n} characters"
                )
        if self.sentences is not None:
            last = 0
            for start, end in self.sentences:
                if not (last <= start < end <= n):
                    raise MalformedInputError(
                        source, f"{self.kind} block has a sentence at {start}-{end} that is out of "
                        f"order or outside its text of {n} characters"
                    )
                last = end


@dataclass
class Section:
    """A section: heading text, its number (``3.1``) when given, nesting level, and kind.

    ``kind`` is ``"body"`` for the paper's body, else the back-matter type
    (``"acknowledgement"``, ``"funding"``, ``"availability"``, ...).
    """

    title: str
    number: Optional[str] = None
    level: int = 1
    parent: Optional[int] = None
    kind: str = BODY

    @property
    def is_back_matter(self) -> bool:
        """True for acknowledgements, funding, availability and similar statements."""
        return self.kind != BODY


@dataclass
class FigureInfo:
    """A figure or table float; its caption is the Block whose ``figure_id`` is this ``id``.

    ``label`` is the number as printed ("3", "3a", "A.1"); ``page`` is 1-based; ``bbox`` is
    (x0, y0, x1, y1) in PDF points from the page's top-left corner, the page turned as its
    text reads: on a page whose text is set sideways (a landscape table), from the top-left
    corner of the page turned a quarter to read it.
    """

    id: str
    kind: str = "figure"
    label: str = ""
    head: str = ""
    image_path: Optional[str] = None
    page: Optional[int] = None
    bbox: Optional[tuple[float, float, float, float]] = None


@dataclass
class BibEntry:
    """One bibliography entry (GROBID ``biblStruct``)."""

    id: str
    title: str = ""
    authors: list[str] = field(default_factory=list)
    year: Optional[str] = None
    venue: str = ""
    doi: Optional[str] = None

    def to_dict(self) -> dict:
        """Plain JSON-able dict (the ``doc._.bibliography`` value for this entry)."""
        return {
            "title": self.title,
            "authors": list(self.authors),
            "year": self.year,
            "venue": self.venue,
            "doi": self.doi,
        }


@dataclass
class Author:
    """One of the paper's own authors, as printed: the name, the affiliations that the
    paper gives the author (each as one string) and the e-mail address, where printed."""

    name: str
    affiliations: list[str] = field(default_factory=list)
    email: Optional[str] = None

    def to_dict(self) -> dict:
        """Plain JSON-able dict (one ``doc._.authors`` item)."""
        return {"name": self.name, "affiliations": list(self.affiliations), "email": self.email}


#: ``doc._.paper_meta`` keys the builder writes from the document model; ``Paper.meta`` may not set them.
RESERVED_META_KEYS = ("paper_id", "source", "reader", "authors", "figures", "sections", "bibliography", "formulas",
                      "footnotes", "back_matter")


@dataclass
class Paper:
    """A parsed paper, independent of spaCy.

    ``blocks`` are in source order; the builder puts them in reading order (see
    ``BLOCK_KINDS``). ``reader`` names the reader that produced it. ``meta`` holds what a
    dataset reader knows beyond the document model (CL-SciSumm's sentence ids under
    ``"sids"``, say): JSON-able values the builder copies into ``doc._.paper_meta``, under
    keys other than the document model's own (:data:`RESERVED_META_KEYS`).
    """

    paper_id: str
    source: Optional[str] = None
    reader: str = ""
    blocks: list[Block] = field(default_factory=list)
    authors: list[Author] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)
    figures: list[FigureInfo] = field(default_factory=list)
    bibliography: dict[str, BibEntry] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def title(self) -> str:
        """The title text, or "" when the reader found none."""
        for block in self.blocks:
            if block.kind == "title":
                return block.text
        return ""

    def blocks_of(self, kind: str) -> list[Block]:
        """The blocks of one kind, in order."""
        return [b for b in self.blocks if b.kind == kind]

    def check(self) -> None:
        """Validate every block's offsets and the meta keys; raise MalformedInputError naming the source."""
        clashing = sorted(set(self.meta) & set(RESERVED_META_KEYS))
        if clashing:
            raise MalformedInputError(self.source, f"Paper.meta may not set the document model's keys {clashing}")
        for block in self.blocks:
            if block.kind not in BLOCK_KINDS:
                raise MalformedInputError(self.source, f"unknown block kind {block.kind!r}")
            block.check(self.source)
