"""Display formulas for the classification pass: whether a line reads as math, not prose,
and which blocks of the body are display formulas (with the number printed at their right).

A display formula is a block of math lines that either prints its number flush with the
column's right edge ("(3)") or holds a relation or a big operator (a table's rows of numbers
read as math too, and stay out). Pieces of one formula set as blocks of their own (the scripts
above and below its row, the rows of a case analysis) join it, unless both are numbered.
"""

from __future__ import annotations

import re
from typing import Optional

from .model import Line, Page, Unit, VBlock


_PROSE_WORD_RE = re.compile(r"[(\[\"'\u201c]?[A-Za-z][a-z]{2,}[)\],.;:\"'\u201d]*")
_SHORT_WORDS = frozenset(
    [
        "a",
        "an",
        "as",
        "at",
        "be",
        "by",
        "do",
        "if",
        "in",
        "is",
        "it",
        "of",
        "on",
        "or",
        "so",
        "to",
        "we",
        "us",
    ]
)
_MATH_SYMBOL_RE = re.compile(
    r"[=<>+\u2212\u00d7\u00b7\u2211\u220f\u222b\u2264\u2265\u2208\u222a\u2229\u2192\u221a|^]"
)


def is_math(text: str) -> bool:
    """Whether a line reads as a formula: few real words, or math symbols among few words."""
    tokens = text.split()
    if not tokens:
        return True
    wordy = sum(
        1 for t in tokens if _PROSE_WORD_RE.fullmatch(t) or t.lower().strip(",.;:") in _SHORT_WORDS
    )
    if wordy < 0.25 * len(tokens):
        return True
    return wordy < 0.6 * len(tokens) and _MATH_SYMBOL_RE.search(text) is not None


#: A display formula's number as printed inside its brackets and in mentions: "3", "12b",
#: "2.4", "A.1".
FORMULA_NUMBER = r"(?:[A-Z]\.?)?[1-9]\d{0,2}(?:\.\d{1,3})?[a-z]?"
#: A display formula's printed number: "(3)", "(12b)", "(2.4)", "(A.1)", "(Eq. 1)".
FORMULA_LABEL_RE = re.compile(rf"\(\s*(?:Eqn?\.?\s*)?({FORMULA_NUMBER})\s*\)")
#: A number in brackets: beside a label, a table's row ("(0.760) (0.762)", "(1) (2) (3)").
_BRACKETED_NUMBER_RE = re.compile(r"\(\s*\d+(?:\.\d+)?\s*\)")
#: Relations and big operators: an unnumbered block of math is a display formula only with one.
_RELATION_RE = re.compile(r"[=<>\u2248\u2261\u221d\u2208\u2264\u2265\u2211\u220f\u222b]|:=")
#: A formula's mention ending a line: the number after it is no label.
_NAMES_A_FORMULA_RE = re.compile(r"\b(?:eqs?|eqns?|equations?)\.?$", re.IGNORECASE)
#: Prose that explains a formula ("where D = Particle density ..."): no part of it.
_EXPLAINS_RE = re.compile(r"^(?:where|with|here|for|and|in which)\b", re.IGNORECASE)
#: An algorithm's numbered step ("1. If l is not specified, let l = m.").
_STEP_RE = re.compile(r"^\d{1,2}[.:)]\s+[^\W\d_]{2,}")
#: Most pieces a block of math may have, and most rows a numbered formula's block may have
#: (more is a table or an algorithm).
_MAX_PIECES = _MAX_ROWS = 8


def printed_number(lines: list[Line], right: float) -> Optional[tuple[Line, str]]:
    """The piece ending in a formula's number and the number: its last word a label, the
    rightmost on its row, either ending at the column's right edge (within 1.5 sizes) half a
    size or more right of the rest of its row, or two sizes or more right of the formula
    beside it (a Word document's number set after its formula). A label at the left ("(1)
    a. Noun is a part of speech.") numbers a linguistic example."""
    for line in lines:
        ending = _number_at_end(line)
        if ending is None:
            continue
        match, label_words = ending
        word = line.words[-label_words]
        rest = " ".join(w.text for w in line.words[:-label_words])
        if (rest and not is_math(rest)) or _NAMES_A_FORMULA_RE.search(rest) or _BRACKETED_NUMBER_RE.search(rest):
            continue  # prose numbering its items ("dictionary, (2)"), a mention ("in Equation (8)"), a table
        mates = [other for other in lines if other is not line and _same_row(other, line)]
        if any(other.x0 > word.x0 for other in mates):
            continue
        size = max(line.size, 1.0)
        before = [w.x1 for w in line.words[:-label_words]] + [other.x1 for other in mates if other.x1 <= word.x0 + 0.5]
        gap = word.x0 - max(before) if before else float("inf")
        if (line.words[-1].x1 >= right - 1.5 * size and gap >= 0.5 * size) or (before and gap >= 2 * size):
            return line, match.group(1)
    return None


