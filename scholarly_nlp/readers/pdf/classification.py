"""Pass 9, classification: visual blocks to text units.

Consumes the blocks in reading order (without furniture, caption and float lines) and the
title; produces :class:`Unit` records (title, abstract, heading, paragraph: split on
indentation, continued across columns, pages and floats; footnote; display formula, found by
:mod:`.formulas`), the :class:`Section` list, and the blocks of the bibliography (read by
:mod:`.bibliography`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from itertools import pairwise
from typing import Optional

from ...paper import Section
from .blocks import caption_match
from .citations import cited_works
from .formulas import DisplayFormulas, is_math
from .model import Line, Page, Stats, Unit, VBlock, same_row
from .patterns import ABSTRACT_RE, CONTENTS_ENTRY_RE, FOOTNOTE_MARK, NUMBERED_HEAD_RE, TERMINAL_PUNCT
from .typography import font_base_name, is_body_like


_LETTER_HEAD_RE = re.compile(r"^(?P<num>[A-H](?:\.\d{1,2}){0,3})\.?\s+(?P<title>[A-Z].*)$")
_ROMAN_HEAD_RE = re.compile(r"^(?P<num>[IVX]{1,4})\.\s+(?P<title>[A-Z].*)$")
# IEEE's lower levels, "1) MATERIALS AND METHODS" and "a: MACHINE LEARNING" (or "a) ..."):
# taken only in a font of their own, since body text numbers its list items the same way.
_SUB_ITEM_HEAD_RE = re.compile(r"^(?P<num>(?:\d{1,2}|[a-z])[):])\s+(?P<title>[^\W\d_].*)$")
_APPENDIX_HEAD_RE = re.compile(
    r"^(?:appendix|appendices|supplementary|supplemental)\b", re.IGNORECASE
)
#: A list item's label in lower case ("a)", "(b)", "ii.", "iv)").
_SUB_ITEM_LABEL_RE = re.compile(r"^\(?(?:[a-z]|[ivx]{1,4})[.)]\s")
#: Blocks looked at past the one being classified, for an abstract's rest after small type.
_LOOK_AHEAD = 6
#: An appendix's run-in label ("Appendix. Examined material.", "Appendix A:"), in any type;
#: not a reference's line ("Appendix 3. London: HMSO, pp. 1-20.", "Appendix to: ...")
_APPENDIX_LABEL_RE = re.compile(
    r"^(?:Appendix|APPENDIX|Appendices)(?:\s+(?:[A-Z]|\d{1,2}))?[.:]\s+[A-Z](?!.*(?:\bpp\.|\b(?:1[5-9]\d\d|20\d\d)\b))")
#: A block after the keywords that opens with a label of its own: another language's abstract
#: ("RESUMO.", "Resumen:"), abbreviations, a licence ("\u00a9 The Author(s)"); no introduction
_LABELLED_NOTE_RE = re.compile(
    r"^(?:\u00a9|(?i:copyright|abbreviations|r[e\u00e9]sum[eo\u00e9]n?|zusammenfassung|riassunto)\b|"
    r"[A-Z\u00c0-\u00dd][A-Z\u00c0-\u00dd\s-]{2,}[.:])")
#: Headings that end a reference list printed before the back matter.
_AFTER_REFERENCES_RE = re.compile(
    r"^(?:acknowledge?ments?|author(?:s'?)? contributions?|funding|conflicts? of interest|competing interests?|"
    r"data availability|supporting information|figure (?:legends|captions)|tables?|about the authors?|"
    r"biograph(?:y|ies)|declarations?|ethics)\b",
    re.IGNORECASE,
)
_REFERENCES_RE = re.compile(
    r"^(?:references?(?: and notes| cited)?|bibliography|literature cited|works cited|cited literature|"
    r"reference list|citations|further reading|(?:literature|studies|papers|articles|works) "
    r"(?:included|reviewed|analy[sz]ed)\b.*)$",
    re.IGNORECASE,
)
#: A footnote's opening: its mark, a number or a symbol, then its text ("1 The data ...", "*Corresponding").
_FOOTNOTE_MARK_RE = re.compile(rf"^(?:{FOOTNOTE_MARK})\s*[^\W\d_]")
#: A note's opening as a formula's first row cannot be: its mark, then a word ("1 The data",
#: "* Corresponding"; a fraction's "1 N ∑" is math).
_NOTE_OPENING_RE = re.compile(rf"^(?:{FOOTNOTE_MARK})\s*[^\W\d_]{{2}}")
#: What a first page's note on its authors says: whom to write to.
_AUTHOR_NOTE_RE = re.compile(r"@|corresponding author|e-mail", re.IGNORECASE)
#: Signs that put a line in a formula ("Tcomm + Tcomp"), not a heading.
_FORMULA_SIGN_RE = re.compile(r"[=+<>^_\\|\u2211\u220f\u222b\u2264\u2265]")
_FIRST_ENTRY_RE = re.compile(r"^\[1\]\s+[A-Z]")
_NEXT_ENTRY_RE = re.compile(r"^\[(?:[2-9]|\d\d)\]\s+\S")
_NOT_ALNUM_RE = re.compile(r"[\W_]+")
_KEYWORD_LABELS = r"(?:key\s?words?|index terms|subjects?|ccs concepts)"
_KEYWORDS_RE = re.compile(rf"^{_KEYWORD_LABELS}\b", re.IGNORECASE)
#: The same label alone or before its colon, even set as a head ("KEYWORDS"; not "Subjects and Methods").
_KEYWORDS_LABEL_RE = re.compile(rf"^{_KEYWORD_LABELS}\s*(?:[:.\u2014\u2013-]|$)", re.IGNORECASE)
#: A structured abstract's part label at a line's start ("Results: Eight patients ..."), which
#: opens a paragraph even where the line before runs to the column's edge.
_ABSTRACT_PART_RE = re.compile(
    r"^(?:background|context|introduction|objectives?|aims?|purpose|(?:materials and )?methods?|"
    r"methodology|design|setting|participants|patients|interventions?|findings|results?|discussion|"
    r"interpretation|significance|implications|conclusions?)\s?:",
    re.IGNORECASE,
)
#: Pages from the paper's first on which a late "Abstract" label is looked for.
FRONT_PAGES_AT_MOST = 6
#: Works an unlabelled first-page text cites from which it is body, not an abstract.
MIN_CITED_WORKS_OF_BODY = 3
# the publisher's copyright line closing an abstract ("© 2008 Elsevier Ltd. All rights reserved.")
_COPYRIGHT_RE = re.compile(r"^(?:©|\(c\)\s|copyright\b)|\ball rights reserved\.?$", re.IGNORECASE)
# a table of contents: its label, and entries that run on in dot leaders to a page number
_CONTENTS_RE = re.compile(r"^(?:table of )?contents$", re.IGNORECASE)
_NUMBER_LEAD = re.compile(r"^(?:\d{1,2}|[IVX]{1,4})\.?\s+")
_FIRST_SECTION_NAMES = re.compile(
    r"^(?:introduction|background|motivation|overview|preliminaries|related work)\b", re.IGNORECASE
)


def _body_font(pages: list[Page], stats: Stats) -> str:
    """The font carrying most characters in lines of the body's size."""
    counts: Counter = Counter()
    for page in pages:
        for line in page.lines:
            if not line.role and abs(line.size - stats.body_size) <= 0.05 * stats.body_size:
                counts[line.font] += len(line.text)
    return counts.most_common(1)[0][0] if counts else ""


