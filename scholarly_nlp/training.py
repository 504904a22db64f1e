"""Training corpora for ``spacy train``: paper Docs in, ``Example``s out.

``scholarly_nlp.PaperCorpus.v1`` reads ``.spacy`` files written by
:func:`scholarly_nlp.save_docbin` (a file or a folder of them). Both sides of each Example
are the paper Doc with its span groups and metadata, because the components that learn
from a paper's own structure (figure mentions, section pointers) need that structure in
the Doc they annotate as well as in the reference. Gold annotations that a component
predicts (the sentence ``roles`` group, say) are removed from the predicted side with
``strip_groups``, so evaluation during training cannot read the answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterator, List, Optional, Union

from spacy.language import Language
from spacy.training import Example
from spacy.util import registry

from .doc.serialize import load_docbin
from .errors import InputError


@registry.readers("scholarly_nlp.PaperCorpus.v1")
def create_paper_corpus(path: Union[str, Path], limit: int = 0,
                        strip_groups: Optional[List[str]] = None) -> Callable[[Language], Iterator[Example]]:
    """A spaCy corpus reader over DocBin files of paper Docs; ``limit`` > 0 caps the papers.

    ``strip_groups`` names span groups (gold annotations) kept only on the reference side.
    """
    path = Path(path)
    stripped = list(strip_groups or [])

    def read(nlp: Language) -> Iterator[Example]:
        files = sorted(path.glob("**/*.spacy")) if path.is_dir() else [path]
        if not files or not all(f.exists() for f in files):
            raise InputError(path, "holds no .spacy corpus file (run the project's preprocess step)")
        count = 0
        for file in files:
            for doc in load_docbin(file, nlp.vocab):
                predicted = doc.copy()
                for group in stripped:
                    if group in predicted.spans:
                        del predicted.spans[group]
                yield Example(predicted, doc)
                count += 1
                if limit and count >= limit:
                    return

    return read
