"""Characters for the control codes pdfium cannot map, from the fonts' glyph names.

A simple font without a ``/ToUnicode`` map leaves pdfium with the raw character code, so a
publisher font that puts its ligatures, a hyphen or a Greek letter at codes below 0x20 comes
out as control characters ("identi\\x1eed", "10 \\x1cm") that the reader would drop. Such a
font often names those glyphs in its ``/Encoding /Differences`` array (``f_i``, ``fl``,
``uni03BC``), and the name says the character. :func:`control_code_characters` reads those
arrays (pdfminer's object parser, no content streams) and gives, per font and code, one
character that replaces pdfium's control character without changing the text's length, so
pdfium's character offsets stay valid: a ligature becomes its presentation form (U+FB01 for
``f_i``), spelled out later like any other ligature. Only a character of that very font is
replaced: math fonts put other glyphs at the same codes.
"""

from __future__ import annotations

import re
from pathlib import Path

#: Ligature glyph names (standard and components joined by "_") -> presentation forms.
_LIGATURES = {"ff": "\ufb00", "fi": "\ufb01", "fl": "\ufb02", "ffi": "\ufb03", "ffl": "\ufb04"}
_UNI_RE = re.compile(r"^uni([0-9A-Fa-f]{4})$|^u([0-9A-Fa-f]{4,6})$")
#: What pdfium gives for an unmapped code below 0x20 (tab, line feed and carriage return excluded).
CONTROL_RE = re.compile("[\x01-\x08\x0b\x0c\x0e-\x1f]")


def glyph_character(name: str) -> str | None:
    """The one character a glyph name stands for (``f_i`` -> U+FB01, ``uni03BC`` -> mu), or
    None for names that are not a ligature or a ``uniXXXX`` / ``uXXXX[XX]`` code point."""
    ligature = _LIGATURES.get(name.replace("_", ""))
    if ligature and ("_" in name or name in _LIGATURES):
        return ligature
    match = _UNI_RE.match(name)
    if not match:
        return None
    point = int(match.group(1) or match.group(2), 16)
    if point < 0x20 or 0xD800 <= point <= 0xDFFF or point > 0x10FFFF:
        return None
    character = chr(point)
    # one UTF-16 unit, like the code it replaces in pdfium's text
    return character if point <= 0xFFFF else None


def _differences(encoding) -> dict[int, str]:
    """code -> glyph name from a ``/Differences`` array ``[code /name /name code /name ...]``."""
    from pdfminer.pdftypes import resolve1
    from pdfminer.psparser import PSLiteral

    names: dict[int, str] = {}
    code = None
    for item in resolve1(encoding.get("Differences")) or []:
        item = resolve1(item)
        if isinstance(item, int):
            code = item
        elif isinstance(item, PSLiteral) and code is not None:
            names[code] = item.name if isinstance(item.name, str) else item.name.decode("latin-1")
            code += 1
    return names


def _font_name(font: dict) -> str:
    """A font's ``/BaseFont`` without its subset tag ("VOLEYY+Meridien" -> "Meridien"), as
    pdfium names the font of a character."""
    from pdfminer.pdftypes import resolve1
    from pdfminer.psparser import PSLiteral

    base = resolve1(font.get("BaseFont"))
    name = base.name if isinstance(base, PSLiteral) else base
    if isinstance(name, bytes):
        name = name.decode("latin-1")
    name = name if isinstance(name, str) else ""
    return name.split("+", 1)[1] if re.match(r"^[A-Z]{6}\+", name) else name


def control_code_characters(path: Path) -> dict[str, dict[int, str]]:
    """Per font name, a ``str.translate`` table: control code -> the character its glyph name
    says, for the codes below 0x20 that the font names.

    A code that two fonts of one name name differently is left out (the reader drops it as
    before), and so is every code of a font without ``/Differences``: a code means a glyph
    of its own font only. A file pdfminer cannot parse gives an empty mapping.
    """
    from pdfminer.pdfdocument import PDFDocument
    from pdfminer.pdfpage import PDFPage
    from pdfminer.pdfparser import PDFParser
    from pdfminer.pdftypes import resolve1

    found: dict[str, dict[int, set[str]]] = {}
    try:
        with open(path, "rb") as handle:
            document = PDFDocument(PDFParser(handle))
            fonts_seen: set = set()
            for page in PDFPage.create_pages(document):
                fonts = resolve1((page.resources or {}).get("Font")) or {}
                for reference in fonts.values():
                    key = getattr(reference, "objid", id(reference))
                    if key in fonts_seen:
                        continue
                    fonts_seen.add(key)
                    font = resolve1(reference)
                    encoding = resolve1(font.get("Encoding")) if isinstance(font, dict) else None
                    if not isinstance(encoding, dict):
                        continue
                    for code, name in _differences(encoding).items():
                        character = glyph_character(name) if code < 0x20 else None
                        if character is not None:
                            found.setdefault(_font_name(font), {}).setdefault(code, set()).add(character)
    except Exception:  # noqa: BLE001 - a damaged object table: pdfium's reading stands as it is
        return {}
    tables = {name: {code: chars.pop() for code, chars in codes.items() if len(chars) == 1}
              for name, codes in found.items()}
    return {name: table for name, table in tables.items() if table}
