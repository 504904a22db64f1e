"""One bibliography entry's text to its fields: label, authors, year, title, venue, DOI.

Consumes the text of one reference as printed (numbered or not, in the common styles: ACL,
APA, Harvard, Vancouver, IEEE, Nature, Springer, Elsevier); produces a
:class:`ParsedReference`. Rules, not a model: the author list is read with one name form
(``Devlin, J.``, ``J. Devlin``, ``Devlin J``, ``Jacob Devlin``, ``Devlin, Jacob``) held for
the whole list, since a style never mixes them, which is what stops a title-case title from
being read as more names; the title is a quoted string (IEEE) or the sentence after the
authors and year.

refextract (INSPIRE) was measured for this and not used: given the same entry strings it
finds .139 of GROBID's titles against .817 here, since it is built for physics report
numbers and journal abbreviations and returns an article title only when it is quoted (see
``benchmarks/README.md``).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Optional

from .accents import SPACING_ACCENTS as _SPACING_ACCENTS, VOWELS as _VOWELS


_YEAR = r"(?:1[5-9]\d\d|20\d\d)[a-z]?"
_UP = "A-Z\u00c0-\u00d6\u00d8-\u00de\u0100-\u017f"
_LOW = "a-z\u00df-\u00f6\u00f8-\u00ff\u0100-\u017f"
#: particles before a surname, also in the capitals of a journal that sets surnames so ("R.J. VAN
#: AARDE"); not "DE" or "DA", which Vancouver's initials spell ("Casey DE Jr")
_PARTICLE = (r"(?:(?:[Zz]u|[Vv]an|[Vv]on|[Dd]er|[Dd]en|[Dd]e|[Dd]el|[Dd]ella|[Dd]i|[Dd]a|[Dd]u|[Ll]a|[Ll]e|[Dd]os|[Dd]as|"
             r"ter|ten|bin|[Aa]l|[Ee]l|[Ss]t\.|VAN|VON|DER|DELLA|DOS)\s+)*")
#: A name's lower-case particles, as a loosely read name may hold them.
_PARTICLE_WORDS = "zu|van|von|vom|der|den|de|del|della|di|da|du|la|le|dos|das|ter|ten|bin|al|el"
_SURNAME = rf"{_PARTICLE}(?:[{_UP}]['\u2019])?[{_UP}][{_UP}{_LOW}'\u2019]*(?:-[{_UP}{_LOW}]+)*[{_LOW}{_UP}]"
# one way only to match the gap between initials: an ambiguous "\s?-?\s?" backtracked
# exponentially on a long run of initials that fails
_INITIALS = rf"[{_UP}]\.(?:(?:\s?-\s?|\s)?[{_UP}]\.)*"
_BARE_INITIALS = rf"[{_UP}]{{1,3}}(?:\s[{_UP}](?:\.|(?=\s*(?:[,;(&]|and\b|\d|$))))?(?![{_LOW}\w])"
#: Words that open titles and are not given names ("The KDD process ..." is no "The KDD").
_TITLE_OPENERS = ("The|A|An|On|In|Of|For|To|Towards?|How|What|When|Why|Where|Which|Using|Is|Are|Do|Does|Can|"
                  "From|With|Beyond|Learning|Deep|Neural|Data|Improving|Automatic|Evaluating|Understanding|"
                  "Effects?|Impact|Analysis|Modeling|Modelling|Toward|New|Recent|Large|Global|Social")
_GIVEN = rf"(?!(?:{_TITLE_OPENERS})\b)[{_UP}][{_LOW}]+(?:-[{_UP}]?[{_LOW}]+)?"

#: Name forms, each with the group holding the surname. Order breaks ties.
_NAME_FORMS = {
    # an inverted name may have a two-word surname ("Porsdam Mann, S."): the comma anchors it
    "surname_initials": re.compile(
        rf"(?P<surname>{_SURNAME}(?:\s{_SURNAME})?),\s*(?P<given>{_INITIALS}(?:\s?[{_UP}]\b)?|[{_UP}]{{1,3}}(?=,|\s+(?:and|&)\s|\s+\(?{_YEAR}\b))"),
    "initials_surname": re.compile(rf"(?P<given>{_INITIALS})\s*(?P<surname>{_SURNAME})"),
    "surname_dotted": re.compile(rf"(?P<surname>{_SURNAME})\s+(?P<given>{_INITIALS})"),
    "surname_bare": re.compile(rf"(?P<surname>{_SURNAME})\s+(?P<given>{_BARE_INITIALS})"),
    "surname_given": re.compile(rf"(?P<surname>{_SURNAME}(?:\s{_SURNAME})?),\s*(?P<given>{_GIVEN}(?:\s+(?:{_INITIALS}|{_GIVEN}))*)"),
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
# APA's "A, B, ... & Z" leaves names out with an ellipsis and goes on to the last author
_SEPARATOR = re.compile(r"\s*(?:,?\s*(?:\.\.\.|\u2026)\s*(?:,\s*)?(?:&|and)?\s*|,\s*(?:and|&)\s+|,\s*|\s+(?:and|&)\s+|;\s*)")
_ET_AL = re.compile(r"\s*[,;]?\s*(?:and\s+)?(?:et\s*al\.?|et\s+al\b)")  # MDPI: "Moro\u0144, J.; et al."
_LABEL = re.compile(r"^\s*(?:\[(?P<a>\d{1,4})\]|\((?P<b>\d{1,4})\)|(?P<c>\d{1,4})\.(?=\s)|(?P<d>\d{1,4})(?=\s+\S))\s*")
_DOI = re.compile(r"(?:https?://(?:dx\.)?doi\.org/\s*|doi\s*:?\s*)?(?P<doi>10\.\d{4,9}/\s?\S+)", re.IGNORECASE)
_URL = re.compile(r"(?:\[?online\]?\.?\s*)?(?:available\s+(?:at|from|online)\s*:?\s*)?"
                  r"(?:https?://|www\.)\S+(?:\s+\S+/\S*)*", re.IGNORECASE)
_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.?"
#: What an entry prints where its year is not known yet.
_YEAR_STAND_IN = r"n\.\s?d\.|in press|under review|forthcoming"
#: The year (or "n.d.", "in press") right after the authors, with a month before or after it.
_LEADING_YEAR = re.compile(
    rf"^[\s.,:;]*\(?(?:{_MONTH}\s+(?:\d{{1,2}},?\s+)?)?(?P<year>{_YEAR}|{_YEAR_STAND_IN})"
    rf"(?:,\s*{_MONTH}(?:\s*\d{{1,2}})?)?\)?[.,:;]?\s*",
    re.IGNORECASE,
)
_ANY_YEAR = re.compile(rf"(?<![\d/.:-])(?P<year>{_YEAR})(?![\d/]|\.\d)")
#: A quoted title: a double quote closes only at a double quote (an apostrophe in "I\u2019m" is no
#: closing single quote), a single quote or a guillemet at its own kind.
_QUOTED = re.compile(
    r"(?:(?P<double>[\u201c\u201d\"])|\u2018|\u00ab)(?P<title>[^\u201c\u201d\"\u00bb]{6,400}?)[,.]?"
    r"(?(double)[\u201d\"\u201c]|[\u2019\u00bb])"
)
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


def label_style(text: str) -> Optional[str]:
    """How a numbered entry's number is printed: "bracket", "paren", "dot" or "bare"."""
    match = _LABEL.match(text)
    if match is None:
        return None
    return next(style for style, group in zip(("bracket", "paren", "dot", "bare"), "abcd") if match.group(group))


