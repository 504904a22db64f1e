"""Reading frames: a page whose text is set sideways is read in the frame its text runs in.

A landscape table printed on a portrait page, or a figure page turned a quarter (Wiley's
tables, ApJ's full-page maps), has its text at 90 degrees to the page. Read in page space,
every line would be "set at an angle" and dropped as furniture, caption included. The
extraction pass therefore measures the angle most of a page's text runs at
(:func:`page_turn`) and takes every box in that page's :class:`Frame`: top-left points along
and across the text, as if the page were turned to read it. Graphics take the same frame;
figure crops go back to page space to be rendered, then are turned upright.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pypdfium2.raw as pdfium_c

#: Characters sampled, evenly over the page, to find the angle its text runs at.
_SAMPLE = 60
#: Share of the sampled characters at a quarter turn for the page to be read turned: what is
#: left upright is then little enough to be furniture in the turned frame (furniture.py's
#: 0.25 of angled text), not a page's body cut into one-word lines.
_SIDEWAYS_SHARE = 0.75
_TOLERANCE = 0.1  # radians


def page_turn(raw_tp, count: int) -> int:
    """The angle in degrees (90: reading upwards, -90: downwards) most of a page's text runs
    at where it is set sideways, else 0."""
    if count <= 0:
        return 0
    matrix = pdfium_c.FS_MATRIX()
    turns = {90: 0, -90: 0}
    sampled = 0
    for index in range(0, count, max(1, count // _SAMPLE)):
        # pdfium's own spaces and line breaks carry no angle of the text's
        if pdfium_c.FPDFText_IsGenerated(raw_tp, index) == 1 or not pdfium_c.FPDFText_GetMatrix(raw_tp, index, matrix):
            continue
        sampled += 1
        angle = math.atan2(matrix.b, matrix.a)
        for turn in turns:
            if abs(angle - math.radians(turn)) < _TOLERANCE:
                turns[turn] += 1
    turn, most = max(turns.items(), key=lambda item: item[1])
    return turn if sampled and most > _SIDEWAYS_SHARE * sampled else 0


@dataclass(frozen=True)
class Frame:
    """A page's reading frame: ``turn`` (0, 90 or -90) and the page's box in PDF user space."""

    turn: int
    left: float
    bottom: float
    right: float
    top: float

    @property
    def width(self) -> float:
        """The frame's width: along the text."""
        return self.top - self.bottom if self.turn else self.right - self.left

    @property
    def height(self) -> float:
        """The frame's height: across the text."""
        return self.right - self.left if self.turn else self.top - self.bottom

    def box(self, l: float, b: float, r: float, t: float) -> tuple[float, float, float, float]:
        """A box of PDF user space (left, bottom, right, top) in top-left frame points (x0, y0, x1, y1)."""
        if self.turn == 90:  # the text reads upwards: along it is up the page, its top the page's left
            return b - self.bottom, l - self.left, t - self.bottom, r - self.left
        if self.turn == -90:
            return self.top - t, self.right - r, self.top - b, self.right - l
        return l - self.left, self.top - t, r - self.left, self.top - b

    def page_box(self, x0: float, y0: float, x1: float, y1: float) -> tuple[float, float, float, float]:
        """The inverse of :meth:`box`: top-left frame points back to user space (left, bottom, right, top)."""
        if self.turn == 90:
            return y0 + self.left, x0 + self.bottom, y1 + self.left, x1 + self.bottom
        if self.turn == -90:
            return self.right - y1, self.top - x1, self.right - y0, self.top - x0
        return x0 + self.left, self.top - y1, x1 + self.left, self.top - y0
