"""Lines near a position without scanning the page: a sorted index with a bounded look-up.

Passes that compare a line with its neighbours (a script fragment's host line, a page
number's row mate) ask :class:`SortedLines` for the lines within a window of one coordinate
instead of looping over every line of the page, which was quadratic on hostile pages of
tens of thousands of fragments. Real pages have a few dozen lines in any such window; a
window crowded beyond :data:`MAX_NEIGHBOURS` (only a hostile page) yields its nearest
lines, so one look-up never costs more than that.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Sequence

from .model import Line


#: The most lines one look-up yields (all of the window on real pages).
MAX_NEIGHBOURS = 64


class SortedLines:
    """Lines sorted by ``key`` (stable: lines with equal keys keep their order)."""

    def __init__(self, lines: Iterable[Line], key: Callable[[Line], float]) -> None:
        self.lines: list[Line] = sorted(lines, key=key)
        self.keys = [key(line) for line in self.lines]

    def around(self, value: float, below: float, above: float) -> Sequence[int]:
        """Indices, ascending, of the lines whose key lies in ``[value - below, value + above]``;
        of a window holding more than ``MAX_NEIGHBOURS``, those whose key is nearest ``value``."""
        lo = bisect.bisect_left(self.keys, value - below)
        hi = bisect.bisect_right(self.keys, value + above)
        if hi - lo <= MAX_NEIGHBOURS:
            return range(lo, hi)
        return sorted(self._nearest(value, lo, hi))

    def _nearest(self, value: float, lo: int, hi: int) -> list[int]:
        keys = self.keys
        right = min(max(bisect.bisect_left(keys, value, lo, hi), lo), hi)
        left = right - 1
        found = []
        while len(found) < MAX_NEIGHBOURS and (left >= lo or right < hi):
            if left >= lo and (right >= hi or value - keys[left] <= keys[right] - value):
                found.append(left)
                left -= 1
            else:
                found.append(right)
                right += 1
        return found
