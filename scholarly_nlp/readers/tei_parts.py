"""Small decisions the TEI reader makes about GROBID's output, each testable on its own.

GROBID's TEI is faithful to the PDF but not always to the paper: the year of a reference
can be a page number, a table's caption can sit inside ``<table>`` (0.5.x), a drop cap
becomes a one-letter section title. These functions recognise such cases.
"""

from __future__ import annotations

import datetime
import re
from collections import Counter
from typing import Callable, Optional

from lxml import etree

from ..text.drop_caps import joins_drop_cap
from ..text.mentions import MENTION_PATTERN
from ..text.normalize import collapse_whitespace

TEI_NS = "http://www.tei-c.org/ns/1.0"

# Section heads of back matter, by kind. A head must match whole (an optional trailing colon
# aside), so "Competing methods" or "Ethics of AI in medicine" stay body sections.
_BACK_MATTER_HEADS = [
    ("acknowledgement", r"acknowledge?ments?|acknowledge?ment of \w+"),
    ("funding", r"funding( information| sources?| statement)?|financial (support|disclosure)( and sponsorship)?|grant information"),
    ("availability", r"(data|code|software|artifact|materials?)( and (code|materials?|software))? availability( statement)?"
                     r"|availability of (data|code|software)( and materials?)?"),
    ("contributions", r"authors?['’]? contributions?|contributions? of (the )?authors|credit authorship contribution statement"),
    ("competing_interests", r"competing (financial )?interests?|conflicts? of interests?|declaration of (competing|conflicting) interests?"
                            r"|disclosure statement|declarations?"),
    ("ethics", r"ethics( approval)?( and consent to participate)?|ethics statement|ethical (approval|considerations|clearance)"
               r"|consent (for publication|to publish)|informed consent( statement)?|institutional review board statement"),
    ("abbreviations", r"abbreviations|list of abbreviations"),
    ("publisher_note", r"publisher['’]?s note"),
    ("supplementary", r"supplementary (information|material|data)|supporting information|additional files?"),
]
_BACK_MATTER_PATTERNS = [(kind, re.compile(rf"(?:{pattern})\s*[:.]?", re.IGNORECASE)) for kind, pattern in _BACK_MATTER_HEADS]

_YEAR = re.compile(r"(?<!\d)(\d{4})(?!\d)")
#: Years before this are page numbers or volume numbers in GROBID's ``@when`` unless printed.
EARLIEST_YEAR = 1500

_SUPPLEMENTARY_BEFORE = re.compile(
    r"(supplementa(?:ry|l)|suppl\.?|extended data|additional file \d*|online resource)\s*$", re.IGNORECASE
)
_SUPPLEMENTARY_MARKER = re.compile(r"\s*(supplementa(?:ry|l)|suppl\.|extended data|additional file)", re.IGNORECASE)

_VENUE_START = re.compile(
    r"(in )?(proc\.|proceedings|journal|transactions|advances in|annals of|conference|workshop|symposium|"
    r"international (conference|journal|workshop)|acm |ieee |arxiv)", re.IGNORECASE
)


def back_matter_kind(head: str) -> Optional[str]:
    """The back-matter kind of a section head ("Acknowledgments" -> "acknowledgement"), else None."""
    head = (head or "").strip()
    for kind, pattern in _BACK_MATTER_PATTERNS:
        if pattern.fullmatch(head):
            return kind
    return None


def bib_year(when: Optional[str], printed: str, *, latest: Optional[int] = None) -> Optional[str]:
    """The year of a reference from GROBID's ``date@when`` and the printed date text.

    GROBID sometimes takes a page or volume number for the year (``when="1383"`` for a
    printed "2017. 1383"). The first plausible year in the printed text wins when ``@when``
    disagrees with it; a ``@when`` before ``EARLIEST_YEAR`` with nothing printed to back it
    is dropped. A genuinely old year (Darwin, 1859) is kept: it is printed too.
    """
    latest = latest or datetime.date.today().year + 1
    printed_years = [int(y) for y in _YEAR.findall(printed or "") if EARLIEST_YEAR <= int(y) <= latest]
    match = _YEAR.search(when or "")
    claimed = int(match.group(1)) if match else None
    if printed_years and claimed != printed_years[0]:
        return str(printed_years[0])
    if claimed is not None and EARLIEST_YEAR <= claimed <= latest:
        return str(claimed)
    return None


