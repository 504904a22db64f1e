"""The ``papermd`` reader: a small Markdown-like paper format, read into a scholarly_nlp Paper.

Format (UTF-8 text, one construct per line):

* ``# Title`` - the first ``#`` heading is the title (later ones are level-1 sections);
* ``## Abstract`` - the paragraphs up to the next heading form the abstract;
* ``## 1 Introduction``, ``### 1.1 Data`` - sections, optionally numbered; ``##`` is level 1;
* ``## References`` - lines ``[n] text`` are bibliography entries with id ``b<n>``
  (other lines continue the previous entry);
* ``Figure 1: caption``, ``Fig. 2. caption``, ``Table 1: caption`` - floats and captions;
* anything else is paragraph text: blank lines separate paragraphs, and the lines of one
  paragraph are joined by a space.

In abstract and body paragraphs, ``Figure 1`` / ``Fig. 1`` / ``Table 2`` are figure/table
mentions and ``[1]`` / ``[2, 3]`` citation markers, linked to their targets when those exist.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Optional, Union

from scholarly_nlp import BibEntry, Block, EmptyDocumentError, FigureInfo, InlineRef, MalformedInputError, Paper

try:
    from scholarly_nlp import PaperSection
except ImportError:  # scholarly_nlp 0.1.0 exports only the Doc view's Section, not the paper model's
    from scholarly_nlp.paper import Section as PaperSection

FORMAT = "papermd"
EXTENSIONS = (".papermd",)

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*$")
_NUMBERED = re.compile(r"^(\d+(?:\.\d+)*)\.?\s+(\S.*)$")
_CAPTION = re.compile(r"^(?P<head>(?P<kind>Figure|Fig\.|Table)\s+(?P<label>\d+[a-z]?))\s*[:.]\s*(?P<text>\S.*)$",
                      re.IGNORECASE)
_MENTION = re.compile(r"\b(?P<kind>Figures?|Figs?\.|Tables?)\s+(?P<label>\d+[a-z]?)\b", re.IGNORECASE)
_CITATION = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")
_NUMBER = re.compile(r"\d+")
_BIB_ENTRY = re.compile(r"^\[(\d+)\]\s+(\S.*)$")
_SPECIAL_SECTIONS = {"abstract": "abstract", "references": "references", "bibliography": "references"}


def float_id(kind: str, label: str) -> str:
    """The id of a figure (``fig_3``) or table (``tab_2``) from its label."""
    return f"{'tab' if kind == 'table' else 'fig'}_{label.lower()}"


def _float_kind(word: str) -> str:
    return "table" if word.lower().startswith("tab") else "figure"


class _Parser:
    """Line-by-line state machine building the Paper's blocks, sections, floats and references."""

    def __init__(self, paper: Paper):
        self.paper = paper
        self.mode = "body"  # "body", "abstract" or "references"
        self.section: Optional[int] = None
        self.open_sections: list[int] = []  # the current section and its ancestors
        self.lines: list[str] = []
        self.last_bib: Optional[str] = None

    def feed(self, line: str) -> None:
        text = line.strip()
        if not text:
            self.flush()
            return
        heading = _HEADING.match(text)
        caption = _CAPTION.match(text)
        if heading:
            self.flush()
            self.heading(len(heading.group(1)), heading.group(2))
        elif self.mode == "references":
            self.reference(text)
        elif caption:
            self.flush()
            self.caption(caption)
        else:
            self.lines.append(text)

    def flush(self) -> None:
        if not self.lines:
            return
        text = " ".join(self.lines)
        self.lines = []
        if self.mode == "abstract":
            self.paper.blocks.append(Block(kind="abstract", text=text))
        else:
            self.paper.blocks.append(Block(kind="paragraph", text=text, section=self.section))

    def heading(self, hashes: int, text: str) -> None:
        if hashes == 1 and not self.paper.title:
            self.paper.blocks.append(Block(kind="title", text=text))
            return
        special = _SPECIAL_SECTIONS.get(text.lower().rstrip(":"))
        if special:
            self.mode, self.section, self.open_sections = special, None, []
            return
        self.mode = "body"
        numbered = _NUMBERED.match(text)
        number, title = (numbered.group(1), numbered.group(2)) if numbered else (None, text)
        level = max(1, hashes - 1)
        while self.open_sections and self.paper.sections[self.open_sections[-1]].level >= level:
            self.open_sections.pop()
        parent = self.open_sections[-1] if self.open_sections else None
        self.paper.sections.append(PaperSection(title=title, number=number, level=level, parent=parent))
        self.section = len(self.paper.sections) - 1
        self.open_sections.append(self.section)
        self.paper.blocks.append(Block(kind="heading", text=title, section=self.section))

    def caption(self, match: "re.Match[str]") -> None:
        kind = _float_kind(match.group("kind"))
        fig_id = float_id(kind, match.group("label"))
        if any(f.id == fig_id for f in self.paper.figures):
            raise MalformedInputError(self.paper.source, f"{match.group('head')} has more than one caption")
        self.paper.figures.append(FigureInfo(id=fig_id, kind=kind, label=match.group("label"), head=match.group("head")))
        self.paper.blocks.append(Block(kind="caption", text=match.group("text"), figure_id=fig_id))

    def reference(self, text: str) -> None:
        entry = _BIB_ENTRY.match(text)
        if entry:
            self.last_bib = f"b{entry.group(1)}"
            self.paper.bibliography[self.last_bib] = BibEntry(id=self.last_bib, title=entry.group(2))
        elif self.last_bib is not None:
            bib = self.paper.bibliography[self.last_bib]
            bib.title = f"{bib.title} {text}"


