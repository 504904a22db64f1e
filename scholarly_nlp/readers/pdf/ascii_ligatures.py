"""f-ligatures a font keeps at printable ASCII codes, where pdfium reads the punctuation.

ACM's Libertine Type 1 fonts name their ligatures in the encoding's ``/Differences`` (``33
/f_i /f_f /f_f_i /f_l /f_f_l``) but map them to nothing in their ``/ToUnicode``: pdfium falls
back to the codes and reads "signi!cant", "di"erent", "di#cult", "brie$y".
:func:`~.glyph_names.ascii_code_ligatures` gives, per font name, the ligature each such code
names. Other fonts of the same name keep those codes for the characters themselves (a second
``LinLibertineT`` with real quotes and dollars in a code listing) and pdfium names them alike,
so :func:`put_back_ligatures` puts a ligature back only where pdfium also reports that the
character's own font could not map it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

#: Punctuation between letters, where such a font's ligatures stand: the first page with one
#: has the document's fonts read for ligature names (most documents have none).
AMID_LETTERS_RE = re.compile(r'(?<=[^\W\d_])[!"#$%](?=[^\W\d_])')


def put_back_ligatures(text: str, tables: dict[str, dict[int, str]], font_at: Callable[[int], str],
                       unmapped_at: Callable[[int], bool]) -> str:
    """``text`` with each character whose code a font of its name (``font_at``: the font name
    at a text offset) names as a ligature in ``tables``, and that its own font could not map
    (``unmapped_at``), replaced by that ligature's presentation form: one character for one,
    so pdfium's offsets hold."""
    codes = {chr(code) for table in tables.values() for code in table}
    characters = None
    for at, char in enumerate(text):
        if char not in codes:
            continue
        ligature = tables.get(font_at(at), {}).get(ord(char))
        if ligature is not None and unmapped_at(at):
            characters = characters if characters is not None else list(text)
            characters[at] = ligature
    return "".join(characters) if characters is not None else text
