"""Building block text from pieces while collapsing whitespace and tracking offsets."""

from __future__ import annotations

import re
from typing import Optional

_WS = re.compile(r"\s+")
# A word broken at a line end and kept as "struc- ture" (GROBID 0.5 text): lower-case letters
# on both sides. "pre- and post-training" is a suspended hyphen, not a break.
_LINE_BREAK_HYPHEN = re.compile(r"(?<=[a-z])- (?!(?:and|or|nor|to|vs|versus|as well as)\b)(?=[a-z])")
# Characters after which a marker glued to a word or to another marker needs a space:
# "1977;Jelinek" -> "1977; Jelinek", "3456" (four table refs) -> "3 4 5 6".
_SEPARATE_AFTER = ",;:"
_OPENERS = "(["
_CLOSERS = ")]"


def _needs_space(before: str, after: str, marker_left: bool, marker_right: bool) -> bool:
    """Whether a space belongs between two characters that meet at a marker's edge.

    ``marker_left`` / ``marker_right`` tell which side of the boundary is a marker.
    """
    if not after.isalnum():
        return marker_right and before.isalnum() and after in _OPENERS
    return before.isalnum() or before in _SEPARATE_AFTER or (marker_left and before in _CLOSERS)


class TextAccumulator:
    """Appends text pieces with whitespace collapsed to single spaces.

    Offsets returned by :attr:`position` are offsets into the final, stripped text, so
    readers can record where an inline reference or sentence starts while they walk the
    source tree. Leading whitespace is dropped; trailing whitespace is dropped by
    :meth:`text`. :meth:`add_marker` adds an inline marker (citation, figure reference)
    and returns its exact offsets, separating it from a word or a marker it would
    otherwise be glued to.
    """

    def __init__(self, *, join_broken_words: bool = False) -> None:
        self._parts: list[str] = []
        self._length = 0
        self._pending_space = False
        self._last_char = ""
        self._after_marker = False
        self._hard_break = False
        self._join_broken_words = join_broken_words

    @property
    def position(self) -> int:
        """Offset at which the next non-space character will land."""
        return self._length + (1 if self._pending_space and self._length else 0)

    def add(self, piece: str) -> None:
        """Append a piece of source text, collapsing any whitespace run to one space."""
        if not piece:
            return
        if piece[0].isspace():
            self._pending_space = True
        body = _WS.sub(" ", piece).strip()
        if body:
            if self._join_broken_words:
                body = _LINE_BREAK_HYPHEN.sub("", body)
                if self._continues_broken_word(body):
                    self._parts[-1] = self._parts[-1][:-1]
                    self._length -= 1
                    self._pending_space = False
            if self._after_marker and not self._pending_space and _needs_space(self._last_char, body[0], True, False):
                self._pending_space = True
            self._append(body)
        if piece[-1].isspace():
            self._pending_space = True

    def _continues_broken_word(self, body: str) -> bool:
        """True when the text so far ends in "struc-" and ``body`` goes on with "ture"."""
        if self._hard_break or self._after_marker or not self._parts or not body[:1].islower():
            return False
        last = self._parts[-1]
        return len(last) >= 2 and last[-1] == "-" and last[-2].islower() and not body.startswith(("and ", "or ", "to "))

    def add_marker(self, piece: str) -> Optional[tuple[int, int]]:
        """Append an inline marker's text; return its (start, end), or None when it is empty.

        The offsets cover exactly the marker's characters (whitespace collapsed, ends
        stripped). A space is put between the marker and a word or marker it touches in the
        source (GROBID's ``</ref><ref>``), so no two markers or words are glued together.
        """
        body = _WS.sub(" ", piece).strip()
        if piece[:1].isspace():
            self._pending_space = True
        if not body:
            if piece[-1:].isspace():
                self._pending_space = True
            return None
        if self._length and not self._pending_space and _needs_space(self._last_char, body[0], self._after_marker, True):
            self._pending_space = True
        start = self.position
        self._append(body)
        self._after_marker = True
        if piece[-1].isspace():
            self._pending_space = True
        return start, self._length

    def _append(self, body: str) -> None:
        if self._pending_space and self._length:
            self._parts.append(" ")
            self._length += 1
        self._parts.append(body)
        self._length += len(body)
        self._pending_space = False
        self._last_char = body[-1]
        self._after_marker = False
        self._hard_break = False

    def mark_break(self) -> None:
        """Request a space before the next piece (element boundaries such as ``</s><s>``)."""
        self._pending_space = True
        self._hard_break = True

    def tail(self, n: int) -> str:
        """The last ``n`` characters accumulated so far (cheap: reads only the last parts)."""
        out, size = [], 0
        for part in reversed(self._parts):
            out.append(part)
            size += len(part)
            if size >= n:
                break
        return "".join(reversed(out))[-n:]

    @property
    def end(self) -> int:
        """Offset just after the last non-space character so far."""
        return self._length

    def text(self) -> str:
        """The accumulated text."""
        return "".join(self._parts)


def collapse_whitespace(text: str) -> str:
    """Collapse whitespace runs to single spaces and strip the ends."""
    return _WS.sub(" ", text).strip()
