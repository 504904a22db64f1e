"""Inline references, citation markers: "(Smith et al., 2019; Lee, 2020)" (one marker per
item), "Smith (2019)", and "[12]" when the bibliography is numbered.

Consumes a paragraph's text; produces ``bibr`` :class:`InlineRef` s (not linked to entries).
"""

from __future__ import annotations

import re
from typing import Optional

from ...paper import InlineRef


_CITATION_PAREN_RE = re.compile(r"\(([^()]{4,400})\)")
_YEAR_RE = re.compile(r"\b(?:1[89]\d\d|20\d\d)[a-z]?\b")
_SURNAME = r"[A-Z][^\W\d_]*(?:[-'\u2019][^\W\d_]+)*\.?"
_CITE_ITEM_RE = re.compile(
    rf"(?P<cite>(?:(?:de|van|von|der|den|la|le|di|da|del)\s+)?{_SURNAME}"
    rf"(?:(?:\s+|,\s*)(?:and|&|et\s+al\.?|(?:de|van|von|der|den|la|le|di|da|del)\b|{_SURNAME}))*"
    r",?\s+(?:19|20)\d\d[a-z]?(?:\s*,\s*(?:(?:19|20)\d\d[a-z]?|[a-z]\b))*)"
    r"\s*(?:,\s*(?:p|pp|page|pages|chapter|ch|sec|section)\.?\s*[\d\u2013-]+)?\s*$"
)
_NARRATIVE_CITE_RE = re.compile(
    r"\b[A-Z][^\W\d_'\u2019-]*(?:[-'\u2019][^\W\d_]+)*"
    r"(?:\s+(?:et\s+al\.?|and\s+[A-Z][^\W\d_]+|&\s+[A-Z][^\W\d_]+))?"
    r"\s+\((?:(?:19|20)\d\d[a-z]?)(?:\s*[,;]\s*(?:(?:19|20)\d\d[a-z]?))*\)"
)
_NUMERIC_CITE_RE = re.compile(r"\[\d{1,3}(?:\s*[,\u2013-]\s*\d{1,3})*\]")
_NOT_NAMES = frozenset(
    [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
        "In",
        "See",
        "From",
        "Since",
        "Until",
        "By",
        "For",
        "The",
        "Also",
        "Both",
        "And",
        "Or",
        "Before",
        "After",
        "Spring",
        "Summer",
        "Fall",
        "Autumn",
        "Winter",
        "Table",
        "Figure",
        "Fig",
        "Section",
        "Eq",
        "Equation",
        "Chapter",
        "Appendix",
        "Version",
        "Release",
    ]
)


def citation_refs(text: str, numeric: bool) -> list[InlineRef]:
    """Citation markers: "(Smith et al., 2019; Lee, 2020)" (one per item), "Smith (2019)",
    and "[12]" when the bibliography is numbered."""
    refs = [
        InlineRef(m.start(), m.end(), "bibr")
        for m in _NARRATIVE_CITE_RE.finditer(text)
        if m.group().split()[0] not in _NOT_NAMES
    ]
    for paren in _CITATION_PAREN_RE.finditer(text):
        offset = paren.start(1)
        for part in re.finditer(r"[^;]+", paren.group(1)):
            item = _citation_item(part.group(), offset + part.start())
            if item is not None:
                refs.append(item)
    if numeric:
        refs.extend(InlineRef(m.start(), m.end(), "bibr") for m in _NUMERIC_CITE_RE.finditer(text))
    return refs


def _citation_item(part: str, offset: int) -> Optional[InlineRef]:
    """One "Author et al., 2019" item of a parenthetical citation (it must end with the
    year, so "(Directive 2010/63/EU)" is not one), or None."""
    if len(part) > 160 or not _YEAR_RE.search(part):
        return None
    match = _CITE_ITEM_RE.search(part)
    if match is None or match.group("cite").split()[0].rstrip(",.") in _NOT_NAMES:
        return None
    return InlineRef(offset + match.start("cite"), offset + match.end("cite"), "bibr")
