"""Silver training pairs for the contribution linker from "see Section N" pointers.

An introduction sentence such as "In Section 4 we describe the model" or "(Sect. 3, §5)" names
the section that explains what it says; the first paragraph of that section is a silver
answer. :func:`silver_pairs` reads only spaCy span groups and sentence boundaries of a paper
Doc (``sections`` with the section number as ``kb_id_`` and the title as ``label_``,
``paragraphs``), so it needs no model and no Doc extension.

The introduction is :func:`scholarly_nlp.introduction_range`'s, the one
:func:`scholarly_nlp.introduction_and_body` reads; its sentences are those starting inside its
paragraphs.
"""

from __future__ import annotations

import re
from typing import Optional

from scholarly_nlp import introduction_range

__all__ = ["SECTION_POINTER", "section_numbers", "silver_pairs"]

#: "Section 4", "Sections 3 and 4", "Sect. 3", "Sec. 2.1", "§4", "§§ 3-5" (the numbers follow).
SECTION_POINTER = re.compile(
    r"(?:\bSections?|\bSects?\.|\bSecs?\.|§§?)\s*(\d+(?:\.\d+)*(?:\s*(?:,|and|&|or|-|–|to)\s*\d+(?:\.\d+)*)*)",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"\d+(?:\.\d+)*")
_LEADING_NUMBER = re.compile(r"^\s*(\d+(?:\.\d+)*)[.)]?\s")


def section_numbers(text: str) -> list[str]:
    """The section numbers a sentence points to, in order of mention, without repeats.

    ``"In Sections 3 and 4.2 we ..."`` -> ``["3", "4.2"]``; ``"see §5"`` -> ``["5"]``; a
    sentence without a pointer -> ``[]``.
    """
    numbers: list[str] = []
    for match in SECTION_POINTER.finditer(text or ""):
        for number in _NUMBER.findall(match.group(1)):
            number = number.rstrip(".")
            if number not in numbers:
                numbers.append(number)
    return numbers


def _section_number(span) -> Optional[str]:
    """A section span's number: its ``kb_id_``, else a number leading its title, else None."""
    if span.kb_id_:
        return span.kb_id_.strip().rstrip(".")
    match = _LEADING_NUMBER.match(span.label_ or "")
    return match.group(1) if match else None


def silver_pairs(doc) -> list[dict]:
    """Silver (introduction sentence, paragraph) pairs of a paper Doc from section pointers.

    For each introduction sentence that points to a section number N ("Section 4", "Sect. 3",
    "§4", "in Section 2 we"), the pair's paragraph is the first paragraph (in document order)
    of the sections numbered N or N.x (so "Section 4" finds the first paragraph of 4.1 when 4
    has no paragraph of its own). Pointers to a number no section carries, and to paragraphs
    that do not start after the introduction, are ignored; a sentence pointing to two
    sections gives two pairs.

    Returns ``[{"sentence", "sentence_start_char", "section", "paragraph_start_char"}, ...]``
    in sentence order; ``[]`` for a Doc without sections, introduction paragraphs or pointers.
    The ``sentence`` and ``paragraph_start_char`` keys are what
    ``doc._.contribution_pairs`` of the contribution linker's training examples needs.
    """
    sections = sorted(doc.spans["sections"] if "sections" in doc.spans else [], key=lambda s: s.start)
    paragraphs = sorted(doc.spans["paragraphs"] if "paragraphs" in doc.spans else [], key=lambda s: s.start)
    intro = introduction_range(doc)
    if intro is None or not paragraphs:
        return []
    intro_start, intro_end = intro
    intro_paragraphs = [(p.start, p.end) for p in paragraphs if intro_start <= p.start < intro_end]
    if not intro_paragraphs:
        return []
    first_paragraph: dict[str, int] = {}
    for section in sections:
        number = _section_number(section)
        if not number:
            continue
        inside = [p for p in paragraphs if section.start <= p.start < section.end and p.start >= intro_end]
        if not inside:
            continue
        parts = number.split(".")
        for depth in range(1, len(parts) + 1):  # "4.1" is a first paragraph for "4" and "4.1"
            key = ".".join(parts[:depth])
            if key not in first_paragraph or inside[0].start_char < first_paragraph[key]:
                first_paragraph[key] = inside[0].start_char
    pairs = []
    for sent in doc.sents:
        if sent.start >= intro_end:
            break
        if not any(lo <= sent.start < hi for lo, hi in intro_paragraphs):
            continue
        text = sent.text.strip()
        for number in section_numbers(text):
            if number in first_paragraph:
                pairs.append({"sentence": text, "sentence_start_char": sent.start_char, "section": number,
                              "paragraph_start_char": first_paragraph[number]})
    return pairs
