"""f-ligatures that a font keeps at ASCII punctuation codes, with no Unicode map to say so.

Type 1 fonts of ACM's Libertine template (``LinLibertineT`` and its bold and italic) declare
MacRoman but hold the ligatures at the codes of punctuation: pdfium reads "signi!cant",
"di"erent", "di#cult", "brie$y". Such a font is told (:func:`told_families`) by exclamation
marks between letters ("x!y" is no real exclamation) where the letters "fi" are all but absent
(every fi is the ligature there; OCR'd text with "!" for a misread letter has "fi" as often as
any text), counted over the pages read so far, per family (the bold and italic take the
regular's encoding). In a font told so, each of the four codes is its ligature
(:func:`ligature_character`), whatever stands beside it ("sta"" is staff). One presentation
form for one code, so pdfium's offsets hold; the ligatures are spelled out later like any other.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

#: Each code and the ligature such a font draws there.
LIGATURE_CODES = {"!": "\ufb01", '"': "\ufb00", "#": "\ufb03", "$": "\ufb02"}
LIGATURE_CODE_RE = re.compile('[!"#$]')
#: "fi" between letters, as such a font gives it: a real exclamation mark is never there.
_FI_BETWEEN_LETTERS_RE = re.compile(r"(?<=[^\W\d_])!(?=[^\W\d_])")
_LETTERS_FI_RE = re.compile("fi")
#: How many such "fi"s tell a font family (a product name like "Yahoo!Answers" is one), with
#: the letters "fi" in it less than half as often.
EVIDENCE = 3
_STYLE_SUFFIX_RE = re.compile(r"(?:[-,]?(?:Bold|Italic|Oblique|Regular|Medium)|B|I|BI|IB)+$")


def family(font: str) -> str:
    """A font's name without its style suffix ("LinLibertineTB" -> "LinLibertineT")."""
    return _STYLE_SUFFIX_RE.sub("", font) or font


def ligature_evidence(text: str, family_at: Callable[[int], str], evidence: Counter) -> None:
    """Count into ``evidence`` per font family, ``(family, "!")``, each exclamation mark
    between letters of ``text`` and, ``(family, "fi")``, each "fi" in the letters of a family
    that has such marks (``family_at``: the family of the character at a text offset)."""
    marked = Counter(family_at(match.start()) for match in _FI_BETWEEN_LETTERS_RE.finditer(text))
    marked.pop("", None)
    if not marked:
        return
    for name, count in marked.items():
        evidence[(name, "!")] += count
    for match in _LETTERS_FI_RE.finditer(text):
        name = family_at(match.start())
        if name in marked:
            evidence[(name, "fi")] += 1


def told_families(evidence: Counter) -> set[str]:
    """The families ``evidence`` tells to keep their ligatures at ASCII codes."""
    return {name for (name, kind), count in evidence.items()
            if kind == "!" and count >= EVIDENCE and evidence[(name, "fi")] < count / 2}


def ligature_character(font: str, char: str, told: set[str]) -> str:
    """The ligature ``char`` stands for in ``font`` where its family is ``told``, else ``char``."""
    return LIGATURE_CODES.get(char, char) if family(font) in told else char
