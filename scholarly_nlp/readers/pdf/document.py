"""Opening (before pass 1): checks the file, opens it with pdfium, and after extraction
rejects PDFs without a usable text layer.

Consumes a path; produces a :class:`PdfHandle` (pages kept loaded for later passes) or raises
the project's input errors.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from ...errors import EmptyDocumentError, EncryptedPDFError, InputError, MalformedInputError
from .glyph_names import ascii_code_ligatures, control_code_characters, document_fonts
from .model import Page


_NON_TEXT_RE = re.compile(r"[\W_]+")


class PdfHandle:
    """An open document whose pages stay loaded until released or :meth:`close` (pdfium
    parses a page's content on load; floats and images load the few pages they need again)."""

    def __init__(self, document: pdfium.PdfDocument, path: Path | None = None) -> None:
        self.document = document
        self.path = path
        self._pages: dict[int, pdfium.PdfPage] = {}
        self._control_characters: dict[str, dict[int, str]] | None = None
        self._ascii_ligatures: dict[str, dict[int, str]] | None = None

    def control_characters(self) -> dict[str, dict[int, str]]:
        """Per font name, the characters its glyph names give control codes pdfium could not
        map (read once, on the first page that has such a code; empty without a path)."""
        if self._control_characters is None:
            self._control_characters = control_code_characters(self.path) if self.path else {}
        return self._control_characters

    def ascii_ligatures(self, read: bool) -> dict[str, dict[int, str]]:
        """Per font name, the printable ASCII codes some font of that name names as a ligature:
        read once, on the first call with ``read`` (a page that sets punctuation between
        letters); empty until then, and without a path."""
        if self._ascii_ligatures is None and read:
            self._ascii_ligatures = ascii_code_ligatures(document_fonts(self.path)) if self.path else {}
        return self._ascii_ligatures or {}

    def page(self, index: int) -> pdfium.PdfPage:
        """The loaded page at ``index`` (loaded on first use)."""
        if index not in self._pages:
            self._pages[index] = self.document[index]
        return self._pages[index]

    def release(self, index: int) -> None:
        """Close a loaded page (a later :meth:`page` loads it again): extraction releases each
        page after reading it, so memory does not grow with every page pdfium has parsed."""
        page = self._pages.pop(index, None)
        if page is not None:
            page.close()

    def close(self) -> None:
        """Close every loaded page, then the document."""
        for page in self._pages.values():
            page.close()
        self._pages.clear()
        self.document.close()


def check_file(path: Path) -> None:
    """Reject missing, empty, non-PDF and truncated files before pdfium sees them."""
    if not path.is_file():
        raise InputError(path, "the file does not exist or is not a regular file")
    size = path.stat().st_size
    if size == 0:
        raise EmptyDocumentError(path, "the file is empty (0 bytes), so there is no PDF to read")
    try:
        with path.open("rb") as handle:
            head = handle.read(1024)
            handle.seek(max(0, size - 4096))
            tail = handle.read()
    except OSError as exc:
        raise InputError(path, f"the file cannot be read ({exc.strerror or exc})") from exc
    if b"%PDF-" not in head:
        raise MalformedInputError(
            path, "the file is not a PDF: it does not start with a %PDF- header"
        )
    if b"%%EOF" not in tail:
        raise MalformedInputError(
            path, "the PDF is truncated or damaged: it does not end with an %%EOF marker"
        )


def open_document(path: Path) -> pdfium.PdfDocument:
    """Open the PDF with pdfium, mapping its failures to the project's errors."""
    # pdfium is called directly: pypdfium2 takes a document without pages for a failed load
    # and reports pdfium's last error code, which only a failed load sets, so a zero-page PDF
    # read after an encrypted one was "encrypted"; here the code is read after a failure only
    raw = pdfium_c.FPDF_LoadDocument(os.fsencode(path), None)
    if not raw:
        code = pdfium_c.FPDF_GetLastError()
        if code in (pdfium_c.FPDF_ERR_PASSWORD, pdfium_c.FPDF_ERR_SECURITY):
            raise EncryptedPDFError(path, "the PDF is encrypted and needs a password to be opened")
        reason = _LOAD_ERRORS.get(code, f"pdfium error {code}")
        raise MalformedInputError(path, f"the PDF cannot be parsed ({reason})")
    if pdfium_c.FPDF_GetPageCount(raw) < 1:
        pdfium_c.FPDF_CloseDocument(raw)
        raise EmptyDocumentError(path, "the PDF has no pages")
    return pdfium.PdfDocument(raw)


_LOAD_ERRORS = {
    pdfium_c.FPDF_ERR_UNKNOWN: "an unknown error",
    pdfium_c.FPDF_ERR_FILE: "the file cannot be opened",
    pdfium_c.FPDF_ERR_FORMAT: "not a valid PDF, or damaged",
}


def require_text(path: Path, pages: list[Page], pdf: PdfHandle) -> None:
    """Raise EmptyDocumentError when the PDF has (almost) no text layer, or one whose fonts
    map no glyph to a character."""
    letters = sum(len(_NON_TEXT_RE.sub("", line.text)) for page in pages for line in page.lines)
    if letters < 20 * len(pages):
        if _has_images(pdf, len(pages)):
            raise EmptyDocumentError(
                path,
                f"the PDF has no text layer ({letters} characters of text on {_pages(len(pages))} "
                "of images): it looks scanned and needs OCR before it can be read",
            )
        raise EmptyDocumentError(
            path, f"the PDF holds almost no text ({letters} characters on {_pages(len(pages))})"
        )
    errors = sum(p.unmapped[0] for p in pages)
    sampled = sum(p.unmapped[1] for p in pages)
    if sampled and errors > 0.5 * sampled:
        raise EmptyDocumentError(
            path,
            f"the PDF's text layer cannot be decoded ({100 * errors // sampled}% of its characters "
            "have no Unicode mapping in their fonts): it needs OCR before it can be read",
        )


def _pages(count: int) -> str:
    return f"{count} page" if count == 1 else f"{count} pages"


def _has_images(pdf: PdfHandle, page_count: int) -> bool:
    """Whether any of the first pages draws an image (a scan)."""
    for index in range(min(3, page_count)):
        page = pdf.page(index)
        objects = page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=3)
        if next(iter(objects), None) is not None:
            return True
    return False
