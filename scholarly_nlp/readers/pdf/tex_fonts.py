"""Unicode for the big operators of TeX's math extension fonts and the letters of its
blackboard-bold font, which pdfium reads as their ASCII codes.

TeX's ``cmex10`` (and txfonts' ``txex``, pxfonts' ``pxex``, newtx's ``ntxexx``, Latin
Modern's ``LMMathExtension10``) set the big operators at codes 0x50-0x60 in the OMX encoding (``summationtext`` at 'P', ``summationdisplay`` at 'X'), and AMS's
``msbm10`` sets blackboard-bold capitals at their letters. Embedded as Type 1 fonts with no
ToUnicode map, pdfium gives their codes: "BLEU = BP · expX n=1 N wn log pn" for
"BLEU = BP · exp ∑ n=1 N wn log pn", "x ∈ R" for "x ∈ ℝ". :func:`math_font_character` gives
the character meant, one for one (so pdfium's offsets hold), for a character of such a font.
"""

from __future__ import annotations

import re

#: The OMX encoding's big operators, text and display sizes alike.
_BIG_OPERATORS = dict(zip("PQRSTUVWXYZ[\\]^_`", "\u2211\u220f\u222b\u22c3\u22c2\u228e\u22c0\u22c1"
                                                 "\u2211\u220f\u222b\u22c3\u22c2\u228e\u22c0\u22c1\u2210"))
#: Blackboard-bold capitals with a character of their own in the Basic Multilingual Plane; the
#: others (U+1D538...) would take two UTF-16 units for one of pdfium's and stay as they are.
_DOUBLE_STRUCK = {"C": "\u2102", "H": "\u210d", "N": "\u2115", "P": "\u2119", "Q": "\u211a", "R": "\u211d",
                  "Z": "\u2124"}
#: The characters such fonts may hold at an ASCII code: what the reader looks up fonts for.
MATH_FONT_CODE_RE = re.compile(r"[CHNP-Z\[\\\]^_`]")
_EXTENSION_FONT_RE = re.compile(r"(?:^|\+)(?:cmex\d*|txex|pxex|ntxexx?|lmmathextension\d*)", re.IGNORECASE)
_BLACKBOARD_FONT_RE = re.compile(r"(?:^|\+)msbm\d*", re.IGNORECASE)


def math_font_character(font: str, character: str) -> str:
    """The character a code of a math extension or blackboard-bold font stands for, or
    ``character`` itself for any other font or code."""
    if _EXTENSION_FONT_RE.search(font):
        return _BIG_OPERATORS.get(character, character)
    if _BLACKBOARD_FONT_RE.search(font):
        return _DOUBLE_STRUCK.get(character, character)
    return character
