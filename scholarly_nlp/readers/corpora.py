"""Dataset readers as spaCy corpus readers (``[corpora]`` blocks of a training config).

Each is registered in spaCy's ``@readers`` registry (and declared as a ``spacy_readers``
entry point, so a config resolves in a fresh process) and returns what spaCy's
``[corpora.train]`` expects: a function of the ``nlp`` that yields ``Example``s. They read
the data sets as published, so a config can train on them without a preprocessing step::

    [corpora.train]
    @readers = "scholarly_nlp.CSAbstructCorpus.v1"
    path = "../shared/data/csabstruct/train.jsonl"

* ``scholarly_nlp.CSAbstructCorpus.v1``: CSAbstruct (or CSFCube) abstracts with their
  sentence roles; the ``roles`` span group is on the reference side only.
* ``scholarly_nlp.CLSciSummCorpus.v1``: CL-SciSumm reference-paper folders, each Doc with
  its sentence ids in ``doc._.paper_meta["sids"]`` and its ``doc._.incoming_citances``.
* ``scholarly_nlp.PaperFiles.v1``: paper files (GROBID TEI, PDF, ...) through
  :func:`scholarly_nlp.read_many`; a file that cannot be read is skipped with a warning
  naming it.

``scholarly_nlp.PaperCorpus.v1`` (:mod:`scholarly_nlp.training`) reads the ``.spacy``
files a project's preprocessing step wrote.
"""

from __future__ import annotations

import warnings
from itertools import islice
from pathlib import Path
from typing import Callable, Iterable, Iterator, List, Optional, Union

from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import registry

from ..errors import InputError

Corpus = Callable[[Language], Iterator[Example]]


def _examples(docs: Iterable[Doc], strip_groups: Iterable[str] = ()) -> Iterator[Example]:
    """One Example per Doc: the reference is the Doc, the predicted side a copy without ``strip_groups``."""
    stripped = list(strip_groups)
    for doc in docs:
        predicted = doc.copy()
        for group in stripped:
            if group in predicted.spans:
                del predicted.spans[group]
        yield Example(predicted, doc)


def _limited(items: Iterable, limit: int) -> Iterable:
    return islice(items, limit) if limit and limit > 0 else items


@registry.readers("scholarly_nlp.CSAbstructCorpus.v1")
def create_csabstruct_corpus(path: Union[str, Path], limit: int = 0, csfcube: bool = False) -> Corpus:
    """Abstracts with sentence roles from a CSAbstruct split (``train.jsonl``, ``dev.jsonl``), or
    CSFCube's ``abstracts-csfcube-preds.jsonl`` with ``csfcube = true``; ``limit`` > 0 caps them.

    The gold ``roles`` span group is kept on the reference side only.
    """
    from .abstracts import abstract_doc, read_csabstruct, read_csfcube_abstracts

    path = Path(path)

    def read(nlp: Language) -> Iterator[Example]:
        records = (read_csfcube_abstracts if csfcube else read_csabstruct)(path)
        docs = (abstract_doc(record, nlp) for record in _limited(records, limit))
        yield from _examples(docs, strip_groups=["roles"])

    return read


@registry.readers("scholarly_nlp.CLSciSummCorpus.v1")
def create_clscisumm_corpus(path: Union[str, Path], limit: int = 0, with_citances: bool = True) -> Corpus:
    """CL-SciSumm reference papers: ``path`` is a folder of ``<RP>/`` folders (each with
    ``Reference_XML/`` and an ``annotation/`` file), or one such folder; ``limit`` > 0 caps them.

    Each Doc carries its sids (``doc._.paper_meta["sids"]``) and, with ``with_citances``,
    the citances that cite it (``doc._.incoming_citances``), on both sides of the Example.
    """
    from .clscisumm import reference_folder_doc

    path = Path(path)

    def folders() -> list[Path]:
        if (path / "Reference_XML").is_dir():
            return [path]
        found = sorted(p for p in path.iterdir() if (p / "Reference_XML").is_dir()) if path.is_dir() else []
        if not found:
            raise InputError(str(path), "holds no CL-SciSumm reference-paper folder (<RP>/Reference_XML)")
        return found

    def read(nlp: Language) -> Iterator[Example]:
        docs = (reference_folder_doc(folder, nlp, with_citances=with_citances)
                for folder in _limited(folders(), limit))
        yield from _examples(docs)

    return read


@registry.readers("scholarly_nlp.PaperFiles.v1")
def create_paper_files_corpus(path: Union[str, Path], limit: int = 0, format: Optional[str] = None,
                              strip_groups: Optional[List[str]] = None) -> Corpus:
    """Paper files under ``path`` (a file or a folder, read with :func:`scholarly_nlp.read_many`;
    ``format`` forces a reader such as ``"tei"``); ``limit`` > 0 caps the papers read.

    A file that fails is skipped with a warning naming it and the reason; a corpus in which
    no file could be read raises :class:`~scholarly_nlp.errors.InputError`.
    """
    from ..api import read_many

    def read(nlp: Language) -> Iterator[Example]:
        count = 0
        for result in read_many([str(path)], nlp=nlp, format=format):
            if not result.ok:
                warnings.warn(f"{result.path}: skipped ({result.error})", stacklevel=2)
                continue
            yield from _examples([result.doc], strip_groups or ())
            count += 1
            if limit and count >= limit:
                return
        if count == 0:
            raise InputError(str(path), "has no readable paper file")

    return read