def _style(line: Line) -> tuple[str, float]:
    """A line's font and size (to a quarter point): how a paper sets one kind of head."""
    return line.font, round(line.size * 4) / 4


def _row_count(lines: list[Line]) -> int:
    """How many rows the lines make (pieces of a row cut at wide gaps count once)."""
    return 1 + sum(1 for prev, line in pairwise(lines) if not same_row(prev, line))


def _joined_row(lines: list[Line]) -> Line:
    """The pieces of one row as one line (itself when there is one)."""
    if len(lines) == 1:
        return lines[0]
    pieces = sorted(lines, key=lambda l: l.x0)
    first, last = pieces[0], pieces[-1]
    row = Line([w for piece in pieces for w in piece.words], first.page, all(p.bold for p in pieces),
               first.font, last.last_font, None, first.size, first.col)
    row.band, row.role = first.band, first.role
    return row


def _bold_name(font: str) -> bool:
    """Whether a font name says bold, for a head run into its paragraph. Stricter than the
    line weight typography reads: a medium weight or TeX's CMBX opens no run-in head (the
    rule was measured without them; with them some ACL PDFs gain a dozen heads, unchecked)."""
    return bool(re.search(r"bold|black|heavy|semibold|demi|-bd\b|\.b$|-b$", font_base_name(font), re.IGNORECASE))


def _italic(font: str) -> bool:
    """Whether a font name says italic or oblique."""
    return bool(re.search(r"ital|oblique|-it\b|[a-z]it$", font, re.IGNORECASE))


def _folded(text: str) -> str:
    """``text`` lower-cased with everything but letters and digits removed (line breaks and
    hyphenation do not change it)."""
    return _NOT_ALNUM_RE.sub("", text.lower())


def _is_copyright(lines: list[Line]) -> bool:
    """Whether a paragraph is a copyright line (short, so an abstract's last sentence run on
    into it is not taken for one)."""
    text = " ".join(l.text for l in lines).strip()
    return len(text) <= 200 and _COPYRIGHT_RE.search(text) is not None


def _runs_on(paragraph: Unit, first: Line) -> bool:
    """Whether ``first`` goes on with the open sentence ``paragraph`` ends with: it starts in
    lower case or ends a word the line before cut."""
    return first.text[:1].islower() or paragraph.lines[-1].broken


def _centred(line: Line, left: float, right: float) -> bool:
    """Whether ``line`` sits centred between ``left`` and ``right``."""
    return abs((line.x0 - left) - (right - line.x1)) < 2 * max(line.size, 1.0)


def _centred_in(line: Line, block: VBlock) -> bool:
    """Whether ``line`` is indented and centred in its block's own width (a column's edge is
    measured from lines like it, so a short centred line may set it)."""
    left, right = min(l.x0 for l in block.lines), max(l.x1 for l in block.lines)
    return line.x0 - left >= 2 * max(line.size, 1.0) and _centred(line, left, right)


def _two_row_roman_head(block: VBlock) -> Optional[tuple[str, str, list[Line]]]:
    """IEEE's upper-case head too long for one row ("II. HOW RESEARCH SOFTWARE ENGINEERING MIGHT
    BE" over a centred "IN 2030") at the top of its paragraph's block: set in body type, it is
    told by its Roman number, its capitals and the centred second row."""
    first, second = block.lines[0], block.lines[1]
    match = _ROMAN_HEAD_RE.match(first.text.strip())
    rest = second.text.strip()
    if match is None or not match.group("title").isupper() or not rest.isupper() or len(rest.split()) > 6:
        return None
    if len(block.lines) > 2 and same_row(second, block.lines[2]):
        return None
    if not _centred_in(second, block):
        return None
    return match.group("num"), f"{match.group('title').strip()} {rest}", block.lines[2:]


def _centred_capitals_head(block: VBlock) -> Optional[tuple[None, str, list[Line]]]:
    """IEEE's unnumbered head ("ACKNOWLEDGMENT") on the first row of its paragraph's block, told
    by its capitals and its centring alone (it is set in body type)."""
    first = block.lines[0]
    text = first.text.strip()
    if not re.fullmatch(r"[A-Z][A-Z&\- ]{4,40}", text) or len(text.split()) > 4 or not _centred_in(first, block):
        return None
    return None, text, block.lines[1:]


def _at_part_labels(paragraphs: list[list[Line]]) -> list[list[Line]]:
    """``paragraphs`` split further where a line after a closed sentence opens with a structured
    abstract's part label ("... Kruskal-Wallis test." / "Results: Eight patients ...")."""
    split: list[list[Line]] = []
    for lines in paragraphs:
        split.append([lines[0]])
        for prev, line in pairwise(lines):
            if prev.text.rstrip().endswith(TERMINAL_PUNCT) and _ABSTRACT_PART_RE.match(line.text):
                split.append([line])
            else:
                split[-1].append(line)
    return split


def _is_prose(block: VBlock) -> bool:
    """A long block of running text: three lines or more, mostly lower-case words (an author
    list or affiliations are mostly capitalised)."""
    if len(block.lines) < 3 or len(block.text) < 250:
        return False
    words = block.text.split()
    return sum(w[:1].islower() for w in words) >= 0.5 * len(words)


def _is_contents(block: VBlock) -> bool:
    """Whether ``block`` is a table of contents' label or entries ("2.1. Coal . . . . 12")."""
    text = block.text.strip()
    return bool(_CONTENTS_RE.match(text)) or all(CONTENTS_ENTRY_RE.search(l.text.strip()) for l in block.lines)


