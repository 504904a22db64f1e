"""The built-in PDF reader: a paper's PDF to a :class:`~scholarly_nlp.paper.Paper`, no GROBID needed.

How it works, in passes over words and lines (never over every character in Python):

1. pypdfium2 gives each page's text; every word gets the box of its first and last
   character, words become line *segments* (a wide gap, as between columns or table cells,
   starts a new segment);
2. running headers and footers, page numbers and review line numbers are dropped;
3. each page is cut into columns at its gutter and read band by band (a full-width band,
   then the left column, then the right one);
4. lines are grouped into visual blocks by spacing, size and weight; blocks become the
   title, the abstract, headings and paragraphs (split on indentation, continued across
   columns and pages), captions, or are dropped (front matter, footnotes, references);
5. each caption gets the figure region next to it: the graphics and the non-body text
   between the caption and the nearest body text; that region is left out of the
   paragraphs and, on request, rendered to a PNG.
"""

from __future__ import annotations

import bisect
import ctypes
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Optional, Union

import numpy as np
import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from ..errors import (
    EmptyDocumentError,
    EncryptedPDFError,
    InputError,
    MalformedInputError,
)
from ..paper import Block, FigureInfo, InlineRef, Paper, Section
from ..text.mentions import find_mentions

PathLike = Union[str, Path]

#: Rendering scale for figure crops (2.0 = 144 dpi).
RENDER_SCALE = 2.0

_PDFIUM_HYPHEN = "\ufffe"  # pdfium's marker for a hyphen it judged to end a line
_PIECE_RE = re.compile(r"\r\n|\n|\ufffe|[^\s\ufffe]+")
_BREAKS = ("\r\n", "\n", _PDFIUM_HYPHEN)
_CLEAN_TABLE = {
    **{c: None for c in range(0x20)},
    0xAD: None,
    0xFFFE: None,
    0xFEFF: None,
    0xFB00: "ff",
    0xFB01: "fi",
    0xFB02: "fl",
    0xFB03: "ffi",
    0xFB04: "ffl",
    0xFB05: "st",
    0xFB06: "st",
}
_BOLD_HINTS = ("bold", "medi", "semibold", "demi", "black", "heavy", "cmbx", "-bd", ",bd")
_FORCE_BOLD_FLAG = 1 << 18
_GRAPHIC_TYPES = (
    pdfium_c.FPDF_PAGEOBJ_PATH,
    pdfium_c.FPDF_PAGEOBJ_IMAGE,
    pdfium_c.FPDF_PAGEOBJ_SHADING,
)

_CAPTION_RE = re.compile(
    r"^(?P<word>Figure|FIGURE|Fig\.?|FIG\.?|Table|TABLE|Tab\.)\s*"
    r"(?P<label>(?:[A-Z]\.?|S)?\d{1,3}(?:\.\d{1,2})?[a-z]?|[IVX]{1,5})"
    r"(?P<delim>\s*[:.|\u2014\u2013]|\s*$|\s+(?=[A-Z]))"
)
_STRONG_DELIMS = (":", ".", "|", "\u2014", "\u2013")
_NUMBERED_HEAD_RE = re.compile(r"^(?P<num>\d{1,2}(?:\.\d{1,2}){0,4})\.?\s+(?P<title>[^\W\d_].*)$")
_LETTER_HEAD_RE = re.compile(r"^(?P<num>[A-H](?:\.\d{1,2}){0,3})\.?\s+(?P<title>[A-Z].*)$")
_ROMAN_HEAD_RE = re.compile(r"^(?P<num>[IVX]{1,4})\.\s+(?P<title>[A-Z].*)$")
_APPENDIX_HEAD_RE = re.compile(
    r"^(?:appendix|appendices|supplementary|supplemental)\b", re.IGNORECASE
)
_REFERENCES_RE = re.compile(
    r"^(?:references?|bibliography|literature cited|works cited|reference list|citations)$",
    re.IGNORECASE,
)
_ABSTRACT_RE = re.compile(
    r"^(?:abstract|a b s t r a c t)\b\s*[:.\u2014\u2013-]?\s*(?P<rest>.*)$", re.IGNORECASE
)
_KEYWORDS_RE = re.compile(r"^(?:key\s?words?|index terms|subjects?)\b", re.IGNORECASE)
_FIRST_SECTION_NAMES = re.compile(
    r"^(?:introduction|background|motivation|overview|preliminaries|related work)\b", re.IGNORECASE
)
_SECTION_NUMBER_RE = re.compile(r"^\d{1,2}(?:\.\d{1,2}){1,4}\.?$")
_PAGE_NUMBER_RE = re.compile(
    r"^[\W_]*(?:page\s*)?(?:\d{1,4}|[ivxlc]{1,6})(?:\s*(?:/|of)\s*\d{1,4})?[\W_]*$", re.IGNORECASE
)
_LINE_NUMBER_RE = re.compile(r"^\d{1,4}$")
_NON_TEXT_RE = re.compile(r"[\W_]+")
_SURROGATE_RE = re.compile("[\ud800-\udfff]")
_PROSE_WORD_RE = re.compile(r"[(\[\"'\u201c]?[A-Za-z][a-z]{2,}[)\],.;:\"'\u201d]*")
_SHORT_WORDS = frozenset(
    [
        "a",
        "an",
        "as",
        "at",
        "be",
        "by",
        "do",
        "if",
        "in",
        "is",
        "it",
        "of",
        "on",
        "or",
        "so",
        "to",
        "we",
        "us",
    ]
)
_MATH_SYMBOL_RE = re.compile(
    r"[=<>+\u2212\u00d7\u00b7\u2211\u220f\u222b\u2264\u2265\u2208\u222a\u2229\u2192\u221a|^]"
)
_TERMINAL_PUNCT = (".", "!", "?", ":")
_ALPHA_RUN_END = re.compile(r"[^\W\d_]+$")
_ALPHA_RUN_START = re.compile(r"^[^\W\d_]+")
_JOINABLE_PREFIXES = frozenset(
    [
        "non",
        "pre",
        "post",
        "co",
        "multi",
        "cross",
        "self",
        "semi",
        "sub",
        "inter",
        "intra",
        "anti",
        "meta",
        "bi",
        "tri",
        "uni",
        "over",
        "under",
    ]
)
_CITATION_PAREN_RE = re.compile(r"\(([^()]{4,400})\)")
_YEAR_RE = re.compile(r"\b(?:1[89]\d\d|20\d\d)[a-z]?\b")
_SURNAME = r"[A-Z][^\W\d_]*(?:[-'\u2019][^\W\d_]+)*\.?"
_CITE_ITEM_RE = re.compile(
    rf"(?P<cite>(?:(?:de|van|von|der|den|la|le|di|da|del)\s+)?{_SURNAME}"
    rf"(?:(?:\s+|,\s*)(?:and|&|et\s+al\.?|(?:de|van|von|der|den|la|le|di|da|del)\b|{_SURNAME}))*"
    r",?\s+(?:19|20)\d\d[a-z]?(?:\s*,\s*(?:(?:19|20)\d\d[a-z]?|[a-z]\b))*)"
    r"\s*(?:,\s*(?:p|pp|page|pages|chapter|ch|sec|section)\.?\s*[\d\u2013-]+)?\s*$"
)
_NARRATIVE_CITE_RE = re.compile(
    r"\b[A-Z][^\W\d_'\u2019-]*(?:[-'\u2019][^\W\d_]+)*"
    r"(?:\s+(?:et\s+al\.?|and\s+[A-Z][^\W\d_]+|&\s+[A-Z][^\W\d_]+))?"
    r"\s+\((?:(?:19|20)\d\d[a-z]?)(?:\s*[,;]\s*(?:(?:19|20)\d\d[a-z]?))*\)"
)
_NUMERIC_CITE_RE = re.compile(r"\[\d{1,3}(?:\s*[,\u2013-]\s*\d{1,3})*\]")
_NOT_NAMES = frozenset(
    [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
        "In",
        "See",
        "From",
        "Since",
        "Until",
        "By",
        "For",
        "The",
        "Also",
        "Both",
        "And",
        "Or",
        "Before",
        "After",
        "Spring",
        "Summer",
        "Fall",
        "Autumn",
        "Winter",
        "Table",
        "Figure",
        "Fig",
        "Section",
        "Eq",
        "Equation",
        "Chapter",
        "Appendix",
        "Version",
        "Release",
    ]
)
_LIST_CONTINUATION_RE = re.compile(
    r"\s*(?:,|and|&|or|to|\u2013|-)\s*(?P<label>[A-Z]?\d{1,3}[a-z]?)\b"
)


# --------------------------------------------------------------------------- data


@dataclass(slots=True)
class _Word:
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


@dataclass(eq=False)
class _Line:
    """A line segment: words on one row with no wide gap between them."""

    words: list[_Word]
    page: int
    bold: bool = False
    font: str = ""
    word_fonts: Optional[list[str]] = None  # only for lines that start with a section number
    size: float = 0.0
    col: str = "F"  # "L" or "R" column, "F" full width or single column
    band: int = 0
    role: str = ""  # "", "furniture", "float" or "caption"

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
        return self.x1 - self.x0

    @property
    def broken(self) -> bool:
        return self.words[-1].broken

    def tail(self, start: int) -> _Line:
        """A copy holding the words from ``start`` on (used to cut a run-in heading off)."""
        line = _Line(self.words[start:], self.page, self.bold, self.font, None, self.size, self.col)
        line.band, line.role = self.band, self.role
        return line


