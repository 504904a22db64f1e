"""Figure images (on request, after assembly): each figure's region rendered to a PNG.

Consumes the Paper's figures (page and box); writes ``<image_dir>/<paper_id>_<fig_id>.png``
and sets ``FigureInfo.image_path``.
"""

from __future__ import annotations

import contextlib
import warnings
from pathlib import Path

import pypdfium2 as pdfium

from ...paper import Paper
from ...naming import fitted_name
from .document import PdfHandle
from .frame import Frame, page_turn


#: Rendering scale for figure crops (2.0 = 144 dpi).
RENDER_SCALE = 2.0
#: Image file names are cut (with a hash of the whole name) so they fit the file system's 255 bytes.
MAX_STEM_BYTES = 200


#: The most pixels one figure image may have (a full A4 page at RENDER_SCALE has 2 million):
#: a figure on an absurdly large page is rendered at a smaller scale instead.
MAX_IMAGE_PIXELS = 25_000_000


def save_figure_images(pdf: PdfHandle, paper: Paper, image_dir: Path) -> None:
    """Render each figure's region to ``<image_dir>/<paper_id>_<fig_id>.png``.

    Images are an extra, not the paper: when they cannot be written (the folder cannot be
    made or is not writable, the disk is full), the figures keep no image path and one
    warning names the PDF and the reason.
    """
    try:
        image_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        _warn_unwritten(paper, image_dir, exc)
        return
    for figure in paper.figures:
        if figure.kind != "figure" or figure.bbox is None or figure.page is None:
            continue
        target = image_dir / (fitted_name(f"{paper.paper_id}_{figure.id}", MAX_STEM_BYTES) + ".png")
        try:
            image = _render_region(pdf, figure.page - 1, figure.bbox)
        except pdfium.PdfiumError:
            continue  # a page pdfium cannot render leaves this figure without an image
        try:
            image.save(target)
        except (OSError, ValueError) as exc:
            with contextlib.suppress(OSError):
                target.unlink(missing_ok=True)  # no half-written PNG left behind
            _warn_unwritten(paper, image_dir, exc)
            return
        figure.image_path = str(target)


def _warn_unwritten(paper: Paper, image_dir: Path, exc: Exception) -> None:
    reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    warnings.warn(f"{paper.source}: figure images not written to {image_dir} ({reason}); the paper is read "
                  "without them", stacklevel=3)


def _render_region(pdf: PdfHandle, page_index: int, bbox: tuple[float, float, float, float]):
    """A PIL image of a region (top-left points of the page's reading frame) of a page,
    turned upright where the page's text is set sideways."""
    page = pdf.page(page_index)
    textpage = page.get_textpage()
    try:
        frame = Frame(page_turn(textpage.raw, textpage.count_chars()), *page.get_bbox())
    finally:
        textpage.close()
    rotation = page.get_rotation()
    if rotation:  # boxes are in unrotated page space; render the page that way too
        page.set_rotation(0)
    try:
        width, height = page.get_size()
        left, bottom, right, top = frame.page_box(*bbox)
        x0, y0, x1, y1 = left - frame.left, frame.top - top, right - frame.left, frame.top - bottom
        crop = (max(0.0, x0), max(0.0, height - y1), max(0.0, width - x1), max(0.0, y0))
        area = max(width - crop[0] - crop[2], 1.0) * max(height - crop[1] - crop[3], 1.0)
        scale = min(RENDER_SCALE, (MAX_IMAGE_PIXELS / area) ** 0.5)
        image = page.render(scale=scale, crop=crop).to_pil()
        return image.rotate(-frame.turn, expand=True) if frame.turn else image
    finally:
        if rotation:
            page.set_rotation(rotation)
