"""Building block text from pieces while collapsing whitespace and tracking offsets."""

from __future__ import annotations

import re

_WS = re.compile(r"\s+")


class TextAccumulator:
    """Appends text pieces with whitespace collapsed to single spaces.

    Offsets returned by :attr:`position` are offsets into the final, stripped text, so
    readers can record where an inline reference or sentence starts while they walk the
    source tree. Leading whitespace is dropped; trailing whitespace is dropped by
    :meth:`text`.
    """

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._length = 0
        self._pending_space = False

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
            if self._pending_space and self._length:
                self._parts.append(" ")
                self._length += 1
            self._parts.append(body)
            self._length += len(body)
            self._pending_space = False
        if piece[-1].isspace():
            self._pending_space = True

    def mark_break(self) -> None:
        """Request a space before the next piece (element boundaries such as ``</s><s>``)."""
        self._pending_space = True

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
