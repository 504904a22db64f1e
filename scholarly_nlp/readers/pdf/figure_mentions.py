"""Inline references, figure and table mentions: "Fig. 3", "Tables 2 and 4", "Figure 3a",
each resolved to its caption's figure id when the paper has that label.

Consumes a paragraph's text and the (kind, label) -> id map; produces :class:`InlineRef` s.
"""

from __future__ import annotations

import re
from typing import Optional

from ...paper import InlineRef
from ...text.mentions import find_mentions


_LIST_CONTINUATION_RE = re.compile(
    r"\s*(?:,|and|&|or|to|\u2013|-)\s*(?P<label>[A-Z]?\d{1,3}[a-z]?)\b"
)


def figure_refs(text: str, targets: dict[tuple[str, str], str]) -> list[InlineRef]:
    """Figure and table mentions, one per label ("Figs. 2 and 3" gives two)."""
    refs = []
    for start, end, kind, label in find_mentions(text):
        refs.append(InlineRef(start, end, kind, _resolve(targets, kind, label)))
        pos = end
        while True:
            more = _LIST_CONTINUATION_RE.match(text, _skip_subpanel(text, pos))
            if more is None:
                break
            refs.append(
                InlineRef(
                    more.start("label"),
                    more.end("label"),
                    kind,
                    _resolve(targets, kind, more.group("label")),
                )
            )
            pos = more.end()
    return refs


_SUBPANEL = re.compile(r"(?:[a-z]\b|\([a-z]\))")


def _skip_subpanel(text: str, pos: int) -> int:
    """Skip a sub-panel letter right after a label ("3a", "3(b)")."""
    match = _SUBPANEL.match(text, pos)
    return match.end() if match else pos


def _resolve(targets: dict[tuple[str, str], str], kind: str, label: str) -> Optional[str]:
    label = label.lower()
    found = targets.get((kind, label))
    if found is None and label[-1:].isalpha() and label[:-1]:
        found = targets.get((kind, label[:-1]))
    return found
