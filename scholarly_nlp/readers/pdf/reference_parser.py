"""One bibliography entry's text to its fields: label, authors, year, title, venue, DOI.

Consumes the text of one reference as printed (numbered or not, in the common styles: ACL,
APA, Harvard, Vancouver, IEEE, Nature, Springer, Elsevier); produces a
:class:`ParsedReference`. Rules, not a model: the author list is read with one name form
(``Devlin, J.``, ``J. Devlin``, ``Devlin J``, ``Jacob Devlin``, ``Devlin, Jacob``) held for
the whole list, since a style never mixes them, which is what stops a title-case title from
being read as more names; the title is a quoted string (IEEE) or the sentence after the
authors and year.

refextract (INSPIRE) was measured for this and not used: it is built for physics report
numbers and journal abbreviations and returns no article title outside quotes (see the
benchmarks README for the numbers).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Optional


_UP = "A-Z\u00c0-\u00d6\u00d8-\u00de\u0100-\u017f"
_LOW = "a-z\u00df-\u00f6\u00f8-\u00ff\u0100-\u017f"
_PARTICLE = r"(?:(?:[Vv]an|[Vv]on|[Dd]er|[Dd]en|[Dd]e|[Dd]el|[Dd]ella|[Dd]i|[Dd]a|[Dd]u|[Ll]a|[Ll]e|[Dd]os|[Dd]as|ter|ten|bin|[Aa]l|[Ee]l|[Ss]t\.)\s+)*"
_SURNAME = rf"{_PARTICLE}(?:[{_UP}]['\u2019])?[{_UP}][{_UP}{_LOW}'\u2019]*(?:-[{_UP}{_LOW}]+)*[{_LOW}{_UP}]"
_INITIALS = rf"[{_UP}]\.(?:\s?-?\s?[{_UP}]\.)*"
_BARE_INITIALS = rf"[{_UP}]{{1,3}}(?![{_LOW}\w])"
_GIVEN = rf"[{_UP}][{_LOW}]+(?:-[{_UP}]?[{_LOW}]+)?"

#: Name forms, each with the group holding the surname. Order breaks ties.
_NAME_FORMS = {
    "surname_initials": re.compile(rf"(?P<surname>{_SURNAME}),\s*(?P<given>{_INITIALS}(?:\s?[{_UP}]\b)?)"),
    "initials_surname": re.compile(rf"(?P<given>{_INITIALS})\s*(?P<surname>{_SURNAME})"),
    "surname_bare": re.compile(rf"(?P<surname>{_SURNAME})\s+(?P<given>{_BARE_INITIALS})"),
    "surname_given": re.compile(rf"(?P<surname>{_SURNAME}),\s*(?P<given>{_GIVEN}(?:\s+(?:{_INITIALS}|{_GIVEN}))*)"),
    "given_surname": re.compile(
        rf"(?P<given>{_GIVEN}(?:\s+(?:{_INITIALS}|[{_UP}]\b|{_GIVEN}))*)\s+(?P<surname>{_SURNAME})"
    ),
}
#: (first name's form, the other names' form): a style holds one form, except that the first
#: author's name may be inverted ("Alsamawi, A., D. McBain, and K. S. Wiebe").
_FORM_PAIRS = [(form, form) for form in _NAME_FORMS] + [
    ("surname_initials", "initials_surname"),
    ("surname_given", "given_surname"),
]
_SEPARATOR = re.compile(r"\s*(?:,\s*(?:and|&)\s+|,\s*|\s+(?:and|&)\s+|;\s*)")
_ET_AL = re.compile(r"\s*,?\s*(?:et\s*al\.?|et\s+al\b|\.\.\.|\u2026)")
_LABEL = re.compile(r"^\s*(?:\[(?P<a>\d{1,4})\]|\((?P<b>\d{1,4})\)|(?P<c>\d{1,4})\.(?=\s)|(?P<d>\d{1,4})(?=\s+\S))\s*")
_DOI = re.compile(r"(?:https?://(?:dx\.)?doi\.org/\s*|doi\s*:?\s*)?(?P<doi>10\.\d{4,9}/\s?\S+)", re.IGNORECASE)
_URL = re.compile(r"(?:\[?online\]?\.?\s*)?(?:available\s+(?:at|from|online)\s*:?\s*)?"
                  r"(?:https?://|www\.)\S+(?:\s+\S+/\S*)*", re.IGNORECASE)
_YEAR = r"(?:1[5-9]\d\d|20\d\d)[a-z]?"
_LEADING_YEAR = re.compile(rf"^[\s.,:;]*\(?(?P<year>{_YEAR}|n\.\s?d\.|in press|forthcoming)\)?[.,:;]?\s*", re.IGNORECASE)
_ANY_YEAR = re.compile(rf"(?<![\d/.-])(?P<year>{_YEAR})(?![\d/])")
_QUOTED = re.compile(r"[\u201c\u201d\"\u2018\u00ab](?P<title>[^\u201c\u201d\"\u00bb]{6,400}?)[,.]?[\u201d\"\u2019\u00bb]")
_IN_PREFIX = re.compile(r"^[\s.,:;]*(?:in\s*:|in\s+(?=[A-Z])|accessed\b)?\s*", re.IGNORECASE)
_VENUE_END = re.compile(r",\s*(?:vol|pp|pages?|no|issue|chap|ch|ed|eds)\b\.?|\s\d|\(|;|\.\s|\.$|,\s*\d", re.IGNORECASE)


@dataclass
class ParsedReference:
    """The fields of one reference; ``surnames`` (folded to lower case without accents)
    match author-year markers; ``label`` is the printed number of a numbered entry."""

    text: str
    label: Optional[str] = None
    authors: list[str] = field(default_factory=list)
    surnames: list[str] = field(default_factory=list)
    year: Optional[str] = None
    title: str = ""
    venue: str = ""
    doi: Optional[str] = None

    @property
    def plausible(self) -> bool:
        """Whether this looks like a reference (a year, a DOI, or authors and a title)."""
        return bool(self.year or self.doi or (self.authors and len(self.title.split()) >= 2))


def fold(name: str) -> str:
    """A surname for matching: lower case, accents removed, particles and punctuation kept out."""
    text = unicodedata.normalize("NFKD", name)
    text = "".join(c for c in text if not unicodedata.combining(c)).lower()
    return re.sub(r"[^a-z]", "", text)


def entry_label(text: str) -> Optional[str]:
    """The number a numbered entry opens with ("[12]", "(12)", "12.", "12 "), or None."""
    match = _LABEL.match(text)
    return next((g for g in match.group("a", "b", "c", "d") if g), None) if match else None


def parse_reference(text: str, numbered: bool = False) -> ParsedReference:
    """Read one reference's fields from its text (``numbered``: it opens with its number)."""
    text = " ".join(text.split())
    parsed = ParsedReference(text)
    body = text
    if numbered:
        label = _LABEL.match(body)
        if label:
            parsed.label = entry_label(body)
            body = body[label.end():]
    doi = _DOI.search(body)
    if doi:
        parsed.doi = re.sub(r"\s", "", doi.group("doi")).rstrip(".,;)]")
        body = body[: doi.start()] + body[doi.end():]
    body = _URL.sub(" ", body).strip()
    quoted = _QUOTED.search(body)
    if quoted and quoted.start() > 0:
        _read_authors(parsed, body[: quoted.start()])
        parsed.title = _clean(quoted.group("title"))
        rest = body[quoted.end():]
        parsed.venue = _venue(rest)
        parsed.year = _last_year(rest) or _last_year(body[: quoted.start()])
        return parsed
    end = _read_authors(parsed, body)
    rest = body[end:]
    year = _LEADING_YEAR.match(rest)
    if year and year.group("year")[:1].isdigit():
        parsed.year = year.group("year")
        rest = rest[year.end():]
    elif year:
        rest = rest[year.end():]
    quoted = _QUOTED.match(rest.lstrip(" ,.:"))
    if quoted:
        parsed.title = _clean(quoted.group("title"))
        rest = rest.lstrip(" ,.:")[quoted.end():]
    else:
        parsed.title, rest = _sentence(rest)
    parsed.venue = _venue(rest)
    if parsed.year is None:
        parsed.year = _last_year(rest) or _last_year(parsed.title if not parsed.venue else "")
    return parsed