def opens_with_name(text: str) -> bool:
    """Whether ``text`` opens with an inverted author name and a year or another name
    ("Antiochos, S. K. 2013", "Smith, J., Lee, K."): a row that starts an entry."""
    match = _NAME_FORMS["surname_initials"].match(text)
    return match is not None and re.match(rf"\s*(?:,|&|and\b|\(?{_YEAR})", text[match.end():]) is not None


#: TeX's \v{s} prints the caron before its letter ("Fi\u02c7ser"), \.I the dot ("\u02d9Ilknur")
_CARON_LETTERS = "CDENRSTZcdenrstz"
_DOT_LETTERS = "CEGIZcegz"
_ACCENT_AFTER_STOP_RE = re.compile(rf"(?<=[a-z\u00df-\u00ff])([,.;:])([{''.join(_SPACING_ACCENTS)}])")
_DOTLESS_ACCENTED_RE = re.compile("\u0131(?=[\u0300-\u036f])")  # TeX's accented dotless i
_CEDILLA_LETTERS = "CSTcst"  # and the cedilla after it ("Franc\u00b8ois")


def compose_accents(text: str) -> str:
    """Spacing accents a PDF prints beside their letter ("Be\u00b4langer", "Co\u02c6te\u00b4") put on
    it ("B\u00e9langer", "C\u00f4t\u00e9"): on the vowel before, else on the vowel after; a caron
    on the consonant after it ("Fi\u02c7ser", Fi\u0161er), a dot above on the letter after it
    ("\u02d9Ilknur", \u0130lknur), a cedilla on the c, s or t before it. An accent after a name's comma
    or full stop goes before it ("Herve,\u00b4" is "Herv\u00e9,"), and one beside TeX's dotless i
    goes on it ("Llu\u00b4\u0131s", "Mart\u0131\u0301" are Llu\u00eds, Mart\u00ed)."""
    if not any(accent in text for accent in _SPACING_ACCENTS):
        return unicodedata.normalize("NFC", _DOTLESS_ACCENTED_RE.sub("i", text)) if "\u0131" in text else text
    text = _ACCENT_AFTER_STOP_RE.sub(r"\2\1", text)
    out: list[str] = []
    for i, char in enumerate(text):
        if char not in _SPACING_ACCENTS:
            out.append(char)
            continue
        base = next((c for c in reversed(out) if not unicodedata.combining(c)), "")
        after = text[i + 1] if i + 1 < len(text) else ""
        if (char == "\u02c7" and after and after in _CARON_LETTERS) or (char == "\u02d9" and after and after in _DOT_LETTERS):
            out.extend((after, _SPACING_ACCENTS[char], "\0"))  # the letter is skipped below
        elif after == "\u0131":
            out.extend((after, _SPACING_ACCENTS[char], "\0"))
        elif char == "\u00b8" and base and base in _CEDILLA_LETTERS and out[-1] != " ":
            out.append(_SPACING_ACCENTS[char])
        elif base and base in _VOWELS and out[-1] != " ":
            out.append(_SPACING_ACCENTS[char])
        elif after in _VOWELS and after:
            out.append(after)  # the accent goes on the next vowel, which is skipped below
            out.append(_SPACING_ACCENTS[char])
            out.append("\0")
        elif base.isalpha() and out[-1] != " ":
            out.append(_SPACING_ACCENTS[char])
        else:
            out.append(char)
    text = "".join(out)
    # drop the letter each placeholder says was already written
    text = re.sub("\0.", "", text, flags=re.S)
    return unicodedata.normalize("NFC", _DOTLESS_ACCENTED_RE.sub("i", text))


