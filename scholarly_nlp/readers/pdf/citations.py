"""Citation markers in a paragraph, linked to the bibliography's entries.

Markers: "(Smith et al., 2019; Lee, 2020)" (one marker per item), "Smith (2019)", and for a
numbered list "[12]", "[3, 7]", "[3-5]" (one ref per cited entry: a range's inner entries
span the range's text), or "(12)" in papers that cite that way. A :class:`CitationLinker`
built from the parsed entries gives each marker its entry id: numbers by printed label,
author-year markers by first author's surname and year (a year's letter, "2019b", picks
among that author's entries of the year). A marker that matches no entry is kept, unlinked.

Consumes a paragraph's text; produces :class:`Marker` s of ``bibr`` :class:`InlineRef` s.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Optional

from ...paper import InlineRef
from .reference_parser import ParsedReference, fold


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
#: Where one item of a parenthetical citation ends: a semicolon, or a comma after a year
#: and before a capitalised word ("(MILES & GRIGSON 1990, DREHMER et al. 2004)").
_ITEM_END_RE = re.compile(r";|(?:(?<=\d)|(?<=\d[a-z])),(?=\s*[A-Z])")
_NUMBER_LIST = r"\d{1,4}(?:\s*(?:[,;\u2013\u2014-]|and)\s*\d{1,4})*"
_BRACKET_CITE_RE = re.compile(rf"\[({_NUMBER_LIST})\]")
_PAREN_CITE_RE = re.compile(rf"(?<![\w.])\(({_NUMBER_LIST})\)")
_NUMBER_RE = re.compile(r"\d{1,4}")
_RANGE_RE = re.compile(r"(\d{1,4})\s*[\u2013\u2014-]\s*(\d{1,4})")
_NOT_PAREN_CITE_BEFORE = re.compile(r"(?:eq|eqs|equation|equations|fig|figs|figure|figures|table|tables|"
                                    r"section|sections|step|steps|model|models|level|phase|stage|item|"
                                    r"rule|rules|case|cases|condition|group|n|p)\.?\s*$", re.IGNORECASE)
#: What opens an interval, not a citation, right before "[...]": a relation sign, maybe with
#: a distribution's letter ("x ~ U[1, 500]", "t ~U [10, 70]", "x \u2208 [2, 5]"). A letter
#: alone does not: "in R [38]", "Ape-X [61]" cite.
_INTERVAL_BEFORE = re.compile(r"[~\u223c=\u2208]\s*(?:[^\W\d_]\s*)?$")
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


@dataclass
class Marker:
    """One citation marker's extent and its refs (several for "[3, 7]" or "[3-5]")."""

    start: int
    end: int
    refs: list[InlineRef] = field(default_factory=list)


