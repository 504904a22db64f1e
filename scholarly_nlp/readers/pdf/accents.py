"""Spacing accents: TeX's accent glyphs, which a PDF's text gives apart from their letter.

Fonts without precomposed letters (OT1 and the like, most ACL papers before ~2015) print an
accent as a glyph of its own over the letter. pdfium's text then has the accent beside the
letter ("Be\u00b4langer"), or as a word of its own after the word it sits on ("Muller \u00a8"),
sometimes several words later, and may cut the word it interrupts ("Gim \u00b4 enez").
:func:`place_accent` puts such a detached accent into the word whose box it lies over, on the
letter under it; :func:`runs_on` tells the two halves of a cut word; :func:`compose_accents`
(in :mod:`.reference_parser`) composes the accents left beside their letters.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from typing import Optional

from .model import Word

#: Each spacing accent and its combining mark.
SPACING_ACCENTS = {"\u00b4": "\u0301", "`": "\u0300", "\u02c6": "\u0302", "\u00a8": "\u0308",
                   "\u02dc": "\u0303", "\u00b8": "\u0327", "\u02c7": "\u030c", "\u02d9": "\u0307",
                   "\u02d8": "\u0306", "\u02da": "\u030a", "\u02dd": "\u030b"}
VOWELS = "AEIOUYaeiouy\u0131"
#: The letters an accent goes on besides the vowels (or instead of them: cedilla, caron, dot).
_LETTERS_FOR = {
    "\u00b4": VOWELS + "CNSZcnsz",  # acute: Polish \u0107 \u0144 \u015b \u017a
    "\u00b8": "CGKLNSTcgklnst",  # cedilla
    "\u02c7": "CDELNRSTZcdelnrstz",  # caron
    "\u02d9": "CEGIZcegz",  # dot above
    "\u02dc": "AONaon",  # tilde
    "\u02d8": "AGUagu",  # breve
}
_OGONEK = "\u0328"
#: Within this many letter widths of the accent, a letter that takes it beats one that does not.
_TAKER_PULL = 0.6
_NARROW, _WIDE = set("fijlrtI.,'"), set("mwMW")

#: The middle of each character of a word, from the PDF where it is known, else None.
Centres = Callable[[Word], Optional[list[float]]]


def place_accent(accent: Word, words: list[Word], centres: Optional[Centres] = None) -> Optional[Word]:
    """Put the detached spacing accent ``accent`` (a word of that one glyph) on the letter of
    ``words`` it is printed over and return that word; None where it is over no word's letter
    on its row (the caller keeps the accent as it is). ``centres`` gives a word's character
    middles from the PDF; without it they are estimated from the letters' usual widths."""
    mark = SPACING_ACCENTS.get(accent.text)
    if mark is None:
        return None
    centre = (accent.x0 + accent.x1) / 2
    height = max(accent.height, 1.0)
    for word in reversed(words):
        if not (word.x0 < centre < word.x1) or abs(word.y1 - accent.y1) > 0.5 * height:
            continue
        at = _letter_under(word, centre, accent.text, centres)
        if at is None:
            return None
        before = len(word.text)
        mark = mark_for(accent.text, word.text[at])
        word.text = unicodedata.normalize("NFC", word.text[:at + 1] + mark + word.text[at + 1:])
        if word.sup > at:  # a mark that composes with nothing lengthens the word
            word.sup += len(word.text) - before
        return word
    return None