def parse_reference(text: str, numbered: bool = False) -> ParsedReference:
    """Read one reference's fields from its text (``numbered``: it opens with its number)."""
    # IEEE Access prints its quotes as doubled single ones (‘‘Title,’’)
    text = compose_accents(" ".join(text.split())).replace("\u2018\u2018", "\u201c").replace("\u2019\u2019", "\u201d")
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
    if quoted and quoted.start() > 0 and len(quoted.group("title").split()) >= 2:
        before = body[: quoted.start()]
        end = _read_authors(parsed, before)
        # the quote is the title only right after the authors (and a year): "Smith, J.,
        # 2019, "Title"", not a quoted word inside an unquoted title; initials the name forms
        # did not take may stand between ("P. Phobun and V. J. , "Title"")
        if end and not re.sub(rf"(?:et\s*al\.?|{_YEAR}|{_MONTH}|\d{{1,2}}|\band\b|&|[{_UP}]\.|[\s.,:;()])", "",
                              before[end:]):
            parsed.title = _clean(quoted.group("title"))
            rest = body[quoted.end():]
            parsed.venue = _venue(rest)
            parsed.year = _last_year(rest) or _last_year(before)
            return parsed
        parsed.authors, parsed.surnames = [], []
    end = _read_authors(parsed, body)
    end = _more_names_before_year(parsed, body, end)
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
    elif rest.lstrip().startswith(",") and not parsed.year:
        # authors closed by a comma (Elsevier, Springer numbered styles): the title runs to
        # the comma before the container ("..., in: Proc. ...", "..., Computer 42 (8) (2009)")
        parsed.title, rest = _comma_title(rest)
    else:
        parsed.title, rest = _sentence(rest)
    parsed.venue = _venue(rest)
    citation = _JOURNAL_CITATION.fullmatch(parsed.title)
    if citation:
        # astronomy's entries print no title: "Burton, W. B. 1976, ARA&A, 14, 275"
        parsed.title, parsed.venue = "", citation.group("journal")
    if parsed.year is None:
        parsed.year = _last_year(rest) or _last_year(parsed.title if not parsed.venue else "")
    head = parsed.authors[0] if len(parsed.authors) == 1 else ""
    if parsed.label and not parsed.title and len(head.split()) >= 3 and _TITLE_WORD_RE.search(head):
        # a numbered entry with no author, only words and a year ("[1] The nobel prize in physics
        # 1901."): what stood before the year is its title
        parsed.title, parsed.authors, parsed.surnames = _clean(head), [], []
    return parsed


