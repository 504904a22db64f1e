"""Recognising figure and table mentions ("Fig. 3a", "Figures 2 and 3", "Table 1").

Shared by every reader: GROBID sometimes emits ``<ref type="figure">`` without a target and
the PDF reader finds mentions in plain text; both resolve them to a figure by its label.
"""

from __future__ import annotations

import re
from typing import Iterable, Iterator, Optional, Union

# "Figure", "Fig.", "Figs.", "Table", "Tab.", "Tables"; then a label such as 3, 3a, 3(b), A.1, S2.
MENTION_PATTERN = re.compile(
    r"\b(?P<word>Fig(?:ure)?s?\.?|Tab(?:le)?s?\.?)\s*"
    r"(?P<label>[A-Z]?\d+(?:\.\d+)?)(?P<sub>[a-z]\b|\([a-z]\))?",
    re.IGNORECASE,
)
LABEL_PATTERN = re.compile(r"([A-Z]?\d+(?:\.\d+)?)", re.IGNORECASE)


def mention_kind(word: str) -> str:
    """'figure' or 'table' for the word that introduces a mention ("Fig.", "Tables")."""
    return "table" if word.lower().startswith("tab") else "figure"


def find_mentions(text: str) -> Iterator[tuple[int, int, str, str]]:
    """Yield (start, end, kind, label) for each figure/table mention in plain text."""
    for match in MENTION_PATTERN.finditer(text):
        yield match.start(), match.end(), mention_kind(match.group("word")), match.group("label")


def label_of(text: str) -> str:
    """The first label-looking token of a caption head or ``<label>`` ("Figure 3:" -> "3")."""
    match = LABEL_PATTERN.search(text or "")
    return match.group(1) if match else ""


def mention_key(text: str, kind_hint: Optional[str] = None) -> Optional[tuple[str, str]]:
    """(kind, lowercased label) a mention's text names, or None when it names no label.

    The kind comes from the mention's wording, else from ``kind_hint`` (the TEI ref type);
    a bare label ("(3, 4)") uses the hint alone.
    """
    match = MENTION_PATTERN.search(text)
    if match:
        kind, label = mention_kind(match.group("word")), match.group("label")
    else:
        label = label_of(text)
        kind = kind_hint or "figure"
    return (kind, label.lower()) if label else None


class FigureLabels:
    """Figures by (kind, lowercased label), built once, so that resolving a mention costs
    one dictionary lookup however many figures the paper has (the first figure wins)."""

    def __init__(self, figures: Iterable[tuple[str, str, str]] = ()) -> None:
        self._ids: dict[tuple[str, str], str] = {}
        for fig_id, kind, label in figures:
            self.add(fig_id, kind, label)

    def add(self, fig_id: str, kind: str, label: str) -> None:
        """Index one figure (id, kind, label); an earlier figure with the same kind and label stays."""
        if label:
            self._ids.setdefault((kind, label.lower()), fig_id)

    def resolve(self, text: str, kind_hint: Optional[str] = None) -> Optional[str]:
        """The id of the figure the mention's text names, or None (see :func:`resolve_mention`)."""
        key = mention_key(text, kind_hint)
        return self._ids.get(key) if key is not None else None


def resolve_mention(
    text: str, figures: Union[FigureLabels, Iterable[tuple[str, str, str]]], kind_hint: Optional[str] = None
) -> Optional[str]:
    """Resolve a mention's text to a figure id.

    ``figures`` is a :class:`FigureLabels` index (resolve many mentions against it) or
    yields (id, kind, label). The kind comes from the mention's wording, else from
    ``kind_hint`` (the TEI ref type). A bare label ("(3, 4)") uses the hint alone.
    Returns the first figure of that kind whose label matches, or None.
    """
    index = figures if isinstance(figures, FigureLabels) else FigureLabels(figures)
    return index.resolve(text, kind_hint)