def _number_at_end(line: Line) -> Optional[tuple[re.Match, int]]:
    """The printed number a piece ends with and how many words it takes ("(3)" one, "(Eq.
    1)" two), or None."""
    match = FORMULA_LABEL_RE.fullmatch(line.words[-1].text)
    if match is not None:
        return match, 1
    if len(line.words) > 1:
        match = FORMULA_LABEL_RE.fullmatch(f"{line.words[-2].text} {line.words[-1].text}")
        if match is not None:
            return match, 2
    return None


def _same_row(a: Line, b: Line) -> bool:
    """Whether two pieces overlap vertically by half the smaller one's height."""
    overlap = min(a.y1, b.y1) - max(a.y0, b.y0)
    return overlap >= 0.5 * min(a.y1 - a.y0, b.y1 - b.y0)


def _unnumbered_formula(text: str) -> bool:
    """Whether math with no number reads as a display formula: a relation or a big operator,
    a letter (a table's "<4 90.7 55.3" has none), no algorithm step's number."""
    return bool(_RELATION_RE.search(text) and re.search(r"[^\W\d_]", text) and not _STEP_RE.match(text))


def in_rows(lines: list[Line]) -> list[Line]:
    """A formula's pieces in reading order: by rows (a script joins the row its middle is in),
    left to right within a row."""
    rows: list[list[Line]] = []
    for line in sorted(lines, key=lambda l: (l.y0 + l.y1) / 2):
        middle = (line.y0 + line.y1) / 2
        if rows and min(l.y0 for l in rows[-1]) <= middle <= max(l.y1 for l in rows[-1]):
            rows[-1].append(line)
        else:
            rows.append([line])
    return [line for row in rows for line in sorted(row, key=lambda l: l.x0)]


def _rows(lines: list[Line]) -> list[list[Line]]:
    """Consecutive pieces grouped by row (a piece joins the row it overlaps, see _same_row)."""
    rows: list[list[Line]] = []
    for line in lines:
        if rows and any(_same_row(line, other) for other in rows[-1]):
            rows[-1].append(line)
        else:
            rows.append([line])
    return rows


def _lone_number(block: VBlock) -> str:
    """The number of a block that prints only a formula's number ("(3)"), or ""."""
    match = FORMULA_LABEL_RE.fullmatch(block.text.strip())
    return match.group(1) if match else ""


def _label_of(lines: list[Line], right: float) -> str:
    """The number printed among a formula's pieces (set beside it as a block of its own), or ""."""
    number = printed_number(lines, right)
    return number[1] if number is not None else ""


def _numbered_groups(lines: list[Line], right: float) -> list[tuple[list[Line], str]]:
    """A block's rows cut after each numbered row: (rows, number) per formula; rows under the
    last number stay with it."""
    groups: list[tuple[list[Line], str]] = []
    rows: list[Line] = []
    for row in _rows(lines):
        rows.extend(row)
        number = printed_number(row, right)
        if number is not None:
            groups.append((rows, number[1]))
            rows = []
    if rows and groups:
        groups[-1][0].extend(rows)
    return groups


#: Words a formula prints: functions and operators ("max", "log", "argmax"), a case's "if",
#: "otherwise", "and", "for all".
_FORMULA_WORDS = frozenset("max min exp log ln sin cos tan arg argmax argmin lim sup inf det tr mod "
                           "if otherwise and or for all".split())
#: Function words of English prose (a formula's "if", "and", "for all" aside).
_FUNCTION_WORDS = frozenset("the of is are was were be been we our us to in on at by with as that this these which "
                            "from it its not can will has have than each where given let such also into so when because but".split())
#: An optimisation's constraint words, a formula's own.
_CONSTRAINT_RE = re.compile(r"\bsubject to\b|\bs\.t\.", re.IGNORECASE)
#: Words that open an English sentence (capitalised there): "The", "We", "Let", "Then".
_OPENERS = frozenset("the we let this these then thus hence since note recall assume suppose consider".split())
#: An algorithm's or a program's keywords: a line with one is pseudo-code, not a formula.
_CODE_WORDS = frozenset("do then else end return while until repeat foreach begin".split())
#: A list item's or a step's label and its first word opening a row ("(a) let m = 0", "2.
#: calculate", "• Union"; not a formula's "(t) (t−1)" or "- x + y = z").
_ITEM_LABEL_RE = re.compile(r"^(?:\(?(?:[a-z]|\d{1,2}|[ivx]{1,4})[.)]|[\u2022\u25aa\u25cf\u2013-])\s+[A-Za-z]{2}")


