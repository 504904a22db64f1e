"""The PDF reader's orchestrator: :func:`read_pdf` opens the file and runs the passes in order."""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Union

import pypdfium2 as pdfium

from ...errors import MalformedInputError
from ...paper import Paper
from .assembly import assemble_paper
from .blocks import visual_blocks
from .captions import find_captions
from .classification import Classifier
from .document import PdfHandle, check_file, open_document, require_text
from .drop_caps import join_drop_caps
from .extraction import read_page
from .floats import locate_floats
from .front_matter import read_authors
from .furniture import mark_furniture
from .images import save_figure_images
from .layout import layout_pages
from .model import Page
from .title import find_title, title_page
from .typography import assign_sizes, doc_stats


PathLike = Union[str, Path]


def read_pdf(
    path: PathLike, *, paper_id: Optional[str] = None, image_dir: Optional[PathLike] = None
) -> Paper:
    """Read a scientific paper's PDF into a :class:`Paper` (``reader="pdf"``).

    Recovers the title, abstract, numbered and unnumbered section heads, body paragraphs in
    reading order (two-column layouts included), figure and table captions with one
    :class:`FigureInfo` each, inline figure/table references and citation markers. When
    ``image_dir`` is given, each figure's region is rendered to
    ``<image_dir>/<paper_id>_<fig_id>.png``.

    Raises MalformedInputError (not a PDF, truncated or damaged), EmptyDocumentError (empty
    file, no pages, or no text layer) or EncryptedPDFError (password protected).
    """
    path = Path(path)
    check_file(path)
    pdf = PdfHandle(open_document(path), path)
    try:
        pages = [_read_and_release(pdf, i) for i in range(len(pdf.document))]
        require_text(path, pages, pdf)
        paper = build_paper(pdf, pages, paper_id or path.stem, str(path))
        if image_dir is not None:
            save_figure_images(pdf, paper, Path(image_dir))
    except pdfium.PdfiumError as exc:
        raise MalformedInputError(path, f"the PDF's pages cannot be read ({exc})") from exc
    finally:
        pdf.close()
    return paper


def _read_and_release(pdf: PdfHandle, index: int) -> Page:
    """One page's lines; the pdfium page is closed after (a 500-page PDF kept every one)."""
    page = read_page(pdf, index)
    pdf.release(index)
    return page


def build_paper(pdf: PdfHandle, pages: list[Page], paper_id: str, source: str) -> Paper:
    """Run the passes after extraction over the pages, in order, and assemble the Paper."""
    assign_sizes(pages)  # typography: each line's size
    join_drop_caps(pages)  # an enlarged first letter back to its word
    mark_furniture(pages)  # furniture: running heads and feet, page and line numbers
    layout_pages(pages)  # layout: columns, bands, reading order
    stats = doc_stats(pages)  # typography: body size, line advance
    for page in pages:
        page.blocks = visual_blocks(page, stats)  # visual blocks
    captions = find_captions(pages, stats)  # "Figure 3:" / "Table 2." blocks
    locate_floats(pdf, pages, captions, stats)  # each caption's figure or table region
    first_page = title_page(pages)  # 1 after a repository's cover page
    title = find_title(pages, stats, first_page)
    classifier = Classifier(pages, stats, title, first_page)
    units = classifier.run()  # title, abstract, headings, paragraphs; bibliography skipped
    paper = assemble_paper(  # blocks, inline references, one FigureInfo per caption
        paper_id, source, pages, units, classifier.sections, classifier.reference_blocks, captions,
        list_printed=classifier.list_printed,
    )
    paper.authors = read_authors(pages[first_page], title, classifier.front_floor)  # under the title
    return paper