def _read_authors(parsed: ParsedReference, text: str) -> int:
    """Fill ``authors`` and ``surnames`` from the start of ``text``; return where they end."""
    best: tuple[tuple[bool, int, int], int, list[tuple[str, str]]] = ((False, 0, 0), 0, [])
    for first, rest in _FORM_PAIRS:
        end, names = _name_list(_NAME_FORMS[first], _NAME_FORMS[rest], text)
        # the longest reading whose next word can open a year or a title ("Gipe P. Wind
        # energy comes of age" is "Gipe P." then a title, not the name "Gipe P. Wind")
        key = (bool(names) and _opens_next_part(text[end:]), end, len(names))
        if names and key > best[0]:
            best = (key, end, names)
    _, end, names = best
    organisation = _ORGANISATION.match(text)
    if organisation and (not names or end < organisation.end("name")):
        parsed.authors = [organisation.group("name")]
        parsed.surnames = [fold(organisation.group("name").split()[0])]
        return organisation.end("name")
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


#: An organisation as author: a few capitalised words closed by a full stop ("IEA.", "Ecoinvent Centre.").
_ORGANISATION = re.compile(rf"(?P<name>(?:[{_UP}][\w&\-]*)(?:\s+(?:of|for|and|the|[{_UP}][\w&\-]*)){{0,5}})\.\s+(?=[{_UP}\d(])")


#: A lower-case word that is no name's particle: a title's ("The nobel prize in physics").
_TITLE_WORD_RE = re.compile(rf"\s(?!(?:{_PARTICLE_WORDS})\b)[{_LOW}]")


#: A journal's abbreviation, volume and first page, all an entry prints after its year ("ApJ, 392, 497").
_JOURNAL_CITATION = re.compile(rf"(?P<journal>[{_UP}][\w&.]*(?:\s[\w&.]+){{0,3}}),\s*\d+,\s*[{_UP}]?\d+")


#: A year in parentheses, with a month before it ("(2019)", "(Sept. 2008)"), or its stand-in.
_PARENTHESISED_YEAR = re.compile(
    rf"\(\s*(?:(?:{_MONTH}\s+(?:\d{{1,2}},?\s+)?)?{_YEAR}|{_YEAR_STAND_IN})\s*\)",
    re.IGNORECASE,
)
_NAME_TOKEN = (rf"(?!(?:{_TITLE_OPENERS})\b(?!\.))(?:[{_UP}][{_UP}{_LOW}'\u2019]*(?:-[{_UP}{_LOW}]+)*"
               rf"|[{_UP}]\.(?:\s?-?[{_UP}]\.)*|{_PARTICLE_WORDS})")
#: One author's name as printed, in any form: up to five capitalised words, initials or particles.
_LOOSE_NAME = re.compile(rf"{_NAME_TOKEN}(?:\s+{_NAME_TOKEN}){{0,4}}")
#: Initials alone, as a name's part after a comma or a surname ("L", "CR", "A-F", "K.K.", "M. S");
#: not an acronym ("NASA").
_INITIALS_ONLY = re.compile(rf"-?[{_UP}]{{1,3}}\.?|-?[{_UP}]\.(?:\s?-?[{_UP}]\.?)*|-?[{_UP}](?:-[{_UP}]\.?)+")
_SUFFIX = re.compile(r"(?:Jr|Sr)\.?|II|III")


def _has_initials(name: str) -> bool:
    """Whether a loosely read name has initials ("Seidel S", "van der Meer TGLA", "K. Lee")."""
    words = name.split()
    return any(_INITIALS_ONLY.fullmatch(w) for w in words) or (
        len(words) > 1 and re.fullmatch(rf"[{_UP}]{{4}}", words[-1]) is not None)


