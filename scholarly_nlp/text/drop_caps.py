"""Drop caps: the enlarged first letter of a paper's body, which readers get apart from its word.

GROBID 0.5 writes Nature Communications' "Replication" as "R eplication"; a PDF's text layer
gives the letter as a line of its own, 40 points tall, beside the first lines of the
paragraph. Both readers ask :func:`joins_drop_cap` whether a letter and a fragment are one
word, with the paper's own words as the only lexicon.
"""

from __future__ import annotations

import re
from collections import Counter

__all__ = ["joins_drop_cap", "word_counts"]

_WORD = re.compile(r"[A-Za-z][A-Za-z-]*")


def word_counts(text: str) -> Counter:
    """Lower-cased word counts of a text: the paper's lexicon for :func:`joins_drop_cap`."""
    return Counter(word.lower() for word in _WORD.findall(text))


def joins_drop_cap(letter: str, fragment: str, vocabulary: Counter) -> bool:
    """Whether a capital ``letter`` and the lower-case ``fragment`` after it are one word.

    Yes when the paper uses the joined word more often than the fragment elsewhere (the
    fragment's own occurrence is in ``vocabulary``), or, for a letter that is no English word
    (not "A" or "I") and a fragment of two letters or more, when the fragment occurs nowhere
    else ("R ecent" in a paper that never writes "recent"). So "T cells" (cells elsewhere),
    "A novel" (no "anovel") and "K j=1" stay apart.
    """
    if len(letter) != 1 or not letter.isupper() or not fragment[:1].islower():
        return False
    joined = (letter + fragment).lower()
    elsewhere = vocabulary[fragment.lower()] - 1
    if vocabulary[joined] >= 1 and vocabulary[joined] > elsewhere:
        return True
    return letter not in "AI" and len(fragment) >= 2 and elsewhere <= 0
