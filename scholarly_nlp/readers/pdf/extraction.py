"""Pass 1, extraction: pdfium's text of each page to line segments.

Consumes a :class:`PdfHandle`; produces one :class:`Page` per page whose ``lines`` are
:class:`Line` segments (words with boxes in top-left points, font name and weight; a wide gap,
as between columns or table cells, starts a new segment), never iterating over every character
in Python.
"""

from __future__ import annotations

import ctypes
import math
import re
from collections.abc import Callable, Iterator

import pypdfium2.raw as pdfium_c

from .accents import SPACING_ACCENTS, place_accent, place_inner_accents, runs_on
from .ascii_ligatures import AMID_LETTERS_RE, put_back_ligatures
from .document import PdfHandle
from .frame import Frame, page_turn
from .glyph_names import CONTROL_RE
from .model import SUPERSCRIPT_TRAIL, Line, Page, Word
from .symbol_font import ADOBE_SYMBOL_PUA, SYMBOL_PUA_RE, is_symbol_font, symbol_character
from .tex_fonts import MATH_FONT_CODE_RE, math_font_character
from .typography import FontReader


_PDFIUM_HYPHEN = "\ufffe"  # pdfium's marker for a hyphen it judged to end a line
_PIECE_RE = re.compile(r"\r\n|\n|\ufffe|[^\s\ufffe]+")
#: Ligatures some (Mac-era) fonts map into the Private Use Area, U+F001 "fi" and U+F002 "fl".
_PUA_LIGATURES = {0xF001: "fi", 0xF002: "fl"}
#: Such a font's text also has a space character after each one ("Arti\uf001 cial"), set with
#: no gap: a space closer than this share of the font size is no word break (in the one such
#: paper here those spaces are within 0.011 em, and its real word spaces 0.039 em or more).
_PUA_LIGATURE_SPACE_RE = re.compile("[\uf001\uf002] (?=\\S)")
_NO_GAP = 0.025
_JOINER = "\u200b"  # stands in for such a space: same length, not whitespace, dropped from words
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
    **_PUA_LIGATURES,
    ord(_JOINER): None,
    **ADOBE_SYMBOL_PUA,
}
_SURROGATE_RE = re.compile("[\ud800-\udfff]")
#: A line opening like a section number ("2.1", "A.", "IV."): its words' fonts are read too,
#: to find a heading run into its paragraph.
_SECTION_NUMBER_RE = re.compile(r"^(?:\d{1,2}(?:\.\d{1,2}){1,4}\.?|[A-H]\.|[IVX]{1,4}\.)$")
#: A word ending in a run of citation numbers ("work1,2", "disease.3-5"), or in one with the
#: sentence's punctuation after it ("extinction6,8-10."); checked for a raised baseline.
_NUMBER_TAIL_RE = re.compile(
    rf"(?:(?<=[^\W\d_])|(?<=[).,;:\]]))(\d{{1,3}}(?:[,\u2013\u2014-]\d{{1,3}})*)(?=[{re.escape(SUPERSCRIPT_TRAIL)}]?$)")
#: Radians off the horizontal within which a line counts as upright.
_UPRIGHT_TOLERANCE = 0.1
#: A spacing accent's glyph within a word's text.
_INNER_ACCENT_RE = re.compile(f"[{''.join(SPACING_ACCENTS)}]")
_NUMBERS_RE = re.compile(rf"^\d{{1,3}}(?:[,\u2013\u2014-]\d{{1,3}})*[{re.escape(SUPERSCRIPT_TRAIL)}]?$")


def read_page(pdf: PdfHandle, index: int) -> Page:
    """Extract one page's line segments (top-left coordinates) with sizes and fonts."""
    page = pdf.page(index)
    textpage = page.get_textpage()
    try:
        count = textpage.count_chars()
        frame = Frame(page_turn(textpage.raw, count), *page.get_bbox())
        loose_box, origin_x, origin_top = _frame_boxes(frame)
        text = _page_text(textpage.raw, count)
        # pdfium leaves glyphs without a code out of its text: offsets then need mapping
        aligned = len(text) == count
        if CONTROL_RE.search(text):
            tables = pdf.control_characters()
            if tables:
                text = _replace_by_font(textpage.raw, text, CONTROL_RE, aligned,
                                        lambda font, ch, _: tables.get(font, {}).get(ord(ch), ch))
        tables = pdf.ascii_ligatures(read=AMID_LETTERS_RE.search(text) is not None)
        if tables:
            text = _ascii_ligatures(textpage.raw, text, aligned, tables)
        if "\uf001" in text or "\uf002" in text:
            text = _join_pua_ligatures(textpage.raw, text, aligned, loose_box)
        if SYMBOL_PUA_RE.search(text):
            raw = textpage.raw
            text = _replace_by_font(raw, text, SYMBOL_PUA_RE, aligned,
                                    lambda font, ch, at: symbol_character(ch)
                                    if is_symbol_font(font) or is_symbol_font(_family_name(raw, at)) else ch)
        if MATH_FONT_CODE_RE.search(text):
            text = _replace_by_font(textpage.raw, text, MATH_FONT_CODE_RE, aligned,
                                    lambda font, ch, _: math_font_character(font, ch))
        lines = list(_page_lines(textpage.raw, text, origin_x, origin_top, index, aligned, loose_box, frame.turn))
        unmapped = _unmapped_share(textpage.raw, count) if index < 3 else (0, 0)
    finally:
        textpage.close()
    return Page(index, frame.width, frame.height, lines, unmapped=unmapped, turn=frame.turn)


