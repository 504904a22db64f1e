"""Unicode for the Private Use Area characters of Symbol fonts.

Word and other producers write text in the Symbol font as U+F000 plus the font's code
("pci \\uf03d f" for "pci = f", "\\uf0b7" for a bullet), and Adobe's Symbol puts the pieces of
large braces, brackets and the sans-serif (R), (C), TM at U+F8E5-U+F8FE. Both are Private Use
Area code points: they mean something only in that font, and left as they are they reach the
paper's text as unreadable characters.

* :data:`ADOBE_SYMBOL_PUA`: U+F8E5-U+F8FE, the Adobe Glyph List's Symbol pieces, to their
  Unicode characters (the same in any font that uses them);
* :func:`symbol_character`: a U+F020-U+F0FE character of a font whose name (or pdfium's family
  name for it) says Symbol, to the character of the Adobe Symbol encoding at that code.
"""

from __future__ import annotations

import re

#: Adobe's Symbol glyphs in its Private Use Area, to Unicode (one character each).
ADOBE_SYMBOL_PUA = {
    0xF8E5: "\u203e",  # radicalex
    0xF8E6: "\u23d0",  # arrowvertex
    0xF8E7: "\u23af",  # arrowhorizex
    0xF8E8: "\u00ae",  # registersans
    0xF8E9: "\u00a9",  # copyrightsans
    0xF8EA: "\u2122",  # trademarksans
    0xF8EB: "\u239b", 0xF8EC: "\u239c", 0xF8ED: "\u239d",  # parenleft top, extender, bottom
    0xF8EE: "\u23a1", 0xF8EF: "\u23a2", 0xF8F0: "\u23a3",  # bracketleft
    0xF8F1: "\u23a7", 0xF8F2: "\u23a8", 0xF8F3: "\u23a9", 0xF8F4: "\u23aa",  # braceleft, brace extender
    0xF8F5: "\u23ae",  # integralex
    0xF8F6: "\u239e", 0xF8F7: "\u239f", 0xF8F8: "\u23a0",  # parenright
    0xF8F9: "\u23a4", 0xF8FA: "\u23a5", 0xF8FB: "\u23a6",  # bracketright
    0xF8FC: "\u23ab", 0xF8FD: "\u23ac", 0xF8FE: "\u23ad",  # braceright
}

# The Adobe Symbol encoding, codes 0x20-0xFE (one string per row of 16 codes, "\0" where the
# encoding has no character; 0x7F-0x9F are unused). The angle brackets at 0xE1 and 0xF1 are
# U+27E8/U+27E9, not the deprecated U+2329/U+232A that NFC turns into CJK brackets.
_SYMBOL_ROWS = {
    0x20: " !\u2200#\u2203%&\u220b()\u2217+,\u2212./",
    0x30: "0123456789:;<=>?",
    0x40: "\u2245\u0391\u0392\u03a7\u0394\u0395\u03a6\u0393\u0397\u0399\u03d1\u039a\u039b\u039c\u039d\u039f",
    0x50: "\u03a0\u0398\u03a1\u03a3\u03a4\u03a5\u03c2\u03a9\u039e\u03a8\u0396[\u2234]\u22a5_",
    0x60: "\u203e\u03b1\u03b2\u03c7\u03b4\u03b5\u03c6\u03b3\u03b7\u03b9\u03d5\u03ba\u03bb\u03bc\u03bd\u03bf",
    0x70: "\u03c0\u03b8\u03c1\u03c3\u03c4\u03c5\u03d6\u03c9\u03be\u03c8\u03b6{|}\u223c\0",
    0xA0: "\u20ac\u03d2\u2032\u2264\u2044\u221e\u0192\u2663\u2666\u2665\u2660\u2194\u2190\u2191\u2192\u2193",
    0xB0: "\u00b0\u00b1\u2033\u2265\u00d7\u221d\u2202\u2022\u00f7\u2260\u2261\u2248\u2026\u23d0\u23af\u21b5",
    0xC0: "\u2135\u2111\u211c\u2118\u2297\u2295\u2205\u2229\u222a\u2283\u2287\u2284\u2282\u2286\u2208\u2209",
    0xD0: "\u2220\u2207\u00ae\u00a9\u2122\u220f\u221a\u22c5\u00ac\u2227\u2228\u21d4\u21d0\u21d1\u21d2\u21d3",
    0xE0: "\u25ca\u27e8\u00ae\u00a9\u2122\u2211\u239b\u239c\u239d\u23a1\u23a2\u23a3\u23a7\u23a8\u23a9\u23aa",
    0xF0: "\0\u27e9\u222b\u2320\u23ae\u2321\u239e\u239f\u23a0\u23a4\u23a5\u23a6\u23ab\u23ac\u23ad\0",
}
SYMBOL_ENCODING = {row + i: ch for row, chars in _SYMBOL_ROWS.items() for i, ch in enumerate(chars) if ch != "\0"}
#: Symbol text as Word writes it: U+F000 plus the code.
SYMBOL_PUA_RE = re.compile("[\uf020-\uf0fe]")
_SYMBOL_FONT_RE = re.compile(r"symbol", re.IGNORECASE)


def is_symbol_font(name: str) -> bool:
    """True for a font whose name says it is Symbol ("Symbol", "SymbolMT", "Symbol,Bold")."""
    return bool(_SYMBOL_FONT_RE.search(name))


def symbol_character(character: str) -> str:
    """The Unicode character of a U+F020-U+F0FE character written in a Symbol font (the
    character itself where the encoding has nothing at that code)."""
    return SYMBOL_ENCODING.get(ord(character) - 0xF000, character)