@dataclass
class _Page:
    """One page: its size, its lines in reading order, and its column layout."""

    index: int
    width: float
    height: float
    lines: list[_Line]
    split: Optional[float] = None
    edges: dict = field(default_factory=dict)  # column -> (left, right) text edges
    unmapped: tuple[int, int] = (0, 0)  # sampled characters without a Unicode mapping, sampled
    blocks: list[_VBlock] = field(default_factory=list)

    def edge(self, line: _Line) -> tuple[float, float]:
        """The left and right text edges of a line's column."""
        return self.edges.get(line.col, (0.0, self.width))


@dataclass(eq=False)
class _VBlock:
    """A visual block: consecutive lines of one column with regular spacing, size and weight."""

    lines: list[_Line]
    page: int

    @property
    def text(self) -> str:
        return " ".join(line.text for line in self.lines)

    @property
    def size(self) -> float:
        return _dominant(((l.size, len(l.text)) for l in self.lines), default=0.0)

    @property
    def bbox(self) -> tuple[float, float, float, float]:
        return (
            min(l.x0 for l in self.lines),
            min(l.y0 for l in self.lines),
            max(l.x1 for l in self.lines),
            max(l.y1 for l in self.lines),
        )


@dataclass
class _Stats:
    """Document-wide typography: body font size and normal line advance (as a ratio of size)."""

    body_size: float
    lead_ratio: float


@dataclass
class _Caption:
    """A caption block with what it captions."""

    block: _VBlock
    kind: str
    label: str
    bbox: Optional[tuple[float, float, float, float]] = None


@dataclass
class _Unit:
    """A piece of the paper's text before it becomes a Block."""

    kind: str
    lines: list[_Line]
    section: Optional[int] = None


# --------------------------------------------------------------------------- public API


def read_pdf(
    path: PathLike, *, paper_id: Optional[str] = None, image_dir: Optional[PathLike] = None
) -> Paper:
    """Read a scientific paper's PDF into a :class:`Paper` (``reader="pdf"``).

    Recovers the title, abstract, numbered and unnumbered section heads, body paragraphs in
    reading order (two-column layouts included), figure and table captions with one
    :class:`FigureInfo` each, inline figure/table references and citation markers. When
    ``image_dir`` is given, each figure's region is rendered to
    ``<image_dir>/<paper_id>_<fig_id>.png``.

    Raises MalformedInputError (not a PDF, truncated or damaged), EmptyDocumentError (empty
    file, no pages, or no text layer) or EncryptedPDFError (password protected).
    """
    path = Path(path)
    _check_file(path)
    pdf = _PdfHandle(_open_document(path))
    try:
        pages = [_read_page(pdf, i) for i in range(len(pdf.document))]
        _require_text(path, pages, pdf)
        paper = _build_paper(pdf, pages, paper_id or path.stem, str(path))
        if image_dir is not None:
            _save_figure_images(pdf, paper, Path(image_dir))
    except pdfium.PdfiumError as exc:
        raise MalformedInputError(path, f"the PDF's pages cannot be read ({exc})") from exc
    finally:
        pdf.close()
    return paper


class _PdfHandle:
    """An open document whose pages stay loaded until :meth:`close` (pdfium parses a page's
    content on load, and floats and images need some pages a second time)."""

    def __init__(self, document: pdfium.PdfDocument) -> None:
        self.document = document
        self._pages: dict[int, pdfium.PdfPage] = {}

    def page(self, index: int) -> pdfium.PdfPage:
        if index not in self._pages:
            self._pages[index] = self.document[index]
        return self._pages[index]

    def close(self) -> None:
        for page in self._pages.values():
            page.close()
        self._pages.clear()
        self.document.close()


# --------------------------------------------------------------------------- opening


def _check_file(path: Path) -> None:
    """Reject missing, empty, non-PDF and truncated files before pdfium sees them."""
    if not path.is_file():
        raise InputError(path, "the file does not exist or is not a regular file")
    size = path.stat().st_size
    if size == 0:
        raise EmptyDocumentError(path, "the file is empty (0 bytes), so there is no PDF to read")
    try:
        with path.open("rb") as handle:
            head = handle.read(1024)
            handle.seek(max(0, size - 4096))
            tail = handle.read()
    except OSError as exc:
        raise InputError(path, f"the file cannot be read ({exc.strerror or exc})") from exc
    if b"%PDF-" not in head:
        raise MalformedInputError(
            path, "the file is not a PDF: it does not start with a %PDF- header"
        )
    if b"%%EOF" not in tail:
        raise MalformedInputError(
            path, "the PDF is truncated or damaged: it does not end with an %%EOF marker"
        )


def _open_document(path: Path) -> pdfium.PdfDocument:
    """Open the PDF with pdfium, mapping its failures to the project's errors."""
    try:
        pdf = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        code = getattr(exc, "err_code", None)
        if code in (pdfium_c.FPDF_ERR_PASSWORD, pdfium_c.FPDF_ERR_SECURITY):
            raise EncryptedPDFError(
                path, "the PDF is encrypted and needs a password to be opened"
            ) from exc
        raise MalformedInputError(path, f"the PDF cannot be parsed ({exc})") from exc
    if len(pdf) == 0:
        pdf.close()
        raise EmptyDocumentError(path, "the PDF has no pages")
    return pdf


def _require_text(path: Path, pages: list[_Page], pdf: _PdfHandle) -> None:
    """Raise EmptyDocumentError when the PDF has (almost) no text layer, or one whose fonts
    map no glyph to a character."""
    letters = sum(len(_NON_TEXT_RE.sub("", line.text)) for page in pages for line in page.lines)
    if letters < 20 * len(pages):
        if _has_images(pdf, len(pages)):
            raise EmptyDocumentError(
                path,
                f"the PDF has no text layer ({letters} characters of text on {_pages(len(pages))} "
                "of images): it looks scanned and needs OCR before it can be read",
            )
        raise EmptyDocumentError(
            path, f"the PDF holds almost no text ({letters} characters on {_pages(len(pages))})"
        )
    errors = sum(p.unmapped[0] for p in pages)
    sampled = sum(p.unmapped[1] for p in pages)
    if sampled and errors > 0.5 * sampled:
        raise EmptyDocumentError(
            path,
            f"the PDF's text layer cannot be decoded ({100 * errors // sampled}% of its characters "
            "have no Unicode mapping in their fonts): it needs OCR before it can be read",
        )


def _pages(count: int) -> str:
    return f"{count} page" if count == 1 else f"{count} pages"


def _has_images(pdf: _PdfHandle, page_count: int) -> bool:
    """Whether any of the first pages draws an image (a scan)."""
    for index in range(min(3, page_count)):
        page = pdf.page(index)
        objects = page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=3)
        if next(iter(objects), None) is not None:
            return True
    return False


# --------------------------------------------------------------------------- extraction


def _read_page(pdf: _PdfHandle, index: int) -> _Page:
    """Extract one page's line segments (top-left coordinates) with sizes and fonts."""
    page = pdf.page(index)
    left, bottom, right, top = page.get_bbox()
    textpage = page.get_textpage()
    try:
        count = textpage.count_chars()
        text = _page_text(textpage.raw, count)
        # pdfium leaves glyphs without a code out of its text: offsets then need mapping
        aligned = len(text) == count
        lines = list(_page_lines(textpage.raw, text, left, top, index, aligned))
        unmapped = _unmapped_share(textpage.raw, count) if index < 3 else (0, 0)
    finally:
        textpage.close()
    return _Page(index, right - left, top - bottom, lines, unmapped=unmapped)


def _unmapped_share(raw_tp, count: int) -> tuple[int, int]:
    """(characters whose font gives no Unicode mapping, characters sampled), over every
    7th character: fonts without a mapping turn the text into symbols."""
    sampled = [i for i in range(0, count, 7) if pdfium_c.FPDFText_IsGenerated(raw_tp, i) == 0]
    errors = sum(1 for i in sampled if pdfium_c.FPDFText_HasUnicodeMapError(raw_tp, i) == 1)
    return errors, len(sampled)


def _page_text(raw_tp, count: int) -> str:
    """pdfium's text of a page, one character per UTF-16 unit, so that string offsets are
    pdfium's text indices (surrogate pairs are joined later, inside words)."""
    if count <= 0:
        return ""
    buffer = (ctypes.c_ushort * (2 * count + 2))()
    written = pdfium_c.FPDFText_GetText(raw_tp, 0, count, buffer)
    return "".join(map(chr, buffer[: max(0, written - 1)]))


def _clean_word(piece: str) -> str:
    """A word's text: ligatures spelled out, control characters dropped, UTF-16 surrogate
    pairs joined (math letters), stray surrogates replaced."""
    cleaned = piece.translate(_CLEAN_TABLE)
    if _SURROGATE_RE.search(cleaned):
        cleaned = cleaned.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return cleaned


