"""``scholarly_sentencizer``: the scientific sentence segmenter as a spaCy component.

Paper Docs built by the readers already carry sentence boundaries; this component is for
plain text (``nlp("As shown in Fig. 3, ...")``). It never splits "Fig. 3", "et al.",
"e.g.", "i.e.", "Eq. (2)" or "Sect. 4", and it treats blank lines as hard boundaries.
"""

from __future__ import annotations

import re
from bisect import bisect_right

import numpy
from spacy.attrs import SENT_START
from spacy.language import Language
from spacy.tokens import Doc

from ..component_spec import ComponentSpec
from ..text.segmenter import split_sentences

_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")


class ScholarlySentencizer:
    """Sets ``Token.is_sent_start`` from :func:`scholarly_nlp.text.segmenter.split_sentences`."""

    def __init__(self, nlp: Language, name: str, overwrite: bool = False):
        self.name = name
        self.overwrite = overwrite

    def __call__(self, doc: Doc) -> Doc:
        """Segment one Doc in place (skipped when it has boundaries and overwrite is off)."""
        if len(doc) == 0 or (doc.has_annotation("SENT_START") and not self.overwrite):
            return doc
        starts = [t.idx for t in doc]
        flags = numpy.full(len(doc), -1, dtype="int64")
        flags[0] = 1
        for offset, block in _blocks(doc.text):
            for start, _ in split_sentences(block):
                index = bisect_right(starts, offset + start) - 1
                if index >= 0 and not doc[index].is_space:
                    flags[index] = 1
        doc.from_array([SENT_START], flags.astype("uint64").reshape(-1, 1))
        return doc


def _blocks(text: str):
    pos = 0
    for match in _PARAGRAPH_BREAK.finditer(text):
        yield pos, text[pos : match.start()]
        pos = match.end()
    yield pos, text[pos:]


SPEC = ComponentSpec(name="scholarly_sentencizer", default_config={"overwrite": False},
                     assigns=("token.is_sent_start",))
"""The component's one declaration (read by the built-in plugin's hook too)."""


@SPEC.factory
def make_sentencizer(nlp: Language, name: str, overwrite: bool) -> ScholarlySentencizer:
    """spaCy factory of the ``scholarly_sentencizer`` component."""
    return ScholarlySentencizer(nlp, name, overwrite=overwrite)
