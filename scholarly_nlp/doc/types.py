"""Typed, read-only views over a paper Doc (built by the getters in ``extensions``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from spacy.tokens import Span

_REPR_TEXT = 40


def _clip(text: str, width: int = _REPR_TEXT) -> str:
    """``text`` on one line, cut to ``width`` characters (reprs never show whole texts)."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


@dataclass(frozen=True, repr=False)
class Figure:
    """A figure or table: its caption span, the spans that mention it, and layout metadata."""

    id: str
    label: str
    kind: str
    caption: Optional[Span]
    mentions: list[Span] = field(default_factory=list)
    head: str = ""
    image_path: Optional[str] = None
    page: Optional[int] = None
    bbox: Optional[tuple[float, float, float, float]] = None

    @property
    def caption_text(self) -> str:
        """The caption text, or "" for a figure without caption."""
        return self.caption.text if self.caption is not None else ""

    def __repr__(self) -> str:
        page = f", page={self.page}" if self.page is not None else ""
        return (f"Figure(id={self.id!r}, kind={self.kind!r}, label={self.label!r}, mentions={len(self.mentions)}, "
                f"caption_chars={len(self.caption_text)}{page})")


@dataclass(frozen=True, repr=False)
class Citance:
    """A citation sentence: the sentence, its citation marker spans and their bibliography ids."""

    sentence: Span
    markers: list[Span]
    bib_ids: list[str]

    @property
    def text(self) -> str:
        """The sentence text."""
        return self.sentence.text

    def __repr__(self) -> str:
        ids = self.bib_ids if len(self.bib_ids) <= 5 else [*self.bib_ids[:5], f"... {len(self.bib_ids) - 5} more"]
        return (f"Citance(start_char={self.sentence.start_char}, markers={len(self.markers)}, bib_ids={ids!r}, "
                f"text={_clip(self.sentence.text)!r})")


@dataclass(frozen=True, repr=False)
class Section:
    """A body section: heading text, number ("3.1" or None), level, span and paragraph spans."""

    title: str
    number: Optional[str]
    level: int
    span: Span
    paragraphs: list[Span]
    heading: Optional[Span] = None

    def __repr__(self) -> str:
        return (f"Section(number={self.number!r}, title={_clip(self.title, 60)!r}, level={self.level}, "
                f"paragraphs={len(self.paragraphs)})")


@dataclass(frozen=True, repr=False)
class Formula:
    """A display formula: its id (``formula_3``), printed label ("3"), span, and the spans that cite it."""

    id: str
    label: str
    span: Span
    mentions: list[Span] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"Formula(id={self.id!r}, label={self.label!r}, mentions={len(self.mentions)})"


@dataclass(frozen=True, repr=False)
class Footnote:
    """A footnote: its id (``foot_0``), printed number, text span and its anchors in the text."""

    id: str
    number: str
    span: Span
    anchors: list[Span] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"Footnote(id={self.id!r}, number={self.number!r}, anchors={len(self.anchors)})"


@dataclass(frozen=True, repr=False)
class BackMatter:
    """A back-matter section: acknowledgements, funding, data availability, author contributions, ..."""

    id: str
    title: str
    type: str
    paragraphs: list[Span] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"BackMatter(id={self.id!r}, type={self.type!r}, title={self.title!r}, paragraphs={len(self.paragraphs)})"
