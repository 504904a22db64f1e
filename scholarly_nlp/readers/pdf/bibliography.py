"""The bibliography: the reference list's lines cut into entries, each read into a BibEntry.

Consumes the blocks the classification set aside after the "References" heading; produces
one :class:`ParsedReference` per entry, in printed order, with ids ``b0``, ``b1``, ...

Entries are cut by the first signal the list gives, tried in this order:

1. **numbers**: rows opening with "[N]", "N." or "N " where N runs 1, 2, 3, ... (a row whose
   number breaks the run, a volume or a page, continues the entry before);
2. **hanging indent**: in each column, rows at its left edge open entries and indented rows
   continue them (most author-year styles);
3. **first-line indent**: the reverse;
4. **gaps**: a row set apart by more than the usual line advance, or one after a row that
   ends short with a full stop.

Across column and page breaks an entry goes on while its next row is a continuation.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass
from itertools import pairwise
from typing import Optional

from .dehyphenation import Dehyphenator
from .model import Line, VBlock, same_row
from .reference_parser import ParsedReference, entry_label, label_style, opens_with_name, parse_reference


#: Indents (in points) that tell a hanging or first-line indent from ragged left edges.
_MIN_INDENT, _MAX_INDENT = 3.0, 45.0
#: A numbered list is taken as numbered when this many rows continue the 1, 2, 3 run.
_MIN_NUMBERED = 3
#: Entries longer than this are not one reference (a paragraph read as the list's end).
_MAX_ENTRY_CHARS = 1500


@dataclass(eq=False)
class _Row:
    """The lines of one printed row of the list (a justified row may come as several)."""

    lines: list[Line]
    opens_block: bool = False  # its first line opens a visual block (a gap the page set)

    @property
    def first(self) -> Line:
        return self.lines[0]

    @property
    def text(self) -> str:
        return " ".join(line.text for line in self.lines)

    @property
    def x0(self) -> float:
        return min(line.x0 for line in self.lines)

    @property
    def x1(self) -> float:
        return max(line.x1 for line in self.lines)

    @property
    def key(self) -> tuple[int, str]:
        """(page, column): the rows an indent is measured against."""
        return self.first.page, self.first.col


def read_bibliography(blocks: list[VBlock], dehyphenator: Dehyphenator) -> list[ParsedReference]:
    """The parsed entries of the reference list in ``blocks``; implausible pieces dropped."""
    rows = _rows(blocks)
    if not rows:
        return []
    numbered = _numbered_starts(rows)
    starts = numbered if numbered is not None else _layout_starts(rows)
    entries = []
    for lines in _cut(rows, starts):
        text = re.sub(r"\s+", " ", dehyphenator.join(lines)).strip()
        if not text or len(text) > _MAX_ENTRY_CHARS:
            continue
        parsed = parse_reference(text, numbered=numbered is not None)
        if parsed.plausible:
            entries.append(parsed)
    return entries


def numbered_labels(entries: list[ParsedReference]) -> bool:
    """Whether the entries carry printed numbers (so "[12]" in the text cites entry 12)."""
    return sum(1 for e in entries if e.label) >= min(_MIN_NUMBERED, max(1, len(entries)))


def _rows(blocks: list[VBlock]) -> list[_Row]:
    rows: list[_Row] = []
    for block in blocks:
        opens_block = True
        for line in block.lines:
            if not line.text.strip():
                continue
            if rows and rows[-1].first.page == line.page and same_row(rows[-1].lines[-1], line):
                rows[-1].lines.append(line)
            else:
                rows.append(_Row([line], opens_block))
            opens_block = False
    return rows


def _numbered_starts(rows: list[_Row]) -> Optional[set[int]]:
    """Indices of the rows that open numbered entries, or None when the list is not numbered."""
    starts: set[int] = set()
    expected: Optional[int] = None
    style: Optional[str] = None
    for index, row in enumerate(rows):
        label = entry_label(row.text)
        if label is None:
            continue
        number = int(label)
        # one list numbers its entries one way: "[8]", "(8)", "8." or "8"
        if style is not None and label_style(row.text) != style:
            continue
        if expected is None:
            if number <= 3:
                expected = number
            else:
                continue
        # a lost row or two may skip a number; a volume or a page number is far off the run
        if expected <= number <= expected + 2:
            starts.add(index)
            expected = number + 1
            style = label_style(row.text)
        elif number == expected - 1 and starts and abs(row.x0 - rows[max(starts)].x0) < _MIN_INDENT:
            starts.add(index)  # a number printed twice opens an entry of its own
    # a few rows that happen to open with 1, 2, 3 (page numbers, volumes) do not number a list
    return starts if len(starts) >= max(_MIN_NUMBERED, 0.1 * len(rows)) else None


def _layout_starts(rows: list[_Row]) -> set[int]:
    """Indices of the rows that open entries of an unnumbered list, from indents or gaps,
    decided per column (two lists of one paper may be set differently)."""
    by_column: dict[tuple[int, str], list[int]] = {}
    for index, row in enumerate(rows):
        by_column.setdefault(row.key, []).append(index)
    gap_starts = _gap_starts(rows)
    starts: set[int] = set()
    for indices in by_column.values():
        left = min(rows[i].x0 for i in indices)
        indented = {i for i in indices if _MIN_INDENT <= rows[i].x0 - left <= _MAX_INDENT}
        flush = {i for i in indices if rows[i].x0 - left < _MIN_INDENT}
        if indented and len(indented) >= 0.15 * len(indices):
            # hanging indent (flush rows open entries) or first-line indent (indented rows
            # do): the reading whose openers look more like the start of a reference wins
            first_line = indented | ({indices[0]} if indices[0] == 0 else set())
            starts |= flush if _opener_score(rows, flush) >= _opener_score(rows, first_line) else first_line
        else:
            starts |= gap_starts & set(indices)
    return starts | {0}


def _opener_score(rows: list[_Row], starts: set[int]) -> float:
    """How much the rows in ``starts`` look like entry openers: the row before (in the same
    column) stops short of the column's right edge and ends like an entry (a full stop, a
    DOI), as an entry's last row does, and the row opens with a capital, a digit or a bracket."""
    if not starts:
        return 0.0
    right: dict[tuple[int, str], float] = {}
    for row in rows:
        right[row.key] = max(right.get(row.key, 0.0), row.x1)
    short = capital = ended = counted = 0
    for index in starts:
        first = rows[index].text[:1]
        capital += first.isupper() or first.isdigit() or first in "[(\u201c\""
        ended += index == 0 or _ends_entry(rows[index - 1].text)
        if index and rows[index - 1].key == rows[index].key:
            counted += 1
            short += rows[index - 1].x1 < right[rows[index].key] - 10
    return (short / counted if counted else 0.0) + (capital + ended) / len(starts)


