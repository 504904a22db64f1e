"""Reading paper files so that PDFs keep their figure images (the image side needs them)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Iterator, Optional, Union

from spacy.language import Language

import scholarly_nlp
from scholarly_nlp import DocResult, ScholarlyNLPError

PathLike = Union[str, Path]


def read_papers(inputs: Iterable[PathLike], nlp: Optional[Language] = None,
                image_dir: Optional[PathLike] = None) -> Iterator[DocResult]:
    """Read files, folders or globs lazily; PDFs write their figure crops to ``image_dir``.

    Only the PDF reader renders figures, so ``image_dir`` goes to PDFs alone. A file that
    cannot be read becomes a failed DocResult and the batch goes on.
    """
    nlp = nlp or scholarly_nlp.blank()
    registry = scholarly_nlp.get_registry()
    for path in scholarly_nlp.expand_inputs(inputs):
        options = {"image_dir": str(image_dir)} if image_dir is not None and registry.sniff(path) == "pdf" else {}
        try:
            yield DocResult(path=path, doc=scholarly_nlp.read(path, nlp=nlp, **options))
        except ScholarlyNLPError as exc:
            yield DocResult(path=path, error=exc)
