"""Hand-written minimal PDFs for tests and benchmarks: hostile shapes built in a few bytes.

Each page is ``(width, height, content)`` where ``content`` is a raw content stream; the one
font (``/F1``, Helvetica) is on every page. ``pdf_bytes`` writes the objects and a correct
cross-reference table, so pdfium opens the file without repairing it.
"""

from __future__ import annotations

import zlib
from typing import Iterable, Sequence

Page = tuple[float, float, bytes]


def pdf_bytes(pages: Sequence[Page], *, compress: bool = False) -> bytes:
    """A PDF with these pages (none gives a valid zero-page PDF); ``compress`` deflates the
    content streams (``/FlateDecode``)."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"", b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    kids = []
    for width, height, content in pages:
        stream = zlib.compress(content, 9) if compress else content
        flate = b" /Filter /FlateDecode" if compress else b""
        objects.append(b"<< /Length %d%s >>\nstream\n%s\nendstream" % (len(stream), flate, stream))
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %s %s] /Resources << /Font << /F1 3 0 R >> >> "
            b"/Contents %d 0 R >>" % (_number(width), _number(height), len(objects))
        )
        kids.append(b"%d 0 R" % len(objects))
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(kids), len(kids))
    return _assemble(objects)


def text_page(width: float, height: float, lines: Iterable[tuple[float, float, float, str]]) -> Page:
    """A page drawing each ``(x, y, size, text)`` as its own text object (ASCII text)."""
    ops = [b"BT /F1 %s Tf 1 0 0 1 %s %s Tm (%s) Tj ET" % (_number(size), _number(x), _number(y), _escape(text))
           for x, y, size, text in lines]
    return width, height, b"\n".join(ops)


def paragraph_lines(width: float, height: float, count: int = 40) -> list[tuple[float, float, float, str]]:
    """``count`` lines of plain body text from the top of a page, enough for a text layer."""
    text = "The reader recovers paragraphs from this page of plain body text"
    return [(72, height - 72 - 14 * i, 10, text) for i in range(count)]


def fragments_pdf(n: int) -> bytes:
    """One page of body text above ``n`` one-letter text objects in a grid, each its own
    line segment, a hundred to a row 1.4 pt apart (the page is as tall as they need, so the
    density does not change with n): pdfium reads it fast, and every fragment looks like a
    sub- or superscript (a 15 KB file of 50k took 16.9 s in the layout pass)."""
    rows = max(1, -(-n // 100))
    width, height = 612, 400 + 1.4 * rows
    fragments = [(50 + (i % 100) * 5, height - 400 - (i // 100) * 1.4, 1, "x") for i in range(n)]
    return pdf_bytes([text_page(width, height, paragraph_lines(width, height, 20) + fragments)], compress=True)


def figure_pdf() -> bytes:
    """A page of text with a grey box and its caption "Figure 1: ..." below it (one figure)."""
    width, height = 612, 792
    above = [(72, 720 - 14 * i, 10, "The reader recovers paragraphs from this page of plain body text")
             for i in range(12)]
    caption = [(72, 310, 10, "Figure 1: The results of the experiment on the data.")]
    below = [(72, 270 - 14 * i, 10, "As Figure 1 shows, the reader recovers paragraphs below the figure")
             for i in range(12)]
    _, _, content = text_page(width, height, above + caption + below)
    return pdf_bytes([(width, height, content + b"\n0.5 g 150 330 300 190 re f")])


def flate_bomb_pdf(inflated_mib: int) -> bytes:
    """A one-page PDF whose content stream inflates to ``inflated_mib`` MiB of spaces (about
    1 KB per MiB): one deflated block of 1 MiB repeated, so it is built in milliseconds."""
    chunk = b" " * _MIB
    compressor = zlib.compressobj(9)
    first = compressor.compress(chunk) + compressor.flush(zlib.Z_FULL_FLUSH)
    block = compressor.compress(chunk) + compressor.flush(zlib.Z_FULL_FLUSH)
    end = compressor.flush()[:-4]  # the final empty block, less the checksum of two chunks
    checksum = 1
    for _ in range(inflated_mib):
        checksum = zlib.adler32(chunk, checksum)
    stream = first + block * (inflated_mib - 1) + end + checksum.to_bytes(4, "big")
    return _assemble([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
        b"/Contents 5 0 R >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream" % (len(stream), stream),
    ])


_MIB = 1 << 20


def _assemble(objects: list[bytes]) -> bytes:
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def _number(value: float) -> bytes:
    return (b"%d" % value) if float(value).is_integer() else (b"%.3f" % value)


def _escape(text: str) -> bytes:
    return text.encode("latin-1").replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")
