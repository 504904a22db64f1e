"""Publishers' running heads and feet, and the figure DOI links they print, found in text.

A journal prints the same line on every page: "SCIENTIFIC REPORTS | (2019) 9:585 |
DOI:10.1038/s41598-018-36734-0", "PLOS ONE | https://doi.org/10.1371/journal.pone.0210065
December 31, 2018 28 / 28", "doi:10.2218/ijdc.v11i2.390 Soito and Hwang | 53". GROBID 0.5
leaves such lines inside paragraphs, captions and footnotes, often in the middle of a sentence
that runs across the page break, and sometimes makes citation refs of their digits ("(2019)
<ref>9</ref>:585"). PLOS and PeerJ also end each caption with the figure's own DOI link, PLOS
prints a short title on every page, and PLOS's first page leaves the hidden text of its
badges ("a1111111111 a1111111111").

:func:`running_head_spans` finds them. Each publisher pattern is anchored on text prose does
not print: a DOI, a "(year) volume:page" citation beside a "|", a journal name before a "|",
"Page 6 of 12", the badges' text. The paper's own DOI, when known, also finds the heads of
journals no pattern names: it is matched where a sentence runs on across it. The running title
(:func:`running_title`) is learnt from the words printed before PLOS's foot.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from itertools import combinations
from typing import Iterable, Optional

__all__ = ["only_furniture_left", "prints_doi", "prints_title_foot", "running_head_spans", "running_title"]

_MONTH = r"(?-i:January|February|March|April|May|June|July|August|September|October|November|December)"
# The DOI's suffix ends at whitespace, a "|" or a date glued to it ("...0237178August 25, 2020").
_DOI_NAME = rf"10\s?\.\s?\d{{4,9}}\s?/\s?[^\s|]+?(?=[\s|]|$|{_MONTH}\b)"
_DOI_LINK = rf"(?:doi\s*:?\s*(?:https?://(?:dx\.)?doi\.org/\s?)?|https?://(?:dx\.)?doi\.org/\s?){_DOI_NAME}"
# "(2019) 9:585", GROBID sometimes stopping after the year.
_VOLUME = r"\(\s?\d{4}\s?\)(?:\s?\d{1,4}\s?:\s?\d{1,6})?"


def _small_caps(names: str) -> str:
    """A regex of journal names as GROBID reads names set in small capitals: each word keeps its
    capital and mixes the case of the rest ("SCIEntIfIC RePORTs"), so "the reports" is no name."""
    return re.sub(r"\b([A-Z])([A-Z]+)\b", r"(?-i:\1)\2", names)


# Nature's journals that print their name before the "|". Another journal's name stays in the
# text; the rest of its head is still found ("| (2019) 9:585 | DOI:..." needs no name).
_JOURNAL = _small_caps(r"(?:ARTICLE\s+)?(?:SCIENTIFIC\s+REPORTS|NATURE\s+COMMUNICATIONS|COMMUNICATIONS\s+BIOLOGY"
                       r"|CELL\s+DEATH\s+(?:and|&)\s+DISEASE|CELL\s+DEATH\s+DISCOVERY|CELL\s+DISCOVERY)")
# GROBID sometimes keeps only the last word of the name ("REpORTS | (2019) 9:320 | DOI:...").
_JOURNAL_OR_LAST_WORD = rf"(?:{_JOURNAL}|{_small_caps('REPORTS')})"
_SITE = r"www\.nature\.com/[a-z]*"
_PLOS = r"PLOS\s+(?:ONE|BIOLOGY|MEDICINE|GENETICS|PATHOGENS|COMPUTATIONAL\s+BIOLOGY|NEGLECTED\s+TROPICAL\s+DISEASES)"
_DATE = rf"{_MONTH}\s?\d{{1,2}},\s?\d{{4}}"
# A journal's name or abbreviation in a running head: "Diabetol Metab Syndr", "Journal of Open Hardware".
_JOURNAL_TITLE = r"(?-i:[A-Z][\w.&-]*(?:\s+(?:[A-Z][\w.&-]*|of|and|in|&)){0,8})"
_PAGE_OF = r"(?-i:Page)\s+\d{1,4}\s+of\s+\d{1,4}"
# Up to eight surnames from a word's start: unbounded, a long list of names in a table GROBID
# dumped into a paragraph costs quadratic time.
_AUTHORS = r"(?-i:(?<![\w'’-])[A-Z][\w'’-]+(?:(?:,\s?|\s+and\s+|\s+&\s+)[A-Z][\w'’-]+){0,8}(?:\s+et\s+al\.?)?)"

_PIPE = ("|",)
_DOI_WORDS = ("doi", "DOI", "Doi")
# (texts one of which a match must hold, pattern): a text without any is not scanned.
_PATTERNS = [
    # Nature's journals: "SCIENTIFIC REPORTS | (2019) 9:585 | DOI:10.1038/...", "NATURE
    # COMMUNICATIONS | (2019) 10:439 | https://doi.org/... | www.nature.com/naturecommunications",
    # "NATURE COMMUNICATIONS | https://doi.org/... ARTICLE", or pieces of these.
    (_PIPE, rf"(?:{_JOURNAL_OR_LAST_WORD}\s*)?\|\s*{_VOLUME}\s*\|\s*{_DOI_LINK}(?:\s*\|\s*{_SITE})?"),
    (_PIPE, rf"{_JOURNAL}\s*\|\s*{_DOI_LINK}(?:\s+ARTICLE\b)?"),
    (_PIPE, rf"{_JOURNAL_OR_LAST_WORD}\s*\|\s*{_VOLUME}(?:\s*\|)?"),
    (_PIPE, rf"{_JOURNAL}\s*\|"),
    # PLOS: "PLOS ONE | https://doi.org/10.1371/journal.pone.0210065 December 31, 2018 28 / 28".
    (_PIPE, rf"{_PLOS}\s*\|\s*{_DOI_LINK}(?:\s*{_DATE})?(?:\s*\d{{1,4}}\s?/\s?\d{{1,4}}\b)?"),
    # PeerJ: "PeerJ 6:e5504; DOI 10.7717/peerj.5504" and "Artemio et al. (2018), PeerJ, DOI ...".
    (("PeerJ",),
     (rf"(?:{_AUTHORS}\s*\(\d{{4}}\),\s*)?(?-i:PeerJ)(?:\s+Comput(?:er|\.)\s+Sci(?:ence|\.)?)?"
      rf"(?:,|\s+\d+:e\d+;)\s*{_DOI_LINK}")),
    # BMC: "Page 6 of 12 Zhu et al. Diabetol Metab Syndr (2019) 11:9", in either order.
    (("Page",), rf"{_PAGE_OF}(?:\s+{_AUTHORS}\s+{_JOURNAL_TITLE}\s+\(\d{{4}}\)\s?\d{{1,4}}:\d{{1,6}})?"),
    (("Page",), rf"{_AUTHORS}\s+{_JOURNAL_TITLE}\s+\(\d{{4}}\)\s?\d{{1,4}}:\d{{1,6}}\s+{_PAGE_OF}"),
    # PLOS's first page: the hidden text of its "check for updates" badges.
    (("a1111111111",), r"\ba1{10}\b(?:\s+a1{10}\b)*"),
    # A figure's or table's own DOI link printed after its caption (PLOS, PeerJ).
    (_DOI_WORDS, (r"(?:Full-size\s+)?(?:doi\s*:?\s*|https?://(?:dx\.)?doi\.org/\s?)10\.\d{4,9}/[^\s|]*?"
                  r"(?:\.[gt]\d{3}|/(?:fig|table)-\d+)(?![\w/.-])")),
]
# One pattern at a time, each only on the texts that hold its fixed text: one alternation of
# them all loses the regex engine's fast search (three times slower over the corpus).
_RUNNING_HEADS = [(anchors, re.compile(pattern, re.IGNORECASE)) for anchors, pattern in _PATTERNS]
_ANCHORS = frozenset(anchor for anchors, _ in _PATTERNS for anchor in anchors)


@lru_cache(maxsize=64)
def _own_doi_pattern(doi: str) -> re.Pattern:
    """The paper's own DOI printed mid-sentence or last, with the authors and page beside it.

    "doi:10.2218/ijdc.v11i2.390 Soito and Hwang | 53", "Jonveaux et al. Journal of Open
    Hardware DOI: 10.5334/joh.28". Matched only where text goes on after it with a word or a
    bracket, or where the text ends with it; never before a full stop or a closing bracket:
    "accompanies this paper at https://doi.org/...." is the paper's own sentence.
    """
    name = re.escape(doi.strip())
    return re.compile(
        rf"(?:(?-i:[A-Z][\w'’-]+)\s+et\s+al\.\s+{_JOURNAL_TITLE}\s+)?"
        rf"(?:doi\s*:?\s*(?:https?://(?:dx\.)?doi\.org/\s?)?|https?://(?:dx\.)?doi\.org/\s?)?{name}"
        rf"(?:(?:\s+{_AUTHORS})?\s*\|\s*\d{{1,4}}\b|(?=\s+[^\W\d_]|\s+\(|\s*$))",
        re.IGNORECASE,
    )


_PLOS_FOOT = re.compile(rf"{_PLOS}\s*\|", re.IGNORECASE)
# Where a sentence ends and the next begins: the short title printed before a foot starts after it.
_SENTENCE_END = re.compile(r"[.!?][\"')\]]?\s+(?=[A-Z0-9])")
_MAX_TITLE_WORDS = 20  # PLOS's short titles have up to 15
# A word of three letters or more: a note without one, once its running heads are cut, is none.
_WORD = re.compile(r"[^\W\d_]{3,}")


def only_furniture_left(text: str) -> bool:
    """Whether what is left of a footnote once its running heads are cut is no note: no word,
    or a short line that ends no sentence (a running title that was not learnt)."""
    if not _WORD.search(text):
        return True
    return len(text.split()) <= _MAX_TITLE_WORDS and not text.rstrip().endswith((".", "!", "?", ")", "]"))


def prints_title_foot(text: str) -> bool:
    """Whether ``text`` holds a page foot that a running title goes with (PLOS's)."""
    return _PLOS_FOOT.search(text) is not None


def running_title(texts: Iterable[str]) -> Optional[str]:
    """The short title PLOS prints at the top of every page, learnt from the paper's texts.

    GROBID puts it right before the foot ("Sex hormone effects on post-injury synovial
    inflammation PLOS ONE | https://doi.org/...") and elsewhere into the middle of sentences.
    The words before a foot, after the last sentence end or running head, are a lead. The
    title is a lead that two different texts share; else the longest ending of three words or
    more that two leads share; else a lone lead of three words or more that another text has
    where prose would not: after a lower-case word or a comma, or before the text's end or a
    capital with no full stop between ("... tilted in <title> the north", "<title> It is").
    It has at most 20 words and starts with a capital or a digit. ``texts`` must not hold one
    another (pass a note's text, not also its paragraphs'); a text given twice counts once.
    """
    texts = list(dict.fromkeys(texts))
    leads: list[tuple[str, ...]] = []
    # The texts with each lead and its foot taken out: where a lone lead must be seen again.
    elsewhere = list(texts)
    for i, text in enumerate(texts):
        for foot in _PLOS_FOOT.finditer(text):
            lead = text[: foot.start()]
            links = running_head_spans(lead)
            if links:
                lead = lead[links[-1][1]:]
            last = _SENTENCE_END.split(lead)[-1]
            words = tuple(last.split())
            if words:  # the first page's foot has no title before it
                leads.append(words)
                elsewhere[i] = text[: foot.start() - len(last)] + " " + text[foot.end():]
                break
    counts = Counter(leads)
    title: Optional[tuple[str, ...]] = None
    if counts and counts.most_common(1)[0][1] >= 2:
        title = counts.most_common(1)[0][0]
    elif len(leads) >= 2:
        title = max((_common_ending(a, b) for a, b in combinations(leads, 2)), key=len)
        title = title if len(title) >= 3 else None
    elif len(leads) == 1 and len(leads[0]) >= 3:
        lone = _title_pattern(" ".join(leads[0]))
        out_of_place = re.compile(rf"[a-z,;]\s+{lone}|{lone}(?:\s*$|\s+[A-Z])")
        title = leads[0] if any(out_of_place.search(text) for text in elsewhere) else None
    if not title or len(title) > _MAX_TITLE_WORDS or not (title[0][:1].isupper() or title[0][:1].isdigit()):
        return None
    return " ".join(title)


def _title_pattern(title: str) -> str:
    """A running title as a regex that matches whole words only."""
    return rf"(?<!\w){re.escape(title)}(?!\w)"


def _common_ending(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    """The words both ``a`` and ``b`` end with."""
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    return a[len(a) - n:]


def running_head_spans(text: str, own_doi: Optional[str] = None,
                       title: Optional[str] = None) -> list[tuple[int, int]]:
    """(start, end) offsets of the running heads and figure DOI links in ``text``, in order.

    ``own_doi`` is the paper's DOI ("10.2218/ijdc.v11i2.390", from its header) when known;
    ``title`` its running title (:func:`running_title`), each occurrence of which is a head.
    Spans do not overlap.
    """
    present = {anchor for anchor in _ANCHORS if anchor in text}
    spans = [match.span() for anchors, pattern in _RUNNING_HEADS if present.intersection(anchors)
             for match in pattern.finditer(text)] if present else []
    if prints_doi(text, own_doi):
        spans.extend(match.span() for match in _own_doi_pattern(own_doi).finditer(text))
    if title and title in text:
        spans.extend(match.span() for match in re.finditer(_title_pattern(title), text))
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def prints_doi(text: str, doi: Optional[str]) -> bool:
    """Whether ``text`` prints the DOI ``doi`` (case-insensitive), not as the start of a longer
    one ("...pone.0210145.s001" is a supplementary file's); False when ``doi`` is unknown."""
    return bool(doi and doi.strip()) and doi.strip().lower() in text.lower() and \
        _doi_pattern(doi.strip()).search(text) is not None


@lru_cache(maxsize=64)
def _doi_pattern(doi: str) -> re.Pattern:
    """A DOI as a regex that a longer DOI does not match."""
    return re.compile(rf"{re.escape(doi)}(?![\w/]|\.\w)", re.IGNORECASE)