def looks_like_venue(title: str) -> bool:
    """True for a journal or proceedings name ("Proceedings of ACL", "Journal of ...")."""
    return bool(_VENUE_START.match(title or ""))


def is_supplementary_mention(text_before: str, marker: str) -> bool:
    """True for "Supplementary Fig. 8", "Supplemental Table 2", "Extended Data Fig. 1".

    Such mentions point at material outside the paper and never at a main-text figure.
    """
    return bool(_SUPPLEMENTARY_MARKER.match(marker) or _SUPPLEMENTARY_BEFORE.search(text_before))


def formula_label(formula: etree._Element) -> str:
    """The printed number of a display formula (``<label>(3)</label>`` -> "3"), or ""."""
    label = formula.find(f"{{{TEI_NS}}}label")
    if label is None:
        return ""
    return re.sub(r"\s+", " ", "".join(label.itertext())).strip().strip("()[] .")


def grobid_version(root: etree._Element) -> Optional[tuple[int, int]]:
    """(major, minor) of the GROBID that wrote this TEI, from ``application@version``; None if unknown."""
    for app in root.iter(f"{{{TEI_NS}}}application"):
        if (app.get("ident") or "").upper() == "GROBID":
            match = re.match(r"(\d+)\.(\d+)", app.get("version") or "")
            if match:
                return int(match.group(1)), int(match.group(2))
    return None


def is_drop_cap(head: str, first_paragraph: str) -> bool:
    """A one-letter head ("D") followed by a paragraph that continues the word ("ue to ...")."""
    return len(head) == 1 and head.isupper() and first_paragraph[:1].islower()


# "R eplication": a drop cap GROBID kept as a word of its own at the start of a paragraph.
_SPLIT_DROP_CAP = re.compile(r"^(\s*)([A-Z]) ([a-z][a-z-]*)")
#: Elements inside a paragraph whose text is not the paragraph's running prose.
NOT_PARAGRAPH_TEXT = frozenset({"note", "figure", "table", "formula"})


def join_split_drop_cap(paragraph: etree._Element, vocabulary: Callable[[], Counter]) -> bool:
    """Join a drop cap that GROBID split from its word ("R eplication" -> "Replication").

    Nature Communications opens its body with a drop cap; GROBID 0.5 keeps it as a word of its
    own. The letter and the fragment after it are joined when
    :func:`~scholarly_nlp.text.drop_caps.joins_drop_cap` says so with the paper's words, which
    ``vocabulary()`` gives (called only when the paragraph opens with a lone capital). Edits
    the first text of ``paragraph`` in place, before the reader flattens it (so sentence and
    reference offsets are those of the joined text), and returns whether it did.
    """
    found = _opening_match(paragraph, _SPLIT_DROP_CAP)
    if found is None:
        return False
    element, attribute, text, match = found
    if not joins_drop_cap(match.group(2), match.group(3), vocabulary()):
        return False
    lead, cap, fragment = match.groups()
    setattr(element, attribute, lead + cap + fragment + text[match.end():])
    return True


# "Introduction Basement reservoirs are ...": GROBID 0.5 gives PLOS's first head as the first
# word of the first paragraph.
_RUN_IN_INTRODUCTION = re.compile(r"^(\s*)(Introduction|INTRODUCTION)\s+(?=[A-Z])")


def split_run_in_introduction(paragraph: etree._Element) -> Optional[str]:
    """The "Introduction" head GROBID ran into the body's first paragraph, cut from its text.

    Edits the paragraph's first text in place (so its offsets are those of the text without
    the head) and returns the head, or None when the paragraph does not open with one.
    """
    found = _opening_match(paragraph, _RUN_IN_INTRODUCTION)
    if found is None:
        return None
    element, attribute, text, match = found
    setattr(element, attribute, match.group(1) + text[match.end():])
    return match.group(2)


def _opening_match(paragraph: etree._Element, pattern: re.Pattern) -> Optional[tuple[etree._Element, str, str, re.Match]]:
    """(element, "text" or "tail", that text, match) when ``pattern`` matches the paragraph's
    first text (:func:`_first_text`); None otherwise."""
    holder = _first_text(paragraph)
    if holder is None:
        return None
    element, attribute = holder
    text = getattr(element, attribute)
    match = pattern.match(text)
    return None if match is None else (element, attribute, text, match)


