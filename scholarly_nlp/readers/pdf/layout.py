"""Pass 4, layout: columns, bands and reading order of each page.

Consumes a page's non-furniture lines; merges sub/superscripts into their lines, finds the
column gutter, gives each line its column (``L``, ``R``, ``F``) and band, and leaves
``page.lines`` in reading order (a full-width band, then the left column, then the right one)
with ``page.split`` and ``page.edges`` set.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from typing import Optional

import numpy as np

from .model import Line, Page, same_row
from .nearby import SortedLines
from .patterns import FOOTNOTE_MARK


#: At most this many gutter positions are tried on a page (one per point up to a page
#: 16384 pt wide, beyond any real one).
_MAX_GUTTER_CANDIDATES = 8192
#: Lines (of 20 characters or more) a column needs in one band for edges of its own there.
_OWN_EDGE_LINES = 5
#: A mark that may open the line right of it: a footnote's or an affiliation's.
_ROW_MARK_RE = re.compile(rf"(?:{FOOTNOTE_MARK}|[a-z])")
#: A page's gutter this far (pt) from the document's usual one may be another layout's.
_OTHER_GUTTER = 20.0


def layout_pages(pages: list[Page]) -> None:
    """Find each page's column gutter, assign columns and bands, and put its lines in
    reading order (a full-width band, then the left column, then the right one).

    A page whose own text finds no gutter takes one of the document's usual ones where its
    lower part is set in those columns (a first page under a long full-width abstract, in
    REVTeX, carries too much text across the gutter for its own) or its upper part is (the
    end of a reference list above a full-width appendix). Books and journals with mirrored
    margins have two usual gutters, one for odd pages, one for even."""
    texts = [_attach_scripts([l for l in page.lines if not l.role]) for page in pages]
    # a page read sideways (frame.py) holds a float (a landscape table, a full-page figure and
    # its caption), not columns: it has no gutter, and neither gives nor takes a usual one
    splits = [None if page.turn else _column_split(lines, page.width) for lines, page in zip(texts, pages)]
    for index, (page, lines, split) in enumerate(zip(pages, texts, splits)):
        usual = None if page.turn else _usual_split(splits, index)
        if split is None and usual is not None:
            if _columns_below_front_matter(lines, usual):
                split = usual
            else:
                end = _columns_end(lines, usual)
                if end is not None and _one_side_below(lines, usual, end):
                    # one column runs on below the other's end (a reference list's last page):
                    # the page is in columns all the way down
                    _lay_out(page, lines, usual)
                    continue
                if end is not None:
                    _lay_out_zones(page, lines, usual, None, end)
                    continue
                start = _columns_at_foot(lines, usual)
                if start is not None:
                    _lay_out_zones(page, lines, None, usual, start)
                    continue
        elif split is not None and usual is not None and abs(split - usual) > _OTHER_GUTTER:
            # the page's own gutter is not the document's: where its lower part is set in the
            # usual columns, the page is laid out in two zones (a side box by the abstract over
            # the body's columns); from its top, the whole page is
            start = _columns_start(lines, usual)
            if start is not None:
                above = [l for l in lines if l.y0 < start]
                if not above or _column_split(above, page.width) is None:
                    split = usual
                else:
                    _lay_out_zones(page, lines, split, usual, start)
                    continue
        _lay_out(page, lines, split)


def _lay_out(page: Page, text_lines: list[Line], split: Optional[float]) -> None:
    """Assign columns and bands for ``split`` and put the lines in reading order."""
    page.split = split
    _assign_columns(text_lines, page.split)
    if page.split is not None:
        text_lines = _merge_spanning_rows(text_lines)
    boxed = _split_side_by_side(text_lines, page.width)
    page.lines = _reading_order(text_lines, boxed)
    _set_edges(page)


def _lay_out_zones(page: Page, text_lines: list[Line], top_split: Optional[float],
                   bottom_split: Optional[float], start: float) -> None:
    """Lay out the lines above ``start`` with the gutter ``top_split`` (None: one column) and
    those from ``start`` down with ``bottom_split``, read zone by zone; the page's gutter is
    the lower zone's (the body's floats are below), or the upper one's when that has none."""
    top = [l for l in text_lines if l.y0 < start]
    bottom = [l for l in text_lines if l.y0 >= start]
    _assign_columns(top, top_split)
    _assign_columns(bottom, bottom_split)
    if top_split is not None:
        top = _merge_spanning_rows(top)
    if bottom_split is not None:
        bottom = _merge_spanning_rows(bottom)
    ordered = _reading_order(top, _split_side_by_side(top, page.width))
    first_band = max((l.band for l in ordered), default=-1) + 1
    ordered += _reading_order(bottom, _split_side_by_side(bottom, page.width), first_band)
    page.split = bottom_split if bottom_split is not None else top_split
    page.lines = ordered
    _set_edges(page)


