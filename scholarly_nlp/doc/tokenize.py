"""Tokenising a paper's text with a pipeline's tokenizer at a cost linear in its length.

spaCy's tokenizer handles each run of characters between whitespace on its own and strips
prefixes and suffixes off a run one at a time, re-reading the rest of the run each time (its
suffix and URL patterns scan it): a run of k characters can cost k² steps. Real papers' runs
are short (the longest in the shared data's 600 TEI files is about 150 characters), but a
run of 20,000 "(", or a paper whose spaces were lost, takes from seconds to hours. Runs
longer than :data:`LONGEST_RUN` characters are therefore tokenised in pieces of
:data:`PIECE` characters: text without such runs tokenises exactly as the tokenizer alone
would.

The tokenizer is called directly, not through ``nlp.make_doc``: a paper longer than the
pipeline's ``max_length`` (1,000,000 characters by default) is still read.
"""

from __future__ import annotations

import re
from typing import Callable

from spacy.tokens import Doc

#: Whitespace-free runs up to this length go to the tokenizer whole.
LONGEST_RUN = 256
#: Longer runs are cut into pieces of this many characters (a piece costs at most PIECE² steps).
PIECE = 32

LONG_RUN = re.compile(rf"\S{{{LONGEST_RUN + 1},}}")
"""A run of more than LONGEST_RUN non-whitespace characters."""

Tokenizer = Callable[[str], Doc]


def long_run_cuts(text: str) -> list[int]:
    """Offsets where :func:`tokenize` cuts ``text``: every PIECE characters inside each run of
    more than LONGEST_RUN non-whitespace characters (empty for ordinary text)."""
    cuts: list[int] = []
    for match in LONG_RUN.finditer(text):
        cuts.extend(range(match.start() + PIECE, match.end(), PIECE))
    return cuts


def tokenize(tokenizer: Tokenizer, text: str) -> Doc:
    """``tokenizer(text)``, with runs of more than LONGEST_RUN non-whitespace characters
    tokenised PIECE characters at a time (so the cost stays linear in the text's length)."""
    cuts = long_run_cuts(text)
    if not cuts:
        return tokenizer(text)
    bounds = [0, *cuts, len(text)]
    pieces = [tokenizer(text[start:end]) for start, end in zip(bounds, bounds[1:])]
    # The pieces meet inside a run, so no whitespace goes between them.
    return Doc.from_docs(pieces, ensure_whitespace=False)