def _page_lines(
    raw_tp, text: str, left: float, top: float, page_index: int, aligned: bool = True
) -> Iterator[_Line]:
    """Yield line segments from pdfium's text: split at its line breaks, then at wide gaps.

    One pass over words: each word costs two box look-ups (its first and last characters);
    the font size is read again only when the glyph height changes from the word before.
    """
    rect = pdfium_c.FS_RECTF()
    loose_box = pdfium_c.FPDFText_GetLooseCharBox
    font_size = pdfium_c.FPDFText_GetFontSize
    to_char = pdfium_c.FPDFText_GetCharIndexFromTextIndex
    fonts = _FontReader(raw_tp)
    words: list[_Word] = []
    append = words.append
    last_height, last_size = -1.0, 0.0
    for match in _PIECE_RE.finditer(text):
        first, end = match.span()
        piece = text[first:end]
        if piece in _BREAKS:
            if words:
                if piece == _PDFIUM_HYPHEN:
                    words[-1].broken = True
                for segment in _segments(words):
                    yield _make_line(segment, page_index, fonts)
                words = []
                append = words.append
            continue
        cleaned = piece if piece.isascii() and piece.isprintable() else _clean_word(piece)
        if not cleaned:
            continue
        last = end - 1
        if not aligned:
            first, last = to_char(raw_tp, first), to_char(raw_tp, last)
        loose_box(raw_tp, first, rect)
        x0, y_top, y_bottom = rect.left, rect.top, rect.bottom
        if last != first:
            loose_box(raw_tp, last, rect)
            bottom = rect.bottom
            # a token pdfium glued across two rows keeps the first glyph's row
            if -2.0 < bottom - y_bottom < 2.0 or abs(bottom - y_bottom) < 0.5 * (y_top - y_bottom):
                y_top = max(y_top, rect.top)
                y_bottom = min(y_bottom, bottom)
        x1 = rect.right
        x1 = max(x1, x0 + 1.0)
        height = y_top - y_bottom
        if not -0.02 * height <= height - last_height <= 0.02 * height:
            last_height, last_size = height, font_size(raw_tp, first)
        append(
            _Word(
                cleaned, x0 - left, top - y_top, x1 - left, top - y_bottom, last_size, height, first
            )
        )
    if words:
        for segment in _segments(words):
            yield _make_line(segment, page_index, fonts)


def _segments(words: list[_Word]) -> Iterator[list[_Word]]:
    """Split one pdfium line into segments at wide gaps, backward jumps or row changes."""
    segment = [words[0]]
    prev = words[0]
    for word in words[1:]:
        # glyph box height runs about 1.15 times the font size
        size = max(word.y1 - word.y0, prev.y1 - prev.y0, 1.15) / 1.15
        gap = word.x0 - prev.x1
        if (
            gap > 1.1 * size
            or gap < -0.5 * size
            or abs(word.y0 + word.y1 - prev.y0 - prev.y1) > 1.4 * size
        ):
            yield segment
            segment = [word]
        else:
            segment.append(word)
        prev = word
    yield segment


class _FontReader:
    """Font names of characters, read through pdfium's FPDFText_GetFontInfo."""

    def __init__(self, raw_tp) -> None:
        self._tp = raw_tp
        self._buf = ctypes.create_string_buffer(128)
        self._flags = ctypes.c_int()
        self._flags_ref = ctypes.byref(self._flags)
        self._known: dict[tuple[bytes, int], tuple[str, bool]] = {}

    def font(self, index: int) -> tuple[str, bool]:
        """(font name, is bold) of the character at ``index``."""
        n = pdfium_c.FPDFText_GetFontInfo(self._tp, index, self._buf, 128, self._flags_ref)
        key = (self._buf.value if n else b"", self._flags.value)
        found = self._known.get(key)
        if found is None:
            name = key[0].decode("latin-1")
            lowered = name.lower()
            bold = bool(key[1] & _FORCE_BOLD_FLAG) or any(h in lowered for h in _BOLD_HINTS)
            found = self._known[key] = (name, bold)
        return found


def _make_line(words: list[_Word], page_index: int, fonts: _FontReader) -> _Line:
    """Build a line segment; read its fonts at its first and last word (and, for a line
    opening with a section number, at each of its first words, to find run-in headings)."""
    name, bold_first = fonts.font(words[0].index)
    bold_last = fonts.font(words[-1].index)[1] if len(words) > 1 and bold_first else bold_first
    line = _Line(words, page_index, bold=bold_first and bold_last, font=name)
    if len(words) > 2 and _SECTION_NUMBER_RE.match(words[0].text):
        line.word_fonts = [fonts.font(w.index)[0] for w in words[:14]]
    return line


def _assign_sizes(pages: list[_Page]) -> None:
    """Give each line a size: the font size, or the glyph box height where fonts report none."""
    words = [w for p in pages for l in p.lines for w in l.words]
    sized = sum(1 for w in words if w.font_size > 1.5)
    use_font_size = sized >= 0.8 * max(1, len(words))
    for page in pages:
        for line in page.lines:
            sizes = [
                (
                    w.font_size if use_font_size and w.font_size > 1.5 else w.height / 1.15,
                    len(w.text),
                )
                for w in line.words
            ]
            first = sizes[0][0]
            if all(size == first for size, _ in sizes):
                line.size = round(first * 4) / 4
            else:
                line.size = _dominant(sizes, default=1.0)


def _dominant(weighted: Iterable[tuple[float, int]], default: float) -> float:
    """The value (rounded to 0.25) carrying the most weight."""
    counts: Counter = Counter()
    for value, weight in weighted:
        counts[round(value * 4) / 4] += weight
    return counts.most_common(1)[0][0] if counts else default


# --------------------------------------------------------------------------- furniture


def _mark_furniture(pages: list[_Page]) -> None:
    """Mark running headers/footers, page numbers and review line numbers as furniture."""
    repeated = _repeated_margin_texts(pages)
    for page in pages:
        for line in page.lines:
            if not _in_margin(line, page):
                continue
            key = _margin_key(line.text)
            if (key in repeated or _PAGE_NUMBER_RE.match(line.text)) and not _has_row_mate(
                line, page.lines
            ):
                line.role = "furniture"
        _mark_line_numbers(page)


def _has_row_mate(line: _Line, lines: list[_Line]) -> bool:
    """Whether text sits close beside a line on its row (a heading's number, not a folio)."""
    reach = 3 * max(line.size, 1.0)
    return any(
        other is not line
        and abs(other.base - line.base) <= 0.3 * max(line.size, 1.0)
        and max(other.x0 - line.x1, line.x0 - other.x1) < reach
        for other in lines
    )


def _in_margin(line: _Line, page: _Page) -> bool:
    return line.y1 < 0.1 * page.height or line.y0 > 0.9 * page.height


def _margin_key(text: str) -> str:
    return re.sub(r"\d+", "#", text.lower()).strip()


def _repeated_margin_texts(pages: list[_Page]) -> set[str]:
    """Texts (digits ignored) found in the top or bottom margin of at least two pages."""
    seen: Counter = Counter()
    for page in pages:
        seen.update(
            {_margin_key(l.text) for l in page.lines if _in_margin(l, page) and len(l.text) > 3}
        )
    return {key for key, n in seen.items() if n >= 2 and n >= 0.3 * len(pages)}


def _mark_line_numbers(page: _Page) -> None:
    """Review copies number their lines: many bare numbers stacked at one x position, in a
    margin or the gutter (where no running text passes; a table's number column has text
    above or below it)."""
    numbers = [l for l in page.lines if not l.role and _LINE_NUMBER_RE.match(l.text)]
    if len(numbers) < 10:
        return
    by_x: Counter = Counter(round(l.x1 / 6) for l in numbers)
    stacked = {x for x, n in by_x.items() if n >= 10}
    text = [l for l in page.lines if len(l.text) >= 20]
    for line in numbers:
        if round(line.x1 / 6) in stacked and not any(
            t.x0 <= line.x0 and line.x1 <= t.x1 for t in text
        ):
            line.role = "furniture"


# --------------------------------------------------------------------------- layout


def _layout_page(page: _Page) -> None:
    """Find the column gutter, assign columns and bands, and put lines in reading order."""
    text_lines = _attach_scripts([l for l in page.lines if not l.role])
    page.split = _column_split(text_lines, page.width)
    _assign_columns(text_lines, page.split)
    if page.split is not None:
        text_lines = _merge_spanning_rows(text_lines)
    page.lines = _reading_order(text_lines)
    page.edges = _column_edges(page.lines)


def _attach_scripts(lines: list[_Line]) -> list[_Line]:
    """Merge sub- and superscript fragments (pdfium often puts them on lines of their own)
    into the line they are raised or lowered from."""
    scripts = [l for l in lines if len(l.words) <= 2 and len(l.text) <= 6]
    if not scripts:
        return lines
    by_top = sorted(lines, key=lambda l: l.y0)
    tops = [l.y0 for l in by_top]
    merged: set[int] = set()
    for script in scripts:
        mid = (script.y0 + script.y1) / 2
        nearby = by_top[bisect.bisect_left(tops, mid - 40) : bisect.bisect_right(tops, mid + 10)]
        host = _script_host(script, nearby, merged)
        if host is None:
            continue
        base = host.base
        host.words = sorted(host.words + script.words, key=lambda w: w.x0)
        host.__post_init__()
        host.base = base
        merged.add(id(script))
    return [l for l in lines if id(l) not in merged]