def _first_text(element: etree._Element) -> Optional[tuple[etree._Element, str]]:
    """(element, "text" or "tail") holding the first non-blank text under ``element`` that a
    paragraph's text shows (notes, floats and formulas inside it are not read as its text)."""
    if element.text and element.text.strip():
        return element, "text"
    for child in element:
        if not isinstance(child.tag, str):
            continue
        if etree.QName(child).localname not in NOT_PARAGRAPH_TEXT:
            found = _first_text(child)
            if found is not None:
                return found
        if child.tail and child.tail.strip():
            return child, "tail"
    return None


def table_caption_from_cells(head: str, table_text: str) -> str:
    """The caption GROBID 0.5 left inside ``<table>`` when ``figDesc`` is empty.

    With a bare head ("Table 2 :"), GROBID 0.5.x often puts the caption as the first block of
    the table's text (the cells themselves are lost). The block is taken when it reads like
    a caption: it starts with a capital letter and is mostly words. Returns
    "Table 2: <caption>" or "".
    """
    match = MENTION_PATTERN.match(head or "")
    if not match or head[match.end():].strip(" :.") or not table_text.strip():
        return ""
    first = re.sub(r"\s+", " ", re.split(r"\n\s*\n", table_text.strip())[0]).strip()
    words = first.split()
    if len(words) < 3 or not first[0].isupper():
        return ""
    wordlike = sum(1 for w in words if re.fullmatch(r"[^\W\d_][\w'’\-]*[,.;:)]?", w))
    if wordlike / len(words) < 0.6:
        return ""
    return f"{head[:match.end()].strip()}: {first}"


# An introduction's head, numbered or not ("1 Introduction", "Background", "I. MOTIVATION").
_INTRODUCTION_HEAD = re.compile(
    r"^\W*(?:[0-9IVX]+(?:\.\d+)*[.)]?\s*)?(?:introduction|background|motivation)\b", re.IGNORECASE)
#: Words above which a run of unheaded abstract paragraphs is more than an abstract (Nature's
#: journals allow 150-200, most others 250).
ABSTRACT_MAX_WORDS = 250
#: Citations above which an abstract's first paragraph is introduction text: of the 635 GROBID
#: abstracts here, the 3 whose first paragraph cites two or more works are all openings of papers
#: that print no abstract, or whose abstract GROBID missed.
ABSTRACT_MAX_CITATIONS = 1


def introduction_in_abstract(abstract: etree._Element, body: Optional[etree._Element]) -> Optional[int]:
    """Index of the first ``<p>`` of ``abstract`` that GROBID took from the introduction, or None.

    Journals that print no "Introduction" head (Scientific Reports, Nature Communications, many
    magazines) run the introduction on from the abstract, and GROBID often keeps it in
    ``<abstract>``: 53 of the 243 biomedical TEI files here hold 2-6 introduction paragraphs
    there, so the abstract was read as 300-900 words and the paper had no introduction. Both
    signs are needed: the body has no introduction head, and the abstract is one unheaded run of
    paragraphs (a structured abstract's labelled parts stay) that is longer than an abstract or
    cites works after its first paragraph; then all but the first paragraph are introduction.
    A first paragraph that cites several works is introduction too (a news article or an
    editorial has no abstract; GROBID takes its opening): then the answer is 0.
    """
    if body is None or any(_INTRODUCTION_HEAD.match(collapse_whitespace("".join(head.itertext()))) for head in body.iter(f"{{{TEI_NS}}}head")):
        return None
    paragraphs = abstract.findall(f".//{{{TEI_NS}}}p")
    heads = abstract.findall(f".//{{{TEI_NS}}}head")
    if not paragraphs or len({p.getparent() for p in paragraphs}) > 1 or len(heads) > 1:
        return None
    if heads and heads[0].getparent() is not paragraphs[0].getparent():
        return None
    if _citations(paragraphs[0]) > ABSTRACT_MAX_CITATIONS and not heads:
        return 0
    if len(paragraphs) < 2:
        return None
    words = sum(len("".join(el.itertext()).split()) for el in heads + paragraphs)
    if words > ABSTRACT_MAX_WORDS or any(_citations(p) for p in paragraphs[1:]):
        return 1
    return None


def _citations(paragraph: etree._Element) -> int:
    return len(paragraph.findall(f".//{{{TEI_NS}}}ref[@type='bibr']"))
