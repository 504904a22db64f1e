"""Display formulas for the classification pass: whether a line reads as math, not prose."""

from __future__ import annotations

import re


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


def is_math(text: str) -> bool:
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