class CitationLinker:
    """Finds a paper's citation markers and links them to its parsed bibliography."""

    def __init__(self, entries: list[ParsedReference], numbered: bool,
                 paragraphs: list[tuple[str, list[tuple[int, int]]]] = ()) -> None:
        """``paragraphs``: each paragraph's text and its raised digit runs (superscripts)."""
        self.numbered = numbered
        self.by_label: dict[int, str] = {}
        self.by_author_year: dict[tuple[str, str], list[str]] = defaultdict(list)
        self.second_author: dict[str, str] = {}
        self.duplicate_labels: list[str] = []
        for index, entry in enumerate(entries):
            bib_id = f"b{index}"
            if entry.label is not None:
                if int(entry.label) in self.by_label:
                    self.duplicate_labels.append(entry.label)
                self.by_label.setdefault(int(entry.label), bib_id)
            if entry.surnames and entry.year:
                self.by_author_year[(entry.surnames[0], entry.year[:4])].append(bib_id)
                if len(entry.surnames) > 1:
                    self.second_author[bib_id] = entry.surnames[1]
        # "(12)" or a superscript cites only where the paper never cites with "[12]"
        bracketed = any(self._numeric_markers(text, _BRACKET_CITE_RE) for text, _ in paragraphs)
        self.parenthesised = numbered and bool(self.by_label) and not bracketed and any(
            self._numeric_markers(text, _PAREN_CITE_RE) for text, _ in paragraphs)
        self.superscripted = numbered and bool(self.by_label) and not bracketed and any(
            raised for _, raised in paragraphs)

    def markers(self, text: str, raised: list[tuple[int, int]] = ()) -> list[Marker]:
        """The citation markers of one paragraph, each with its linked refs; ``raised`` are
        the paragraph's superscript digit runs."""
        found = [self._author_year(text, start, end) for start, end in _author_year_spans(text)]
        if self.numbered:
            found += self._numeric_markers(text, _PAREN_CITE_RE if self.parenthesised else _BRACKET_CITE_RE)
        if self.superscripted:
            for start, end in raised:
                refs = self._number_refs(text[start:end], start)
                if refs:
                    found.append(Marker(start, end, refs))
        return found

    def _author_year(self, text: str, start: int, end: int) -> Marker:
        marker_text = text[start:end]
        return Marker(start, end, [InlineRef(start, end, "bibr", self.author_year_target(marker_text))])

    def author_year_target(self, marker_text: str) -> Optional[str]:
        """The entry an author-year marker ("Smith et al., 2019b") cites, or None."""
        years = re.findall(r"(?:1[5-9]|20)\d\d([a-z]?)", marker_text)
        year = re.search(r"(?:1[5-9]|20)\d\d", marker_text)
        if year is None:
            return None
        names = re.split(r"\s+(?:et\s*al\b|and\b|&)|,|\(", marker_text[: year.start()])
        words = names[0].split()
        if not words:
            return None
        # a surname is the last word ("van der Berg"), an organisation may be cited by its
        # first ("ETC Group")
        candidates = (self.by_author_year.get((fold(words[-1]), year.group()))
                      or self.by_author_year.get((fold(words[0]), year.group()), []))
        if len(candidates) <= 1:
            return candidates[0] if candidates else None
        if len(names) > 1 and names[1].split():
            second = fold(names[1].split()[-1])
            paired = [c for c in candidates if self.second_author.get(c) == second]
            if len(paired) == 1:
                return paired[0]
        letter = years[0] if years else ""
        if letter and ord(letter) - ord("a") < len(candidates):
            return candidates[ord(letter) - ord("a")]
        return candidates[0]

    def _numeric_markers(self, text: str, pattern: re.Pattern) -> list[Marker]:
        markers = []
        for match in pattern.finditer(text):
            before = text[max(0, match.start() - 12): match.start()]
            if pattern is _PAREN_CITE_RE and _NOT_PAREN_CITE_BEFORE.search(before):
                continue
            if pattern is _BRACKET_CITE_RE and _opens_interval(text, match.start()):
                continue
            refs = self._number_refs(match.group(1), match.start(1))
            if refs and len({(r.start, r.end) for r in refs}) == 1:
                # "[12]" or "[3-5]": each ref spans the whole marker, brackets included
                refs = [InlineRef(match.start(), match.end(), "bibr", r.target) for r in refs]
            if refs:
                markers.append(Marker(match.start(), match.end(), refs))
        return markers

    def _number_refs(self, inner: str, offset: int) -> list[InlineRef]:
        """One ref per cited number of a bracket's content (unlinked when the list has no
        entry of that number), or none when the bracket is no citation."""
        refs: list[InlineRef] = []
        covered: set[tuple[int, int]] = set()
        for match in _RANGE_RE.finditer(inner):
            low, high = int(match.group(1)), int(match.group(2))
            if not 0 < high - low <= 50:
                return []
            start, end = offset + match.start(), offset + match.end()
            covered.add((match.start(), match.end()))
            for number in range(low, high + 1):
                refs.append(InlineRef(start, end, "bibr", self.by_label.get(number)))
        for match in _NUMBER_RE.finditer(inner):
            if any(lo <= match.start() < hi for lo, hi in covered):
                continue
            refs.append(InlineRef(offset + match.start(), offset + match.end(), "bibr",
                                  self.by_label.get(int(match.group()))))
        numbers = [int(n) for n in _NUMBER_RE.findall(inner)]
        if 0 in numbers or (self.by_label and not any(ref.target for ref in refs)
                            and max(numbers) > 2 * max(self.by_label)):
            return []  # an interval "[0, 1]" or a year "[2019]", not a citation
        # a number the list lacks (an entry lost, or a misprint) stays an unlinked marker
        return sorted(refs, key=lambda r: (r.start, r.end))


def cited_works(text: str) -> int:
    """How many citation markers a text holds: numbered ("[12]", "[3, 7]"; an interval such as
    "[0, 1]" is none) and author-year items ("Smith (2019)", each of "(Smith et al., 2019; Lee,
    2020)"), none linked."""
    numbered = [m for m in _BRACKET_CITE_RE.finditer(text)
                if 0 not in map(int, _NUMBER_RE.findall(m.group(1))) and not _opens_interval(text, m.start())]
    return len(numbered) + len(_author_year_spans(text))


def _opens_interval(text: str, bracket: int) -> bool:
    """Whether the "[" at ``bracket`` opens an interval ("t ~ U[1, 500]"), not a citation."""
    return _INTERVAL_BEFORE.search(text[max(0, bracket - 12): bracket]) is not None


def _author_year_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of "Smith (2019)" and of each item of "(Smith et al., 2019; Lee, 2020)"."""
    spans = [
        (m.start(), m.end())
        for m in _NARRATIVE_CITE_RE.finditer(text)
        if m.group().split()[0] not in _NOT_NAMES
    ]
    for paren in _CITATION_PAREN_RE.finditer(text):
        offset = paren.start(1)
        start = 0
        for end in [m.start() for m in _ITEM_END_RE.finditer(paren.group(1))] + [len(paren.group(1))]:
            item = _citation_item(paren.group(1)[start:end], offset + start)
            if item is not None:
                spans.append(item)
            start = end + 1
    return spans


def _citation_item(part: str, offset: int) -> Optional[tuple[int, int]]:
    """One "Author et al., 2019" item of a parenthetical citation (it must end with the
    year, so "(Directive 2010/63/EU)" is not one), or None."""
    if len(part) > 160 or not _YEAR_RE.search(part):
        return None
    match = _CITE_ITEM_RE.search(part)
    if match is None or match.group("cite").split()[0].rstrip(",.") in _NOT_NAMES:
        return None
    return offset + match.start("cite"), offset + match.end("cite")
