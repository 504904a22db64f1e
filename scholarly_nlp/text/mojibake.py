"""Repairing UTF-8 text that was once decoded as cp1252 and encoded again ("mojibake").

Some published corpus files hold a character's UTF-8 bytes read back as cp1252 characters:
"’" (E2 80 99) stored as "â€™", "•" as "â€¢", "é" as "Ã©". Twenty-two files of the CL-SciSumm
release have it. Only a run that is exactly one UTF-8 sequence when mapped back to bytes
is repaired, so text that merely contains "â" or "Ã" is left as it is.
"""

from __future__ import annotations

import re

# cp1252 leaves 0x81, 0x8D, 0x8F, 0x90 and 0x9D undefined; a decoder that let them through
# turned them into the C1 control characters of the same code, so those map back as latin-1.
_C1_PASSED_THROUGH = "\x81\x8d\x8f\x90\x9d"
_CONTINUATION = "".join(bytes([b]).decode("cp1252", errors="ignore") for b in range(0x80, 0xC0)) + _C1_PASSED_THROUGH
# A lead byte of a two-, three- or four-byte sequence (C2-F4) is the latin-1 letter of the
# same code in cp1252, followed by the continuation bytes its high bits ask for.
_RUN = re.compile(
    "[\u00c2-\u00df][{c}]|[\u00e0-\u00ef][{c}]{{2}}|[\u00f0-\u00f4][{c}]{{3}}".format(c=re.escape(_CONTINUATION))
)


def _to_byte(char: str) -> bytes:
    """The byte a cp1252 decoder read as ``char``."""
    return char.encode("latin-1") if char in _C1_PASSED_THROUGH else char.encode("cp1252")


def _repair_run(match: re.Match) -> str:
    """The character a run's bytes spell in UTF-8, or the run unchanged when they spell none."""
    run = match.group(0)
    try:
        return b"".join(_to_byte(c) for c in run).decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return run


def repair_mojibake(text: str) -> str:
    """``text`` with every cp1252-misread UTF-8 sequence turned back into its character.

    >>> repair_mojibake("the paperâ€™s model â€œMâ€\\x9d")
    'the paper’s model “M”'
    """
    if not text.isascii():
        return _RUN.sub(_repair_run, text)
    return text