def place_inner_accents(word: Word, boxes: list[tuple[float, float]]) -> bool:
    """Put each spacing accent inside ``word`` ("Schr\u00a8odinger", "Universita\u00a8t") on the
    letter its glyph is printed over, by ``boxes``, the left and right edge of each of the
    word's characters; True where one was placed. An accent over no letter's box (a backtick
    opening quoted code) stays as it is, and so does every accent where the boxes do not match
    the text."""
    text = word.text
    if len(boxes) != len(text):
        return False
    marks: dict[int, list[str]] = {}  # letter index -> the combining marks it takes
    placed: set[int] = set()
    for at, char in enumerate(text):
        mark = SPACING_ACCENTS.get(char)
        if mark is None:
            continue
        centre = (boxes[at][0] + boxes[at][1]) / 2
        takers = _LETTERS_FOR.get(char, VOWELS)
        # (\u02c6 and \u02c7 are modifier letters to isalpha)
        under = [i for i, c in enumerate(text)
                 if c.isalpha() and c not in SPACING_ACCENTS and boxes[i][0] <= centre <= boxes[i][1]]
        if not under:
            continue
        letter = min(under, key=lambda i: (text[i] not in takers,
                                           abs((boxes[i][0] + boxes[i][1]) / 2 - centre)))
        marks.setdefault(letter, []).append(mark_for(char, text[letter]))
        placed.add(at)
    if not placed:
        return False
    out = []
    for i, char in enumerate(text):
        if i in placed:
            continue
        # TeX's dotless i under an accent is the plain i's accented form
        out.append("i" if char == "\u0131" and i in marks else char)
        out.extend(marks.get(i, ()))
    composed = unicodedata.normalize("NFC", "".join(out))
    if word.sup >= 0:  # the superscript digits stay the word's end
        word.sup = len(composed) - (len(text) - word.sup)
    word.text = composed
    return True


def mark_for(accent: str, letter: str) -> str:
    """The combining mark the spacing ``accent`` puts on ``letter``. Old TeX fonts draw some
    marks with another's glyph: the caron of \\v{s} with the breve's, so a breve on a letter
    that no language gives one but the caron is given to ("Ure\u02d8s") is a caron
    (Ure\u0161; a Latin \u0115, rare in papers, is read \u011b so); Polish's ogonek with the cedilla's, so a
    cedilla on a vowel ("Ste\u00b8\u00b4slicka") is an ogonek (St\u0119\u015blicka)."""
    if accent == "\u02d8" and letter not in _LETTERS_FOR["\u02d8"] and letter in _LETTERS_FOR["\u02c7"]:
        return SPACING_ACCENTS["\u02c7"]
    if accent == "\u00b8" and letter in "AEIOUaeiou":
        return _OGONEK
    return SPACING_ACCENTS[accent]


def runs_on(word: Word, following: Word) -> bool:
    """Whether ``following`` starts where ``word`` ends, on its row: the rest of one word that
    pdfium cut in two at an accent's glyph."""
    height = max(word.height, 1.0)
    return abs(following.x0 - word.x1) < 0.1 * height and abs(following.y1 - word.y1) < 0.3 * height


def _letter_under(word: Word, centre: float, accent: str, centres: Optional[Centres]) -> Optional[int]:
    """The index of the letter of ``word`` under ``centre``: the nearest letter, where one
    that takes this accent (a vowel for most) is pulled :data:`_TAKER_PULL` letters nearer."""
    text = word.text
    known = centres(word) if centres is not None else None
    middles = known if known is not None and len(known) == len(text) else _estimated_centres(word)
    width = (word.x1 - word.x0) / max(len(text), 1)
    takers = _LETTERS_FOR.get(accent, VOWELS)
    letters = [i for i, c in enumerate(text) if c.isalpha()]
    if not letters:
        return None
    return min(letters, key=lambda i: abs(middles[i] - centre) / width - (_TAKER_PULL if text[i] in takers else 0.0))


def _estimated_centres(word: Word) -> list[float]:
    """Character middles estimated from usual widths: narrow (i, l, t ...) half, wide (m, w)
    one and a half of the others."""
    weights = [0.5 if c in _NARROW else 1.5 if c in _WIDE else 1.0 for c in word.text]
    scale = (word.x1 - word.x0) / max(sum(weights), 1e-6)
    middles, x = [], word.x0
    for weight in weights:
        middles.append(x + weight * scale / 2)
        x += weight * scale
    return middles