def _more_names_before_year(parsed: ParsedReference, text: str, end: int) -> int:
    """Where the author list ends when names the forms did not read run on from ``end`` to a
    year in parentheses ("Chandra Kruse L, Seidel S and vom Brocke J (2019)", "Bharath, R.,
    Punit Kumar, et al. (Dec. 2015)"): those names are added and their end returned; else ``end``.
    The run must read as names: initials in it, "et al.", an "and" before the last name or a full
    stop before the year ("U.S. Census Bureau. (2021)."; "M. Nielsen, Quantum Computation (2010)"
    has a title there)."""
    if not parsed.authors or _LEADING_YEAR.match(text[end:]):
        return end
    year = _PARENTHESISED_YEAR.search(text, end, end + 300)
    if year is None:
        return end
    between = text[end: year.start()]
    et_al = bool(_ET_AL.search(between))
    chunks = [" ".join(c.strip(" .").split()) for c in _SEPARATOR.split(_ET_AL.sub(" ", between)) if c.strip(" .,")]
    # the rest of the last name read, right after it: its initials or suffix ("Chandra Kruse" +
    # "L", "Cameron A" + "-F", "Casey DE" + "Jr")
    lead = None
    if chunks and re.match(r"\s|-", between) and (_INITIALS_ONLY.fullmatch(chunks[0]) or _SUFFIX.fullmatch(chunks[0])):
        lead = chunks.pop(0)
    names: list[str] = []
    for chunk in chunks:
        if names and (_INITIALS_ONLY.fullmatch(chunk) or _SUFFIX.fullmatch(chunk)):
            names[-1] = f"{chunk} {names[-1]}" if _INITIALS_ONLY.fullmatch(chunk) else f"{names[-1]} {chunk}"
        elif _LOOSE_NAME.fullmatch(chunk):
            names.append(chunk)
        else:
            return end
    closed = between.rstrip().endswith(".")  # APA's "Authors. (Year)."
    if names and not (et_al or closed or re.search(r"\s(?:and|&)\s", between) or any(map(_has_initials, names))):
        return end
    if lead is not None:
        last = parsed.authors[-1]
        given, _, surname = last.partition(" ")
        parsed.authors[-1] = f"{given}{lead} {surname}" if lead.startswith("-") else f"{last} {lead}"
    for name in names:
        words = [w for w in name.split() if not _SUFFIX.fullmatch(w) and not _INITIALS_ONLY.fullmatch(w)]
        parsed.authors.append(name)
        parsed.surnames.append(fold(words[-1] if words else name))
    return year.start()


def _opens_next_part(text: str) -> bool:
    """Whether ``text`` (after an author list) opens like a year, a title or a quote."""
    text = text.lstrip(" .,:;")
    return not text or not text[0].islower()


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
    return _without_title_letter(text, pos, names)


def _without_title_letter(text: str, pos: int, names: list[tuple[str, str]]) -> tuple[int, list[tuple[str, str]]]:
    """The names without a last bare initial that is a title's first word ("Gao, H. A generic
    data ..." is "Gao, H." and the title "A generic data ...")."""
    if not names or not re.match(rf"\s+(?!(?:and|et)\b)[{_LOW}]", text[pos:]):
        return pos, names
    given, surname = names[-1]
    letter = re.search(rf"\s[{_UP}]$", given)
    if letter is None or not text[:pos].endswith(given[-1]):
        return pos, names
    return len(text[: pos - 1].rstrip()), names[:-1] + [(given[: letter.start()], surname)]


def _sentence(text: str) -> tuple[str, str]:
    """The title at the start of ``text`` and what follows it: its first sentence, with the
    next one when that is a subtitle ("All too human? Mapping the risk ...", "Mirages. On
    anthropomorphism ...": a question or a word or two, and more sentences after them)."""
    title, rest = _first_sentence(text)
    if title and rest and (title.endswith("?") or len(title.split()) <= 3):
        subtitle, after = _first_sentence(rest)
        if subtitle[:1].isupper() and after.strip() and not re.match(r"In\b", subtitle):
            return f"{title}{'' if title.endswith('?') else '.'} {subtitle}", after
    return title, rest


#: A sentence's end: a full stop, question or exclamation mark before a space or the end, or a
#: full stop (after a word, or a question mark) glued to the next capitalised word when a
#: volume follows, as some PDFs print the title and the journal ("... leverage AI.Business
#: Horizons, 63(2)"; "ASP.Net Core." is one word).
_SENTENCE_END = re.compile(
    rf"[.?!](?=\s+\S|\s*$)|(?:(?<=[{_UP}{_LOW}]{{2}})|\?)\.(?=[{_UP}][{_LOW}]{{2}}[^.]{{0,80}}?,\s*\d)"
)