def _read_authors(parsed: ParsedReference, text: str) -> int:
    """Fill ``authors`` and ``surnames`` from the start of ``text``; return where they end."""
    best: tuple[int, list[tuple[str, str]]] = (0, [])
    for first, rest in _FORM_PAIRS:
        end, names = _name_list(_NAME_FORMS[first], _NAME_FORMS[rest], text)
        if end > best[0]:
            best = (end, names)
    end, names = best
    if not names:
        # an organisation or a bare surname ("BP. 2013."): everything before the year
        year = _ANY_YEAR.search(text[:120])
        if year is None:
            return 0
        head = text[: year.start()].strip(" .,(")
        if not head or len(head.split()) > 12:
            return 0
        parsed.authors, parsed.surnames = [head], [fold(head.split(",")[0].split()[0])]
        return year.start() - (1 if text[year.start() - 1: year.start()] == "(" else 0)
    parsed.authors = [f"{given} {surname}".strip() for given, surname in names]
    parsed.surnames = [fold(surname.split()[-1]) for _, surname in names]
    return end


def _name_list(first: re.Pattern, form: re.Pattern, text: str) -> tuple[int, list[tuple[str, str]]]:
    """The longest run of names at the start of ``text``, the first of form ``first`` and the
    others of ``form``: (end, [(given, surname)])."""
    names: list[tuple[str, str]] = []
    pos = 0
    while True:
        match = (first if not names else form).match(text, pos)
        if match is None:
            break
        names.append((" ".join(match.group("given").split()), " ".join(match.group("surname").split())))
        pos = match.end()
        et_al = _ET_AL.match(text, pos)
        if et_al:
            return et_al.end(), names
        separator = _SEPARATOR.match(text, pos)
        if separator is None or form.match(text, separator.end()) is None:
            break
        pos = separator.end()
    return pos, names