def _frame_boxes(frame: Frame) -> tuple[Callable, float, float]:
    """pdfium's loose character box in ``frame``, and the x of the frame's left edge and the
    y of its top in those boxes' space: on a turned page, boxes are written with y up from the
    frame's foot and x from its left edge, so the callers' top-left arithmetic holds there too."""
    if not frame.turn:
        return pdfium_c.FPDFText_GetLooseCharBox, frame.left, frame.top
    get_box, height = pdfium_c.FPDFText_GetLooseCharBox, frame.height

    def loose_box(raw_tp, index: int, rect) -> bool:
        found = get_box(raw_tp, index, rect)
        x0, y0, x1, y1 = frame.box(rect.left, rect.bottom, rect.right, rect.top)
        rect.left, rect.right, rect.top, rect.bottom = x0, x1, height - y0, height - y1
        return found

    return loose_box, 0.0, height


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


def _replace_by_font(raw_tp, text: str, pattern: re.Pattern, aligned: bool,
                     replace: Callable[[str, str, int], str]) -> str:
    """``text`` with each character ``pattern`` finds replaced by ``replace(font name,
    character, pdfium character index)``, one character for one, so pdfium's offsets hold:
    for codes whose meaning depends on their font (:mod:`.glyph_names`, :mod:`.symbol_font`)."""
    fonts = FontReader(raw_tp)
    characters = list(text)
    for match in pattern.finditer(text):
        at = match.start()
        index = _char_index(raw_tp, at, aligned)
        if index >= 0:
            characters[at] = replace(fonts.font(index)[0], text[at], index)
    return "".join(characters)


def _ascii_ligatures(raw_tp, text: str, aligned: bool, tables: dict[str, dict[int, str]]) -> str:
    """``text`` with the f-ligatures put back that fonts keep at printable ASCII codes
    (:mod:`.ascii_ligatures`): ``tables`` gives per font name the ligature each code names."""
    fonts = FontReader(raw_tp)

    def font_at(at: int) -> str:
        index = _char_index(raw_tp, at, aligned)
        return fonts.font(index)[0] if index >= 0 else ""

    def unmapped_at(at: int) -> bool:
        index = _char_index(raw_tp, at, aligned)
        return index >= 0 and pdfium_c.FPDFText_HasUnicodeMapError(raw_tp, index) == 1

    return put_back_ligatures(text, tables, font_at, unmapped_at)


def _family_name(raw_tp, index: int) -> str:
    """The family name pdfium gives the font of a character ("Symbol" for a Word PDF's
    "CIDFont+F7"); empty where it has none."""
    text_object = pdfium_c.FPDFText_GetTextObject(raw_tp, index)
    font = pdfium_c.FPDFTextObj_GetFont(text_object) if text_object else None
    if not font:
        return ""
    buffer = ctypes.create_string_buffer(128)
    length = pdfium_c.FPDFFont_GetFamilyName(font, buffer, 128)
    return buffer.value.decode("latin-1") if 0 < length <= 128 else ""


def _char_index(raw_tp, at: int, aligned: bool) -> int:
    """pdfium's character index of a text offset (-1 where pdfium has none)."""
    return at if aligned else pdfium_c.FPDFText_GetCharIndexFromTextIndex(raw_tp, at)


def _join_pua_ligatures(raw_tp, text: str, aligned: bool, loose_box: Callable) -> str:
    """``text`` with the space after a U+F001/U+F002 ligature made a joiner where the next
    glyph follows with no gap (the font's own space, not a word break); same length."""
    rect = pdfium_c.FS_RECTF()
    characters = list(text)
    for match in _PUA_LIGATURE_SPACE_RE.finditer(text):
        ligature, following = _char_index(raw_tp, match.start(), aligned), _char_index(raw_tp, match.end(), aligned)
        if ligature < 0 or following < 0:
            continue
        loose_box(raw_tp, ligature, rect)
        ligature_box = (rect.left, rect.bottom, rect.right, rect.top)
        loose_box(raw_tp, following, rect)
        if set_without_gap(ligature_box, (rect.left, rect.bottom, rect.right, rect.top)):
            characters[match.start() + 1] = _JOINER
    return "".join(characters)


