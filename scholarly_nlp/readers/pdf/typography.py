"""Typography: font names and weights (read during extraction), each line's size (pass 2) and
the document's body size and line advance (after layout).

Consumes pages of lines; produces ``Line.size``, a :class:`Stats`, and the running-text test
:func:`is_body_like` that floats and classification use.
"""

from __future__ import annotations

import ctypes
import re
from collections import Counter
from itertools import pairwise

import pypdfium2.raw as pdfium_c

from .model import Line, Page, Stats, dominant


_BOLD_HINTS = ("bold", "medi", "semibold", "demi", "black", "heavy", "cmbx", "-bd", ",bd")
_FORCE_BOLD_FLAG = 1 << 18
#: The font size to glyph-box height ratios (median over the document) that mean the sizes are
#: the glyphs' own: 0.59 to 1.8 over the 113 PDFs here that report sizes; 7.4 for one whose
#: text matrix scales its fonts.
_SIZE_TO_HEIGHT = (0.4, 2.5)


def bold_font_name(name: str) -> bool:
    """Whether a font's name says bold or heavier ("Times-Bold", "CMBX10", BMC's "...AdvTT3f.B")."""
    lowered = font_base_name(name).lower()
    return any(h in lowered for h in _BOLD_HINTS) or lowered.endswith((".b", "-b"))


def font_base_name(name: str) -> str:
    """A font name without a short variant suffix: Wiley's Advent fonts name a variant of
    "AdvTTb96.B" as "AdvTTb96.B+fb" or "+20" (the subset tag "ABCDEF+" before a name stays)."""
    return re.sub(r"\+[0-9A-Za-z]{1,3}$", "", name)


class FontReader:
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
            # the force-bold flag, or the name; the weight a font declares is not used:
            # embedded regular fonts of ACL PDFs declare 700
            bold = bool(key[1] & _FORCE_BOLD_FLAG) or bold_font_name(name)
            found = self._known[key] = (name, bold)
        return found


def assign_sizes(pages: list[Page]) -> None:
    """Give each line a size: the font size, or the glyph box height where fonts report none."""
    words = [w for p in pages for l in p.lines for w in l.words]
    sized = [w for w in words if w.font_size > 1.5]
    use_font_size = len(sized) >= 0.8 * max(1, len(words))
    scale = _glyph_scale(sized) if use_font_size else 1.0
    for page in pages:
        for line in page.lines:
            sizes = [
                (
                    w.font_size * scale if use_font_size and w.font_size > 1.5 else w.height / 1.15,
                    len(w.text),
                )
                for w in line.words
            ]
            first = sizes[0][0]
            if all(size == first for size, _ in sizes):
                line.size = round(first * 4) / 4
            elif _small_caps(line.text, sizes):
                line.size = round(max(size for size, _ in sizes) * 4) / 4
            else:
                line.size = dominant(sizes, default=1.0)


def _small_caps(text: str, sizes: list[tuple[float, int]]) -> bool:
    """Whether a line is set in small caps: capitals only, some in a size at least 15% larger
    than the rest ("III. THE VALUE OF PREDICTIONS", where each word's first letter is the
    body's size). Such a line's size is its capitals', not the small ones' it mostly holds."""
    letters = [c for c in text if c.isalpha()]
    if len(letters) < 4 or any(c.islower() for c in letters):
        return False
    small, large = min(size for size, _ in sizes), max(size for size, _ in sizes)
    return large >= 1.15 * small


def _glyph_scale(words: list) -> float:
    """What the fonts' sizes must be multiplied by to be the glyphs' sizes: 1.0, except where
    the document's median size to glyph-height ratio is far from 1. pdfium gives a font's size
    before the text matrix applies: a PDF that sets its text with "75 Tf" under a matrix of 0.12
    reports 75 for 9-point glyphs (and its running heads looked like body text). One factor for
    the whole document keeps fonts of one size equal (a title's lines)."""
    ratios = sorted(w.font_size / w.height for w in words if w.height > 1.0)
    if not ratios:
        return 1.0
    median = ratios[len(ratios) // 2]
    return 1.0 if _SIZE_TO_HEIGHT[0] <= median <= _SIZE_TO_HEIGHT[1] else 1.0 / median


def body_size(pages: list[Page]) -> float:
    """The size most text not marked furniture is set in."""
    return dominant(((l.size, len(l.text)) for p in pages for l in p.lines if not l.role), default=10.0)


def doc_stats(pages: list[Page]) -> Stats:
    """Body size (the size most text is set in) and the usual line advance."""
    body = body_size(pages)
    leads: Counter = Counter()
    for page in pages:
        for prev, line in pairwise(page.lines):
            if (
                (prev.band, prev.col) == (line.band, line.col)
                and abs(line.size - body) < 0.5
                and abs(prev.size - body) < 0.5
            ):
                ratio = (line.base - prev.base) / body
                # up to 3: a double-spaced manuscript advances about 2.4 sizes a line
                if 0.8 < ratio < 3.0:
                    leads[round(ratio * 20) / 20] += 1
    lead = leads.most_common(1)[0][0] if leads else 1.2
    return Stats(body, lead)


def is_body_like(line: Line, page: Page, stats: Stats) -> bool:
    """A running-text line: body size, many words, most of its column's width."""
    left, right = page.edge(line)
    return (
        abs(line.size - stats.body_size) <= 0.12 * stats.body_size
        and len(line.words) >= 5
        and line.width >= 0.85 * (right - left)
    )
