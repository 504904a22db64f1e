"""Graphics of a page for the floats pass: boxes of images, paths and shadings (inside
page-sized forms too), in top-left points.
"""

from __future__ import annotations

import ctypes
from typing import Optional

import pypdfium2.raw as pdfium_c

from .document import PdfHandle
from .frame import Frame
from .model import Page


_GRAPHIC_TYPES = (
    pdfium_c.FPDF_PAGEOBJ_PATH,
    pdfium_c.FPDF_PAGEOBJ_IMAGE,
    pdfium_c.FPDF_PAGEOBJ_SHADING,
)


def graphic_boxes(pdf: PdfHandle, page: Page) -> list[tuple[float, float, float, float]]:
    """Boxes (top-left points) of the images, paths and forms drawn on a page."""
    handle = pdf.page(page.index)
    frame = Frame(page.turn, *handle.get_bbox())  # a page read sideways is measured so
    boxes: list[tuple[float, float, float, float]] = []
    count = pdfium_c.FPDFPage_CountObjects(handle.raw)
    objects = (pdfium_c.FPDFPage_GetObject(handle.raw, i) for i in range(count))
    _collect_graphics(objects, None, boxes, page.width * page.height, depth=0)
    return [frame.box(*box) for box in boxes]


def _collect_graphics(objects, matrix, boxes: list, page_area: float, depth: int) -> None:
    """Collect graphic object bounds (PDF user space); descend into page-sized forms."""
    l, b, r, t = (ctypes.c_float() for _ in range(4))
    for obj in objects:
        kind = pdfium_c.FPDFPageObj_GetType(obj)
        if kind not in _GRAPHIC_TYPES and kind != pdfium_c.FPDF_PAGEOBJ_FORM:
            continue
        if not pdfium_c.FPDFPageObj_GetBounds(obj, l, b, r, t):
            continue
        box = _transform_box((l.value, b.value, r.value, t.value), matrix)
        area = (box[2] - box[0]) * (box[3] - box[1])
        if kind == pdfium_c.FPDF_PAGEOBJ_FORM and area > 0.5 * page_area and depth < 4:
            inner = _compose(matrix, _object_matrix(obj))
            n = pdfium_c.FPDFFormObj_CountObjects(obj)
            children = (pdfium_c.FPDFFormObj_GetObject(obj, i) for i in range(n))
            _collect_graphics(children, inner, boxes, page_area, depth + 1)
        elif area < 0.8 * page_area and (box[2] - box[0] > 1 or box[3] - box[1] > 1):
            boxes.append(box)


def _object_matrix(obj) -> tuple[float, ...]:
    m = pdfium_c.FS_MATRIX()
    if not pdfium_c.FPDFPageObj_GetMatrix(obj, m):
        return (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)
    return (m.a, m.b, m.c, m.d, m.e, m.f)


def _compose(outer: Optional[tuple], inner: tuple) -> tuple:
    """The matrix applying ``inner`` first, then ``outer`` (PDF row-vector convention)."""
    if outer is None:
        return inner
    a, b, c, d, e, f = inner
    A, B, C, D, E, F = outer
    return (
        a * A + b * C,
        a * B + b * D,
        c * A + d * C,
        c * B + d * D,
        e * A + f * C + E,
        e * B + f * D + F,
    )


def _transform_box(box: tuple, matrix: Optional[tuple]) -> tuple[float, float, float, float]:
    """Bounds of a box after a transform; children of forms report bounds in form space."""
    if matrix is None:
        return box
    a, b, c, d, e, f = matrix
    xs, ys = [], []
    for x, y in ((box[0], box[1]), (box[0], box[3]), (box[2], box[1]), (box[2], box[3])):
        xs.append(a * x + c * y + e)
        ys.append(b * x + d * y + f)
    return min(xs), min(ys), max(xs), max(ys)
