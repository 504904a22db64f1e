"""Text joining for assembly: a unit's lines to one string, line-end hyphens removed where the
joined word is plausible (seen elsewhere in the paper, or not a compound of two seen words).
"""

from __future__ import annotations

import re

from .model import Line, Page, same_row


_ALPHA_RUN_END = re.compile(r"[^\W\d_]+$")
_ALPHA_RUN_START = re.compile(r"^[^\W\d_]+")
_JOINABLE_PREFIXES = frozenset(
    [
        "non",
        "pre",
        "post",
        "co",
        "multi",
        "cross",
        "self",
        "semi",
        "sub",
        "inter",
        "intra",
        "anti",
        "meta",
        "bi",
        "tri",
        "uni",
        "over",
        "under",
    ]
)


class Dehyphenator:
    """Joins the lines of a block, removing line-end hyphens where the joined word is
    plausible (seen elsewhere in the paper, or not a compound of two seen words)."""

    def __init__(self, pages: list[Page]) -> None:
        self.words: set[str] = set()
        self.hyphenated: set[str] = set()
        for page in pages:
            for line in page.lines:
                for word in line.words[1:-1]:
                    token = word.text.strip(".,;:()[]\"'").lower()
                    (self.hyphenated if "-" in token else self.words).add(token)
                    if "-" in token:
                        self.words.update(token.split("-"))

    def join(self, lines: list[Line]) -> str:
        """The text of consecutive lines, hyphen breaks resolved."""
        text = ""
        for i, line in enumerate(lines):
            if i == 0:
                text = line.text
                continue
            prev = lines[i - 1]
            if same_row(prev, line):
                text += " " + line.text
            elif prev.broken:
                text = text + ("-" if self._keep_hyphen(text, line.text) else "") + line.text
            elif text.endswith(("-", "\u2010")) and len(text) > 1 and text[-2].isalpha():
                keep = self._keep_hyphen(text[:-1], line.text)
                text = (text if keep else text[:-1]) + line.text
            else:
                text += " " + line.text
        return text

    def _keep_hyphen(self, left_text: str, right_text: str) -> bool:
        left = _ALPHA_RUN_END.search(left_text)
        right = _ALPHA_RUN_START.search(right_text)
        if not left or not right or right.group()[0].isupper():
            return True
        lw, rw = left.group().lower(), right.group().lower()
        if lw + rw in self.words:
            return False
        if f"{lw}-{rw}" in self.hyphenated:
            return True
        if lw in _JOINABLE_PREFIXES and rw in self.words and len(rw) >= 4:
            return True
        return len(lw) >= 3 and len(rw) >= 3 and lw in self.words and rw in self.words
