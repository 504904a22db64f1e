"""The paper's own authors in a GROBID TEI header: names, affiliations and e-mail addresses.

GROBID puts them under ``teiHeader/fileDesc/sourceDesc/biblStruct/analytic/author``: a
``persName`` (forenames and surname), ``email`` and one ``affiliation`` per affiliation,
whose printed text is its ``note[@type="raw_affiliation"]`` (GROBID 0.7 and later) or, in
older TEI, its organisation names and address parts.
"""

from __future__ import annotations

from typing import Optional

from lxml import etree

from ..paper import Author
from ..text.normalize import collapse_whitespace

NS = {"t": "http://www.tei-c.org/ns/1.0"}
_HEADER_AUTHORS = "t:teiHeader/t:fileDesc/t:sourceDesc/t:biblStruct/t:analytic/t:author"


def read_header_authors(root: etree._Element) -> list[Author]:
    """The authors of the TEI header, in order; an author without a name is left out (GROBID
    lists an affiliation it could not attach as an author of its own)."""
    authors = []
    for element in root.iterfind(_HEADER_AUTHORS, NS):
        name = person_name(element.find("t:persName", NS))
        if not name:
            continue
        email = _text(element.find("t:email", NS)) or None
        affiliations = [a for a in map(_affiliation, element.iterfind("t:affiliation", NS)) if a]
        authors.append(Author(name=name, affiliations=list(dict.fromkeys(affiliations)), email=email))
    return authors


def person_name(pers: Optional[etree._Element]) -> str:
    """ "Forenames Surname" of a TEI ``persName``, or "" for none."""
    if pers is None:
        return ""
    names = [collapse_whitespace(f.text or "") for f in pers.iterfind("t:forename", NS)]
    surname = _text(pers.find("t:surname", NS))
    return " ".join(n for n in names + [surname] if n)


def _affiliation(element: etree._Element) -> str:
    """An affiliation's printed text: GROBID's raw note without its label, else the
    organisation names and the address parts joined by commas."""
    raw = element.find("t:note[@type='raw_affiliation']", NS)
    if raw is not None:
        label = raw.find("t:label", NS)
        text = collapse_whitespace("".join(raw.itertext()))
        if label is not None and label.text and text.startswith(label.text.strip()):
            text = text[len(label.text.strip()):].strip()
        return text.replace(" , ", ", ")
    parts = [_text(org) for org in element.iterfind("t:orgName", NS)]
    address = element.find("t:address", NS)
    if address is not None:
        parts += [_text(part) for part in address]
    return ", ".join(p for p in parts if p)


def _text(element: Optional[etree._Element]) -> str:
    return collapse_whitespace("".join(element.itertext())) if element is not None else ""
