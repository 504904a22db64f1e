"""Pass 10, front matter: the paper's own authors, their affiliations and e-mail addresses.

Consumes the first page's blocks between the title and where the abstract or the running
text starts (the classifier's ``front_floor``); produces :class:`Author` records.

A line is read as names when, with the marks that key names to affiliations ("Krenn1, 2, ∗",
"Smith a,b") set aside, it splits at commas, semicolons, "and" and "&" into pieces of two to
five capitalised words, none an organisation word. An affiliation is the text of the lines
that follow names: keyed to names by the mark it opens with ("1Vienna Center ..."), or else
given to the names printed above it (side-by-side author columns) or, when it sits under no
name, to every author. E-mail addresses ("{krenn, zeilinger}@univie.ac.at" included) go to
the author named beside them or whose name their local part holds; a last one left over to
the last author left without one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from ...paper import Author
from .model import Line, Page, VBlock, same_row
from .reference_parser import compose_accents, fold

_SYMBOLS = "*\u2217\u2020\u2021\u00a7\u00b6#\u2016+"
#: Marks after a name that key it to affiliations: digits and symbols, in any order, with or
#: without commas ("Krenn1, 2, ∗", "Sun * 1"), or letters set off by a space ("Barahona a,∗";
#: attached, a letter is the name's own; followed by a lower-case one, it opens a word:
#: "Volovich and").
_MARK = rf"(?:\d{{1,2}}|[{_SYMBOLS}]+)"
_MARKS = rf"\s?{_MARK}(?:\s*,?\s*{_MARK})*|\s[a-h](?:\s*,\s*[a-h])*(?:\s*,?\s*[{_SYMBOLS}])*(?![a-z\u00df-\u00ff])"
#: a name's marks end it: a separator, the line's end or the next name follows
_NAME_MARKS_RE = re.compile(
    rf"(?<=[^\W\d_.])(?P<marks>{_MARKS})(?=\s*(?:,|;|&|\b(?:and|AND)\b|$|[^\W\d_]))"
)
_MARK_AFTER_COMMA_RE = re.compile(rf"(?<=[^\W\d_]),(?P<marks>\d{{1,2}}(?:,\d{{1,2}})*|[{_SYMBOLS}]+)(?=\s+[^\W\d_])")
_HONORIFIC_RE = re.compile(r"^(?:(?:Dr|Prof|Professor|Mr|Mrs|Ms)\.?\s+)+(?=[^\W\d_])", re.IGNORECASE)
_SPLIT_RE = re.compile(r"\s*(?:,|;|&|\band\b)\s*", re.IGNORECASE)
#: "(Member, IEEE)" or ", Senior Member, IEEE" after a name
_ASIDE_RE = re.compile(
    r"\s*\([^)]{0,60}\)|,?\s*(?:(?:senior|graduate\s+student|student|life)\s+)?(?:member|fellow),?\s+ieee\b",
    re.IGNORECASE)
_PARTICLES = {"van", "von", "de", "der", "den", "da", "di", "del", "della", "la", "le", "du", "dos", "das", "bin",
              "al", "el", "ten", "ter", "y"}
_ORG_WORDS = re.compile(
    r"\b(?:universit|institut|department|dept|laborator|school|college|cent(?:er|re)|hospital|faculty|academy|"
    r"^rue\b|univ\b|inst\b|dpto\b|cnrs|street\b|avenue\b|inc\b|ltd\b|gmbh|corporation|research|foundation|"
    r"ministry|council|division|program|group|society|"
    r"journal|abstract|keywords|article|received|accepted|published|copyright|license|volume|doi|https?)",
    re.IGNORECASE,
)
#: A job printed under a name ("Mitch Leslie" over "Senior Technology Writer"): no name itself.
#: (A surname Writer or Engineer is read as a job too.)
_JOB_WORDS = re.compile(r"\b(?:writer|editor|correspondent|reporter|journalist|lecturer|professor|director|"
                        r"manager|officer|student|scientist|engineer|consultant)s?\b", re.IGNORECASE)
_UNMAPPED_RE = re.compile("[\x00-\x1f\x7f-\x9f\ue000-\uf8ff\ufffd]")
#: the ORCID logo's text glued to a name ("Elizabeth Marina AllynID1*"), after a lower-case letter
_ORCID_RE = re.compile(r"(?<=[^\W\d_])ID(?=[\d\s,;*\u2217\u2020\u2021]|$)")
#: a degree printed after a name ("Ms. S. Divya, M.Com, M.Phil."); not "M.D." or "M. S.",
#: which initials spell too
_DEGREE_RE = re.compile(
    r"(?:Ph\.?D|D\.?Phil|M\.?Phil|M\.?Com|M\.?Sc|B\.?Sc|M\.?Tech|B\.?Tech|MBA|MPH|FRCP|FRCS)\.?")
_LONE_MARK_RE = re.compile(rf"^(?:\d{{1,2}}|[a-h]|[{_SYMBOLS}]+)$")
_INITIAL_RE = re.compile(r"^[^\W\d_]\.\s")
_INITIAL_END_RE = re.compile(r"(?:^|\s)[^\W\d_]\.$")
_LIST_REACH = 0.7  # share of the page's height an author list may reach down to
_NAME_LINES = 24  # an author list runs over at most this many lines (or row pieces)
_EMAIL_RE = re.compile(r"(?:\{(?P<many>[^}]{1,200})\}|(?P<one>[\w.+-]{1,64}))\s?@\s?(?P<domain>[\w-]+(?:\.[\w-]+)+)")
_LEADING_MARK_RE = re.compile(rf"^(?P<marks>(?:\d{{1,2}}|[{_SYMBOLS}]+)(?:,(?:\d{{1,2}}|[{_SYMBOLS}]+))*)\s?(?=[^\W\d_])")
_KEYED_RE = re.compile(rf"^(?P<mark>\d{{1,2}}|[a-h](?![a-z])|[{_SYMBOLS}]+)\s?(?P<rest>[^\W\d_].*)$")
_NOT_AFFILIATION_RE = re.compile(
    r"corresponding|e-?mail|received|accepted|published|available online|©|copyright|\bdoi\b|https?:|orcid|"
    r"contributed equally|equal contributions?\b|joint first|deceased",
    re.IGNORECASE,
)


@dataclass
class _Name:
    name: str
    marks: list[str]
    line: Line
    affiliations: list[str] = field(default_factory=list)
    email: Optional[str] = None
    inverted: bool = False  # printed surname first ("Hurturk, Ege")


def read_authors(page: Page, title: list[VBlock], floor: Optional[float]) -> list[Author]:
    """The authors printed on ``page`` under the title and above ``floor`` (where the abstract
    or the running text starts; the page's middle when unknown)."""
    if not title or title[-1].page != page.index:
        return []
    top = max(b.bbox[3] for b in title)
    bottom = floor if floor is not None and floor > top else 0.6 * page.height
    # a long author list may run past the floor (its wide lines can read as running text)
    reach = max(bottom, _LIST_REACH * page.height)
    lines = [
        line for block in page.blocks if not any(block is t for t in title)
        for line in block.lines
        if not line.role and line.y0 >= top - 1 and line.y1 <= reach + 1
    ]
    lines.sort(key=lambda l: (round(l.y0), l.x0))
    # the abstract and, in the next column, the running text start at the floor: a line that
    # reaches below it, or whose block does, is no affiliation unless its mark keys one
    below_floor: set[int] = set()
    for block in page.blocks:
        if block.bbox[3] > bottom + 1:
            below_floor.update(id(line) for line in block.lines)
    names: list[_Name] = []
    keyed: dict[str, list[str]] = {}
    emails: list[tuple[str, str]] = []  # (address, the line it is printed on)
    last: Optional[tuple[list[str], int, Line]] = None  # where the last affiliation line went, and that line
    index, pending_mark = 0, ""
    list_end: Optional[Line] = None  # the last line of the names read last
    while index < len(lines):
        line = lines[index]
        index += 1
        if line.y0 > bottom + 1 and not (list_end is not None and _reads_on(list_end, line)):
            break  # past the floor, except where a list of names runs on under it
        text = f"{pending_mark}{line.text.strip()}"
        pending_mark = ""
        if _LONE_MARK_RE.match(text) and index < len(lines) and same_row(line, lines[index]):
            pending_mark = text  # "‡" set apart from the affiliation it keys
            continue
        found = _EMAIL_RE.findall(text)
        signed = _signed_line(text, line) if found and not keyed else None
        if signed is not None:
            names.append(signed)
            last, list_end = None, None
            continue
        if found:
            emails.extend((address, text) for many, one, domain in found for address in _expand(many, one, domain))
            last = None
            continue
        parsed, used = (_names_from(lines, index - 1, first=not names, inverted=all(n.inverted for n in names))
                        if not keyed else (None, 0))
        if parsed is not None:
            names.extend(parsed)
            index += used - 1
            list_end = lines[index - 1]
            last = None
            continue
        list_end = None
        keyed_line = _KEYED_RE.match(text)
        # a spacing accent on a line of its own ("´") is no affiliation; a postcode line is
        if (not names or _NOT_AFFILIATION_RE.search(text) or not re.search(r"[^\W_]", text)
                or (id(line) in below_floor and not (keyed_line and any(keyed_line.group("mark") in n.marks
                                                                        for n in names)))):
            last = None
            continue
        last = _affiliation(line, text, names, keyed, last)
    if not names:
        return []
    for name in names:
        for mark in name.marks:
            name.affiliations.extend(a for a in keyed.get(mark, []) if a not in name.affiliations)
    _give_emails(names, emails)
    return [Author(n.name, n.affiliations, n.email) for n in names]


def _names_from(lines: list[Line], start: int, first: bool = False,
                inverted: bool = False) -> tuple[Optional[list["_Name"]], int]:
    """The names on ``lines[start]``, or on it and the lines right under it when a name runs
    over a line's end ("..., Michael" / "Schlottke-Lakemper5,6, ..."); how many lines they took.
    Names that end on an initial or a lower-case particle ("..., Kathryn B." / "Francis, Cindy
    ...") go on to the next row when it reads on: no surname is either. ``first``: no name was
    read yet, so a mark may open the line ("1Taofik Mohammed IBRAHIM"); ``inverted``: no name,
    or only names printed surname first, was read yet, so one may be ("Hurturk, Ege \u2217")."""
    text = lines[start].text.strip()
    pending: tuple[Optional[list[_Name]], int] = (None, 0)
    last = start
    for _ in range(_NAME_LINES):
        parsed = _names(text, lines[start], lead_mark=first, inverted=inverted)
        if parsed is not None and any(n.inverted for n in parsed) and not _address_below(parsed, lines, last):
            parsed = None  # "Cambridge, Massachusetts \u2020" reads as a name printed surname first
        if last == start:
            spaced = _spaced_names(lines[start])
            apart = _names(spaced, lines[start], lead_mark=first) if spaced else None
            if apart is not None and len(apart) > len(parsed or []):
                parsed = apart  # "Reut Tsarfaty   Joakim Nivre" are two names, not one of four words
        following = _next_piece(lines, last)
        if parsed is not None:
            if not (following is not None and _goes_on(parsed[-1].name)):
                return parsed, last + 1 - start
            pending = pending if pending[0] is not None else (parsed, last + 1 - start)
        if following is None:
            break
        last = following
        text = f"{text} {lines[last].text.strip()}"
    return pending


def _signed_line(text: str, line: Line) -> Optional["_Name"]:
    """One author's line of name, affiliation and address ("Gang Peng, Youngstown State
    University, gpeng@ysu.edu"), or None: one name first, an organisation word in the piece
    right after it, and one address whose local part holds a part of the name."""
    addresses = [a for many, one, domain in _EMAIL_RE.findall(text) for a in _expand(many, one, domain)]
    pieces = [p.strip(" ,;") for p in _EMAIL_RE.sub(" ", text).split(",")]
    pieces = [p for p in pieces if p]
    if len(addresses) != 1 or len(pieces) < 2 or not _ORG_WORDS.search(pieces[1]):
        return None
    names = _names(pieces[0], line)
    # the address must be the name's: "Georgia Tech, School of ..., jdoe@gatech.edu" is no author
    if names is None or len(names) != 1 or not _local_match(names[0], addresses[0]):
        return None
    names[0].affiliations, names[0].email = [", ".join(pieces[1:])], addresses[0]
    return names[0]


def _next_piece(lines: list[Line], index: int) -> Optional[int]:
    """The index of the line that reads on from ``lines[index]``: the next one, or one a line
    or two further where lines of another size come between in reading order (a margin
    column's "Cite this article" beside a list of names); None where the text stops."""
    line = lines[index]
    for later in range(index + 1, min(index + 4, len(lines))):
        if _reads_on(line, lines[later]):
            return later
        if abs(lines[later].size - line.size) <= 0.15 * max(line.size, 1.0):
            return None
    return None


def _address_below(names: list["_Name"], lines: list[Line], index: int) -> bool:
    """Whether a line under ``lines[index]``, within two of its sizes, holds an address with a
    part of one of ``names`` ("Hurturk, Ege \u2217" over "ege.hurturk@gmail.com", the next
    author's name beside it)."""
    line = lines[index]
    under = [l for l in lines[index + 1:]
             if 0 <= l.y0 - line.y1 <= 2 * max(line.size, 1.0) and l.x0 < line.x1 and line.x0 < l.x1]
    found = [match for l in under for match in _EMAIL_RE.findall(l.text)]
    addresses = [a for many, one, domain in found for a in _expand(many, one, domain)]
    return any(_local_match(name, address) for name in names for address in addresses)


def _spaced_names(line: Line) -> str:
    """The line's text with a comma at each gap wider than half its size, where names are set
    apart by space alone ("Reut Tsarfaty   Joakim Nivre   Evelina Andersson"); "" without one."""
    words = line.words
    wide = [i for i in range(1, len(words)) if words[i].x0 - words[i - 1].x1 > 0.5 * max(line.size, 1.0)]
    if not wide:
        return ""
    return " ".join(f", {w.text}" if i in wide else w.text for i, w in enumerate(words))


def _goes_on(name: str) -> bool:
    """Whether a name read at a row's end goes on in the next row: it ends on an initial
    ("Kathryn B.") or a lower-case particle ("Veerle Van den" / "Eynden"), and no surname is
    either (a capitalised "Le" or "Du" may be one)."""
    last = name.split()[-1]
    return bool(_INITIAL_END_RE.search(name)) or (last.islower() and last in _PARTICLES)


def _names(text: str, line: Line, lead_mark: bool = False, inverted: bool = False) -> Optional[list[_Name]]:
    """The names on a line with their marks, or None when the line is not a list of names;
    ``lead_mark``: the first name's marks may come before it ("1Taofik Mohammed IBRAHIM");
    ``inverted``: the line may be one marked name printed surname first ("Hurturk, Ege \u2217"),
    which only the names' place and an address tell from a marked affiliation ("Cambridge,
    Massachusetts \u2020"; :func:`_names_from` asks for the address)."""
    # a mark in a font without Unicode mapping comes out as a control or private-use character
    text = _ORCID_RE.sub(_orcid_logo, _ASIDE_RE.sub("", compose_accents(_UNMAPPED_RE.sub("", text))))
    # a mark set after the comma ("R. Simon,1 T. M. Bania") goes before it
    text = _MARK_AFTER_COMMA_RE.sub(r"\g<marks>,", text)
    leading = _LEADING_MARK_RE.match(text) if lead_mark else None
    if leading:
        text = text[leading.end():]
    marks: list[list[str]] = []
    pieces = []
    position = 0
    for match in _NAME_MARKS_RE.finditer(text):
        pieces.append(text[position:match.start()])
        marks.append(_split_marks(match.group("marks")))
        position = match.end()
    pieces.append(text[position:])
    marks.append([])
    names: list[_Name] = []
    for piece, piece_marks in zip(pieces, marks):
        parts = [p.strip(" ,;").strip(_SYMBOLS + " ") for p in _SPLIT_RE.split(piece)]
        parts = [p for p in parts if p and not _DEGREE_RE.fullmatch(p)]
        turned = _inverted(parts, piece_marks, sum(1 for p in pieces if p.strip(" ,;"))) if inverted else ""
        if turned:
            parts = [turned]
        i = 0
        while i < len(parts):
            part = parts[i]
            if (not _is_name(part) and i + 1 < len(parts) and _INITIAL_RE.match(parts[i + 1])
                    and _is_name(f"{part} {parts[i + 1]}")):
                i += 1  # a stray comma inside a name ("Meghan, E. Rickard"), not "Dhaka, Bangladesh"
                part = f"{part} {parts[i]}"
            part = _HONORIFIC_RE.sub("", part)  # "Dr. Shehzad Ahmad"
            if not _is_name(part):
                return None
            name = part.title() if part.isupper() else part  # IEEE prints "LIJIA CHEN"
            names.append(_Name(name, piece_marks if i == len(parts) - 1 else [], line, inverted=bool(turned)))
            i += 1
    if names and leading:
        names[0].marks = _split_marks(leading.group("marks")) + names[0].marks
    return names or None


def _is_name(text: str) -> bool:
    """Two to five capitalised words (initials and particles allowed), no organisation or job word."""
    words = text.split()
    if not 2 <= len(words) <= 5 or _ORG_WORDS.search(text) or _JOB_WORDS.search(text) or any(c.isdigit() for c in text):
        return False
    capitalised = 0
    for word in words:
        if word.lower() in _PARTICLES:
            continue
        if not word[:1].isupper() or not re.fullmatch(r"[^\W\d_][\w'\u2019.\-\u2010\u2011]*", word):
            return False
        capitalised += 1
    # not letters spaced out: "A R T I C L E  I N F O" is no name, "Vu Ha" is
    return capitalised >= 2 and any(sum(c.isalpha() for c in w) >= 2 for w in words)


def _orcid_logo(match: re.Match) -> str:
    """"" for the ORCID logo's "ID" after a lower-case letter ("AllynID"); the text as it is
    after a capital ("DAVID")."""
    return "" if match.string[match.start() - 1].islower() else match.group()


def _inverted(parts: list[str], marks: list[str], pieces: int) -> str:
    """The name of a line that is one marked name printed surname first ("Hurturk, Ege \u2217"
    -> "Ege Hurturk"), else "". The mark is required: unmarked, "Dhaka, Bangladesh" reads the same.
    ``pieces``: how many pieces with text the line's marks cut it into."""
    if pieces != 1 or not marks or len(parts) != 2 or _ORG_WORDS.search(" ".join(parts)):
        return ""
    surname, given = parts
    if all(len(p.split()) == 1 and p[:1].isupper() and p[1:].islower() and p.isalpha() for p in parts):
        return f"{given} {surname}"
    return ""


def _split_marks(marks: str) -> list[str]:
    """"1, 2, ∗" -> ["1", "2", "∗"]; "†∗" -> ["†", "∗"]."""
    return re.findall(rf"\d{{1,2}}|[a-h]|[{_SYMBOLS}]", marks)


def _affiliation(line: Line, text: str, names: list[_Name], keyed: dict[str, list[str]],
                 last: Optional[tuple[list[str], int, Line]]) -> Optional[tuple[list[str], int, Line]]:
    """File one line of affiliation text; return where it went, for a line that goes on."""
    match = _KEYED_RE.match(text)
    if match and any(match.group("mark") in n.marks for n in names):
        target = keyed.setdefault(match.group("mark"), [])
        target.append(match.group("rest").strip())
        return target, len(target) - 1, line
    if last is not None and _right_below(last[2], line) and (
            text[:1].islower() or last[0][last[1]].endswith((",", "-", "and"))):
        last[0][last[1]] = f"{last[0][last[1]]} {text}"
        return last[0], last[1], line
    above = [n for n in names if n.line.y0 < line.y0 and n.line.x0 < line.x1 and line.x0 < n.line.x1]
    above = _nearest_group(above)
    owners = above if above and len(above) < len(names) else names
    if any(n.marks for n in names):
        return None  # names keyed to marked affiliations: an unmarked line is something else
    for name in owners:
        name.affiliations.append(text)
    owner = owners[0]
    return owner.affiliations, len(owner.affiliations) - 1, line


def _nearest_group(above: list[_Name]) -> list[_Name]:
    """The names of ``above`` in the rows right over the lowest one: where names are stacked
    each over its own affiliation and address ("Dr. Shehzad Ahmad" / "Edwardes College" /
    e-mail / "Muhammad Ibrahim" / ...), an affiliation line is only the nearest names'."""
    rows = sorted({round(n.line.y0, 1) for n in above}, reverse=True)
    group = rows[:1]
    for row in rows[1:]:
        if group[-1] - row > 2.5 * max(above[0].line.size, 1.0):
            break  # other lines (an affiliation, an address) stand between: another author's block
        group.append(row)
    return [n for n in above if round(n.line.y0, 1) in group]


def _reads_on(prev: Line, line: Line) -> bool:
    """Whether ``line`` is the next piece of text after ``prev``: further along its row
    (a row cut at the gaps around marks) or on the next row, in the same size."""
    if same_row(prev, line):
        return line.x0 >= prev.x1 - 2
    size = max(prev.size, 1.0)
    return -0.3 * size <= line.y0 - prev.y1 <= 0.8 * size and abs(line.size - prev.size) <= 0.15 * size


def _right_below(upper: Line, line: Line) -> bool:
    """Whether ``line`` is the next line under ``upper`` in the same column."""
    return 0 <= line.y0 - upper.y1 <= 0.8 * max(upper.size, 1.0) and line.x0 < upper.x1 and upper.x0 < line.x1


def _expand(many: str, one: str, domain: str) -> list[str]:
    """The addresses of one match: "{a, b}@x.org" gives two."""
    locals_ = [p.strip() for p in re.split(r"[,|;]", many)] if many else [one]
    return [f"{local}@{domain}" for local in locals_ if local]


def _give_emails(names: list[_Name], emails: list[tuple[str, str]]) -> None:
    """Each address to the author named on its line ("Corresponding author: Pingping Chen
    (ppchen...)"), else to the author with the longest name part (three letters or more)
    in its local part, best matches first; a last address left to the one author left
    without one."""
    left = []
    for email, line_text in dict.fromkeys(emails):
        printed = fold(_EMAIL_RE.sub(" ", line_text))  # the words around the addresses
        owner = next((n for n in names if n.email is None and fold(n.name) in printed), None)
        if owner is not None:
            owner.email = email
        else:
            left.append(email)
    scored = sorted(
        ((_local_match(name, email), i, j) for i, email in enumerate(left) for j, name in enumerate(names)),
        reverse=True,
    )
    taken: set[int] = set()
    for score, i, j in scored:
        if score and i not in taken and names[j].email is None:
            names[j].email = left[i]
            taken.add(i)
    left = [e for i, e in enumerate(left) if i not in taken]
    without = [n for n in names if n.email is None]
    if len(left) == len(without) == 1:  # one address for the one author left: theirs
        without[0].email = left[0]


def _local_match(name: _Name, email: str) -> int:
    """The length of the longest part of ``name`` (three letters or more) in ``email``'s local part."""
    local = fold(email.split("@")[0])
    parts = [fold(part) for part in name.name.split()]
    return max((len(p) for p in parts if len(p) >= 3 and p in local), default=0)