def _usual_split(splits: list[Optional[float]], index: int) -> Optional[float]:
    """The gutter page ``index`` should share with the others, when at least half of the
    pages have one. With mirrored margins (odd and even pages agree each on a gutter, 5 pt
    or more apart) that of its side; else the median gutter, when half of all pages have
    it; else that of its side, when more than half of the side's gutters agree on it."""
    found = sorted(s for s in splits if s is not None)
    if len(splits) < 2 or len(found) < 0.5 * len(splits):
        return None
    own = _agreed(sorted(s for s in splits[index % 2::2] if s is not None))
    other = _agreed(sorted(s for s in splits[1 - index % 2::2] if s is not None))
    if own is not None and other is not None and abs(own - other) > 5:
        return own
    middle = found[len(found) // 2]
    if sum(1 for s in found if abs(s - middle) <= 5) >= 0.5 * len(splits):
        return middle
    return own


def _agreed(found: list[float]) -> Optional[float]:
    """The median of sorted gutters when more than half of them lie within 5 pt of it, else
    None."""
    if not found:
        return None
    middle = found[len(found) // 2]
    return middle if sum(1 for s in found if abs(s - middle) <= 5) > 0.5 * len(found) else None


def _columns_below_front_matter(lines: list[Line], split: float) -> bool:
    """Whether the page's lower part, from some line that keeps to one side of ``split``
    down, is set in two columns there (little crosses the gutter, both sides carry text) and
    carries a quarter of the page's text at least: front matter, or a figure across the page,
    may sit above."""
    return _columns_start(lines, split) is not None


def _columns_end(lines: list[Line], split: float) -> Optional[float]:
    """The bottom of the last line down to which the page, from its top, is set in two
    columns at ``split`` (a quarter of its text at least), or None: the end of a two-column
    reference list above a full-width appendix. A short line set apart below its column (the
    appendix's own heading, "Appendix. Examined material.") is the lower zone's."""
    end = _two_column_run(lines, split, upward=True)
    if end is None:
        return None
    run = sorted((l for l in lines if l.y1 <= end + 0.5), key=lambda l: l.y0)
    while len(run) > 1:
        last = run[-1]
        side = [l for l in run[:-1] if (l.x1 <= split + 2) == (last.x1 <= split + 2)]
        if not side or last.y0 - side[-1].y1 <= 2 * max(last.y1 - last.y0, 1.0):
            break
        run.pop()
    return max(l.y1 for l in run)


def _one_side_below(lines: list[Line], split: float, end: float) -> bool:
    """Whether every line below ``end`` keeps to one side of ``split``: one column running on
    below the other's end, not full-width matter (an appendix, a table) under the columns."""
    sides = {_side(l, split) for l in lines if l.y0 >= end}
    return sides == {"L"} or sides == {"R"}


def _side(line: Line, split: float) -> str:
    """"L" or "R" for a line keeping to that side of ``split`` (2 pt of slack), "" across it."""
    return "L" if line.x1 <= split + 2 else "R" if line.x0 >= split - 2 else ""


def _columns_start(lines: list[Line], split: float) -> Optional[float]:
    """The top of the first line from which down the page is set in two columns at ``split``
    (as :func:`_columns_below_front_matter` asks), or None."""
    return _two_column_run(lines, split)


def _columns_at_foot(lines: list[Line], split: float) -> Optional[float]:
    """The top of the page's last rows when they are set in two columns at ``split`` under
    full-width matter, too little text for :func:`_columns_start` (Elsevier's first page: the
    introduction's first lines beside the corresponding author's note, under a full-width
    table of contents), or None. From the bottom up no line crosses ``split`` and each side
    holds three lines of running text at least as wide as half of its column."""
    lines = sorted((l for l in lines if len(l.text) >= 8), key=lambda l: -l.y1)
    if not lines:
        return None
    page_left, page_right = min(l.x0 for l in lines), max(l.x1 for l in lines)
    left_width, right_width = split - page_left, page_right - split
    run: list[Line] = []
    for line in lines:
        if not _side(line, split):
            break
        run.append(line)
    if len(run) == len(lines):
        return None  # nothing full width above: the page's own columns would have been found

    def prose(line: Line, width: float) -> bool:
        return len(line.text) >= 20 and line.x1 - line.x0 >= 0.5 * width

    left = sum(1 for l in run if _side(l, split) == "L" and prose(l, left_width))
    right = sum(1 for l in run if _side(l, split) == "R" and prose(l, right_width))
    if min(left, right) < 3:
        return None
    return min(l.y0 for l in run)


def _two_column_run(lines: list[Line], split: float, upward: bool = False) -> Optional[float]:
    """Going down the page (``upward``: up it), the first line keeping to one side of ``split``
    from which on the text is set in two columns there: a tenth of it at most crosses, both
    sides carry a fifth of it, and it is a quarter of the page's text at least. That line's
    top (``upward``: its bottom), or None."""
    lines = sorted((l for l in lines if len(l.text) >= 8), key=(lambda l: -l.y1) if upward else (lambda l: l.y0))
    # weights of the lines from each one on: left, right, across
    below = [(0, 0, 0)] * (len(lines) + 1)
    for i in range(len(lines) - 1, -1, -1):
        line, (left, right, across) = lines[i], below[i + 1]
        if line.x1 <= split + 2:
            left += len(line.text)
        elif line.x0 >= split - 2:
            right += len(line.text)
        else:
            across += len(line.text)
        below[i] = (left, right, across)
    page_total = sum(below[0])
    for i, line in enumerate(lines):
        if not (line.x1 <= split + 2 or line.x0 >= split - 2):
            continue
        left, right, across = below[i]
        total = left + right + across
        if total < 0.25 * page_total:
            return None
        if across <= 0.1 * total and min(left, right) >= 0.2 * total:
            return line.y1 if upward else line.y0
    return None


def _attach_scripts(lines: list[Line]) -> list[Line]:
    """Merge sub- and superscript fragments (pdfium often puts them on lines of their own)
    into the line they are raised or lowered from."""
    scripts = [l for l in lines if len(l.words) <= 2 and len(l.text) <= 6]
    if not scripts:
        return lines
    hosts = _ScriptHosts(lines)
    for script in scripts:
        host = hosts.find(script)
        if host is not None:
            hosts.absorb(host, script)
    return hosts.finish(lines)


class _ScriptHosts:
    """The lines a script fragment may join, indexed by their top.

    A host keeps its words' box up to date as it absorbs fragments, but its words are
    sorted and its text rebuilt once, at the end: merging one by one cost a sort per
    fragment, quadratic on a page of thousands of one-letter fragments. A line shorter
    than four characters never hosts (it could only grow by hosting), so it is not indexed.
    """

    def __init__(self, lines: list[Line]) -> None:
        self.lines = lines
        self.by_top = SortedLines((l for l in lines if len(l.text) >= 4), key=lambda l: l.y0)
        self.every_top: Optional[SortedLines] = None  # every line, for a mark's row (built when asked)
        self.merged: set[int] = set()
        self.pending: dict[int, list] = {}

    def find(self, script: Line) -> Optional[Line]:
        """The nearest line ``script`` sits on (the first in top order on a tie), or None."""
        mid = (script.y0 + script.y1) / 2
        best, best_key = None, None
        for index in self.by_top.around(mid, 40, 10):
            line = self.by_top.lines[index]
            if line is script or id(line) in self.merged or not _can_host(line, script, mid):
                continue
            key = (abs(mid - (line.y0 + line.y1) / 2), index)
            if best_key is None or key < best_key:
                best, best_key = line, key
        if best is None and _ROW_MARK_RE.fullmatch(script.text):
            return self._opened_line(script, mid)
        return best

    def _opened_line(self, script: Line, mid: float) -> Optional[Line]:
        """The line a mark hung left of it opens ("¹ Instituto de ...": the line starts just
        right of the mark, its top level with the mark's), or None."""
        best, best_key = None, None
        for index in self.by_top.around(mid, 40, 10):
            line = self.by_top.lines[index]
            if line is script or id(line) in self.merged or not _can_host(line, script, mid, before=True):
                continue
            key = (abs(line.y0 - script.y0), line.x0 - script.x1, index)
            if best_key is None or key < best_key:
                best, best_key = line, key
        return best if best is not None and self._opens_row(script, mid, best) else None

    def _opens_row(self, script: Line, mid: float, host: Line) -> bool:
        """Whether ``script`` is raised above ``host``'s baseline, as a footnote's or an
        affiliation's mark is (a subscript is not), with nothing on its row less than two of
        ``host``'s sizes left of it (a formula's scripts sit between the pieces of theirs, one
        letter long as they may be; the other column, a table's cells or side-by-side
        affiliations are set further apart)."""
        if script.base > host.base - 0.2 * max(host.y1 - host.y0, 1.0):
            return False
        if self.every_top is None:
            self.every_top = SortedLines(self.lines, key=lambda l: l.y0)
        reach = 2 * max(host.size, 1.0)
        for index in self.every_top.around(mid, 40, 10):
            line = self.every_top.lines[index]
            if line is not script and line.y0 <= mid <= line.y1 and script.x0 - reach <= line.x1 <= script.x0 + 1:
                return False
        return True

    def absorb(self, host: Line, script: Line) -> None:
        """Give ``script``'s words (and those it absorbed) to ``host``, growing its box now,
        but not leftward: a mark it opens with would bring the next row's mark below it into
        its reach (the box is its words' again at :meth:`finish`)."""
        host.x1 = max(host.x1, script.x1)
        host.y0, host.y1 = min(host.y0, script.y0), max(host.y1, script.y1)
        words = self.pending.setdefault(id(host), [])
        words.extend(script.words)
        words.extend(self.pending.pop(id(script), ()))
        self.merged.add(id(script))

    def finish(self, lines: list[Line]) -> list[Line]:
        """Sort each host's words in (its baseline unchanged) and drop the merged fragments."""
        for line in lines:
            added = self.pending.get(id(line))
            if added:
                base = line.base
                line.words = sorted(line.words + added, key=lambda w: w.x0)
                line.__post_init__()
                line.base = base
        return [l for l in lines if id(l) not in self.merged]


def _can_host(line: Line, script: Line, mid: float, before: bool = False) -> bool:
    """Whether ``line`` is bigger than ``script`` and overlaps it horizontally and vertically
    (``before``: ``script`` ends within 3 pt left of where ``line`` starts)."""
    if line.size < 1.1 * script.size:
        return False
    if before:
        if not (script.x0 < line.x0 and line.x0 - 3 <= script.x1):
            return False
    elif not (line.x0 - 3 <= script.x0 <= line.x1 + 3):
        return False
    height = line.y1 - line.y0
    return line.y0 - 0.3 * height <= mid <= line.y1 + 0.3 * height


def _column_split(lines: list[Line], width: float) -> Optional[float]:
    """The x of a column gutter that (almost) no text crosses, or None for one column."""
    lines = [l for l in lines if len(l.text) >= 8]
    if len(lines) < 6:
        return None
    x0 = np.array([l.x0 for l in lines])
    x1 = np.array([l.x1 for l in lines])
    weight = np.array([len(l.text) for l in lines], dtype=float)
    xs = _gutter_candidates(width)
    # each line adds its weight to a run of candidates: summed with a difference array,
    # O(lines log bins + bins) where a lines x bins matrix took GiBs on a huge page
    crossing = _run_sums(xs, weight, np.searchsorted(xs - 2, x0, side="right"), np.searchsorted(xs + 2, x1))
    left = _run_sums(xs, weight, np.searchsorted(xs, x1), np.full(len(lines), len(xs)))
    right = _run_sums(xs, weight, np.zeros(len(lines), dtype=int), np.searchsorted(xs, x0, side="right"))
    total = weight.sum()
    # full-width front matter (title, affiliations) may cross the gutter, and a side column
    # (a journal's margin notes) may be narrow; but the columns must carry most text
    ok = (left >= 0.08 * total) & (right >= 0.08 * total) & (crossing <= 0.5 * (left + right))
    if not ok.any():
        return None
    best = crossing[ok].min()
    candidates = ok & (crossing <= best)
    return float(_widest_run_middle(xs, candidates))


def _gutter_candidates(width: float) -> np.ndarray:
    """The x positions tried as a gutter: every point of the page's middle half, or at most
    ``_MAX_GUTTER_CANDIDATES`` evenly spaced ones on an absurdly wide page."""
    step = max(1.0, 0.5 * width / _MAX_GUTTER_CANDIDATES)
    return np.arange(0.25 * width, 0.75 * width, step)


def _run_sums(xs: np.ndarray, weight: np.ndarray, starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
    """For each candidate, the summed weight of the lines whose run ``starts[i]:stops[i]``
    of candidate indices covers it."""
    delta = np.zeros(len(xs) + 1)
    keep = starts < stops
    np.add.at(delta, starts[keep], weight[keep])
    np.add.at(delta, stops[keep], -weight[keep])
    return np.cumsum(delta[:-1])


def _widest_run_middle(xs: np.ndarray, mask: np.ndarray) -> float:
    """The middle x of the longest run of True values in ``mask``."""
    best_len, best_mid, run_start = 0, float(xs[np.argmax(mask)]), None
    for i, flag in enumerate(list(mask) + [False]):
        if flag and run_start is None:
            run_start = i
        elif not flag and run_start is not None:
            if i - run_start > best_len:
                best_len, best_mid = i - run_start, float((xs[run_start] + xs[i - 1]) / 2)
            run_start = None
    return best_mid


def _assign_columns(lines: list[Line], split: Optional[float]) -> None:
    """Put each line in the left or right column, or full width when it clearly spans both."""
    if split is None:
        for line in lines:
            line.col = "F"
        return
    for line in lines:
        if split - line.x0 >= 15 and line.x1 - split >= 15:
            line.col = "F"
        else:
            line.col = "L" if (line.x0 + line.x1) / 2 < split else "R"
    _continue_full_width(lines)


def _split_side_by_side(lines: list[Line], width: float) -> set[int]:
    """Two columns of their own inside a page's full-width part (Elsevier's "ARTICLE INFO |
    ABSTRACT" box over a page set otherwise): where at least four long lines start at one x
    left of the page's middle, rows next to each other, and no line in those rows crosses
    that x, the lines left of it become the left column and the others the right one.

    The page's own gutter, if any, is elsewhere: the box's left lines may have been put in
    the left column and its right ones full width; both are put right here. Returns the ids
    of the box's lines (a band of their own), or an empty set."""
    text = [l for l in lines if l.col in ("F", "L")]
    starts = Counter(round(l.x0) for l in text if _prose_wide(l, width))
    for x, _ in starts.most_common(4):
        if not 0.2 * width < x < 0.6 * width:
            continue
        region = _side_by_side_region(text, float(x), width)
        if region is not None:
            left, right = region
            for line in left:
                line.col = "L"
            for line in right:
                line.col = "R"
            return {id(line) for line in left + right}
    return set()


def _side_by_side_region(lines: list[Line], x: float, width: float) -> Optional[tuple[list[Line], list[Line]]]:
    """The (left, right) lines of the rows around the lines of running text that start at
    ``x`` (on a page ``width`` wide), when no line of those rows crosses it and each side
    has enough lines; else None."""
    anchors = sorted((l for l in lines if abs(l.x0 - x) <= 1.5 and _prose_wide(l, width)), key=lambda l: l.y0)
    if len(anchors) < 4:
        return None
    size = max(statistics.median(l.size for l in anchors), 1.0)
    # the longest run of anchors each at most three lines below the last
    runs: list[list[Line]] = [[anchors[0]]]
    for line in anchors[1:]:
        if line.y0 - runs[-1][-1].y1 <= 3 * size:
            runs[-1].append(line)
        else:
            runs.append([line])
    run = max(runs, key=len)
    if len(run) < 4:
        return None
    top, bottom = run[0].y0 - 3.5 * size, run[-1].y1 + 1.5 * size
    rows = [l for l in lines if l.y0 >= top and l.y1 <= bottom]
    left = [l for l in rows if l.x1 <= x - 4]
    right = [l for l in rows if l.x0 >= x - 1.5]
    if len(left) + len(right) != len(rows) or len(left) < 2:
        return None
    # a column of its own, not numbers or labels hung in the margin of a list ("23." before
    # a reference, "Input:" before an example)
    if max(l.x1 for l in left) - min(l.x0 for l in left) < 0.12 * width:
        return None
    return left, right


def _prose_wide(line: Line, width: float) -> bool:
    """A line of running text across much of a page ``width`` wide (not a table cell)."""
    return len(line.text) >= 40 and line.x1 - line.x0 >= 0.35 * width


def _continue_full_width(lines: list[Line]) -> None:
    """The short last line of a full-width caption or paragraph stays with it: same size,
    same left edge, at the normal line distance below a full-width line."""
    last_full: Optional[Line] = None
    for line in sorted(lines, key=lambda l: l.y0):
        if line.col == "F":
            last_full = line
        elif (
            last_full is not None
            and abs(line.x0 - last_full.x0) < 2
            and abs(line.size - last_full.size) < 0.5
            and 0 < line.base - last_full.base < 1.6 * max(line.size, 1.0)
        ):
            line.col = "F"
            last_full = line


def _merge_spanning_rows(lines: list[Line]) -> list[Line]:
    """Re-join segments on the row of a full-width line that were cut off at a wide word
    gap (letter-spaced titles in old PDFs), so the row reads as one full-width line."""
    merged: set[int] = set()
    order = {id(l): i for i, l in enumerate(lines)}
    rows = SortedLines(lines, key=lambda l: l.base)
    # same_row's tolerance grows with the larger size of the two lines
    largest = max((l.size for l in lines), default=1.0)
    for line in [l for l in lines if l.col == "F"]:
        if id(line) in merged:
            continue
        reach = 1.001 * 0.3 * max(line.size, largest, 1.0) + 1e-6  # same_row decides exactly
        row = sorted(map(rows.lines.__getitem__, rows.around(line.base, reach, reach)), key=lambda l: order[id(l)])
        grown = True
        while grown:
            grown = False
            for other in row:
                if other is line or id(other) in merged or not same_row(line, other):
                    continue
                # measured from the text after a mark that opens a piece ("‡ Speech Technology"
                # beside "† Computer Science ...": two affiliations, not a letter-spaced row)
                gap = max(_text_x0(other) - line.x1, _text_x0(line) - other.x1)
                if (
                    gap < 3 * max(line.size, other.size, 1.0)
                    and abs(other.size - line.size) <= 0.1 * line.size
                ):
                    base = line.base
                    line.words = sorted(line.words + other.words, key=lambda w: w.x0)
                    line.__post_init__()
                    line.base = base
                    merged.add(id(other))
                    grown = True
    return [l for l in lines if id(l) not in merged]


def _text_x0(line: Line) -> float:
    """Where ``line``'s text starts: after a footnote's or an affiliation's mark it opens with,
    raised above the next word (a number on the row's baseline is text)."""
    words = line.words
    if len(words) > 1 and _ROW_MARK_RE.fullmatch(words[0].text):
        mark, text = words[0], words[1]
        if mark.y1 < text.y1 - 0.2 * max(text.y1 - text.y0, 1.0):
            return text.x0
    return line.x0


def _reading_order(lines: list[Line], boxed: frozenset[int] | set[int] = frozenset(),
                   first_band: int = 0) -> list[Line]:
    """Order lines: bands top to bottom; within a column band, left column then right column.
    The ``boxed`` lines (ids: a side-by-side box in a full-width part) are a band of their own.
    Bands are numbered from ``first_band``."""
    ordered: list[Line] = []
    band: list[Line] = []
    band_index = first_band
    for line in sorted(lines, key=lambda l: l.y0):
        is_full = line.col == "F"
        if band and ((band[0].col == "F") != is_full or (id(band[-1]) in boxed) != (id(line) in boxed)):
            ordered.extend(_order_band(band, band_index))
            band, band_index = [], band_index + 1
        band.append(line)
    if band:
        ordered.extend(_order_band(band, band_index))
    return ordered


def _order_band(band: list[Line], index: int) -> list[Line]:
    """Order one band's lines: per column, rows top to bottom, segments of a row left to right."""
    out: list[Line] = []
    for col in ("F", "L", "R"):
        lines = [l for l in band if l.col == col]
        for line in lines:
            line.band = index
        out.extend(_rows(lines))
    return out


def _rows(lines: list[Line]) -> list[Line]:
    """Sort lines into rows (shared baseline) top to bottom, each row left to right."""
    out: list[Line] = []
    row: list[Line] = []
    for line in sorted(lines, key=lambda l: l.base):
        if row and line.base - row[0].base > 0.3 * max(row[0].size, 1.0):
            out.extend(sorted(row, key=lambda l: l.x0))
            row = []
        row.append(line)
    out.extend(sorted(row, key=lambda l: l.x0))
    return out


def _set_edges(page: Page) -> None:
    """The page's column edges, and those of each column's part in a band with
    ``_OWN_EDGE_LINES`` lines or more, a third of them from one left edge (where the column has
    parts in other bands too)."""
    page.edges = _column_edges(page.lines)
    bands: dict = {}
    for line in page.lines:
        if len(line.text) >= 20:
            bands.setdefault((line.col, line.band), []).append(line)
    columns = Counter(col for col, _ in bands)
    page.band_edges = {key: _edges(group) for key, group in bands.items()
                       if len(group) >= _OWN_EDGE_LINES and columns[key[0]] > 1 and _shared_start(group)}


def _column_edges(lines: list[Line]) -> dict:
    """Left edge (most common start) and right edge of the text of each column; full-width
    lines on a two-column page span from the left column's edge to the right one's."""
    groups: dict = {}
    for line in lines:
        if len(line.text) >= 20:
            groups.setdefault(line.col, []).append(line)
    edges = {col: _edges(group) for col, group in groups.items()}
    if "L" in edges and "R" in edges:
        edges["F"] = (edges["L"][0], edges["R"][1])
    return edges


def _shared_start(group: list[Line]) -> bool:
    """Whether a third of ``group``'s lines, three at least, start at one x (running text or
    a list's items, not the cells of a table or a title block's centred lines)."""
    most = Counter(round(l.x0) for l in group).most_common(1)[0][1]
    return most >= max(3, len(group) / 3)


def _edges(group: list[Line]) -> tuple[float, float]:
    """The most common left start of ``group``'s lines and the right end nine in ten reach."""
    left = Counter(round(l.x0) for l in group).most_common(1)[0][0]
    rights = sorted(l.x1 for l in group)
    return float(left), rights[int(0.9 * (len(rights) - 1))]
