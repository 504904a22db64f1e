"""Typed, read-only views over a paper Doc (built by the getters in ``extensions``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from spacy.tokens import Span


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class Citance:
    """A citation sentence: the sentence, its citation marker spans and their bibliography ids."""

    sentence: Span
    markers: list[Span]
    bib_ids: list[str]

    @property
    def text(self) -> str:
        """The sentence text."""
        return self.sentence.text


@dataclass(frozen=True)
class Section:
    """A body section: heading text, number ("3.1" or None), level, span and paragraph spans."""

    title: str
    number: Optional[str]
    level: int
    span: Span
    paragraphs: list[Span]
    heading: Optional[Span] = None
