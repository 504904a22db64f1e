"""Inline references, figure, table and formula mentions: "Fig. 3", "Tables 2 and 4",
"Figure 3a", "Eq. (2)", "Equations 3 and 4", each resolved to its caption's figure id or its
display formula's id when the paper has that label.

Consumes a paragraph's text and the (kind, label) -> id map; produces :class:`InlineRef` s.
"""

from __future__ import annotations

import re
from typing import Optional

from ...paper import InlineRef
from ...text.mentions import find_mentions
from .formulas import FORMULA_NUMBER


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


#: "Eq. (3)", "Eqs. 2", "Eqn. 4", "Equation (A.1)": the label with or without its brackets.
_FORMULA_MENTION_RE = re.compile(
    rf"\b(?:Eqn?s?\.?|Equations?)\s*(?:\((?P<bracketed>{FORMULA_NUMBER})\)|(?P<bare>{FORMULA_NUMBER})\b)",
    re.IGNORECASE)
_LIST_SEPARATOR = r"\s*(?:,\s*(?:and|or)?|and|&|or|to|\u2013|-)\s*"
#: More numbers listed after a bracketed one: "(6), (7), and (8)", "(2)\u2013(4)".
_BRACKETED_CONTINUATION_RE = re.compile(rf"{_LIST_SEPARATOR}\((?P<bracketed>{FORMULA_NUMBER})\)(?P<bare>)")
#: More numbers listed after a bare one: "Equations 3 and 4".
_BARE_CONTINUATION_RE = re.compile(rf"{_LIST_SEPARATOR}(?P<bare>{FORMULA_NUMBER})\b(?P<bracketed>)")


def formula_refs(text: str, targets: dict[tuple[str, str], str]) -> list[InlineRef]:
    """Formula mentions, one per label ("Eqs. (2) and (3)" gives two): the first spans its
    word and label, the others their label (brackets included). Listed numbers are printed
    as the first one is ("In Equation (8), S1 ..." lists nothing), and a bare one only
    counts where the paper has a formula of that number ("Eq. 3 - 20 runs")."""
    refs = []
    for mention in _FORMULA_MENTION_RE.finditer(text):
        refs.append(InlineRef(mention.start(), mention.end(), "formula", _formula_target(targets, mention)))
        bracketed = mention.group("bracketed") is not None
        pattern = _BRACKETED_CONTINUATION_RE if bracketed else _BARE_CONTINUATION_RE
        more, last = pattern.match(text, mention.end()), mention
        while more is not None and (bracketed or (_formula_target(targets, more) is not None
                                                  and _after(last, more))):
            start = more.start("bracketed") - 1 if bracketed else more.start("bare")
            refs.append(InlineRef(start, more.end(), "formula", _formula_target(targets, more)))
            more, last = pattern.match(text, more.end()), more
    return refs


#: A formula's number alone, after a word that points at it ("substituting (5) into (16)"),
#: not an item of an enumeration ("consists of (1) a parser and (2) a tagger").
_BARE_FORMULA_MENTION_RE = re.compile(
    rf"\b(?:in|into|from|of|by|using|to|with|via|substituting|combining|see)\s+\((?P<bracketed>{FORMULA_NUMBER})\)"
    rf"(?P<bare>)(?!\s+(?:a|an|the)\b)")


def bare_formula_refs(text: str, targets: dict[tuple[str, str], str]) -> list[InlineRef]:
    """A formula's number in brackets after a word that points at it ("into (16)") and the
    bracketed numbers listed after it ("substituting (13), (14), and (15)"), where the paper
    has a formula of that number; the bracketed number is the mention. A number followed by
    an article, or followed later in its sentence by the next number after words of its own
    ("we aim to (1) identify errors and (2) correct them"), opens an enumeration's item and
    is none. A citation printed so is the citation linker's, which is asked first."""
    refs = []
    for mention in _BARE_FORMULA_MENTION_RE.finditer(text):
        if _enumerates(text, mention):
            continue
        while mention is not None and _formula_target(targets, mention) is not None:
            refs.append(InlineRef(mention.start("bracketed") - 1, mention.end("bracketed") + 1, "formula",
                                  _formula_target(targets, mention)))
            mention = _BRACKETED_CONTINUATION_RE.match(text, mention.end())
    return refs


def _after(last: re.Match, more: re.Match) -> bool:
    """Whether a listed bare number follows the one before it ("Equations 3 and 4"; in
    "Eq. 3 and 2 layers" the 2 counts layers)."""
    before = re.match(r"\d+", last.group("bracketed") or last.group("bare") or "")
    after = re.match(r"\d+", more.group("bare") or "")
    return before is None or after is None or int(after.group()) > int(before.group())


def _enumerates(text: str, mention: re.Match) -> bool:
    """Whether a bracketed number opens an enumeration's item: the next number follows in
    its sentence after words of its own, not only after a list's separators ("(1) identify
    errors and (2) correct them", not "(13), (14), and (15)")."""
    number = re.fullmatch(r"\d+", mention.group("bracketed"))
    if number is None:
        return False
    sentence_end = re.compile(r"[.?!](?:\s|$)").search(text, mention.end())  # items often end in ";"
    rest = text[mention.end():sentence_end.start() if sentence_end else len(text)]
    following = rest.find(f"({int(number.group()) + 1})")
    return following > 0 and re.search(r"[A-Za-z]{2,}", re.sub(r"\b(?:and|or)\b", " ", rest[:following])) is not None


def _formula_target(targets: dict[tuple[str, str], str], match: re.Match) -> Optional[str]:
    label = match.group("bracketed") or match.group("bare")
    return targets.get(("formula", label.lower()))


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