def _prose_free(text: str) -> bool:
    """Whether math holds no prose ("We set k = 5 and n = 10.", "Let m be a positive
    integer", "beam size B, scaled word segmentation model"): no function word of prose next
    to a word of two letters or more (an LSTM's gate "it = σ(Wi xt + ...)" and a bias "+ by"
    are names), no sentence opener, no two words of three letters or more, lower case after
    the first, in a row (a formula's own words aside; a name such as "context" in "P(c |
    context)" is one word), no pseudo-code keyword, no code's ':=' and no list label in
    front. "subject to" and "s.t." are a formula's words."""
    text = _CONSTRAINT_RE.sub(" ", text)
    if ":=" in text or _ITEM_LABEL_RE.match(text):
        return False
    tokens = text.split()
    words = [t.strip(",.;:()[]{}") for t in tokens]
    lowered = [w.lower() for w in words]
    wordy = [len(w) >= 2 and w.isalpha() for w in words]
    for i, w in enumerate(words):
        beside_a_word = (i > 0 and wordy[i - 1]) or (i + 1 < len(words) and wordy[i + 1])
        if (lowered[i] in _CODE_WORDS or (w[:1].isupper() and lowered[i] in _OPENERS)
                or (w in _FUNCTION_WORDS and beside_a_word)):
            return False  # as printed: "Is" and "As" are names of variables more often than words
    prose = [bool(_PROSE_WORD_RE.fullmatch(t)) and w not in _FORMULA_WORDS for t, w in zip(tokens, lowered)]
    return not any(a and b for a, b in zip(prose, prose[1:]))


def _bare_math_row(row: list[Line], left: float, right: float) -> bool:
    """Whether a row is math with no word of prose (see _prose_free) and keeps 2.5 sizes or
    more from both edges of its column (a paragraph's first line is indented less, its last
    line starts at the left edge)."""
    text = " ".join(line.text for line in row)
    size = max(max(line.size for line in row), 1.0)
    return (min(l.x0 for l in row) >= left + 2.5 * size and max(l.x1 for l in row) <= right - 2.5 * size
            and is_math(text) and _prose_free(text))


def _math_row(row: list[Line]) -> bool:
    """Whether a row's pieces all read as math and it explains nothing ("where ...")."""
    return all(is_math(line.text) for line in row) and not _EXPLAINS_RE.match(row[0].text)


def _row_count(lines: list[Line]) -> int:
    """How many baselines the pieces have (to the point)."""
    return len({round(line.base) for line in lines})


