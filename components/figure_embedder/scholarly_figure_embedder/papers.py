"""Reading paper files so that PDFs keep their figure images (the image side needs them)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Iterator, Optional, Union

from spacy.language import Language

import scholarly_nlp
from scholarly_nlp import DocResult

PathLike = Union[str, Path]


def read_papers(inputs: Iterable[PathLike], nlp: Optional[Language] = None,
                image_dir: Optional[PathLike] = None, format: Optional[str] = None) -> Iterator[DocResult]:
    """Read files, folders or globs lazily; PDFs write their figure crops to ``image_dir``.

    Only the PDF reader renders figures, so ``image_dir`` goes to PDFs alone. ``format``
    (a reader name: "pdf", "tei") reads every file with that reader instead of the sniffed
    one. A file that cannot be read becomes a failed DocResult and the batch goes on.
    """
    options = {"pdf": {"image_dir": str(image_dir)}} if image_dir is not None else None
    return scholarly_nlp.read_many(inputs, nlp, format, reader_options=options)
