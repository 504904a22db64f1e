"""The image side of a figure: its rendered crop as a small square grayscale array.

The PDF reader writes one PNG per figure (``Figure.image_path``). Here it becomes a
``size`` x ``size`` uint8 array: grayscale, scaled to fit (aspect ratio kept) and centred on
a white canvas, then inverted so that ink is high and the background 0 (zero padding is
then neutral for the CNN). A figure with no image (TEI-only papers), a file that does not
exist or one that does not decode gives None; the model then uses its learned
"missing image" vector instead.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Optional, Sequence

import numpy

log = logging.getLogger(__name__)

DEFAULT_SIZE = 128


def load_figure_image(path: Optional[str], size: int = DEFAULT_SIZE) -> Optional[numpy.ndarray]:
    """The figure image as a (size, size) uint8 array (ink high), or None when it cannot be read."""
    from PIL import Image, UnidentifiedImageError

    if not path:
        return None
    file = Path(path)
    if not file.is_file():
        return None
    try:
        with Image.open(file) as image:
            image.load()
            gray = image.convert("L")
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, Image.DecompressionBombError) as exc:
        log.debug("figure image %s cannot be decoded (%s); using the missing-image vector", path, exc)
        return None
    if gray.width < 1 or gray.height < 1:
        return None
    gray.thumbnail((size, size), Image.Resampling.LANCZOS)
    canvas = Image.new("L", (size, size), color=255)
    canvas.paste(gray, ((size - gray.width) // 2, (size - gray.height) // 2))
    return 255 - numpy.asarray(canvas, dtype=numpy.uint8)


def stack_images(images: Sequence[numpy.ndarray]) -> numpy.ndarray:
    """uint8 (size, size) arrays as one float32 (n, 1, size, size) batch scaled to [0, 1]."""
    if not images:
        return numpy.zeros((0, 1, DEFAULT_SIZE, DEFAULT_SIZE), dtype=numpy.float32)
    return (numpy.stack(images).astype(numpy.float32) / 255.0)[:, None, :, :]


class ImageCache:
    """Decoded figure images by path, each file decoded once (None remembered too)."""

    def __init__(self, size: int = DEFAULT_SIZE):
        self.size = size
        self._images: dict[str, Optional[numpy.ndarray]] = {}

    def get(self, path: Optional[str]) -> Optional[numpy.ndarray]:
        """The image array for ``path`` (see :func:`load_figure_image`)."""
        if not path:
            return None
        if path not in self._images:
            self._images[path] = load_figure_image(path, self.size)
        return self._images[path]
