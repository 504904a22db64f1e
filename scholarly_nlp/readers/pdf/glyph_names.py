"""Ligatures for the control codes pdfium cannot map, from the fonts' glyph names.

A simple font without a ``/ToUnicode`` map leaves pdfium to read its ``/Encoding``: standard
glyph names (``fi``, ``uni03BC``) it turns into characters itself, but a ligature named by
its components (``f_i``, ``f_l``) it cannot, and a font that puts such ligatures at codes
below 0x20 comes out as control characters ("identi\\x1eed") that the reader would drop.
:func:`control_code_characters` reads the fonts' ``/Differences`` arrays (pdfminer's object
parser, no content streams; fonts of the pages and of their form XObjects) and gives, per
font name and code, the ligature's presentation form (U+FB01 for ``f_i``): one character for
one, so pdfium's character offsets stay valid, spelled out later like any other ligature.
Only a character of that very font is replaced: other fonts put other glyphs at such codes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path

#: Ligature glyph names (standard and components joined by "_") -> presentation forms.
_LIGATURES = {"ff": "\ufb00", "fi": "\ufb01", "fl": "\ufb02", "ffi": "\ufb03", "ffl": "\ufb04"}
#: What pdfium gives for an unmapped code below 0x20 (tab, line feed and carriage return excluded).
CONTROL_RE = re.compile("[\x01-\x08\x0b\x0c\x0e-\x1f]")
_SUBSET_TAG_RE = re.compile(r"^[A-Z]{6}\+")
_BUILT_IN = object()  # a font whose codes mean what its font program says: unknown here


def glyph_character(name: str) -> str | None:
    """The presentation form of a ligature glyph name (``f_i`` or ``fi`` -> U+FB01), or None."""
    ligature = _LIGATURES.get(name.replace("_", ""))
    return ligature if ligature and ("_" in name or name in _LIGATURES) else None


def _name(value) -> str:
    from pdfminer.psparser import PSLiteral

    value = value.name if isinstance(value, PSLiteral) else value
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    return value if isinstance(value, str) else ""


def font_name(font: dict) -> str:
    """A font's ``/BaseFont`` without its subset tag ("VOLEYY+Meridien" -> "Meridien"), as
    pdfium names the font of a character."""
    from pdfminer.pdftypes import resolve1

    return _SUBSET_TAG_RE.sub("", _name(resolve1(font.get("BaseFont"))))


def low_code_names(font: dict):
    """code (< 0x20) -> glyph name from the font's ``/Differences``; an empty dict for a font
    whose encoding names nothing there (a standard encoding has no glyph below 0x20), and
    ``_BUILT_IN`` for one without an ``/Encoding`` (its program's own encoding)."""
    from pdfminer.pdftypes import resolve1

    encoding = resolve1(font.get("Encoding"))
    if encoding is None:
        return _BUILT_IN
    if not isinstance(encoding, dict):
        return {}
    return _differences(encoding, range(0x20))


def _differences(encoding: dict, codes: range) -> dict[int, str]:
    """code -> glyph name of an encoding dictionary's ``/Differences``, for ``codes``."""
    from pdfminer.pdftypes import resolve1

    names: dict[int, str] = {}
    code = None
    for item in resolve1(encoding.get("Differences")) or []:
        item = resolve1(item)
        if isinstance(item, int):
            code = item
        elif code is not None:
            if code in codes:
                names[code] = _name(item)
            code += 1
    return names


def ascii_code_ligatures(fonts: Iterable[dict]) -> dict[str, dict[int, str]]:
    """Per font name, the printable ASCII codes that a font of that name names as a ligature
    in its ``/Differences`` (``33 /f_i``: ACM's Libertine fonts), code -> presentation form.
    Other fonts of the name may keep the characters themselves there: which font object a
    character is drawn with decides (:mod:`.ascii_ligatures`). A code two fonts of the name
    name as different ligatures is left out."""
    from pdfminer.pdftypes import resolve1

    tables: dict[str, dict[int, str]] = {}
    clashes: set[tuple[str, int]] = set()
    for font in fonts:
        try:
            encoding = resolve1(font.get("Encoding"))
            if not isinstance(encoding, dict):
                continue
            name = font_name(font)
            for code, glyph in _differences(encoding, range(0x21, 0x7F)).items():
                ligature = glyph_character(glyph)
                if ligature is None or not name:
                    continue
                if tables.setdefault(name, {}).setdefault(code, ligature) != ligature:
                    clashes.add((name, code))
        except Exception:  # noqa: BLE001 - one malformed font tells nothing
            continue
    for name, code in clashes:
        tables[name].pop(code, None)
    return {name: table for name, table in tables.items() if table}


def font_name_or_empty(font: dict) -> str:
    """:func:`font_name`, or "" where the font's name cannot be read."""
    try:
        return font_name(font)
    except Exception:  # noqa: BLE001
        return ""


def font_record(font: dict) -> tuple[str, object]:
    """What :func:`font_tables` needs of a font dictionary, read while its file is open: its
    name without subset tag and :func:`low_code_names`, or ``_BUILT_IN`` for a Type 3 font
    (its glyph names are its own) and a composite (Type 0) font (its codes go through a CMap)."""
    from pdfminer.pdftypes import resolve1

    if _name(resolve1(font.get("Subtype"))) in ("Type3", "Type0"):
        return font_name(font), _BUILT_IN
    return font_name(font), low_code_names(font)


def font_tables(records: Iterable[tuple[str, object]]) -> dict[str, dict[int, str]]:
    """Per font name, code -> ligature character, from :func:`font_record` records.

    pdfium names a character's font without its subset tag, so fonts that share a name share
    a table: a code is kept only where every font of that name names it as the same
    ligature, or has a standard encoding that puts nothing there. A name that any font with
    its own built-in encoding, a Type 3 or a Type 0 font shares keeps nothing, and neither do
    fonts without a name.
    """
    per_name: dict[str, list] = {}
    for name, names in records:
        if name:
            per_name.setdefault(name, []).append(names)
    tables: dict[str, dict[int, str]] = {}
    for name, encodings in per_name.items():
        if any(names is _BUILT_IN for names in encodings):
            continue
        table: dict[int, str] = {}
        for code in {code for names in encodings for code in names}:
            characters = {glyph_character(names[code]) if code in names else "" for names in encodings}
            characters.discard("")  # a standard encoding: nothing at that code
            if len(characters) == 1 and None not in characters:
                table[code] = characters.pop()
        if table:
            tables[name] = table
    return tables


def _fonts(resources, seen: set) -> Iterator[dict]:
    """The font dictionaries of a resource dictionary and of its form XObjects, each once;
    entries that are not what they should be are passed over."""
    from pdfminer.pdftypes import resolve1

    resources = resolve1(resources)
    if not isinstance(resources, dict):
        return
    fonts = resolve1(resources.get("Font"))
    for reference in fonts.values() if isinstance(fonts, dict) else ():
        key = ("font", getattr(reference, "objid", id(reference)))
        font = resolve1(reference)
        if key not in seen and isinstance(font, dict):
            seen.add(key)
            yield font
    xobjects = resolve1(resources.get("XObject"))
    for reference in xobjects.values() if isinstance(xobjects, dict) else ():
        key = ("xobject", getattr(reference, "objid", id(reference)))
        xobject = resolve1(reference)
        if key in seen or not isinstance(getattr(xobject, "attrs", None), dict):
            continue
        seen.add(key)
        if _name(resolve1(xobject.attrs.get("Subtype"))) == "Form":
            yield from _fonts(xobject.attrs.get("Resources"), seen)


def control_code_characters(path: Path) -> dict[str, dict[int, str]]:
    """Per font name, a ``str.translate`` table of the control codes its glyph names say are
    ligatures (:func:`font_tables`); the fonts read before a parse error still count, and a
    file pdfminer cannot open gives an empty mapping."""
    records: list[tuple[str, object]] = []
    for font in document_fonts(path):
        try:
            records.append(font_record(font))
        except Exception:  # noqa: BLE001 - one malformed font: its name keeps nothing
            records.append((font_name_or_empty(font), _BUILT_IN))
    return font_tables(records)


def document_fonts(path: Path) -> Iterator[dict]:
    """The font dictionaries of a PDF's pages and their form XObjects, each once (pdfminer's
    object parser, no content streams); those before a parse error, none where pdfminer cannot
    open the file."""
    try:
        from pdfminer.pdfdocument import PDFDocument
        from pdfminer.pdfpage import PDFPage
        from pdfminer.pdfparser import PDFParser

        with open(path, "rb") as handle:
            seen: set = set()
            for page in PDFPage.create_pages(PDFDocument(PDFParser(handle))):
                yield from _fonts(page.resources, seen)
    except Exception:  # noqa: BLE001 - a damaged object table: pdfium's reading stands as it is
        return
