"""Line segments built from text and a position, for tests of layout rules without a PDF."""

from __future__ import annotations

from scholarly_nlp.readers.pdf.model import Line, Word


def line(text: str, x0: float, top: float, size: float = 10.0) -> Line:
    """A line of ``text`` from ``x0``, its top at ``top``: half a size a letter, three tenths of
    one between words, glyphs 1.15 sizes high."""
    words, x = [], x0
    for word in text.split():
        width = 0.5 * size * len(word)
        words.append(Word(word, x, top, x + width, top + 1.15 * size, size, 1.15 * size))
        x += width + 0.3 * size
    made = Line(words, 0)
    made.size = size
    return made