def _script_host(script: _Line, lines: list[_Line], merged: set[int]) -> Optional[_Line]:
    """The bigger line a small fragment sits on, overlapping it vertically and horizontally."""
    mid = (script.y0 + script.y1) / 2
    best, best_dist = None, None
    for line in lines:
        if (
            line is script
            or id(line) in merged
            or line.size < 1.1 * script.size
            or len(line.text) < 4
        ):
            continue
        if not (line.x0 - 3 <= script.x0 <= line.x1 + 3):
            continue
        height = line.y1 - line.y0
        if not (line.y0 - 0.3 * height <= mid <= line.y1 + 0.3 * height):
            continue
        dist = abs(mid - (line.y0 + line.y1) / 2)
        if best_dist is None or dist < best_dist:
            best, best_dist = line, dist
    return best


def _column_split(lines: list[_Line], width: float) -> Optional[float]:
    """The x of a column gutter that (almost) no text crosses, or None for one column."""
    lines = [l for l in lines if len(l.text) >= 8]
    if len(lines) < 6:
        return None
    x0 = np.array([l.x0 for l in lines])
    x1 = np.array([l.x1 for l in lines])
    weight = np.array([len(l.text) for l in lines], dtype=float)
    xs = np.arange(0.25 * width, 0.75 * width, 1.0)
    crossing = ((x0[:, None] < xs - 2) & (x1[:, None] > xs + 2)).astype(float).T @ weight
    left = (x1[:, None] <= xs).astype(float).T @ weight
    right = (x0[:, None] >= xs).astype(float).T @ weight
    total = weight.sum()
    # full-width front matter (title, affiliations) may cross the gutter, and a side column
    # (a journal's margin notes) may be narrow; but the columns must carry most text
    ok = (left >= 0.08 * total) & (right >= 0.08 * total) & (crossing <= 0.5 * (left + right))
    if not ok.any():
        return None
    best = crossing[ok].min()
    candidates = ok & (crossing <= best)
    return float(_widest_run_middle(xs, candidates))


def _widest_run_middle(xs: np.ndarray, mask: np.ndarray) -> float:
    """The middle x of the longest run of True values in ``mask``."""
    best_len, best_mid, run_start = 0, float(xs[np.argmax(mask)]), None
    for i, flag in enumerate(list(mask) + [False]):
        if flag and run_start is None:
            run_start = i
        elif not flag and run_start is not None:
            if i - run_start > best_len:
                best_len, best_mid = i - run_start, float((xs[run_start] + xs[i - 1]) / 2)
            run_start = None
    return best_mid


def _assign_columns(lines: list[_Line], split: Optional[float]) -> None:
    """Put each line in the left or right column, or full width when it clearly spans both."""
    if split is None:
        for line in lines:
            line.col = "F"
        return
    for line in lines:
        if split - line.x0 >= 15 and line.x1 - split >= 15:
            line.col = "F"
        else:
            line.col = "L" if (line.x0 + line.x1) / 2 < split else "R"
    _continue_full_width(lines)


def _continue_full_width(lines: list[_Line]) -> None:
    """The short last line of a full-width caption or paragraph stays with it: same size,
    same left edge, at the normal line distance below a full-width line."""
    last_full: Optional[_Line] = None
    for line in sorted(lines, key=lambda l: l.y0):
        if line.col == "F":
            last_full = line
        elif (
            last_full is not None
            and abs(line.x0 - last_full.x0) < 2
            and abs(line.size - last_full.size) < 0.5
            and 0 < line.base - last_full.base < 1.6 * max(line.size, 1.0)
        ):
            line.col = "F"
            last_full = line


def _merge_spanning_rows(lines: list[_Line]) -> list[_Line]:
    """Re-join segments on the row of a full-width line that were cut off at a wide word
    gap (letter-spaced titles in old PDFs), so the row reads as one full-width line."""
    merged: set[int] = set()
    for line in [l for l in lines if l.col == "F"]:
        if id(line) in merged:
            continue
        grown = True
        while grown:
            grown = False
            for other in lines:
                if other is line or id(other) in merged or not _same_row(line, other):
                    continue
                gap = max(other.x0 - line.x1, line.x0 - other.x1)
                if (
                    gap < 3 * max(line.size, other.size, 1.0)
                    and abs(other.size - line.size) <= 0.1 * line.size
                ):
                    base = line.base
                    line.words = sorted(line.words + other.words, key=lambda w: w.x0)
                    line.__post_init__()
                    line.base = base
                    merged.add(id(other))
                    grown = True
    return [l for l in lines if id(l) not in merged]


def _reading_order(lines: list[_Line]) -> list[_Line]:
    """Order lines: bands top to bottom; within a column band, left column then right column."""
    ordered: list[_Line] = []
    band: list[_Line] = []
    band_index = 0
    for line in sorted(lines, key=lambda l: l.y0):
        is_full = line.col == "F"
        if band and (band[0].col == "F") != is_full:
            ordered.extend(_order_band(band, band_index))
            band, band_index = [], band_index + 1
        band.append(line)
    if band:
        ordered.extend(_order_band(band, band_index))
    return ordered


def _order_band(band: list[_Line], index: int) -> list[_Line]:
    """Order one band's lines: per column, rows top to bottom, segments of a row left to right."""
    out: list[_Line] = []
    for col in ("F", "L", "R"):
        lines = [l for l in band if l.col == col]
        for line in lines:
            line.band = index
        out.extend(_rows(lines))
    return out


def _rows(lines: list[_Line]) -> list[_Line]:
    """Sort lines into rows (shared baseline) top to bottom, each row left to right."""
    out: list[_Line] = []
    row: list[_Line] = []
    for line in sorted(lines, key=lambda l: l.base):
        if row and line.base - row[0].base > 0.3 * max(row[0].size, 1.0):
            out.extend(sorted(row, key=lambda l: l.x0))
            row = []
        row.append(line)
    out.extend(sorted(row, key=lambda l: l.x0))
    return out


def _column_edges(lines: list[_Line]) -> dict:
    """Left edge (most common start) and right edge of the text of each column; full-width
    lines on a two-column page span from the left column's edge to the right one's."""
    groups: dict = {}
    for line in lines:
        if len(line.text) >= 20:
            groups.setdefault(line.col, []).append(line)
    edges = {}
    for col, group in groups.items():
        left = Counter(round(l.x0) for l in group).most_common(1)[0][0]
        rights = sorted(l.x1 for l in group)
        edges[col] = (float(left), rights[int(0.9 * (len(rights) - 1))])
    if "L" in edges and "R" in edges:
        edges["F"] = (edges["L"][0], edges["R"][1])
    return edges


def _doc_stats(pages: list[_Page]) -> _Stats:
    """Body size (the size most text is set in) and the usual line advance."""
    body = _dominant(
        ((l.size, len(l.text)) for p in pages for l in p.lines if not l.role), default=10.0
    )
    leads: Counter = Counter()
    for page in pages:
        for prev, line in pairwise(page.lines):
            if (
                (prev.band, prev.col) == (line.band, line.col)
                and abs(line.size - body) < 0.5
                and abs(prev.size - body) < 0.5
            ):
                ratio = (line.base - prev.base) / body
                if 0.8 < ratio < 2.0:
                    leads[round(ratio * 20) / 20] += 1
    lead = leads.most_common(1)[0][0] if leads else 1.2
    return _Stats(body, lead)


# --------------------------------------------------------------------------- visual blocks


def _visual_blocks(page: _Page, stats: _Stats) -> list[_VBlock]:
    """Group a page's ordered lines into visual blocks."""
    blocks: list[_VBlock] = []
    for line in page.lines:
        if line.role == "furniture":
            continue
        if blocks and not _starts_block(blocks[-1], line, stats, page):
            blocks[-1].lines.append(line)
        else:
            blocks.append(_VBlock([line], page.index))
    return blocks


def _same_row(prev: _Line, line: _Line) -> bool:
    return abs(line.base - prev.base) <= 0.3 * max(prev.size, line.size, 1.0)


def _starts_block(block: _VBlock, line: _Line, stats: _Stats, page: _Page) -> bool:
    """Whether ``line`` starts a new visual block after ``block``."""
    prev = block.lines[-1]
    if (prev.band, prev.col) != (line.band, line.col):
        return True
    if _same_row(prev, line):
        return False
    size = max(prev.size, line.size, 1.0)
    lead = line.base - prev.base
    if lead < 0 or lead > 1.3 * stats.lead_ratio * size:
        return True
    if abs(prev.size - line.size) > 0.07 * size:
        return True
    # a change of weight ends a heading, but a caption's bold title flows on into its text
    weight_change = prev.bold != line.bold and len(prev.text) > 1 and len(line.text) > 1
    if weight_change and _caption_match(block.lines[0].text) is None:
        return True
    if line.x0 > prev.x1 or line.x1 < prev.x0:
        return True
    return _caption_start(prev, line, page) is not None