class Classifier:
    """Walks the visual blocks in reading order and turns them into text units.

    States: ``front`` (before the abstract or first section), ``abstract``, ``body`` and
    ``refs`` (the bibliography, set aside until an appendix heading).
    """

    def __init__(self, pages: list[Page], stats: Stats, title: list[VBlock], first_page: int = 0) -> None:
        self.pages = pages
        self.stats = stats
        self.title = title
        # the title's letters and digits, to find it printed again after page one
        self.folded_title = _folded(" ".join(l.text for b in title for l in b.lines))
        self.first_page = first_page  # the paper's first page: 1 after a repository's cover page
        self.units: list[Unit] = []
        self.sections: list[Section] = []
        self.section_sizes: list[float] = []
        # (font, size) of the one-row unnumbered heads read so far: a later line set so is a
        # head over a paragraph in any font (Nature's "Methods" over a bold run-in head)
        self.head_styles: set[tuple[str, float]] = set()
        # the size of a section set in small type throughout (Nature's Methods), once a head
        # is followed by running text in it; None while the body is in its own size
        self.small_body_size: Optional[float] = None
        self.state = "front"
        label = next(
            (b for b in self._blocks(max_page=first_page + 2) if b.page >= first_page
             and self._abstract_label(b) is not None), None
        ) or self._late_abstract_label()
        self.has_abstract_label = label is not None
        # the last page front matter may fill: the second, or a late label's
        self.front_end_page = max(first_page + 1, label.page if label is not None else first_page)
        # page-one blocks wholly above the "Abstract" label (or above where running text
        # starts) are front matter, wherever the column order puts them (an author block
        # in the right column)
        self.front_floor = (
            label.bbox[1] if label is not None and label.page == first_page else self._text_top()
        )
        self.abstract_size: Optional[float] = None
        self.abstract_page: Optional[int] = None  # the page of the abstract's last paragraph
        self.interrupted = False
        self.reference_blocks: list[VBlock] = []
        self.footnotes: list[Unit] = []
        self.list_printed = False  # a reference list's heading (or its first entries) was seen
        self.list_was_a_box = False  # the last list ended where the body's numbering went on
        self.body_font = _body_font(pages, stats)
        self.upcoming: Optional[VBlock] = None  # the block after the one being classified
        self.ahead: list[VBlock] = []  # the few blocks after it, ``upcoming`` first
        # an abstract printed without a label, above where running text starts (REVTeX)
        self.unlabelled_abstract = None if label is not None else self._prose_above_text()
        self.formulas = DisplayFormulas(pages)

    def _text_top(self) -> Optional[float]:
        """Where page one's running text starts: its first section heading or block of body
        lines, whichever is higher (for papers without an abstract label)."""
        page = self.pages[self.first_page]
        tops = []
        for block in page.blocks:
            # the top tenth holds a journal's header ("Bonvoisin, J et al. 2017 What is ..."),
            # never the running text
            if any(block is t for t in self.title) or block.bbox[3] < 0.1 * page.height:
                continue
            head = self._heading(block)
            if (
                head is not None
                and (head[0] or _FIRST_SECTION_NAMES.match(head[1]))
                or sum(is_body_like(l, page, self.stats) for l in block.lines) >= 2
            ):
                tops.append(block.bbox[1])
        return min(tops, default=None)

    def _prose_above_text(self) -> Optional[VBlock]:
        """The lowest block of prose on the first page above where running text starts:
        three lines or more in about the body's size, mostly lower-case words (an author
        or affiliation block is mostly capitalised)."""
        if self.front_floor is None:
            return None
        page = self.pages[self.first_page]
        found = None
        for block in page.blocks:
            words = block.text.split()
            if (
                block.bbox[3] < self.front_floor - 1
                and not any(block is t for t in self.title)
                and not block.lines[0].role
                and len(block.lines) >= 3
                and len(block.text) >= 400
                and block.size >= 0.85 * self.stats.body_size
                and sum(w[:1].islower() for w in words) >= 0.6 * len(words)
                and (found is None or block.bbox[1] > found.bbox[1])
            ):
                found = block
        return found

    def _late_abstract_label(self) -> Optional[VBlock]:
        """An "Abstract" label after pages of authors and affiliations (a consortium's preprint
        with fifty authors), when no running text comes before it; else None."""
        for block in self._blocks(max_page=self.first_page + FRONT_PAGES_AT_MOST):
            if block.page < self.first_page or any(block is t for t in self.title):
                continue
            if self._abstract_label(block) is not None:
                return block
            first = _NUMBER_LEAD.sub("", block.lines[0].text.strip())
            if _is_prose(block) or (len(block.lines) <= 2 and _FIRST_SECTION_NAMES.match(first)):
                return None  # running text or the body's first heading came first
        return None

    def _blocks(self, max_page: Optional[int] = None) -> Iterator[VBlock]:
        for page in self.pages[:max_page]:
            yield from page.blocks

    def run(self) -> list[Unit]:
        """Classify every block; return the units (title first, footnotes last)."""
        if self.title:
            self.units.append(Unit("title", [l for b in self.title for l in b.lines]))
        blocks = list(self._blocks())
        for index, block in enumerate(blocks):
            self.ahead = blocks[index + 1:index + 1 + _LOOK_AHEAD]
            self.upcoming = self.ahead[0] if self.ahead else None
            if block.page < self.first_page or any(block is t for t in self.title):
                continue  # a repository's cover page is not the paper
            if block.size < 0.55 * self.stats.body_size:
                continue  # a tiny watermark ("Downloaded from Wiley Online Library") between blocks
            if (
                block.page == self.first_page
                and self.front_floor is not None
                and block.bbox[3] < self.front_floor - 1
                and block is not self.unlabelled_abstract
            ):
                continue
            lines = [l for l in block.lines if not l.role]
            if len(lines) != len(block.lines):
                self.interrupted = True
            lines = lines[self._repeated_title_lines(lines, block.page):]
            if lines:
                self._take(VBlock(lines, block.page))
        return self.units + self.footnotes

    def _repeated_title_lines(self, lines: list[Line], page: int) -> int:
        """How many of ``lines`` open with the paper's title printed again after the first
        page (a manuscript repeats it above its introduction); 0 when they do not."""
        title = self.folded_title
        if not title or page <= self.first_page:
            return 0
        text = ""
        for count, line in enumerate(lines, start=1):
            text = _folded(f"{text} {line.text}")
            if text == title:
                return count
            if not title.startswith(text):
                return 0
        return 0

    # -- states

    def _take(self, block: VBlock) -> None:
        # a cover page (JSTOR, ResearchGate) prints "REFERENCES" or "CITATIONS" on page one
        front = self.state == "front" and block.page <= self.first_page
        if self.state != "refs" and not front and self._references_label(block):
            self.state = "refs"  # a bibliography label in any typeface, in any state
            self.list_printed = True
            self.interrupted = True
            # a list the body went on after (a "References" box beside the text) gives way
            # to the paper's own list; lists after each other ("Literature cited", then
            # "Studies included in the review") are one bibliography
            if self.list_was_a_box:
                self.reference_blocks = []
            self.list_was_a_box = False
            if len(block.lines) > 1:
                self._refs(VBlock(block.lines[1:], block.page))
            return
        if self.state == "front":
            self._front(block)
        elif self.state == "abstract":
            self._abstract(block)
        elif self.state == "post_abstract":
            if _is_contents(block) or _KEYWORDS_LABEL_RE.match(block.lines[0].text):
                return  # a table of contents, or keywords after others (ACM's CCS concepts)
            after = self.abstract_page if self.abstract_page is not None else self.first_page
            # the body begins at a heading or, unmarked (a run-in "Introduction"), by the page
            # after the abstract's at the latest: keywords and notes never fill a page
            if self._heading(block) is not None or block.page > after or self._unheaded_body(block):
                self.state = "body"
                self._body(block)
            elif self._author_note(block):
                # the corresponding author's note read before the first head (Elsevier sets
                # it in the left column beside the introduction's first lines)
                self.footnotes.extend(Unit("footnote", lines, None) for lines in self._footnotes(block))
        elif self.state == "refs":
            self._refs(block)
        else:
            self._body(block)

    def _front(self, block: VBlock) -> None:
        if block.page > self.front_end_page:
            # front matter never runs past the paper's second page (or a late abstract label's):
            # the body began unmarked
            self.state = "body"
            self._body(block)
            return
        label = self._abstract_label(block)
        if label is not None:
            self.state = "abstract"
            if label:  # run-in label: "Abstract. We present ..."
                rest = block.lines[0].after_chars(len("".join(label.split())))
                rest = ([rest] if rest is not None else []) + block.lines[1:]
                self._abstract(VBlock(rest, block.page))
            elif len(block.lines) > 1:
                self._abstract(VBlock(block.lines[1:], block.page))
            return
        if self.has_abstract_label:
            return  # the front matter ends at the label
        head = self._heading(block)
        if head is not None and (head[0] or _FIRST_SECTION_NAMES.match(head[1])):
            self.state = "body"
            self._body(block)
        elif self._cites_like_a_body(block):
            # prose that cites works opens the body, no abstract (a news article, an editorial)
            self.state = "body"
            self._body(block)
        elif self._abstract_like(block) or (
            self.unlabelled_abstract is not None and block.lines[0] is self.unlabelled_abstract.lines[0]
        ):
            self.state = "abstract"
            self._abstract(block)

    def _abstract(self, block: VBlock) -> None:
        if not block.lines:
            return
        if _is_contents(block):
            self.state = "post_abstract"  # a table of contents after the abstract ends it
            return
        if _KEYWORDS_LABEL_RE.match(block.lines[0].text):
            self.state = "post_abstract"  # also where set as a head of its own ("KEYWORDS", Wiley)
            return
        if self._heading(block) is not None:
            self.state = "body"
            self._body(block)
            return
        if _KEYWORDS_RE.match(block.lines[0].text):
            self.state = "post_abstract"
            return
        size = block.size
        written = sum(len(l.text) for u in self.units if u.kind == "abstract" for l in u.lines)
        if self.abstract_size is not None and (
            abs(size - self.abstract_size) > 0.08 * self.abstract_size or written > 4000
        ):
            if self._between_abstract_and_its_rest(block):
                # a box between a labelled abstract's open sentence and its rest (PeerJ's "How to
                # cite" at the foot of page one): set aside as the body sets small type aside
                # (its footnotes kept), and the abstract goes on
                self.interrupted = True
                self.footnotes.extend(Unit("footnote", lines, None) for lines in self._footnotes(block))
                return
            self.state = "body"
            self._body(block)
            return
        if self.abstract_size is None:
            self.abstract_size = size
        for index, lines in enumerate(_at_part_labels(self._paragraphs(block))):
            # the keywords or the copyright line end the abstract, also where no wider gap sets
            # them apart from it (a double-spaced manuscript)
            if _KEYWORDS_RE.match(lines[0].text) or _is_copyright(lines):
                self.state = "post_abstract"
                return
            open_abstract = self._open_abstract() if index == 0 else None
            if open_abstract is not None and _runs_on(open_abstract, lines[0]):
                open_abstract.lines.extend(lines)  # the sentence a page or column break cut
            else:
                self.units.append(Unit("abstract", lines))
            self.abstract_page = block.page

    def _between_abstract_and_its_rest(self, block: VBlock) -> bool:
        """Whether ``block``, in small type, sits between a labelled abstract's open sentence
        and its rest: the next block in the abstract's size, after small type only (a note
        on the authors, the licence and the journal's foot under the abstract's first part,
        Wiley), goes on with that sentence (an abstract guessed without a label is not run on)."""
        # smaller than the body or the abstract, whichever is bigger (Wiley's 8.2-pt abstract
        # over a body measured at 7 pt, its tables and references many)
        open_abstract = self._open_abstract()
        small = 0.88 * max(self.stats.body_size, self.abstract_size or 0.0)
        if not (self.has_abstract_label and block.size < small and open_abstract is not None
                and self.abstract_size is not None):
            return False
        for upcoming in self.ahead:
            if upcoming.page > block.page + 1:
                return False  # the abstract's rest is on its page or the next
            if abs(upcoming.size - self.abstract_size) <= 0.08 * self.abstract_size:
                return _runs_on(open_abstract, upcoming.lines[0])
            if upcoming.size >= small:
                return False
        return False

    def _open_abstract(self) -> Optional[Unit]:
        """The abstract's last paragraph when it is the last unit and its last line leaves a
        sentence open, else None."""
        last = self.units[-1] if self.units else None
        if last is None or last.kind != "abstract" or last.lines[-1].text.rstrip().endswith(TERMINAL_PUNCT):
            return None
        return last

    def _refs(self, block: VBlock) -> None:
        self.small_body_size = None  # a small-type section ends at the reference list
        head = self._heading(block)
        if (
            head is not None
            and self._strong(block)
            and (_APPENDIX_HEAD_RE.match(head[1]) or _AFTER_REFERENCES_RE.match(head[1])
                 or (head[0] and head[0][0].isalpha()) or self._new_numbered_section(head[0], block))
        ) or _APPENDIX_LABEL_RE.match(block.lines[0].text):  # Zoologia's plain "Appendix. Examined material."
            self.state = "body"
            self.list_was_a_box = head is not None and self._new_numbered_section(head[0], block)
            self._body(block)
            return
        self.reference_blocks.append(block)

    def _unlabelled_list_start(self, block: VBlock) -> Optional[int]:
        """Where a block opens a numbered reference list that has no heading: a line "[1] Name"
        among its first three, and "[2]", "[3]" lines after it in the same block."""
        lines = block.lines
        for i, line in enumerate(lines[:3]):
            if _FIRST_ENTRY_RE.match(line.text):
                later = sum(1 for other in lines[i + 1:] if _NEXT_ENTRY_RE.match(other.text))
                return i if later >= 2 else None
        return None

    def _footnotes(self, block: VBlock) -> list[list[Line]]:
        """The footnotes in a small-type block low on its page: each opens with its mark
        ("1", "*", "\u2020") and runs until the next mark; [] for any other small block."""
        page = self.pages[block.page]
        if block.bbox[1] < 0.55 * page.height or not _FOOTNOTE_MARK_RE.match(block.lines[0].text):
            return []
        notes: list[list[Line]] = []
        for line in block.lines:
            if _FOOTNOTE_MARK_RE.match(line.text) or not notes:
                notes.append([line])
            else:
                notes[-1].append(line)
        return notes

    def _new_numbered_section(self, number: Optional[str], block: VBlock) -> bool:
        """A numbered heading in body size or larger whose number no section has had: the
        body goes on after a "References" box (a sidebar that lists cited works)."""
        if not number or not number[0].isdigit() or block.size < 0.98 * self.stats.body_size:
            return False
        return all(section.number != number for section in self.sections)

    def _references_label(self, block: VBlock) -> bool:
        """Whether the block opens with a line that is only "References" (or the like); the
        entries may follow in the same block when the label is set in their size."""
        lines = block.lines
        if not _REFERENCES_RE.match(lines[0].text.strip(" .:")):
            return False
        return len(lines) == 1 or not same_row(lines[0], lines[1])

    def _body(self, block: VBlock) -> None:
        start = self._unlabelled_list_start(block)
        if start is not None:
            # a reference list printed without a heading (REVTeX): "[1] ...", "[2] ..." lines
            if start:
                self._body(VBlock(block.lines[:start], block.page))
            self.state = "refs"
            self.list_printed = True
            self.interrupted = True
            self.reference_blocks = []
            self._refs(VBlock(block.lines[start:], block.page))
            return
        # a formula ("PSL =") before heads; one in small type is no footnote, but a plot's
        # "n = 20" is no formula either: that needs a printed number
        small = block.size < 0.88 * self.stats.body_size
        if not (small and _NOTE_OPENING_RE.match(block.text)) and self._formula(block, numbered_only=small):
            return
        head = self._heading(block)
        if head is not None:
            number, title = head
            if _REFERENCES_RE.match(title):
                self.state = "refs"
                self.list_printed = True
                self.interrupted = True
                return
            self._add_section(number, title, block)
            return
        lone = self._lone_head(block)
        if lone is not None:
            self._add_section(*lone, block, run_in=True)
            return
        if self._author_note(block) or (small and not self._small_type_section(block)):
            if self.formulas.is_math_block(block) and not _NOTE_OPENING_RE.match(block.text):
                self.formulas.hold(block)  # a formula's scripts, set apart: the formula under them opens with them
            self.interrupted = True  # footnotes, affiliations, stray figure text
            # kept aside, so that a paragraph running on past them is still continued
            self.footnotes.extend(Unit("footnote", lines, self._current_section()) for lines in self._footnotes(block))
            return
        if self.formulas.is_math_block(block):
            # math that is no formula (scripts, a table's numbers): the sentence around it
            # continues; a formula right under it opens with it
            self.formulas.hold(block)
            return
        parts = self.formulas.split_out(block)
        if parts is not None:
            before, formula, after = parts
            self.formulas.resume()  # scripts held over the block open its first part
            if before:
                self._body(VBlock(before, block.page))
            if not self._formula(VBlock(formula, block.page)):
                self._body(VBlock(formula, block.page))
            if after:
                self._body(VBlock(after, block.page))
            return
        run_in = self._run_in_heading(block)
        if run_in is not None:
            number, title, rest = run_in
            first = block.lines[0]
            # the heading's own words: the first line less what the paragraph keeps of it
            kept = len(rest[0].words) if rest and rest[0] is not first and rest[0].words[-1] is first.words[-1] else 0
            if kept:
                heads = [first.head(len(first.words) - kept)]
            else:  # the head's own lines: those before the rest (all, when no paragraph follows)
                heads = block.lines[: block.lines.index(rest[0])] if rest and rest[0] in block.lines else block.lines
            self._add_section(number, title, VBlock(heads, block.page), run_in=True)
            if not rest:
                return
            block = VBlock(rest, block.page)
            # a subsection's head right under its section's, in the same block ("C. REVIEW
            # STRATEGY" over "1) MATERIALS AND METHODS" over the paragraph)
            nested = self._own_line_head(block) if rest[0] is not first else None
            if nested is not None:
                own = block.lines[: len(block.lines) - len(nested[2])]  # its rows: one, or two (IEEE)
                self._add_section(nested[0], nested[1], VBlock(own, block.page), run_in=True)
                block = VBlock(nested[2], block.page)
        for i, lines in enumerate(self._paragraphs(block)):
            if i == 0 and self._continues(lines[0], block):
                self.units[-1].lines.extend(lines)
            else:
                self.units.append(Unit("paragraph", lines, self._current_section()))
        self.interrupted = False
        if block.size >= 0.88 * self.stats.body_size:
            self.small_body_size = None  # the body is back in its own size

    # -- pieces

    def _formula(self, block: VBlock, numbered_only: bool = False) -> bool:
        """Whether ``block`` is (part of) a display formula, added to the units if so; the
        text under it opens a new paragraph, as GROBID's TEI has it."""
        if not self.formulas.take(block, self.units, self._current_section(), numbered_only):
            return False
        self.interrupted = False
        return True

    def _author_note(self, block: VBlock) -> bool:
        """Whether a block low on the paper's first page, opening with a footnote mark and set
        smaller than the body (if only by a little: 9.8 pt under 10-pt text), is a note on the
        authors: one that says whom to write to (an e-mail address, "* Corresponding author."),
        maybe after their affiliations."""
        return (
            block.page == self.first_page
            and block.size < 0.99 * self.stats.body_size
            and bool(self._footnotes(block))
            and _AUTHOR_NOTE_RE.search(block.text) is not None
        )

    def _small_type_section(self, block: VBlock) -> bool:
        """Whether a small-type block is the body's text all the same: running text right
        under a head (its size is then recorded as the section's), or a block in the recorded
        size after it until a reference list (Nature sets its whole Methods section two
        points below the body); never footnotes low on the page."""
        if self._footnotes(block):
            return False
        if self.small_body_size is not None and abs(block.size - self.small_body_size) < 0.2:
            return True
        if self.units and self.units[-1].kind == "heading" and _is_prose(block):
            head = self.units[-1].lines[-1]
            if head.page == block.page and 0 <= block.bbox[1] - head.y1 <= 3 * max(head.size, 1.0):
                self.small_body_size = block.size
                return True
        return False

    def _current_section(self) -> Optional[int]:
        return len(self.sections) - 1 if self.sections else None

    def _add_section(self, number: Optional[str], title: str, block: VBlock, run_in: bool = False) -> None:
        if number is None and not run_in and self._continues_heading(block):
            self.units[-1].lines.extend(block.lines)
            section = self.sections[-1]
            section.title = f"{section.title} {title}"
            return
        if number and _SUB_ITEM_HEAD_RE.match(f"{number} X"):
            level = self._sub_item_level(number)
        else:
            level = number.count(".") + 1 if number else self._unnumbered_level(block.size)
        if number and re.fullmatch(r"[A-H]", number) and self._under_roman():
            level = 2  # IEEE: "A." subsections under "II." sections
        parent = next(
            (i for i in range(len(self.sections) - 1, -1, -1) if self.sections[i].level < level),
            None,
        )
        self.sections.append(Section(title=title, number=number, level=level, parent=parent))
        self.section_sizes.append(block.size)
        if number is None and _row_count(block.lines) == 1 and block.lines[0].font != self.body_font:
            self.head_styles.add(_style(block.lines[0]))
        self.units.append(Unit("heading", block.lines, len(self.sections) - 1))
        self.interrupted = False

    def _sub_item_level(self, number: str) -> int:
        """Level of a "1)" or "a:" heading: a sibling of the last one of its kind since the
        last section of another style, below that section otherwise ("1)" one level below
        "A.", "a:" one below "1)")."""
        digit = number[0].isdigit()
        for section in reversed(self.sections):
            if section.number and _SUB_ITEM_HEAD_RE.match(f"{section.number} X"):
                if section.number[0].isdigit():
                    return min(4, section.level + (0 if digit else 1))
                if not digit:
                    return section.level
                continue  # a lettered item seen while placing a numbered one: look above it
            return min(4, section.level + 1)
        return 1

    def _continues_heading(self, block: VBlock) -> bool:
        """A heading's second line set apart by a font change ("4 A Linear Time Algorithm for"
        / "FIXED ALIGNMENT DECODING"): same size, right under the heading before."""
        if not self.units or self.units[-1].kind != "heading":
            return False
        last = self.units[-1].lines[-1]
        size = self.section_sizes[-1]
        return (
            last.page == block.page
            and abs(block.size - size) <= 0.08 * size
            and 0 <= block.bbox[1] - last.y1 < 0.8 * size
        )

    def _under_roman(self) -> bool:
        """Whether the last top-level numbered section has a Roman number."""
        last = next((sec for sec in reversed(self.sections) if sec.number and sec.level == 1
                     and not re.fullmatch(r"[A-H]", sec.number)), None)
        return last is not None and re.fullmatch(r"[IVX]{1,4}", last.number) is not None

    def _unnumbered_level(self, size: float) -> int:
        """Level of an unnumbered heading: 1 + how many bigger heading sizes came before."""
        bigger = {round(s * 2) / 2 for s in self.section_sizes if s > size + 0.4}
        return min(3, 1 + len(bigger))

    def _reaches_right(self, line: Line) -> bool:
        """Whether a line runs to its column's right edge (so it wraps: running text)."""
        page = self.pages[line.page]
        _, right = page.edge(line)
        return line.x1 >= right - 2 * max(line.size, 1.0)

    def _strong(self, block: VBlock) -> bool:
        """Bold (pieces without a letter or digit aside: Wiley's "|" after the number), or
        clearly larger than body text."""
        return (all(l.bold for l in block.lines if any(c.isalnum() for c in l.text))
                or block.size >= 1.08 * self.stats.body_size)

    def _heading(self, block: VBlock) -> Optional[tuple[Optional[str], str]]:
        """(number or None, title) when the block is a section heading."""
        text = block.text.strip()
        rows = _row_count(block.lines)
        # up to three rows, each of a piece or two more at most (a number and a bar set
        # apart); a table's header row has many
        if rows > 3 or len(block.lines) > rows + 2 or len(text) > 150 or caption_match(text):
            return None
        if block.size < 0.9 * self.stats.body_size:
            return None
        strong = self._strong(block)
        words = text.split()
        match = NUMBERED_HEAD_RE.match(text)
        if match and int(match.group("num").split(".")[0]) <= 30 and len(words) <= 16:
            title = match.group("title").strip()
            # one row, maybe in pieces: the number set apart from its title by a wide gap
            row = _joined_row(block.lines) if all(same_row(block.lines[0], l) for l in block.lines) else None
            plain_ok = (
                row is not None
                and title[:1].isupper()
                and not any(c.isdigit() for c in title)
                and len(words) <= 9
                and not title.endswith((".", ",", ";", ":"))
                and not row.broken
                and not self._reaches_right(row)
            )
            if (strong and not title.endswith((",", ";"))) or plain_ok:
                return match.group("num"), title.rstrip(".").strip()
        if (strong and len(block.lines) <= 2) or self._ieee_style_head(block):
            for regex in (_LETTER_HEAD_RE, _ROMAN_HEAD_RE):
                match = regex.match(text)
                if match and len(words) <= 12:
                    return match.group("num"), match.group("title").rstrip(".").strip()
        if len(words) > 18 or not text[:1].isupper() or text.endswith((".", ",", ";")):
            return None
        if sum(c.isalpha() for c in text) < 3 or block.lines[-1].broken:
            return None
        letters = sum(c.isalpha() for c in text)
        if letters < 0.7 * len(text.replace(" ", "")):
            return None
        if (strong and len(block.lines) <= 2) or (
            text.isupper() and len(words) <= 6 and len(block.lines) == 1
        ):
            return None, text.rstrip(":").strip()
        return None

    def _ieee_style_head(self, block: VBlock) -> bool:
        """IEEE's heads in body size and weight: one line, "IV. UPPER CASE TITLE" or an
        italic "B. Title", stopping short of the column's right edge."""
        if len(block.lines) != 1 or self._reaches_right(block.lines[0]):
            return False
        line = block.lines[0]
        text = line.text.strip()
        if text.endswith((".", ",", ";", ":")) and not _ROMAN_HEAD_RE.match(text + " X"):
            return False
        roman = _ROMAN_HEAD_RE.match(text)
        if roman and roman.group("title").upper() == roman.group("title"):
            return True
        return bool(_LETTER_HEAD_RE.match(text)) and _italic(line.font)

    def _run_in_heading(self, block: VBlock) -> Optional[tuple[Optional[str], str, list[Line]]]:
        """A heading at the start of a paragraph's block: on a line of its own in its own font,
        or run in ("2.1 Data. We ...")."""
        own_line = self._own_line_head(block) or self._bold_pieces_head(block)
        if own_line is not None:
            return own_line
        first = block.lines[0]
        fonts = first.word_fonts
        if not fonts or len(fonts) < 3:
            return None
        lettered = re.match(r"^(?:[A-H]|[IVX]{1,4})\.$", first.words[0].text)
        if lettered:
            return self._run_in_lettered(first, block)
        if not NUMBERED_HEAD_RE.match(first.text):
            return self._run_in_bold(first, block)
        for k in range(1, min(len(fonts), 12)):
            if fonts[k] != fonts[1]:
                return None
            if first.words[k].text.endswith("."):
                if k + 1 < len(fonts) and fonts[k + 1] == fonts[1]:
                    return None
                title = " ".join(w.text for w in first.words[1 : k + 1]).rstrip(".")
                rest = ([first.tail(k + 1)] if k + 1 < len(first.words) else []) + block.lines[1:]
                return first.words[0].text.rstrip("."), title, rest
        return None

    def _own_line_head(self, block: VBlock) -> Optional[tuple[Optional[str], str, list[Line]]]:
        """A heading on the first line of a block, in a font of its own that the next line
        leaves ("2.1. Relevant Related Work" in italic, "Reverse Complement", "1) AI EDUCATION
        MODEL"), stopping short of the column's right edge: set in body size and spacing, it
        shares a block with its paragraph."""
        if len(block.lines) < 2 or same_row(block.lines[0], block.lines[1]):
            return None
        two_rows = _two_row_roman_head(block) or _centred_capitals_head(block)
        if two_rows is not None:
            return two_rows
        head = self._head_line(block.lines[0], block.lines[1]) or self._next_numbered_line(block)
        return None if head is None else (*head, block.lines[1:])

    def _bold_pieces_head(self, block: VBlock) -> Optional[tuple[str, str, list[Line]]]:
        """A numbered bold head run into its paragraph with no full stop, its first row cut into
        pieces at the gaps after the number and the title ("2.2.1 | Provocation | In the
        provocation phase, ..."): the bold pieces are the head, the rest the paragraph."""
        row = [line for line in block.lines if same_row(block.lines[0], line)]
        bold = 0
        while bold < len(row) and row[bold].bold:
            bold += 1
        if not 2 <= bold < len(row) or any(line.bold for line in row[bold:]):
            return None
        match = NUMBERED_HEAD_RE.match(" ".join(line.text.strip() for line in row[:bold]))
        if match is None:
            return None
        title = match.group("title").strip()
        if len(title.split()) > 8 or title.endswith((",", ";")) or not row[bold].text[:1].isupper():
            return None
        return match.group("num"), title.rstrip(".:").strip(), block.lines[bold:]

    def _next_numbered_line(self, block: VBlock) -> Optional[tuple[str, str]]:
        """(number, title) when a block's first line, in any font, is a short
        title-case line whose number goes on from the last numbered section ("2.3.1. Data Set
        Description" under "2.3", "2.4.2" after "2.4.1") and the next line opens a paragraph
        with an indent: a heading the font does not tell (MDPI's third level)."""
        line, below = block.lines[0], block.lines[1]
        match = NUMBERED_HEAD_RE.match(line.text.strip())
        if match is None or "." not in match.group("num") or not self._follows_numbering(match.group("num")):
            return None
        title = match.group("title").strip()
        left = self.pages[below.page].edge(below)[0]
        size = max(below.size, 1.0)
        if (
            not title[:1].isupper()
            or len(title.split()) > 12
            or title.endswith((".", ",", ";", ":"))
            or any(c.isdigit() for c in title)
            or self._reaches_right(line)
            or line.broken
            or abs(line.x0 - left) >= 0.6 * size
            or not 0.6 * size <= below.x0 - left <= 6 * size
        ):
            return None
        return match.group("num"), title

    def _follows_numbering(self, number: str) -> bool:
        """Whether ``number`` is the next one after the last numbered section's: its first
        child, or the next at its level or at a level above ("2.3" -> "2.3.1", "2.4", "3")."""
        last = next((s.number for s in reversed(self.sections) if s.number and s.number[0].isdigit()), None)
        if last is None or not re.fullmatch(r"\d+(?:\.\d+)*", last):
            return False
        parts = last.split(".")
        following = {".".join(parts + ["1"])}
        following |= {".".join(parts[:depth] + [str(int(parts[depth]) + 1)]) for depth in range(len(parts))}
        return number in following

    def _lone_head(self, block: VBlock) -> Optional[tuple[Optional[str], str]]:
        """A one-row block in a font other than the body's, right above a paragraph in the
        body's font (an italic "Layered relationships" between paragraphs, BMC's sans-serif
        "Participants"), or in the font and size of an earlier such head over a paragraph in
        any font: a heading in body size and weight."""
        below = self.upcoming
        first = block.lines[0]
        if below is None or below.page != block.page or not all(same_row(first, l) for l in block.lines[1:]):
            return None
        # one row, maybe cut at a wide gap (IEEE's italic "A." and its title set apart)
        line, next_line = _joined_row(block.lines), below.lines[0]
        styled = _style(line) in self.head_styles
        if (
            line.font == self.body_font
            or (next_line.font != self.body_font and not styled)
            or len(below.lines) < 2
            or not 0 <= next_line.y0 - line.y1 <= 3 * max(line.size, 1.0)
            or next_line.col != line.col
        ):
            return None
        return self._head_line(line, next_line, styled)

    def _head_line(self, line: Line, below: Line, styled: bool = False) -> Optional[tuple[Optional[str], str]]:
        """(number or None, title) when ``line``, over ``below``, reads as a heading set in a
        font of its own: the whole line in one font that ``below`` leaves (or, ``styled``, in
        a known head style), short, capitalised or numbered, no sentence or list lead-in, no
        formula."""
        text = line.text.strip()
        if (
            line.font != line.last_font
            or (line.font == below.font and not styled)
            or len(text.split()) > 12
            or self._reaches_right(line)
            or line.broken
            or line.size < 0.9 * self.stats.body_size
            or text.endswith((".", ",", ";", ":"))  # ":" leads into a list or an example
            or not (text[:1].isupper() or text[:1].isdigit() or _SUB_ITEM_HEAD_RE.match(text))
            or not (self._flush_or_centred(line) or abs(line.x0 - below.x0) < 1.0)
            or sum(c.isalpha() for c in text) < max(3, 0.6 * len(text.replace(" ", "")))
            or caption_match(text)
            # an upper-case head ("1) AI EDUCATION MODEL") has no lower-case words: read it
            # in title case, where a formula's single letters still read as one
            or is_math(text.title() if text.isupper() else text)
            or _FORMULA_SIGN_RE.search(text)
        ):
            return None
        for regex in (NUMBERED_HEAD_RE, _LETTER_HEAD_RE, _ROMAN_HEAD_RE, _SUB_ITEM_HEAD_RE):
            match = regex.match(text)
            if match:
                return match.group("num"), match.group("title").rstrip(".:").strip()
        if text[:1].isdigit():
            return None  # a number that opens no heading ("2016). ...", "3 × 3 grid")
        return None, text

    def _flush_or_centred(self, line: Line) -> bool:
        """Whether a line starts at its column's left edge or sits centred in it (a heading
        is not indented, unlike a displayed example, unless its paragraph is too)."""
        left, right = self.pages[line.page].edge(line)
        return line.x0 - left < 0.6 * max(line.size, 1.0) or _centred(line, left, right)

    def _run_in_bold(self, first: Line, block: VBlock) -> Optional[tuple[Optional[str], str, list[Line]]]:
        """An unnumbered bold head run into its paragraph ("Validation We use the term ...",
        "Background: FES is ..."): the bold words up to the change of font, five at most,
        capitalised, closed by a full stop or a colon or followed by a capitalised word."""
        fonts = first.word_fonts or []
        if not fonts or not _bold_name(fonts[0]):
            return None
        k = 1
        while k < len(fonts) and fonts[k] == fonts[0]:
            k += 1
        if k >= len(fonts) or k > 8:
            return None
        bold_text = " ".join(w.text for w in first.words[:k]).strip()
        title = bold_text.rstrip(".:")
        closed = bold_text.endswith((".", ":")) or first.words[k].text[:1].isupper()
        if (not closed or k > 5 or not title[:1].isupper() or sum(c.isalpha() for c in title) < 3
                or caption_match(title)):
            return None
        return None, title, [first.tail(k)] + block.lines[1:]

    def _run_in_lettered(self, first: Line, block: VBlock) -> Optional[tuple[str, str, list[Line]]]:
        """IEEE's "A. Inference Model We consider ...": an italic title after a letter, run
        into its paragraph (the font changes where the text starts), or "II. MODELS AND
        METRICS" alone on the first line of a block that goes on with the paragraph."""
        fonts = first.word_fonts or []
        number = first.words[0].text.rstrip(".")
        if len(block.lines) > 1 and self._ieee_style_head(VBlock([first], block.page)):
            title = " ".join(w.text for w in first.words[1:])
            return number, title.rstrip("."), block.lines[1:]
        if not _italic(fonts[1]):
            return None
        k = 1
        while k < len(fonts) and fonts[k] == fonts[1]:
            k += 1
        if k == len(fonts) or k > 10:
            return None  # the italic runs to the end of what was read: not a run-in title
        title = " ".join(w.text for w in first.words[1:k]).rstrip(".:")
        if not title[:1].isupper():
            return None
        return number, title, [first.tail(k)] + block.lines[1:]

    def _abstract_label(self, block: VBlock) -> Optional[str]:
        """ "" for a standalone "Abstract" label, the label text for a run-in one, else None."""
        text = block.lines[0].text.strip()
        match = ABSTRACT_RE.match(text)
        if match is None:
            return None
        if not match.group("rest"):
            return ""
        label = text[: match.start("rest")].strip()
        # a run-in label needs punctuation or capitals, else it may be prose ("Abstract meaning ...")
        return label if label[-1:] in ".:-\u2014\u2013" or label.isupper() else None

    def _cites_like_a_body(self, block: VBlock) -> bool:
        """First-page prose, not the abstract found above running text, that cites three works
        or more: an abstract cites two at most, a news article's opening cites its sources."""
        return (
            block.page == self.first_page
            and (self.unlabelled_abstract is None or block.lines[0] is not self.unlabelled_abstract.lines[0])
            and _is_prose(block)
            and cited_works(block.text) >= MIN_CITED_WORKS_OF_BODY
        )

    def _unheaded_body(self, block: VBlock) -> bool:
        """Whether ``block``, after the abstract and its keywords on their page, is the running
        text of an introduction printed without a head (Zoologia): prose in the body's size,
        not the small type of notes, dates and licences set there."""
        return (_is_prose(block) and abs(block.size - self.stats.body_size) <= 0.08 * self.stats.body_size
                and not _LABELLED_NOTE_RE.match(block.lines[0].text))

    def _abstract_like(self, block: VBlock) -> bool:
        """Fallback for papers without an "Abstract" label: a long text block on page one."""
        if block.page != self.first_page or not _is_prose(block):
            return False
        page = self.pages[block.page]
        wide = [l for l in block.lines if is_body_like(l, page, Stats(block.size, 1.2))]
        if len(wide) >= 0.6 * len(block.lines):
            return True
        # justified to a right edge of its own, narrower than the page's (Nature Communications)
        rights = [l.x1 for l in block.lines[:-1]]
        return len(rights) >= 4 and max(rights) - min(rights) <= max(block.size, 1.0)

    def _paragraphs(self, block: VBlock) -> list[list[Line]]:
        """Split a text block into paragraphs at indented first lines and short last lines."""
        page = self.pages[block.page]
        paragraphs = [[block.lines[0]]]
        for prev, line in pairwise(block.lines):
            if not same_row(prev, line) and self._paragraph_break(prev, line, page):
                paragraphs.append([line])
            else:
                paragraphs[-1].append(line)
        return paragraphs

    def _paragraph_break(self, prev: Line, line: Line, page: Page) -> bool:
        left, right = page.band_edge(line)
        size = max(line.size, 1.0)
        indented = 0.6 * size <= line.x0 - left <= 6 * size
        prev_indented = prev.x0 - left >= 0.6 * size
        if indented and not prev_indented:
            # a list item's hanging indent: its text runs on from a cut word or an open sentence
            runs_on = prev.broken or (line.text[:1].islower() and not prev.text.rstrip().endswith(TERMINAL_PUNCT))
            return not runs_on
        short = prev.x1 < right - 2.5 * size
        return (
            short and prev.text.rstrip().endswith(TERMINAL_PUNCT) and line.x0 - left < 0.6 * size
        )

    def _continues(self, first: Line, block: VBlock) -> bool:
        """Whether a block's first paragraph continues the previous paragraph (column, page
        or float break in mid-paragraph)."""
        if not self.units or self.units[-1].kind != "paragraph":
            return False
        last = self.units[-1].lines[-1]
        page = self.pages[block.page]
        left = page.band_edge(first)[0]
        size = max(first.size, 1.0)
        last_text = last.text.rstrip()
        open_sentence = not last_text.endswith(TERMINAL_PUNCT)
        runs_on = first.text[:1].islower() and open_sentence
        moved = (last.page, last.band, last.col) != (first.page, first.band, first.col)
        if first.x0 - left >= 0.6 * size:
            # indented: a new paragraph, unless a list item's hanging indent goes on with its
            # open sentence past a page or column break or a float, as far in as its last line
            # (not a sub-item's label: "a) when ...", "ii. the ...")
            indent = last.x0 - self.pages[last.page].band_edge(last)[0]
            return (runs_on and (moved or self.interrupted) and abs(first.x0 - left - indent) < 0.6 * size
                    and not _SUB_ITEM_LABEL_RE.match(first.text))
        if runs_on:
            return True
        if not (moved or self.interrupted):
            return False
        last_page = self.pages[last.page]
        _, last_right = last_page.band_edge(last)
        full = last.x1 >= last_right - 2 * max(last.size, 1.0)
        return full or open_sentence
