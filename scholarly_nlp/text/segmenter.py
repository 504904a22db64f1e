"""A sentence segmenter for scientific prose.

Splits after ``.``, ``!`` or ``?`` (optionally followed by closing quotes/brackets) when
whitespace and a plausible sentence start follow, except after a free-standing ``!`` or ``?``
(a symbol, not an ending) and after the abbreviations that
scientific writing is full of ("Fig. 3", "et al. (2019)", "e.g.", "i.e.", "Eq. (2)",
"Sect. 4", "cf.", "vs.", initials such as "J. Smith").
"""

from __future__ import annotations

import re

#: Abbreviations (lower-cased, without the final period) after which a period never ends a sentence.
ABBREVIATIONS = frozenset(
    """
    fig figs eq eqs eqn eqns sec sect sects secs tab tabs ref refs no nos vol vols pp p ch chap
    al e.g i.e cf vs viz approx resp ca c.f w.r.t et etc. dr prof mr mrs ms st
    appx app def thm lem prop cor alg alg's algo ex exp
    jan feb mar apr jun jul aug sep sept oct nov dec
    """.split()
)
#: Abbreviations that may end a sentence when a capitalised word follows ("... and so on, etc. The").
SENTENCE_FINAL_ABBREVIATIONS = frozenset({"etc", "al"})

# A candidate boundary: terminal punctuation, optional closers, then whitespace.
_BOUNDARY = re.compile(r"[.!?]+[\"'”’)\]]*(?=\s+)")
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.']*)$")
_NEXT_START = re.compile(r"\s+([\"'“(\[]?)(\S)")


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Return (start, end) character offsets of the sentences of ``text``.

    Offsets exclude surrounding whitespace; concatenating ``text[start:end]`` with the
    whitespace between them gives back ``text`` stripped.
    """
    spans: list[tuple[int, int]] = []
    start = _skip_space(text, 0)
    n = len(text)
    if start >= n:
        return spans
    for match in _BOUNDARY.finditer(text):
        end = match.end()
        if end <= start or not _is_boundary(text, match.start(), end):
            continue
        spans.append((start, end))
        start = _skip_space(text, end)
    if start < n:
        end = len(text.rstrip())
        if end > start:
            spans.append((start, end))
    return spans


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


def _is_boundary(text: str, punct_start: int, end: int) -> bool:
    """Decide whether the punctuation at ``punct_start`` (ending at ``end``) ends a sentence."""
    nxt = _NEXT_START.match(text, end)
    if nxt is None:
        return False
    opener, first = nxt.group(1), nxt.group(2)
    # The next sentence must start like one: upper case, digit, or an opening quote/bracket.
    if not (first.isupper() or first.isdigit() or opener or first in "\"'“[("):
        return False
    if text[punct_start] != ".":
        # Sentence-final "!" and "?" hang on the word before them. Standing alone, they are
        # symbols: a factorial, or a glyph the PDF's font maps wrongly ("13CO J ¼ 1 ! 0", an
        # arrow read as "!", in AAS journals).
        return punct_start > 0 and not text[punct_start - 1].isspace()
    # Look back over the preceding word only: searching from the block start at every
    # candidate boundary made segmentation quadratic in the paragraph length.
    word_start = punct_start
    while word_start > 0 and (text[word_start - 1].isalpha() or text[word_start - 1] in ".'"):
        word_start -= 1
    before = _WORD_BEFORE.search(text, word_start, punct_start)
    if before is None:
        # "... 3.5." or "(2019)." end sentences; a bare number like "Eq. (2)." is fine too.
        return True
    word = before.group(1)
    lower = word.lower().rstrip(".")
    if len(word) == 1 and word.isupper():
        return False  # an initial: "J. Smith"
    if lower in ABBREVIATIONS or lower.replace(".", "") in {"eg", "ie", "cf", "vs", "etal"}:
        if lower in SENTENCE_FINAL_ABBREVIATIONS and first.isupper() and not opener:
            # "et al. Smith" is rare; "et al. (2019)" / "et al. [3]" carries an opener.
            return _looks_like_new_sentence(text, nxt.end() - 1)
        return False
    if "." in word.rstrip("."):
        # "e.g." / "i.e." / "U.S." written with inner periods.
        return False
    return True


def _looks_like_new_sentence(text: str, pos: int) -> bool:
    """After "et al." a capitalised word starts a sentence unless it is a function-less name."""
    word = re.match(r"[A-Za-z]+", text[pos:])
    return bool(word) and word.group(0) in {"The", "This", "These", "We", "Our", "In", "It", "They", "However", "A", "An"}
