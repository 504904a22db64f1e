"""Recognising figure and table mentions ("Fig. 3a", "Figures 2 and 3", "Table 1").

Shared by every reader: GROBID sometimes emits ``<ref type="figure">`` without a target and
the PDF reader finds mentions in plain text; both resolve them to a figure by its label.
"""

from __future__ import annotations

import re
from typing import Iterable, Iterator, Optional

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


def resolve_mention(
    text: str, figures: Iterable[tuple[str, str, str]], kind_hint: Optional[str] = None
) -> Optional[str]:
    """Resolve a mention's text to a figure id.

    ``figures`` yields (id, kind, label). The kind comes from the mention's wording, else
    from ``kind_hint`` (the TEI ref type). A bare label ("(3, 4)") uses the hint alone.
    Returns the first figure of that kind whose label matches, or None.
    """
    match = MENTION_PATTERN.search(text)
    if match:
        kind, label = mention_kind(match.group("word")), match.group("label")
    else:
        label = label_of(text)
        kind = kind_hint or "figure"
    if not label:
        return None
    label = label.lower()
    for fig_id, fig_kind, fig_label in figures:
        if fig_kind == kind and fig_label.lower() == label:
            return fig_id
    return None