class DisplayFormulas:
    """Finds the body's display formulas, block by block, for the classification pass.

    ``take`` is asked about each body block before it is read as a heading or prose. Blocks
    of math that are no formula on their own (a row of scripts, the left-hand side over a
    fraction) and that the pass drops are ``hold``-en, a chain of blocks each right under the
    one before; the formula set right under the chain's last block opens with them."""

    def __init__(self, pages: list[Page]) -> None:
        self.pages = pages
        self.held: list[VBlock] = []
        self._set_aside: list[VBlock] = []  # the chain while ``take`` looks at a block
        self._refused: Optional[VBlock] = None  # the block ``take`` last said no to

    def is_math_block(self, block: VBlock) -> bool:
        """Whether every piece of a block of at most 8 pieces reads as math and the block
        holds no prose (see _prose_free: "Assumption 1. Let m be a positive integer. For any
        f = ..." is a paragraph) and explains no formula ("where D = Particle density")."""
        return (len(block.lines) <= _MAX_PIECES and all(is_math(line.text) for line in block.lines)
                and not _EXPLAINS_RE.match(block.text) and _prose_free(block.text))

    def hold(self, block: VBlock) -> None:
        """Keep a dropped block of math: after ``take`` refused it, it goes on the chain
        ``take`` set aside when it is right under the chain's last block; else (or for a
        block ``take`` never saw) it starts a new one."""
        refused = block is self._refused
        chain = self._set_aside if refused and self._set_aside and _adjacent(self._set_aside[-1], block) else []
        self.held, self._set_aside, self._refused = chain + [block], [], None

    def resume(self) -> None:
        """Hold again the chain set aside for a block that ``take`` refused and that is now
        read in parts (``split_out``): the first part is the one right under it."""
        self.held, self._set_aside, self._refused = self._set_aside, [], None

    def take(self, block: VBlock, units: list[Unit], section: Optional[int], numbered_only: bool = False) -> bool:
        """Whether ``block`` is (part of) a display formula; if so it is added to ``units``:
        to the formula right above it (same page and column, its top not above the formula's,
        under 1.5 sizes between, not both numbered), else as a new formula unit (``label`` its
        printed number, "" for none) opened by the held chain right above it. A block that
        starts a formula prints a number, or holds a relation or a big operator, a letter and
        no prose. With ``numbered_only`` (a block in small type: a plot's "n = 20" is none)
        an unnumbered block is one only as part of the formula above it."""
        self._set_aside, self.held, self._refused = self.held, [], block
        right = self.pages[block.page].band_edge(block.lines[0])[1]
        lone = _lone_number(block)
        if lone and self._joins(units, block, ""):
            if units[-1].label:  # the next formula's number, set apart from it ("(3)" over "Is =")
                units.append(Unit("formula", block.lines, section, label=lone))
            else:
                units[-1].lines = in_rows(units[-1].lines + block.lines)
                units[-1].label = lone
            self._set_aside, self._refused = [], None
            return True
        number = printed_number(block.lines, right)
        chain = self._set_aside if self._set_aside and _adjacent(self._set_aside[-1], block) else []
        math = self.is_math_block(block)
        if not (math or (number is not None and self._mostly_math(block, number[0]))):
            return False
        unnumbered_start = number is None and (
            numbered_only or not (_unnumbered_formula(block.text) and _prose_free(block.text)))
        if unnumbered_start and not self._joins(units, block, ""):
            return False
        groups = _numbered_groups(block.lines, right) if number is not None else []
        if len(groups) > 1:  # formulas set one under the other, each numbered ("ECs = (2)" over "Is = (3)")
            block = VBlock(groups[0][0], block.page)
        label = groups[0][1] if groups else (number[1] if number is not None else "")
        if self._joins(units, block, label):
            formula = units[-1]
            formula.lines = in_rows(formula.lines + block.lines)
            formula.label = formula.label or label or _label_of(formula.lines, right)
        else:
            lines = block.lines
            if chain:
                lines = [line for held in chain for line in held.lines] + lines
                # a number held above ("(1)" over "PSL =", set apart from its formula)
                label = label or next((n for n in map(_lone_number, chain) if n), "") or _label_of(lines, right)
            units.append(Unit("formula", in_rows(lines), section, label=label))
        units.extend(Unit("formula", in_rows(rows), section, label=number) for rows, number in groups[1:])
        self._set_aside, self._refused = [], None
        return True

    def split_out(self, block: VBlock) -> Optional[tuple[list[Line], list[Line], list[Line]]]:
        """A formula set in a block of prose, without the space around it that would make it
        a block of its own: the lines before it, its rows and the lines after it; None when
        the block holds none. Its rows: a numbered row and the rows of math next to it, or
        rows of bare math with a relation set apart from both edges of the column ("rmax(C) =
        max c" centred between two lines of prose) and such rows next to them."""
        rows = _rows(block.lines)
        left, right = self.pages[block.page].band_edge(block.lines[0])
        numbered = any(_number_at_end(line) is not None for line in block.lines)
        for index, row in enumerate(rows):
            if numbered:
                number = printed_number(row, right)
                if number is None or not all(is_math(line.text) for line in row if line is not number[0]):
                    continue
                goes_on = _math_row
            else:
                if not (_bare_math_row(row, left, right) and _RELATION_RE.search(" ".join(l.text for l in row))):
                    continue
                def goes_on(other: list[Line]) -> bool:
                    return _bare_math_row(other, left, right)
            first = last = index
            while first > 0 and goes_on(rows[first - 1]):
                first -= 1
            while last + 1 < len(rows) and goes_on(rows[last + 1]):
                last += 1
            if first == 0 and last == len(rows) - 1:
                return None
            return ([l for r in rows[:first] for l in r], [l for r in rows[first:last + 1] for l in r],
                    [l for r in rows[last + 1:] for l in r])
        return None

    @staticmethod
    def _mostly_math(block: VBlock, numbered: Line) -> bool:
        """Whether a numbered block of at most 8 rows is math with a few words ("if t occurs
        in name(s)", "otherwise"): half its pieces read as math, and none that does not is
        40 characters long (a line of prose)."""
        if _row_count(block.lines) > _MAX_ROWS:
            return False
        others = [line for line in block.lines if line is not numbered]
        math = sum(1 for line in others if is_math(line.text))
        return 2 * math >= len(others) and all(
            is_math(line.text) or len(line.text) < 40 for line in others)

    def _joins(self, units: list[Unit], block: VBlock, label: str) -> bool:
        """Whether ``block`` goes on with the formula unit right above it."""
        if not units or units[-1].kind != "formula" or (label and units[-1].label):
            return False
        return _adjacent(VBlock(units[-1].lines, units[-1].lines[-1].page), block)


def _adjacent(above: VBlock, below: VBlock) -> bool:
    """Whether ``below`` starts within 1.5 sizes under ``above``'s foot, not more than a size
    above its top (a script row may start a little above the row it belongs to), on the same
    page and in the same column."""
    if above.page != below.page or above.lines[-1].col != below.lines[0].col:
        return False
    size = max(below.size, above.size, 1.0)
    return above.bbox[1] - size <= below.bbox[1] <= above.bbox[3] + 1.5 * size
