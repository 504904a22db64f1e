"""Training corpora for ``spacy train``: paper Docs in, ``Example``s out.

``scholarly_nlp.PaperCorpus.v1`` reads ``.spacy`` files written by
:func:`scholarly_nlp.save_docbin` (a file or a folder of them). Both sides of each Example
are the paper Doc with its span groups and metadata, because the components that learn
from a paper's own structure (figure mentions, section pointers) need that structure in
the Doc they annotate as well as in the reference.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterator, Union

from spacy.language import Language
from spacy.training import Example
from spacy.util import registry

from .doc.serialize import load_docbin
from .errors import InputError


@registry.readers("scholarly_nlp.PaperCorpus.v1")
def create_paper_corpus(path: Union[str, Path], limit: int = 0) -> Callable[[Language], Iterator[Example]]:
    """A spaCy corpus reader over DocBin files of paper Docs; ``limit`` > 0 caps the papers."""
    path = Path(path)

    def read(nlp: Language) -> Iterator[Example]:
        files = sorted(path.glob("**/*.spacy")) if path.is_dir() else [path]
        if not files or not all(f.exists() for f in files):
            raise InputError(path, "holds no .spacy corpus file (run the project's preprocess step)")
        count = 0
        for file in files:
            for doc in load_docbin(file, nlp.vocab):
                yield Example(doc.copy(), doc)
                count += 1
                if limit and count >= limit:
                    return

    return read
