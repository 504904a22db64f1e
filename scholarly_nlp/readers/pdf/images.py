"""Figure images (on request, after assembly): each figure's region rendered to a PNG.

Consumes the Paper's figures (page and box); writes ``<image_dir>/<paper_id>_<fig_id>.png``
and sets ``FigureInfo.image_path``.
"""

from __future__ import annotations

from pathlib import Path

import pypdfium2 as pdfium

from ...paper import Paper
from .document import PdfHandle


#: Rendering scale for figure crops (2.0 = 144 dpi).
RENDER_SCALE = 2.0


def save_figure_images(pdf: PdfHandle, paper: Paper, image_dir: Path) -> None:
    """Render each figure's region to ``<image_dir>/<paper_id>_<fig_id>.png``."""
    image_dir.mkdir(parents=True, exist_ok=True)
    for figure in paper.figures:
        if figure.kind != "figure" or figure.bbox is None or figure.page is None:
            continue
        target = image_dir / f"{paper.paper_id}_{figure.id}.png"
        try:
            image = _render_region(pdf, figure.page - 1, figure.bbox)
        except pdfium.PdfiumError:
            continue  # a page pdfium cannot render leaves this figure without an image
        image.save(target)
        figure.image_path = str(target)


def _render_region(pdf: PdfHandle, page_index: int, bbox: tuple[float, float, float, float]):
    """A PIL image of a region (top-left points) of a page."""
    page = pdf.page(page_index)
    rotation = page.get_rotation()
    if rotation:  # boxes are in unrotated page space; render the page that way too
        page.set_rotation(0)
    try:
        width, height = page.get_size()
        x0, y0, x1, y1 = bbox
        crop = (max(0.0, x0), max(0.0, height - y1), max(0.0, width - x1), max(0.0, y0))
        return page.render(scale=RENDER_SCALE, crop=crop).to_pil()
    finally:
        if rotation:
            page.set_rotation(rotation)