def set_without_gap(box: tuple[float, float, float, float], following: tuple[float, float, float, float]) -> bool:
    """Whether the glyph in ``following`` (left, bottom, right, top) starts where the one in
    ``box`` ends, on its line, within :data:`_NO_GAP` of the glyph's size (its loose box is
    about 1.15 times the font size; pdfium's own font size is the text operator's, unscaled)."""
    size = (box[3] - box[1]) / 1.15
    same_line = abs(following[1] - box[1]) < 0.5 * size
    return size > 0 and same_line and abs(following[0] - box[2]) < _NO_GAP * size


def _clean_word(piece: str) -> str:
    """A word's text: ligatures spelled out, control characters and joiners dropped, UTF-16
    surrogate pairs joined (math letters), stray surrogates replaced."""
    cleaned = piece.translate(_CLEAN_TABLE)
    if _SURROGATE_RE.search(cleaned):
        cleaned = cleaned.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return cleaned


def _page_lines(
    raw_tp, text: str, left: float, top: float, page_index: int, aligned: bool = True,
    loose_box: Callable = pdfium_c.FPDFText_GetLooseCharBox, turn: int = 0,
) -> Iterator[Line]:
    """Yield line segments from pdfium's text: split at its line breaks, then at wide gaps.
    ``loose_box`` gives character boxes in the page's reading frame, whose text runs at ``turn``.

    One pass over words: each word costs two box look-ups (its first and last characters);
    the font size is read again only when the glyph height changes from the word before.
    """
    rect = pdfium_c.FS_RECTF()
    font_size = pdfium_c.FPDFText_GetFontSize
    to_char = pdfium_c.FPDFText_GetCharIndexFromTextIndex
    fonts = FontReader(raw_tp)
    words: list[Word] = []
    held: list[Word] = []  # the words of the line before, not yet built into line segments
    append = words.append
    last_height, last_size = -1.0, 0.0
    after_accent = False  # the last piece was an accent put on a word before it
    ended_on_accent = False  # the last word's glyphs ended on an accent's ("TUB\u00a8")
    # each word's pieces of pdfium's text (offset, length; -1 where cleaning changed it), for
    # the middles of its characters where an accent must find its letter
    pieces: dict[int, list[tuple[int, int]]] = {}

    def char_boxes(word: Word) -> list[tuple[float, float]] | None:
        edges, box = [], pdfium_c.FS_RECTF()  # not ``rect``, which holds the word being read
        for start, length in pieces.get(id(word), []):
            if length < 0:
                return None
            for offset in range(length):
                loose_box(raw_tp, start + offset if aligned else to_char(raw_tp, start + offset), box)
                edges.append((box.left - left, box.right - left))
        return edges or None

    def _place_inner_accents(word: Word) -> None:
        # an accent glyph inside the word ("Schr\u00a8odinger"): on the letter under it
        if len(word.text) > 1 and _INNER_ACCENT_RE.search(word.text):
            boxes = char_boxes(word) or []
            if place_inner_accents(word, boxes):
                # the word's edges are its letters' (an accent's glyph at either end sits over
                # a letter, inside them); its text no longer matches pdfium's
                word.x0, word.x1 = min(x0 for x0, _ in boxes), max(x1 for _, x1 in boxes)
                pieces[id(word)] = [(-1, -1)]

    def centres(word: Word) -> list[float] | None:
        edges = char_boxes(word)
        return [(x0 + x1) / 2 for x0, x1 in edges] if edges else None

    for match in _PIECE_RE.finditer(text):
        first, end = match.span()
        piece = text[first:end]
        if piece in _BREAKS:
            if words:
                if piece == _PDFIUM_HYPHEN:
                    words[-1].broken = True
                # a line is built one line late: pdfium may give an accent's glyph after the break
                for segment in _segments(held) if held else ():
                    yield _make_line(segment, page_index, fonts, raw_tp, turn)
                held, words = words, []
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
        first_top, first_bottom = y_top, y_bottom
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
        word = Word(cleaned, x0 - left, top - y_top, x1 - left, top - y_bottom, last_size, height, first)
        if cleaned in SPACING_ACCENTS and place_accent(word, held + words, centres) is not None:
            after_accent = True
            continue  # an accent glyph printed over a letter of a word before it ("Muller \u00a8")
        if cleaned[-1:].isdigit() or (cleaned[-2:-1].isdigit() and cleaned[-1] in SUPERSCRIPT_TRAIL):
            word.sup = _superscript_start(raw_tp, cleaned, piece, end, aligned, first_top, first_bottom,
                                          words[-1] if words else None, word, rect, loose_box)
        pieces[id(word)] = [(match.start(), len(piece) if cleaned == piece else -1)]
        opens_on_accent = cleaned[0] in SPACING_ACCENTS
        if not cleaned.isascii() or "`" in cleaned:  # of the accents only the grave is ASCII
            _place_inner_accents(word)
        if words and (after_accent or opens_on_accent or ended_on_accent) and runs_on(words[-1], word):
            # the rest of a word an accent's glyph cut ("Veli\u010dkovi" "c\u00b4", "Gim" "\u00b4" "enez",
            # "Ure" "\u02d8s", "TUB\u00a8" "\u02d9ITAK")
            _join(words[-1], word)
            pieces.setdefault(id(words[-1]), []).extend(pieces.pop(id(word)))
            ended_on_accent = cleaned[-1] in SPACING_ACCENTS
            _place_inner_accents(words[-1])  # an accent ending one piece over the next's letter
            continue
        after_accent, ended_on_accent = False, cleaned[-1] in SPACING_ACCENTS
        append(word)
    for finished in (held, words):
        for segment in _segments(finished) if finished else ():
            yield _make_line(segment, page_index, fonts, raw_tp, turn)