#: Abbreviations a title goes on after ("... mortality for U.S. Pacific West Coast ..."), when a
#: lower-case or a capitalised word follows (not a journal's capitals: "in the U.S. JAMA.").
_COUNTRY_ABBREVIATIONS = ("U.S", "U.K", "U.N", "E.U")
_GOES_ON_RE = re.compile(rf"\s+(?:[{_LOW}]|[{_UP}][{_LOW}])")


def _first_sentence(text: str) -> tuple[str, str]:
    """The first sentence of ``text`` and what follows it."""
    text = text.lstrip(" .,:;")
    for match in _SENTENCE_END.finditer(text):
        before = text[: match.start()]
        last_word = before.split()[-1] if before.split() else ""
        if match.group() == "." and (re.fullmatch(rf"[{_UP}v]", last_word)
                                     or last_word.lower() in ("vs", "e.g", "i.e", "al", "st", "dr", "no", "vol")
                                     or (last_word in _COUNTRY_ABBREVIATIONS and _GOES_ON_RE.match(text[match.end():]))):
            continue
        end = match.start() + 1 if match.group()[0] in "?!" else match.start()
        return _clean(text[:end]), text[match.end():]
    return _clean(text), ""


_TITLE_END_COMMA = re.compile(
    rf",\s+(?=(?:in:?\s|In\s|URL\b|arXiv|https?:|vol\.|pp\.|{_YEAR}\b|Proc\.|Proceedings\b|"
    rf"[{_UP}][{_LOW}]{{1,5}}\.\s+[{_UP}][{_LOW}]{{1,5}}\.|"  # an abbreviated journal ("Inf. Softw. Technol.")
    rf"[{_UP}][\w.&\-\u2019' ]{{0,80}}?\s\d+\s*[(,:]|[{_UP}][\w.&\-\u2019' ]{{0,80}}?,\s*{_YEAR}\b))"
)


def _comma_title(text: str) -> tuple[str, str]:
    """A title closed by a comma before its container, and what follows it."""
    text = text.lstrip(" .,:;")
    end = _TITLE_END_COMMA.search(text)
    sentence, after = _sentence(text)
    # what a full stop before the comma leaves is the container when capitalised and a
    # publisher in parentheses or more than a subtitle's word or two ("Inc. and the smartphone
    # market", ". A review" stay in the title)
    after_stop = text[len(sentence): end.start()].lstrip(" .?!") if end is not None else ""
    between = after_stop.lstrip("([")
    if end is None or (
        len(sentence) < end.start() - 1
        and not re.search(rf"\b{_YEAR}$", sentence)
        and between[:1].isupper()
        and (after_stop.startswith(("(", "[")) or len(between.split()) >= 3 or re.search(r"\d", between))
    ):
        # a full stop before the comma ends the title ("Mapping the semantic structure of
        # cognitive neuroscience. Journal of cognitive neuroscience 26, 1949-1965 (2014)"),
        # unless what it ends is names and a year that the author forms did not read
        return sentence, after
    return _clean(text[: end.start()]), text[end.end():]


def _venue(text: str) -> str:
    """The container (journal, proceedings, publisher) at the start of ``text``."""
    text = _IN_PREFIX.sub("", text, count=1)
    text = re.sub(rf"^\(?{_YEAR}\)?[.,:]?\s*", "", text)
    end = next((m for m in _VENUE_END.finditer(text) if not _abbreviation_stop(text, m)), None)
    venue = text[: end.start()] if end else text
    venue = venue.strip(" .,:;")
    return venue if re.search(rf"[{_UP}{_LOW}]{{2}}", venue) else ""


def _abbreviation_stop(text: str, match: re.Match) -> bool:
    """Whether a full stop ends an abbreviated word of a venue ("J. Things", "Proc. IEEE
    Conf."), followed by more of its name, rather than the venue."""
    if not match.group().startswith("."):
        return False
    words = text[: match.start()].split()
    after = text[match.end():].lstrip()
    return bool(words) and len(words[-1]) <= 6 and words[-1][:1].isupper() and after[:1].isupper()


def _last_year(text: str) -> Optional[str]:
    """The year printed in ``text``: one in parentheses first, else the last one."""
    years = list(_ANY_YEAR.finditer(text))
    for match in years:
        if text[match.start() - 1: match.start()] == "(":
            return match.group("year")
    return years[-1].group("year") if years else None


def _clean(text: str) -> str:
    return text.strip(" .,:;\u201c\u201d\"'")
