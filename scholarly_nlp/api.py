"""The high-level entry points: a blank pipeline, and files in, paper Docs out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Optional

import spacy
from spacy.language import Language
from spacy.tokens import Doc

from .doc.builder import paper_to_doc
from .doc.extensions import install_extensions
from .errors import ScholarlyNLPError
from .plugins import get_registry
from .readers.dispatch import PathLike, read_paper, read_papers


def blank(lang: str = "en") -> Language:
    """A blank spaCy pipeline with every scholarly_nlp plugin loaded.

    Components from plugins can then be added by name: ``nlp.add_pipe("figure_ranker")``.
    """
    get_registry()
    install_extensions()
    return spacy.blank(lang)


def read(path: PathLike, nlp: Optional[Language] = None, format: Optional[str] = None, **options: Any) -> Doc:
    """Read one paper file (PDF, TEI, or any plugin format) into a paper Doc.

    ``nlp`` supplies the tokenizer (a blank English pipeline by default); its components
    are *not* run, use ``nlp(doc)`` or :func:`read_many` with ``run_pipeline=True``.
    """
    nlp = nlp or blank()
    return paper_to_doc(read_paper(path, format, **options), nlp)


@dataclass
class DocResult:
    """One file of a batch: the Doc, or the error naming the file and the reason."""

    path: str
    doc: Optional[Doc] = None
    error: Optional[ScholarlyNLPError] = None

    @property
    def ok(self) -> bool:
        """True when the file became a Doc."""
        return self.error is None


def read_many(inputs: Iterable[PathLike], nlp: Optional[Language] = None, format: Optional[str] = None,
              run_pipeline: bool = False, **options: Any) -> Iterator[DocResult]:
    """Read files, folders or globs lazily; a bad file is reported and the batch goes on.

    With ``run_pipeline=True`` each Doc also goes through ``nlp``'s components.
    """
    nlp = nlp or blank()
    for result in read_papers(inputs, format, **options):
        if not result.ok:
            yield DocResult(path=result.path, error=result.error)
            continue
        try:
            doc = paper_to_doc(result.paper, nlp)
            yield DocResult(path=result.path, doc=nlp(doc) if run_pipeline else doc)
        except ScholarlyNLPError as exc:
            yield DocResult(path=result.path, error=exc)
