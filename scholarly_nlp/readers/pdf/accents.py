"""Spacing accents: TeX's accent glyphs, which a PDF's text gives apart from their letter.

Fonts without precomposed letters (OT1 and the like, most ACL papers before ~2015) print an
accent as a glyph of its own over the letter. pdfium's text then has the accent beside the
letter ("Be\u00b4langer"), or as a word of its own after the word it sits on ("Muller \u00a8"),
sometimes several words later. :func:`place_accent` puts such a detached accent into the word
whose box it lies over, on the letter under it; :func:`compose_accents` (in
:mod:`.reference_parser`) composes the accents left beside their letters.
"""

from __future__ import annotations

import unicodedata
from typing import Optional

from .model import Word

#: Each spacing accent and its combining mark.
SPACING_ACCENTS = {"\u00b4": "\u0301", "`": "\u0300", "\u02c6": "\u0302", "\u00a8": "\u0308",
                   "\u02dc": "\u0303", "\u00b8": "\u0327", "\u02c7": "\u030c", "\u02d9": "\u0307",
                   "\u02d8": "\u0306", "\u02da": "\u030a", "\u02dd": "\u030b"}
VOWELS = "AEIOUYaeiouy\u0131"
#: The letters an accent goes on, where it is not on a vowel.
_LETTERS_FOR = {
    "\u00b8": "CSTcst",  # cedilla
    "\u02c7": "CDENRSTZcdenrstz",  # caron
    "\u02d9": "CEGIZcegz",  # dot above
    "\u02dc": "AONaon",  # tilde
    "\u02d8": "AGUagu",  # breve
}


def place_accent(accent: Word, words: list[Word]) -> Optional[Word]:
    """Put the detached spacing accent ``accent`` (a word of that one glyph) on the letter of
    ``words`` it is printed over and return that word; None where it is over no word's letter
    on its row (the caller keeps the accent as it is)."""
    mark = SPACING_ACCENTS.get(accent.text)
    if mark is None:
        return None
    centre = (accent.x0 + accent.x1) / 2
    height = max(accent.height, 1.0)
    for word in reversed(words):
        if not (word.x0 < centre < word.x1) or abs(word.y1 - accent.y1) > 0.5 * height:
            continue
        at = _letter_under(word, centre, accent.text)
        if at is None:
            return None
        word.text = unicodedata.normalize("NFC", word.text[:at + 1] + mark + word.text[at + 1:])
        return word
    return None


def _letter_under(word: Word, centre: float, accent: str) -> Optional[int]:
    """The index of the letter of ``word`` under ``centre``: of the letters that take this
    accent, the one whose estimated middle is nearest (letters taken as equally wide)."""
    text = word.text
    takers = _LETTERS_FOR.get(accent, VOWELS)
    width = (word.x1 - word.x0) / max(len(text), 1)
    candidates = [i for i, c in enumerate(text) if c in takers]
    if not candidates:
        candidates = [i for i, c in enumerate(text) if c.isalpha()]
    if not candidates:
        return None
    return min(candidates, key=lambda i: abs(word.x0 + (i + 0.5) * width - centre))


def runs_on(word: Word, following: Word) -> bool:
    """Whether ``following`` starts where ``word`` ends, on its row: the rest of one word that
    pdfium cut in two at an accent's glyph."""
    height = max(word.height, 1.0)
    return abs(following.x0 - word.x1) < 0.1 * height and abs(following.y1 - word.y1) < 0.3 * height