def _join(word: Word, rest: Word) -> None:
    """Extend ``word`` by ``rest``, the piece of it after an accent's glyph."""
    word.text += rest.text
    word.x1 = max(word.x1, rest.x1)
    word.y0, word.y1 = min(word.y0, rest.y0), max(word.y1, rest.y1)
    word.height = max(word.height, rest.height)
    word.sup = len(word.text) - len(rest.text) + rest.sup if rest.sup >= 0 else word.sup


def _superscript_start(raw_tp, cleaned: str, piece: str, end: int, aligned: bool, first_top: float,
                       first_bottom: float, prev: "Word | None", word: Word, rect, loose_box: Callable) -> int:
    """Where a word's raised, smaller run of digits starts (a superscript citation), or -1.

    ``cleaned`` is the word's text, ``piece`` pdfium's, which ends at ``end``. A glued run
    ("work1,2") is measured against the word's first glyph; a run standing alone ("work 1,2")
    against the word before it on the line. One more box look-up, only for words that end
    in a digit, or in a digit and a punctuation mark.
    """
    if prev is not None and _NUMBERS_RE.match(cleaned):
        raised = word.y1 < prev.y1 - 0.25 * prev.height
        smaller = word.height < 0.85 * prev.height
        close = 0 <= word.x0 - prev.x1 < 0.5 * prev.height
        return 0 if raised and smaller and close else -1
    tail = _NUMBER_TAIL_RE.search(cleaned)
    if tail is not None:
        at = piece.rfind(tail.group(1))
        if at < 0:
            return -1  # cleaning changed the digits: the run cannot be placed
        index = end - len(piece) + at
        if not aligned:
            index = pdfium_c.FPDFText_GetCharIndexFromTextIndex(raw_tp, index)
        loose_box(raw_tp, index, rect)
        base_height = first_top - first_bottom
        raised = rect.bottom > first_bottom + 0.25 * base_height
        smaller = rect.top - rect.bottom < 0.85 * base_height
        return tail.start() if raised and smaller else -1
    return -1


def _segments(words: list[Word]) -> Iterator[list[Word]]:
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


def _upright(raw_tp, index: int, turn: int = 0) -> bool:
    """Whether the character at ``index`` runs left to right in the page's reading frame
    (along the page, or at ``turn`` on a page set sideways). Read from its matrix's rotation
    (atan2(b, a)), not FPDFText_GetCharAngle, which takes the skew of a synthetic italic for
    an angle."""
    matrix = pdfium_c.FS_MATRIX()
    if not pdfium_c.FPDFText_GetMatrix(raw_tp, index, matrix):
        return True
    return abs(math.atan2(matrix.b, matrix.a) - math.radians(turn)) < _UPRIGHT_TOLERANCE


def _make_line(words: list[Word], page_index: int, fonts: FontReader, raw_tp, turn: int = 0) -> Line:
    """Build a line segment; read its fonts at its first and last word (and, for a line
    opening with a section number or in bold that turns regular, at each of its first words,
    to find run-in headings) and its first character's angle."""
    name, bold_first = fonts.font(words[0].index)
    last_name, bold_last = fonts.font(words[-1].index) if len(words) > 1 else (name, bold_first)
    line = Line(words, page_index, bold=bold_first and bold_last, font=name, last_font=last_name)
    line.upright = _upright(raw_tp, words[0].index, turn)
    # a line opening with a section number, or in bold that ends in another weight (a head
    # run into its paragraph: "Validation We use the term ..."), gets its first words' fonts
    if len(words) > 2 and (_SECTION_NUMBER_RE.match(words[0].text) or (bold_first and not bold_last)):
        line.word_fonts = [fonts.font(w.index)[0] for w in words[:14]]
    return line