def _gap_starts(rows: list[_Row]) -> set[int]:
    """Rows after a wider gap than the list's usual advance, or after a short row that ends
    like an entry (a full stop, a DOI) or before one that opens with an author's name, or
    opening a block of their own with a name after a row that ends like an entry."""
    advances = [b.first.y0 - a.first.y0 for a, b in pairwise(rows)
                if a.key == b.key and b.first.y0 > a.first.y0]
    usual = statistics.median(advances) if advances else 0.0
    right = {}
    for row in rows:
        right[row.key] = max(right.get(row.key, 0.0), row.x1)
    starts = {0}
    for index, (prev, row) in enumerate(pairwise(rows), start=1):
        gap = row.first.y0 - prev.first.y0
        if prev.key == row.key and usual and gap > 1.3 * usual:
            starts.add(index)
        elif prev.x1 < right[prev.key] - 15 and (
            (_ends_entry(prev.text) and row.text[:1].isupper()) or opens_with_name(row.text)
        ):
            starts.add(index)
        elif row.opens_block and prev.key == row.key and _ends_entry(prev.text) and opens_with_name(row.text):
            # a gap under the 1.3 advances that still set the row apart as a block of its own,
            # after a last row that reaches the edge (a DOI): an entry opening with a name
            starts.add(index)
    return starts


def _ends_entry(text: str) -> bool:
    """Whether a row can end an entry: a full stop, or a DOI or URL."""
    text = text.rstrip()
    return text.endswith((".", ")")) or "/" in text.split()[-1] or text.lower().startswith("doi")


def _cut(rows: list[_Row], starts: set[int]) -> list[list[Line]]:
    """The lines of each entry (rows before the first start are dropped: a stray heading)."""
    entries: list[list[Line]] = []
    for index, row in enumerate(rows):
        if index in starts:
            entries.append(list(row.lines))
        elif entries:
            entries[-1].extend(row.lines)
    return entries