def _inline_refs(text: str, figure_ids: set[str], bib_ids: set[str]) -> list[InlineRef]:
    """Figure/table mentions and citation markers of one paragraph, in text order."""
    refs = []
    for match in _MENTION.finditer(text):
        kind = _float_kind(match.group("kind"))
        target = float_id(kind, match.group("label"))
        refs.append(InlineRef(match.start(), match.end(), kind, target if target in figure_ids else None))
    for match in _CITATION.finditer(text):
        numbers = list(_NUMBER.finditer(match.group(0)))
        spans = [(match.start(), match.end())] if len(numbers) == 1 else [
            (match.start() + n.start(), match.start() + n.end()) for n in numbers]
        for (start, end), number in zip(spans, numbers):
            target = f"b{number.group(0)}"
            refs.append(InlineRef(start, end, "bibr", target if target in bib_ids else None))
    return sorted(refs, key=lambda r: r.start)


def parse_papermd(text: str, paper_id: str = "paper", source: Optional[str] = None) -> Paper:
    """Parse papermd text into a Paper; EmptyDocumentError when it holds no text."""
    paper = Paper(paper_id=paper_id, source=source, reader=FORMAT)
    parser = _Parser(paper)
    for line in text.lstrip("\ufeff").splitlines():
        parser.feed(line)
    parser.flush()
    if not paper.blocks:
        raise EmptyDocumentError(source, "holds no title, heading, paragraph or caption")
    figure_ids, bib_ids = {f.id for f in paper.figures}, set(paper.bibliography)
    for block in paper.blocks:
        if block.kind in ("abstract", "paragraph"):
            block.refs = _inline_refs(block.text, figure_ids, bib_ids)
    return paper


def read_papermd(path: Union[str, Path], paper_id: Optional[str] = None, encoding: str = "utf-8") -> Paper:
    """Read a ``.papermd`` file (the ``papermd`` reader); the paper id defaults to the file stem."""
    path = Path(path)
    try:
        text = path.read_text(encoding=encoding)
    except UnicodeDecodeError as exc:
        raise MalformedInputError(path, f"is not {encoding} text ({exc.reason} at byte {exc.start})") from exc
    stem = path.name[: -len(".papermd")] if path.name.lower().endswith(".papermd") else path.stem
    return parse_papermd(text, paper_id=paper_id or stem, source=str(path))