def _caption_match(text: str) -> Optional[re.Match]:
    return _CAPTION_RE.match(text)


def _caption_start(prev: Optional[_Line], line: _Line, page: _Page) -> Optional[re.Match]:
    """The caption match of a line that opens a caption ("Figure 3:", "Table 2."), else None.

    A line that merely wraps inside a paragraph ("... shown in / Table 2. The ...") is not one:
    a strong delimiter is required unless something else already starts a block there, and the
    line before must end a sentence or stop short of the column's right edge.
    """
    match = _caption_match(line.text)
    if match is None or prev is None:
        return match
    if match.group("delim").strip() not in _STRONG_DELIMS:
        return None
    right = page.edge(prev)[1]
    ends_sentence = prev.text.rstrip().endswith(_TERMINAL_PUNCT + (")",))
    short = prev.x1 < right - 2 * max(prev.size, 1.0)
    return match if (ends_sentence or short) else None


# --------------------------------------------------------------------------- floats


def _find_captions(pages: list[_Page]) -> list[_Caption]:
    """Caption blocks in reading order, with their kind and printed label."""
    captions = []
    for page in pages:
        for block in list(page.blocks):
            match = _caption_match(block.lines[0].text)
            if match is None:
                continue
            _split_off_table_rows(page, block)
            kind = "table" if match.group("word").lower().startswith("tab") else "figure"
            captions.append(_Caption(block, kind, match.group("label")))
            for line in block.lines:
                line.role = "caption"
    return captions


def _split_off_table_rows(page: _Page, block: _VBlock) -> None:
    """Cut a caption block before the first row of side-by-side segments (a table header
    right under a caption above its table); the rest becomes a block of its own."""
    lines = block.lines
    for i in range(1, len(lines)):
        in_row = (i + 1 < len(lines) and _same_row(lines[i], lines[i + 1])) or _same_row(
            lines[i - 1], lines[i]
        )
        if in_row:
            rest = _VBlock(lines[i:], block.page)
            block.lines = lines[:i]
            page.blocks.insert(page.blocks.index(block) + 1, rest)
            return


def _locate_floats(
    pdf: _PdfHandle, pages: list[_Page], captions: list[_Caption], stats: _Stats
) -> None:
    """Find each caption's figure region and mark the text inside it as float content.

    Figures claim first (their content is almost always above the caption), then tables take
    the side with more unclaimed content, so a table caption between a table and a figure does
    not steal the figure.
    """
    by_page: dict[int, list[_Caption]] = {}
    for caption in captions:
        by_page.setdefault(caption.block.page, []).append(caption)
    cache: dict[int, list[tuple[float, float, float, float]]] = {}
    for page_index, page_captions in by_page.items():
        page = pages[page_index]
        graphics = _content_graphics(pdf, pages, page_index, cache)
        barriers = _barrier_lines(page, stats)
        sides = {
            id(c): _float_sides(page, c, page_captions, graphics, barriers) for c in page_captions
        }
        claimed: set[int] = set()
        ordered = sorted(page_captions, key=lambda c: c.kind != "figure")
        for caption in ordered:
            options = {
                side: (
                    [l for l in lines if id(l) not in claimed],
                    [g for g in boxes if id(g) not in claimed],
                )
                for side, (lines, boxes) in sides[id(caption)].items()
            }
            side = _choose_side(caption.kind, options)
            if side is None:
                continue
            lines, boxes = options[side]
            claimed.update(id(x) for x in lines + boxes)
            caption.bbox = _region_bbox(page, lines, boxes)
            for line in lines:
                line.role = "float"


def _barrier_lines(page: _Page, stats: _Stats) -> set[int]:
    """ids of lines that belong to body text blocks or headings: a float region stops there."""
    out: set[int] = set()
    for block in page.blocks:
        if block.lines[0].role == "caption":
            continue
        body_like = [l for l in block.lines if _is_body_like(l, page, stats)]
        heading_like = (
            len(block.lines) <= 2 and block.lines[0].bold and _NUMBERED_HEAD_RE.match(block.text)
        )
        if len(body_like) >= 2 or (body_like and len(block.lines) <= 2) or heading_like:
            out.update(id(l) for l in block.lines)
    return out


def _is_body_like(line: _Line, page: _Page, stats: _Stats) -> bool:
    """A running-text line: body size, many words, most of its column's width."""
    left, right = page.edge(line)
    return (
        abs(line.size - stats.body_size) <= 0.12 * stats.body_size
        and len(line.words) >= 5
        and line.width >= 0.85 * (right - left)
    )


def _caption_span(page: _Page, caption: _Caption) -> tuple[float, float]:
    """The horizontal span a caption's float may occupy: its column, or the page."""
    col = caption.block.lines[0].col
    if page.split is None or col == "F":
        return 0.0, page.width
    return (0.0, page.split) if col == "L" else (page.split, page.width)


def _overlaps_span(x0: float, x1: float, span: tuple[float, float]) -> bool:
    inside = min(x1, span[1]) - max(x0, span[0])
    return inside > 0.5 * max(x1 - x0, 0.1)


def _float_sides(
    page: _Page,
    caption: _Caption,
    page_captions: list[_Caption],
    graphics: list[tuple[float, float, float, float]],
    barriers: set[int],
) -> dict[str, tuple[list[_Line], list[tuple]]]:
    """The non-body lines and graphics above and below a caption, up to body text or another caption."""
    span = _caption_span(page, caption)
    col = caption.block.lines[0].col
    _, cy0, _, cy1 = caption.block.bbox
    lines = [
        l
        for l in page.lines
        if not l.role and _overlaps_span(l.x0, l.x1, span) and (col == "F" or l.col == col)
    ]
    stops = [(l.y0, l.y1) for l in lines if id(l) in barriers]
    stops += [
        (c.block.bbox[1], c.block.bbox[3])
        for c in page_captions
        if c is not caption and _overlaps_span(c.block.bbox[0], c.block.bbox[2], span)
    ]
    top_limit = max((y1 for y0, y1 in stops if y1 <= cy0 + 1), default=0.0)
    bottom_limit = min((y0 for y0, y1 in stops if y0 >= cy1 - 1), default=page.height)
    sides = {}
    for side, (lo, hi) in (("above", (top_limit, cy0)), ("below", (cy1, bottom_limit))):
        side_lines = [
            l for l in lines if id(l) not in barriers and l.y0 >= lo - 1 and l.y1 <= hi + 1
        ]
        side_graphics = [
            g
            for g in graphics
            if g[1] >= lo - 1 and g[3] <= hi + 1 and _overlaps_span(g[0], g[2], span)
        ]
        sides[side] = (side_lines, side_graphics)
    return sides


def _region_bbox(
    page: _Page, lines: list[_Line], boxes: list[tuple]
) -> Optional[tuple[float, float, float, float]]:
    """The padded union of a float's lines and graphics, or None when it is too small."""
    all_boxes = [(l.x0, l.y0, l.x1, l.y1) for l in lines] + list(boxes)
    if not all_boxes:
        return None
    x0 = max(0.0, min(b[0] for b in all_boxes) - 2)
    y0 = max(0.0, min(b[1] for b in all_boxes) - 2)
    x1 = min(page.width, max(b[2] for b in all_boxes) + 2)
    y1 = min(page.height, max(b[3] for b in all_boxes) + 2)
    if x1 - x0 < 8 or y1 - y0 < 8:
        return None
    return (round(x0, 2), round(y0, 2), round(x1, 2), round(y1, 2))


def _choose_side(kind: str, sides: dict) -> Optional[str]:
    """Figures sit above their caption unless only the side below has content; tables
    take the side with more content."""
    above_lines, above_graphics = sides["above"]
    below_lines, below_graphics = sides["below"]
    if not (above_lines or above_graphics or below_lines or below_graphics):
        return None
    if kind == "figure":
        if above_graphics or below_graphics:
            return "above" if above_graphics else "below"
        return "above" if above_lines else "below"
    above = len(above_lines) + (2 if above_graphics else 0)
    below = len(below_lines) + (2 if below_graphics else 0)
    return "below" if below > above else "above"


def _content_graphics(
    pdf: _PdfHandle, pages: list[_Page], index: int, cache: dict
) -> list[tuple[float, float, float, float]]:
    """A page's graphics without furniture: a logo or rule in the top or bottom margin that
    sits at the same place on a neighbouring page is dropped."""

    def graphics_of(i: int) -> list[tuple[float, float, float, float]]:
        if i not in cache:
            cache[i] = _graphic_boxes(pdf, pages[i])
        return cache[i]

    page = pages[index]
    boxes = graphics_of(index)
    margin = [b for b in boxes if b[3] < 0.12 * page.height or b[1] > 0.88 * page.height]
    if not margin or len(pages) < 2:
        return boxes
    neighbour = index - 1 if index > 0 else index + 1
    seen = {tuple(round(v) for v in b) for b in graphics_of(neighbour)}
    repeated = {id(b) for b in margin if tuple(round(v) for v in b) in seen}
    return [b for b in boxes if id(b) not in repeated]


