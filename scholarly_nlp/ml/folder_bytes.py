"""Bytes serialisation for components whose natural form is a folder (``to_disk``).

spaCy asks pipes for ``to_bytes``/``from_bytes`` (``nlp.to_bytes``, some multiprocessing
paths); a component that saves a Hugging Face folder or several files implements them by
packing its ``to_disk`` folder into one tar archive.
"""

from __future__ import annotations

import io
import tarfile
import tempfile
from pathlib import Path
from typing import Callable, TypeVar

T = TypeVar("T")


def folder_to_bytes(write_folder: Callable[[Path], None]) -> bytes:
    """Call ``write_folder`` on a temporary folder and return that folder as tar bytes."""
    with tempfile.TemporaryDirectory() as tmp:
        write_folder(Path(tmp))
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as tar:
            tar.add(tmp, arcname=".")
        return buffer.getvalue()


def folder_from_bytes(data: bytes, read_folder: Callable[[Path], T]) -> T:
    """Unpack tar bytes from :func:`folder_to_bytes` (regular files only) and call ``read_folder``."""
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tar:
            tar.extractall(tmp, filter="data")
        return read_folder(Path(tmp))
