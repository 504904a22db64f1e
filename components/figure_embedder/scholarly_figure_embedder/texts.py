"""The text side of a figure: its caption and the sentences around its mentions.

A figure's text is the caption (without its "Figure 3:" label, which every paper shares)
and, for each mention of the figure in the paper's body, the mentioning sentence with one
sentence before and one after it (``window``), taken from the same paragraph. Mentions
inside captions do not count: they describe another figure.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import Optional

from spacy.tokens import Doc, Span

from scholarly_nlp import Figure

_LABEL = re.compile(r"^\s*(?:Fig(?:ure)?s?\.?|Tab(?:le)?s?\.?)\s*[A-Z]?\d+(?:\.\d+)?[a-z]?\s*[:.|]?\s*", re.IGNORECASE)
# Body blocks whose sentences may serve as context (not titles, headings or captions).
_CONTEXT_GROUPS = ("paragraphs", "abstract")


@dataclass(frozen=True)
class FigureText:
    """The texts of one figure: ``caption`` ("" when none) and ``context`` sentences in document order."""

    caption: str
    context: tuple[str, ...] = ()

    def joined(self) -> str:
        """Caption and context as one string (what the TF-IDF methods compare)."""
        return " ".join(part for part in (self.caption, *self.context) if part)

    @property
    def empty(self) -> bool:
        """True when the figure has neither caption text nor context."""
        return not self.caption and not self.context


def candidate_figures(doc: Doc, include_tables: bool = False) -> list[Figure]:
    """The figures to embed, in document order: kind "figure", plus tables when asked."""
    return [f for f in doc._.figures if f.kind == "figure" or include_tables]


def caption_text(figure: Figure) -> str:
    """The caption without its leading label ("Figure 3:"); "" when there is none."""
    return _LABEL.sub("", figure.caption_text, count=1).strip()


class _DocIndex:
    """Sentence and body-block lookups of one Doc, built once for all its figures."""

    def __init__(self, doc: Doc):
        self.sentences = list(doc.sents) if len(doc) else []
        self.sentence_starts = [s.start for s in self.sentences]
        blocks = sorted((s for g in _CONTEXT_GROUPS for s in doc.spans.get(g, [])), key=lambda s: s.start)
        self.blocks = blocks
        self.block_starts = [b.start for b in blocks]

    def block_of(self, token_index: int) -> Optional[Span]:
        """The paragraph or abstract span that holds a token, if any."""
        i = bisect_right(self.block_starts, token_index) - 1
        if i >= 0 and self.blocks[i].start <= token_index < self.blocks[i].end:
            return self.blocks[i]
        return None

    def sentence_index(self, token_index: int) -> int:
        """Index (in ``sentences``) of the sentence that holds a token."""
        return bisect_right(self.sentence_starts, token_index) - 1


def context_sentences(doc: Doc, figure: Figure, window: int = 1, max_mentions: int = 3,
                      index: Optional[_DocIndex] = None) -> list[str]:
    """Sentences around the first ``max_mentions`` body mentions of ``figure``, deduplicated, in order.

    Each mention contributes its sentence and up to ``window`` sentences on each side that
    lie in the same paragraph (or abstract paragraph).
    """
    index = index or _DocIndex(doc)
    chosen: set[int] = set()
    used = 0
    for mention in sorted(figure.mentions, key=lambda m: m.start):
        if used >= max_mentions:
            break
        block = index.block_of(mention.start)
        if block is None:  # a mention in a caption or heading is no body context
            continue
        used += 1
        centre = index.sentence_index(mention.start)
        for i in range(centre - window, centre + window + 1):
            if 0 <= i < len(index.sentences):
                sentence = index.sentences[i]
                # A block's last sentence also holds the blank-line token after it, so test starts only.
                if block.start <= sentence.start < block.end:
                    chosen.add(i)
    texts = (index.sentences[i].text.strip() for i in sorted(chosen))
    return [t for t in texts if t]


def figure_texts(doc: Doc, include_tables: bool = False, window: int = 1, max_mentions: int = 3
                 ) -> list[tuple[Figure, FigureText]]:
    """(figure, its texts) for every candidate figure of ``doc``, in document order."""
    figures = candidate_figures(doc, include_tables)
    if not figures:
        return []
    index = _DocIndex(doc)
    return [(f, FigureText(caption_text(f), tuple(context_sentences(doc, f, window, max_mentions, index))))
            for f in figures]