def _graphic_boxes(pdf: _PdfHandle, page: _Page) -> list[tuple[float, float, float, float]]:
    """Boxes (top-left points) of the images, paths and forms drawn on a page."""
    handle = pdf.page(page.index)
    left, _, _, top = handle.get_bbox()
    boxes: list[tuple[float, float, float, float]] = []
    count = pdfium_c.FPDFPage_CountObjects(handle.raw)
    objects = (pdfium_c.FPDFPage_GetObject(handle.raw, i) for i in range(count))
    _collect_graphics(objects, None, boxes, page.width * page.height, depth=0)
    return [(x0 - left, top - y1, x1 - left, top - y0) for x0, y0, x1, y1 in boxes]


def _collect_graphics(objects, matrix, boxes: list, page_area: float, depth: int) -> None:
    """Collect graphic object bounds (PDF user space); descend into page-sized forms."""
    l, b, r, t = (ctypes.c_float() for _ in range(4))
    for obj in objects:
        kind = pdfium_c.FPDFPageObj_GetType(obj)
        if kind not in _GRAPHIC_TYPES and kind != pdfium_c.FPDF_PAGEOBJ_FORM:
            continue
        if not pdfium_c.FPDFPageObj_GetBounds(obj, l, b, r, t):
            continue
        box = _transform_box((l.value, b.value, r.value, t.value), matrix)
        area = (box[2] - box[0]) * (box[3] - box[1])
        if kind == pdfium_c.FPDF_PAGEOBJ_FORM and area > 0.5 * page_area and depth < 4:
            inner = _compose(matrix, _object_matrix(obj))
            n = pdfium_c.FPDFFormObj_CountObjects(obj)
            children = (pdfium_c.FPDFFormObj_GetObject(obj, i) for i in range(n))
            _collect_graphics(children, inner, boxes, page_area, depth + 1)
        elif area < 0.8 * page_area and (box[2] - box[0] > 1 or box[3] - box[1] > 1):
            boxes.append(box)


def _object_matrix(obj) -> tuple[float, ...]:
    m = pdfium_c.FS_MATRIX()
    if not pdfium_c.FPDFPageObj_GetMatrix(obj, m):
        return (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)
    return (m.a, m.b, m.c, m.d, m.e, m.f)


def _compose(outer: Optional[tuple], inner: tuple) -> tuple:
    """The matrix applying ``inner`` first, then ``outer`` (PDF row-vector convention)."""
    if outer is None:
        return inner
    a, b, c, d, e, f = inner
    A, B, C, D, E, F = outer
    return (
        a * A + b * C,
        a * B + b * D,
        c * A + d * C,
        c * B + d * D,
        e * A + f * C + E,
        e * B + f * D + F,
    )


def _transform_box(box: tuple, matrix: Optional[tuple]) -> tuple[float, float, float, float]:
    """Bounds of a box after a transform; children of forms report bounds in form space."""
    if matrix is None:
        return box
    a, b, c, d, e, f = matrix
    xs, ys = [], []
    for x, y in ((box[0], box[1]), (box[0], box[3]), (box[2], box[1]), (box[2], box[3])):
        xs.append(a * x + c * y + e)
        ys.append(b * x + d * y + f)
    return min(xs), min(ys), max(xs), max(ys)


# --------------------------------------------------------------------------- classification


