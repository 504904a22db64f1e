"""The PDF reader's working data: words, line segments, pages, visual blocks, captions, units.

Shared by every pass. A :class:`Line` is a run of words on one row; passes annotate lines in
place (``size``, ``col``, ``band``, ``role``) and pages (``split``, ``edges``, ``blocks``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Optional


#: Punctuation that may follow a superscript run inside its word ("extinction6,8-10."); no
#: part of the run.
SUPERSCRIPT_TRAIL = ".,;:"


@dataclass(slots=True)
class Word:
    """A word with its box in points from the page's top-left corner."""

    text: str
    x0: float
    y0: float
    x1: float
    y1: float
    font_size: float
    height: float
    index: int = 0  # pdfium character index of the first character (for font look-ups)
    broken: bool = False  # pdfium removed a line-end hyphen right after this word
    # where a raised, smaller run of digits ("work¹·²" as "work1,2") starts in text; it runs to
    # the word's end, less a SUPERSCRIPT_TRAIL mark
    sup: int = -1


@dataclass(eq=False)
class Line:
    """A line segment: words on one row with no wide gap between them."""

    words: list[Word]
    page: int
    bold: bool = False
    font: str = ""  # the first word's font
    last_font: str = ""  # the last word's font
    word_fonts: Optional[list[str]] = None  # only for lines that start with a section number ("2.1", "A.", "IV.")
    size: float = 0.0
    col: str = "F"  # "L" or "R" column, "F" full width or single column
    band: int = 0
    role: str = ""  # "", "furniture", "float" or "caption"
    upright: bool = True  # False for text set at an angle (a margin's download stamp, arXiv's id)

    def __post_init__(self) -> None:
        words = self.words
        first = words[0]
        x0, y0, x1 = first.x0, first.y0, first.x1
        texts, bottoms = [], []
        for w in words:
            texts.append(w.text)
            bottoms.append(w.y1)
            x0 = min(x0, w.x0)
            x1 = max(x1, w.x1)
            y0 = min(y0, w.y0)
        bottoms.sort()
        self.text = " ".join(texts)
        self.x0, self.y0, self.x1, self.y1 = x0, y0, x1, bottoms[-1]
        # the bottom most words share: robust to a tall glyph or a subscript in the line
        self.base = bottoms[len(words) // 2]

    @property
    def width(self) -> float:
        """x1 - x0."""
        return self.x1 - self.x0

    @property
    def broken(self) -> bool:
        """Whether pdfium removed a line-end hyphen after the last word."""
        return self.words[-1].broken

    def head(self, end: int) -> Line:
        """A copy holding the words before ``end`` (a run-in heading cut off its paragraph)."""
        line = Line(self.words[:end], self.page, self.bold, self.font, self.font, None, self.size, self.col)
        line.band, line.role = self.band, self.role
        return line

    def tail(self, start: int) -> Line:
        """A copy holding the words from ``start`` on (used to cut a run-in heading off)."""
        return self._with_words(self.words[start:])

    def after_chars(self, count: int) -> Optional[Line]:
        """A copy without its first ``count`` characters, spaces not counted; None when nothing
        is left. A word cut in two keeps its rest ("Abstract—This" without the label's
        9 characters is "This"), its left edge moved in proportion."""
        for start, word in enumerate(self.words):
            if count < len(word.text):
                if not count:
                    return self.tail(start)
                x0 = word.x0 + (word.x1 - word.x0) * count / len(word.text)
                sup = word.sup - count if word.sup >= count else -1
                rest = replace(word, text=word.text[count:], x0=x0, index=word.index + count, sup=sup)
                return self._with_words([rest, *self.words[start + 1:]])
            count -= len(word.text)
        return None

    def prefixed(self, text: str) -> Line:
        """This line with ``text`` joined to the front of its first word (its box unchanged)."""
        first = self.words[0]
        sup = first.sup + len(text) if first.sup >= 0 else -1  # a superscript keeps its letters
        return self._with_words([replace(first, text=text + first.text, sup=sup), *self.words[1:]])

    def _with_words(self, words: list[Word]) -> Line:
        """A line of ``words`` with this line's page, weight, fonts, size, column, band and role."""
        line = Line(words, self.page, self.bold, self.font, self.last_font, None, self.size, self.col)
        line.band, line.role = self.band, self.role
        return line


@dataclass
class Page:
    """One page: its size, its lines in reading order, and its column layout."""

    index: int
    width: float
    height: float
    lines: list[Line]
    split: Optional[float] = None
    edges: dict = field(default_factory=dict)  # column -> (left, right) text edges
    band_edges: dict = field(default_factory=dict)  # (column, band) -> edges, where a band has its own
    unmapped: tuple[int, int] = (0, 0)  # sampled characters without a Unicode mapping, sampled
    blocks: list[VBlock] = field(default_factory=list)
    turn: int = 0  # degrees its text runs at where set sideways (coordinates are in that frame)

    def edge(self, line: Line) -> tuple[float, float]:
        """The left and right text edges of a line's column."""
        return self.edges.get(line.col, (0.0, self.width))

    def band_edge(self, line: Line) -> tuple[float, float]:
        """The left and right text edges of a line's column in its band, where the band holds
        enough of that column's lines for edges of its own, else :meth:`edge`. Paragraphs are
        cut by these: Elsevier's abstract box and the introduction under it share the right
        column of page one but not its left edge. The passes that place floats and captions
        read :meth:`edge`."""
        return self.band_edges.get((line.col, line.band)) or self.edge(line)


@dataclass(eq=False)
class VBlock:
    """A visual block: consecutive lines of one column with regular spacing, size and weight."""

    lines: list[Line]
    page: int

    @property
    def text(self) -> str:
        """The lines' texts joined by spaces."""
        return " ".join(line.text for line in self.lines)

    @property
    def size(self) -> float:
        """The size carrying the most characters."""
        return dominant(((l.size, len(l.text)) for l in self.lines), default=0.0)

    @property
    def bbox(self) -> tuple[float, float, float, float]:
        """(x0, y0, x1, y1) around all lines."""
        return (
            min(l.x0 for l in self.lines),
            min(l.y0 for l in self.lines),
            max(l.x1 for l in self.lines),
            max(l.y1 for l in self.lines),
        )


@dataclass
class Stats:
    """Document-wide typography: body font size and normal line advance (as a ratio of size)."""

    body_size: float
    lead_ratio: float


@dataclass
class Caption:
    """A caption block with what it captions."""

    block: VBlock
    kind: str
    label: str
    bbox: Optional[tuple[float, float, float, float]] = None


@dataclass
class Unit:
    """A piece of the paper's text before it becomes a Block."""

    kind: str
    lines: list[Line]
    section: Optional[int] = None
    label: str = ""  # a display formula's printed number


def same_row(prev: Line, line: Line) -> bool:
    """Whether two lines share a baseline (within 0.3 of the larger size)."""
    return abs(line.base - prev.base) <= 0.3 * max(prev.size, line.size, 1.0)


def dominant(weighted: Iterable[tuple[float, int]], default: float) -> float:
    """The value (rounded to 0.25) carrying the most weight."""
    counts: Counter = Counter()
    for value, weight in weighted:
        counts[round(value * 4) / 4] += weight
    return counts.most_common(1)[0][0] if counts else default