def _sentence(text: str) -> tuple[str, str]:
    """The first sentence of ``text`` (the title) and what follows it."""
    text = text.lstrip(" .,:;")
    for match in re.finditer(r"[.?!](?=\s+\S|\s*$)", text):
        before = text[: match.start()]
        last_word = before.split()[-1] if before.split() else ""
        if match.group() == "." and (re.fullmatch(rf"[{_UP}]", last_word) or last_word.lower() in ("vs", "e.g", "i.e", "al", "st", "dr", "no", "vol")):
            continue
        end = match.end() if match.group() in "?!" else match.start()
        return _clean(text[:end]), text[match.end():]
    return _clean(text), ""


def _venue(text: str) -> str:
    """The container (journal, proceedings, publisher) at the start of ``text``."""
    text = _IN_PREFIX.sub("", text, count=1)
    text = re.sub(rf"^\(?{_YEAR}\)?[.,:]?\s*", "", text)
    end = _VENUE_END.search(text)
    venue = text[: end.start()] if end else text
    venue = venue.strip(" .,:;")
    return venue if re.search(rf"[{_UP}{_LOW}]{{2}}", venue) else ""


def _last_year(text: str) -> Optional[str]:
    """The year printed in ``text``: one in parentheses first, else the last one."""
    years = list(_ANY_YEAR.finditer(text))
    for match in years:
        if text[match.start() - 1: match.start()] == "(":
            return match.group("year")
    return years[-1].group("year") if years else None


def _clean(text: str) -> str:
    return text.strip(" .,:;\u201c\u201d\"'")