class _Classifier:
    """Walks the visual blocks in reading order and turns them into text units.

    States: ``front`` (before the abstract or first section), ``abstract``, ``body`` and
    ``refs`` (the bibliography, skipped until an appendix heading).
    """

    def __init__(self, pages: list[_Page], stats: _Stats, title: list[_VBlock]) -> None:
        self.pages = pages
        self.stats = stats
        self.title = title
        self.units: list[_Unit] = []
        self.sections: list[Section] = []
        self.section_sizes: list[float] = []
        self.state = "front"
        label = next(
            (b for b in self._blocks(max_page=2) if self._abstract_label(b) is not None), None
        )
        self.has_abstract_label = label is not None
        # page-one blocks wholly above the "Abstract" label (or above where running text
        # starts) are front matter, wherever the column order puts them (an author block
        # in the right column)
        self.front_floor = (
            label.bbox[1] if label is not None and label.page == 0 else self._text_top()
        )
        self.abstract_size: Optional[float] = None
        self.interrupted = False
        self.reference_lines: list[str] = []

    def _text_top(self) -> Optional[float]:
        """Where page one's running text starts: its first section heading or block of body
        lines, whichever is higher (for papers without an abstract label)."""
        page = self.pages[0]
        tops = []
        for block in page.blocks:
            if any(block is t for t in self.title):
                continue
            head = self._heading(block)
            if (
                head is not None
                and (head[0] or _FIRST_SECTION_NAMES.match(head[1]))
                or sum(_is_body_like(l, page, self.stats) for l in block.lines) >= 2
            ):
                tops.append(block.bbox[1])
        return min(tops, default=None)

    def _blocks(self, max_page: Optional[int] = None) -> Iterator[_VBlock]:
        for page in self.pages[:max_page]:
            yield from page.blocks

    def run(self) -> list[_Unit]:
        """Classify every block; return the units (title first)."""
        if self.title:
            self.units.append(_Unit("title", [l for b in self.title for l in b.lines]))
        for block in self._blocks():
            if any(block is t for t in self.title):
                continue
            if (
                block.page == 0
                and self.front_floor is not None
                and block.bbox[3] < self.front_floor - 1
            ):
                continue
            lines = [l for l in block.lines if not l.role]
            if len(lines) != len(block.lines):
                self.interrupted = True
            if lines:
                self._take(_VBlock(lines, block.page))
        return self.units

    # -- states

    def _take(self, block: _VBlock) -> None:
        if self.state == "front":
            self._front(block)
        elif self.state == "abstract":
            self._abstract(block)
        elif self.state == "post_abstract":
            if self._heading(block) is not None:
                self.state = "body"
                self._body(block)
        elif self.state == "refs":
            self._refs(block)
        else:
            self._body(block)

    def _front(self, block: _VBlock) -> None:
        label = self._abstract_label(block)
        if label is not None:
            self.state = "abstract"
            if label:  # run-in label: "Abstract. We present ..."
                first, n = block.lines[0], len(label.split())
                rest = ([first.tail(n)] if n < len(first.words) else []) + block.lines[1:]
                self._abstract(_VBlock(rest, block.page))
            elif len(block.lines) > 1:
                self._abstract(_VBlock(block.lines[1:], block.page))
            return
        if self.has_abstract_label:
            return  # the front matter ends at the label
        head = self._heading(block)
        if head is not None and (head[0] or _FIRST_SECTION_NAMES.match(head[1])):
            self.state = "body"
            self._body(block)
        elif self._abstract_like(block):
            self.state = "abstract"
            self._abstract(block)

    def _abstract(self, block: _VBlock) -> None:
        if not block.lines:
            return
        if self._heading(block) is not None:
            self.state = "body"
            self._body(block)
            return
        if _KEYWORDS_RE.match(block.lines[0].text):
            self.state = "post_abstract"
            return
        size = block.size
        written = sum(len(l.text) for u in self.units if u.kind == "abstract" for l in u.lines)
        if self.abstract_size is not None and (
            abs(size - self.abstract_size) > 0.08 * self.abstract_size or written > 4000
        ):
            self.state = "body"
            self._body(block)
            return
        if self.abstract_size is None:
            self.abstract_size = size
        for lines in self._paragraphs(block):
            self.units.append(_Unit("abstract", lines))

    def _refs(self, block: _VBlock) -> None:
        head = self._heading(block)
        if (
            head is not None
            and self._strong(block)
            and (_APPENDIX_HEAD_RE.match(head[1]) or (head[0] and head[0][0].isalpha()))
        ):
            self.state = "body"
            self._body(block)
            return
        self.reference_lines.extend(l.text for l in block.lines[:3])

    def _body(self, block: _VBlock) -> None:
        if len(block.lines) == 1 and _REFERENCES_RE.match(block.text.strip(" .:")):
            self.state = "refs"  # a bibliography label in any typeface
            self.interrupted = True
            return
        head = self._heading(block)
        if head is not None:
            number, title = head
            if _REFERENCES_RE.match(title):
                self.state = "refs"
                self.interrupted = True
                return
            self._add_section(number, title, block)
            return
        if block.size < 0.88 * self.stats.body_size:
            self.interrupted = True  # footnotes, affiliations, stray figure text
            return
        if len(block.lines) <= 8 and all(_is_math(line.text) for line in block.lines):
            return  # a display formula: not prose; the sentence around it continues
        run_in = self._run_in_heading(block)
        if run_in is not None:
            number, title, rest = run_in
            self._add_section(number, title, _VBlock([block.lines[0]], block.page))
            block = _VBlock(rest, block.page)
        for i, lines in enumerate(self._paragraphs(block)):
            if i == 0 and self._continues(lines[0], block):
                self.units[-1].lines.extend(lines)
            else:
                self.units.append(_Unit("paragraph", lines, self._current_section()))
        self.interrupted = False

    # -- pieces

    def _current_section(self) -> Optional[int]:
        return len(self.sections) - 1 if self.sections else None

    def _add_section(self, number: Optional[str], title: str, block: _VBlock) -> None:
        if number is None and self._continues_heading(block):
            self.units[-1].lines.extend(block.lines)
            section = self.sections[-1]
            section.title = f"{section.title} {title}"
            return
        level = number.count(".") + 1 if number else self._unnumbered_level(block.size)
        parent = next(
            (i for i in range(len(self.sections) - 1, -1, -1) if self.sections[i].level < level),
            None,
        )
        self.sections.append(Section(title=title, number=number, level=level, parent=parent))
        self.section_sizes.append(block.size)
        self.units.append(_Unit("heading", block.lines, len(self.sections) - 1))
        self.interrupted = False

    def _continues_heading(self, block: _VBlock) -> bool:
        """A heading's second line set apart by a font change ("4 A Linear Time Algorithm for"
        / "FIXED ALIGNMENT DECODING"): same size, right under the heading before."""
        if not self.units or self.units[-1].kind != "heading":
            return False
        last = self.units[-1].lines[-1]
        size = self.section_sizes[-1]
        return (
            last.page == block.page
            and abs(block.size - size) <= 0.08 * size
            and 0 <= block.bbox[1] - last.y1 < 0.8 * size
        )

    def _unnumbered_level(self, size: float) -> int:
        """Level of an unnumbered heading: 1 + how many bigger heading sizes came before."""
        bigger = {round(s * 2) / 2 for s in self.section_sizes if s > size + 0.4}
        return min(3, 1 + len(bigger))

    def _reaches_right(self, line: _Line) -> bool:
        """Whether a line runs to its column's right edge (so it wraps: running text)."""
        page = self.pages[line.page]
        _, right = page.edge(line)
        return line.x1 >= right - 2 * max(line.size, 1.0)

    def _strong(self, block: _VBlock) -> bool:
        """Bold, or clearly larger than body text."""
        return all(l.bold for l in block.lines) or block.size >= 1.08 * self.stats.body_size

    def _heading(self, block: _VBlock) -> Optional[tuple[Optional[str], str]]:
        """(number or None, title) when the block is a section heading."""
        text = block.text.strip()
        if len(block.lines) > 3 or len(text) > 150 or _caption_match(text):
            return None
        if block.size < 0.9 * self.stats.body_size:
            return None
        strong = self._strong(block)
        words = text.split()
        match = _NUMBERED_HEAD_RE.match(text)
        if match and int(match.group("num").split(".")[0]) <= 30 and len(words) <= 16:
            title = match.group("title").strip()
            plain_ok = (
                len(block.lines) == 1
                and title[:1].isupper()
                and not any(c.isdigit() for c in title)
                and len(words) <= 9
                and not title.endswith((".", ",", ";", ":"))
                and not block.lines[0].broken
                and not self._reaches_right(block.lines[0])
            )
            if (strong and not title.endswith((",", ";"))) or plain_ok:
                return match.group("num"), title.rstrip(".").strip()
        if strong and len(block.lines) <= 2:
            for regex in (_LETTER_HEAD_RE, _ROMAN_HEAD_RE):
                match = regex.match(text)
                if match and len(words) <= 12:
                    return match.group("num"), match.group("title").rstrip(".").strip()
        if len(words) > 18 or not text[:1].isupper() or text.endswith((".", ",", ";")):
            return None
        if sum(c.isalpha() for c in text) < 3 or block.lines[-1].broken:
            return None
        letters = sum(c.isalpha() for c in text)
        if letters < 0.7 * len(text.replace(" ", "")):
            return None
        if (strong and len(block.lines) <= 2) or (
            text.isupper() and len(words) <= 6 and len(block.lines) == 1
        ):
            return None, text.rstrip(":").strip()
        return None

    def _run_in_heading(self, block: _VBlock) -> Optional[tuple[str, str, list[_Line]]]:
        """A numbered heading set in its own font at the start of a paragraph ("2.1 Data. We ...")."""
        first = block.lines[0]
        fonts = first.word_fonts
        if not fonts or len(fonts) < 3:
            return None
        for k in range(1, min(len(fonts), 12)):
            if fonts[k] != fonts[1]:
                return None
            if first.words[k].text.endswith("."):
                if k + 1 < len(fonts) and fonts[k + 1] == fonts[1]:
                    return None
                title = " ".join(w.text for w in first.words[1 : k + 1]).rstrip(".")
                rest = ([first.tail(k + 1)] if k + 1 < len(first.words) else []) + block.lines[1:]
                return first.words[0].text.rstrip("."), title, rest
        return None

    def _abstract_label(self, block: _VBlock) -> Optional[str]:
        """ "" for a standalone "Abstract" label, the label text for a run-in one, else None."""
        text = block.lines[0].text.strip()
        match = _ABSTRACT_RE.match(text)
        if match is None:
            return None
        if not match.group("rest"):
            return ""
        label = text[: match.start("rest")].strip()
        # a run-in label needs punctuation or capitals, else it may be prose ("Abstract meaning ...")
        return label if label[-1:] in ".:-\u2014\u2013" or label.isupper() else None

    def _abstract_like(self, block: _VBlock) -> bool:
        """Fallback for papers without an "Abstract" label: a long text block on page one."""
        if block.page != 0 or len(block.lines) < 3 or len(block.text) < 250:
            return False
        page = self.pages[block.page]
        wide = [l for l in block.lines if _is_body_like(l, page, _Stats(block.size, 1.2))]
        return len(wide) >= 0.6 * len(block.lines)

    def _paragraphs(self, block: _VBlock) -> list[list[_Line]]:
        """Split a text block into paragraphs at indented first lines and short last lines."""
        page = self.pages[block.page]
        paragraphs = [[block.lines[0]]]
        for prev, line in pairwise(block.lines):
            if not _same_row(prev, line) and self._paragraph_break(prev, line, page):
                paragraphs.append([line])
            else:
                paragraphs[-1].append(line)
        return paragraphs

    def _paragraph_break(self, prev: _Line, line: _Line, page: _Page) -> bool:
        left, right = page.edge(line)
        size = max(line.size, 1.0)
        indented = 0.6 * size <= line.x0 - left <= 6 * size
        prev_indented = prev.x0 - left >= 0.6 * size
        if indented and not prev_indented:
            return True
        short = prev.x1 < right - 2.5 * size
        return (
            short and prev.text.rstrip().endswith(_TERMINAL_PUNCT) and line.x0 - left < 0.6 * size
        )

    def _continues(self, first: _Line, block: _VBlock) -> bool:
        """Whether a block's first paragraph continues the previous paragraph (column, page
        or float break in mid-paragraph)."""
        if not self.units or self.units[-1].kind != "paragraph":
            return False
        last = self.units[-1].lines[-1]
        page = self.pages[block.page]
        left = page.edge(first)[0]
        size = max(first.size, 1.0)
        if first.x0 - left >= 0.6 * size:
            return False
        last_text = last.text.rstrip()
        open_sentence = not last_text.endswith(_TERMINAL_PUNCT)
        if first.text[:1].islower() and open_sentence:
            return True
        moved = (last.page, last.band, last.col) != (first.page, first.band, first.col)
        if not (moved or self.interrupted):
            return False
        last_page = self.pages[last.page]
        _, last_right = last_page.edge(last)
        full = last.x1 >= last_right - 2 * max(last.size, 1.0)
        return full or open_sentence


def _is_math(text: str) -> bool:
    """Whether a line reads as a formula: few real words, or math symbols among few words."""
    tokens = text.split()
    if not tokens:
        return True
    wordy = sum(
        1 for t in tokens if _PROSE_WORD_RE.fullmatch(t) or t.lower().strip(",.;:") in _SHORT_WORDS
    )
    if wordy < 0.25 * len(tokens):
        return True
    return wordy < 0.6 * len(tokens) and _MATH_SYMBOL_RE.search(text) is not None


def _find_title(pages: list[_Page], stats: _Stats) -> list[_VBlock]:
    """The title's blocks: the biggest text in the top half of page one (else its first bold
    block), with the blocks right below it in nearly the same size (a title in two fonts)."""
    first = _title_block(pages, stats)
    if first is None:
        return []
    blocks = pages[0].blocks
    title = [first]
    for block in blocks[blocks.index(first) + 1 :]:
        last = title[-1].bbox
        if (
            abs(block.size - first.size) > 0.08 * first.size
            or block.bbox[1] - last[3] > 0.8 * first.size
        ):
            break
        if block.bbox[1] < last[1] or len(title) >= 3:
            break
        title.append(block)
    return title


def _title_block(pages: list[_Page], stats: _Stats) -> Optional[_VBlock]:
    """The title's first block."""
    page = pages[0]
    candidates = [
        b
        for b in page.blocks
        if b.bbox[1] < 0.5 * page.height
        and sum(c.isalpha() for c in b.text) >= 8
        and len(b.text.split()) >= 2
        and not b.lines[0].role
        and _ABSTRACT_RE.match(b.text) is None
    ]
    if not candidates:
        return None
    biggest = max(candidates, key=lambda b: b.size)
    if biggest.size >= 1.12 * stats.body_size:
        return biggest
    bold = [b for b in candidates if all(l.bold for l in b.lines) and len(b.lines) <= 3]
    return bold[0] if bold else None


# --------------------------------------------------------------------------- text


