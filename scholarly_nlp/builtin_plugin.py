"""The built-in plugin: core readers, format sniffing, document extensions, metrics, sentencizer.

It registers through the same hooks and entry-point group as any third-party plugin.
Heavy imports (pdf libraries, grobid client, torch) happen inside the functions.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Optional

from .hookspecs import hookimpl

PDF_MAGIC = b"%PDF-"
UTF8_BOM = b"\xef\xbb\xbf"
#: A TEI root element, with or without a namespace prefix (``<TEI``, ``<tei:TEI``).
TEI_ROOT = re.compile(rb"<(?:[\w.-]+:)?TEI[\s>/]")
#: The root of a CL-SciSumm Reference_XML / Citance_XML paper, after an optional XML declaration.
CLSCISUMM_ROOT = re.compile(rb"^(?:<\?xml[^>]*\?>\s*)?<PAPER[\s>]")
#: The reader names this plugin registers; no other plugin may register a reader under one of them.
BUILTIN_READERS = ("tei", "clscisumm", "pdf", "grobid")


# Each reader takes the options it understands and ignores the others, so one call of
# read_many(..., image_dir=...) can mix TEI files and PDFs.


def _read_tei(path: Any, paper_id: Optional[str] = None, **_other_readers_options: Any):
    from .readers.tei import read_tei

    return read_tei(path, paper_id=paper_id)


def _read_pdf(path: Any, paper_id: Optional[str] = None, image_dir: Optional[str] = None, **_other_readers_options: Any):
    from .readers.pdf import read_pdf

    return read_pdf(path, paper_id=paper_id, image_dir=image_dir)


def _read_pdf_with_grobid(path: Any, paper_id: Optional[str] = None, service: Any = None,
                          **_other_readers_options: Any):
    from .readers.grobid_service import read_pdf_with_grobid

    return read_pdf_with_grobid(path, service=service, paper_id=paper_id)


def _read_clscisumm(path: Any, paper_id: Optional[str] = None, **_other_readers_options: Any):
    from .readers.clscisumm import read_reference_xml

    return read_reference_xml(path, paper_id=paper_id)


@hookimpl
def register_readers(register):
    """TEI (lxml), the embedded PDF reader, PDFs through a GROBID server, CL-SciSumm XML papers."""
    register("tei", _read_tei, extensions=(".tei.xml", ".xml", ".tei"), description="GROBID TEI XML (0.5.x-0.8.x)")
    register("clscisumm", _read_clscisumm, extensions=(),
             description="CL-SciSumm Reference_XML / Citance_XML paper (one sentence per <S>)")
    register("pdf", _read_pdf, extensions=(".pdf",), description="built-in PDF reader (no server)")
    register("grobid", _read_pdf_with_grobid, extensions=(".pdf",), description="PDF through a GROBID server",
             io_bound=True)


@hookimpl
def sniff_format(path: str, head: bytes) -> Optional[str]:
    """Content first (PDF magic, a TEI root, a CL-SciSumm ``<PAPER>`` root, after any UTF-8 BOM),
    then the file name's extension."""
    stripped = head[len(UTF8_BOM):] if head.startswith(UTF8_BOM) else head
    stripped = stripped.lstrip()
    if stripped.startswith(PDF_MAGIC):
        return "pdf"
    if stripped.startswith(b"<") and TEI_ROOT.search(stripped):
        return "tei"
    if CLSCISUMM_ROOT.search(stripped):
        return "clscisumm"
    name = Path(path).name.lower()
    if name.endswith(".pdf"):
        return "pdf"
    if name.endswith((".tei.xml", ".xml", ".tei")):
        return "tei"
    return None


@hookimpl
def register_extensions(register):
    """The document model's getters (``doc._.figures`` ...) and its metadata attribute."""
    from .doc.extensions import DOC_EXTENSIONS

    for name, kwargs in DOC_EXTENSIONS.items():
        register("doc", name, **kwargs)


@hookimpl
def register_metrics(register):
    """The shared metrics module (ranking, CSFCube, CL-SciSumm, facets, significance)."""
    from .metrics import BUILTIN_METRICS

    for name, function in BUILTIN_METRICS.items():
        register(name, function, description=(function.__doc__ or "").strip().split("\n")[0])


@hookimpl
def register_components(register):
    """The scientific sentence segmenter, and the shared transformer that saves its backbone by reference."""
    from .pipes import sentencizer, shared_transformer

    register(sentencizer.SPEC, sentencizer.make_sentencizer)
    register(shared_transformer.SPEC, shared_transformer.make_scholarly_transformer)