class _Dehyphenator:
    """Joins the lines of a block, removing line-end hyphens where the joined word is
    plausible (seen elsewhere in the paper, or not a compound of two seen words)."""

    def __init__(self, pages: list[_Page]) -> None:
        self.words: set[str] = set()
        self.hyphenated: set[str] = set()
        for page in pages:
            for line in page.lines:
                for word in line.words[1:-1]:
                    token = word.text.strip(".,;:()[]\"'").lower()
                    (self.hyphenated if "-" in token else self.words).add(token)
                    if "-" in token:
                        self.words.update(token.split("-"))

    def join(self, lines: list[_Line]) -> str:
        """The text of consecutive lines, hyphen breaks resolved."""
        text = ""
        for i, line in enumerate(lines):
            if i == 0:
                text = line.text
                continue
            prev = lines[i - 1]
            if _same_row(prev, line):
                text += " " + line.text
            elif prev.broken:
                text = text + ("-" if self._keep_hyphen(text, line.text) else "") + line.text
            elif text.endswith(("-", "\u2010")) and len(text) > 1 and text[-2].isalpha():
                keep = self._keep_hyphen(text[:-1], line.text)
                text = (text if keep else text[:-1]) + line.text
            else:
                text += " " + line.text
        return text

    def _keep_hyphen(self, left_text: str, right_text: str) -> bool:
        left = _ALPHA_RUN_END.search(left_text)
        right = _ALPHA_RUN_START.search(right_text)
        if not left or not right or right.group()[0].isupper():
            return True
        lw, rw = left.group().lower(), right.group().lower()
        if lw + rw in self.words:
            return False
        if f"{lw}-{rw}" in self.hyphenated:
            return True
        if lw in _JOINABLE_PREFIXES and rw in self.words and len(rw) >= 4:
            return True
        return len(lw) >= 3 and len(rw) >= 3 and lw in self.words and rw in self.words


# --------------------------------------------------------------------------- references


def _figure_refs(text: str, targets: dict[tuple[str, str], str]) -> list[InlineRef]:
    """Figure and table mentions, one per label ("Figs. 2 and 3" gives two)."""
    refs = []
    for start, end, kind, label in find_mentions(text):
        refs.append(InlineRef(start, end, kind, _resolve(targets, kind, label)))
        pos = end
        while True:
            more = _LIST_CONTINUATION_RE.match(text, _skip_subpanel(text, pos))
            if more is None:
                break
            refs.append(
                InlineRef(
                    more.start("label"),
                    more.end("label"),
                    kind,
                    _resolve(targets, kind, more.group("label")),
                )
            )
            pos = more.end()
    return refs


def _skip_subpanel(text: str, pos: int) -> int:
    """Skip a sub-panel letter right after a label ("3a", "3(b)")."""
    match = re.match(r"(?:[a-z]\b|\([a-z]\))", text[pos:])
    return pos + match.end() if match else pos


def _resolve(targets: dict[tuple[str, str], str], kind: str, label: str) -> Optional[str]:
    label = label.lower()
    found = targets.get((kind, label))
    if found is None and label[-1:].isalpha() and label[:-1]:
        found = targets.get((kind, label[:-1]))
    return found


def _citation_refs(text: str, numeric: bool) -> list[InlineRef]:
    """Citation markers: "(Smith et al., 2019; Lee, 2020)" (one per item), "Smith (2019)",
    and "[12]" when the bibliography is numbered."""
    refs = [
        InlineRef(m.start(), m.end(), "bibr")
        for m in _NARRATIVE_CITE_RE.finditer(text)
        if m.group().split()[0] not in _NOT_NAMES
    ]
    for paren in _CITATION_PAREN_RE.finditer(text):
        offset = paren.start(1)
        for part in re.finditer(r"[^;]+", paren.group(1)):
            item = _citation_item(part.group(), offset + part.start())
            if item is not None:
                refs.append(item)
    if numeric:
        refs.extend(InlineRef(m.start(), m.end(), "bibr") for m in _NUMERIC_CITE_RE.finditer(text))
    return refs


def _citation_item(part: str, offset: int) -> Optional[InlineRef]:
    """One "Author et al., 2019" item of a parenthetical citation (it must end with the
    year, so "(Directive 2010/63/EU)" is not one), or None."""
    if len(part) > 160 or not _YEAR_RE.search(part):
        return None
    match = _CITE_ITEM_RE.search(part)
    if match is None or match.group("cite").split()[0].rstrip(",.") in _NOT_NAMES:
        return None
    return InlineRef(offset + match.start("cite"), offset + match.end("cite"), "bibr")


def _without_overlaps(refs: list[InlineRef]) -> list[InlineRef]:
    """Refs sorted by position; of overlapping ones the earlier (then longer) is kept."""
    kept: list[InlineRef] = []
    for ref in sorted(refs, key=lambda r: (r.start, -(r.end - r.start))):
        if not kept or ref.start >= kept[-1].end:
            kept.append(ref)
    return kept


def _numbered_bibliography(reference_lines: list[str]) -> bool:
    numbered = sum(1 for t in reference_lines if re.match(r"^\s*(?:\[\d{1,3}\]|\d{1,3}\.\s)", t))
    return numbered >= 2


# --------------------------------------------------------------------------- assembly


def _build_paper(pdf: _PdfHandle, pages: list[_Page], paper_id: str, source: str) -> Paper:
    """Run layout, float and classification passes and assemble the Paper."""
    _assign_sizes(pages)
    _mark_furniture(pages)
    for page in pages:
        _layout_page(page)
    stats = _doc_stats(pages)
    for page in pages:
        page.blocks = _visual_blocks(page, stats)
    captions = _find_captions(pages)
    _locate_floats(pdf, pages, captions, stats)
    title = _find_title(pages, stats)
    classifier = _Classifier(pages, stats, title)
    units = classifier.run()
    dehyphenator = _Dehyphenator(pages)
    paper = Paper(paper_id=paper_id, source=source, reader="pdf", sections=classifier.sections)
    targets = _add_figures(paper, captions)
    numeric = _numbered_bibliography(classifier.reference_lines)
    text_blocks = [_unit_block(u, dehyphenator, targets, numeric) for u in units]
    caption_blocks = [
        Block("caption", _clean_text(dehyphenator.join(c.block.lines)), figure_id=f.id)
        for c, f in zip(captions, paper.figures)
    ]
    paper.blocks = [b for b in text_blocks if b.text] + caption_blocks
    return paper


def _add_figures(paper: Paper, captions: list[_Caption]) -> dict[tuple[str, str], str]:
    """One FigureInfo per caption (fig_N / tab_N in caption order); returns (kind, label) -> id."""
    counters = {"figure": 0, "table": 0}
    targets: dict[tuple[str, str], str] = {}
    for caption in captions:
        prefix = "fig" if caption.kind == "figure" else "tab"
        fig_id = f"{prefix}_{counters[caption.kind]}"
        counters[caption.kind] += 1
        head = f"{'Figure' if caption.kind == 'figure' else 'Table'} {caption.label}"
        paper.figures.append(
            FigureInfo(
                id=fig_id,
                kind=caption.kind,
                label=caption.label,
                head=head,
                page=caption.block.page + 1,
                bbox=caption.bbox,
            )
        )
        targets.setdefault((caption.kind, caption.label.lower()), fig_id)
    return targets


def _unit_block(unit: _Unit, dehyphenator: _Dehyphenator, targets: dict, numeric: bool) -> Block:
    """A Block from a unit; paragraphs get their figure and citation references."""
    text = _clean_text(dehyphenator.join(unit.lines))
    block = Block(unit.kind, text, section=unit.section)
    if unit.kind == "paragraph":
        block.refs = _without_overlaps(_figure_refs(text, targets) + _citation_refs(text, numeric))
    return block


def _clean_text(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


# --------------------------------------------------------------------------- images


def _save_figure_images(pdf: _PdfHandle, paper: Paper, image_dir: Path) -> None:
    """Render each figure's region to ``<image_dir>/<paper_id>_<fig_id>.png``."""
    image_dir.mkdir(parents=True, exist_ok=True)
    for figure in paper.figures:
        if figure.kind != "figure" or figure.bbox is None or figure.page is None:
            continue
        target = image_dir / f"{paper.paper_id}_{figure.id}.png"
        try:
            image = _render_region(pdf, figure.page - 1, figure.bbox)
        except pdfium.PdfiumError:
            continue  # a page pdfium cannot render leaves this figure without an image
        image.save(target)
        figure.image_path = str(target)


def _render_region(pdf: _PdfHandle, page_index: int, bbox: tuple[float, float, float, float]):
    """A PIL image of a region (top-left points) of a page."""
    page = pdf.page(page_index)
    rotation = page.get_rotation()
    if rotation:  # boxes are in unrotated page space; render the page that way too
        page.set_rotation(0)
    try:
        width, height = page.get_size()
        x0, y0, x1, y1 = bbox
        crop = (max(0.0, x0), max(0.0, height - y1), max(0.0, width - x1), max(0.0, y0))
        return page.render(scale=RENDER_SCALE, crop=crop).to_pil()
    finally:
        if rotation:
            page.set_rotation(rotation)
