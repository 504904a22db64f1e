"""The texts the ranker compares: captions without their label, sentences without mentions.

Captions of GROBID 0.5 start with "Figure 3:" and mentioning sentences contain "Figure 3";
left in place, the model would learn to match numbers instead of content.
"""

from __future__ import annotations

import re
from typing import Optional

from spacy.tokens import Doc, Span

from scholarly_nlp import Figure

_CAPTION_PREFIX = re.compile(r"^\s*(?:Fig(?:ure)?s?\.?|Tab(?:le)?s?\.?)\s*[A-Z]?\d+(?:\.\d+)?[a-z]?\s*[:.|]?\s*", re.IGNORECASE)


def caption_text(figure: Figure) -> str:
    """The caption without its leading "Figure 3:" label; "" when there is no caption."""
    return _CAPTION_PREFIX.sub("", figure.caption_text, count=1).strip()


def masked_sentence(sentence: Span, mentions: list[Span], placeholder: str = "the figure") -> str:
    """The sentence text with each figure/table mention inside it replaced by ``placeholder``."""
    text = sentence.text
    offset = sentence.start_char
    for mention in sorted(mentions, key=lambda m: m.start_char, reverse=True):
        if sentence.start_char <= mention.start_char and mention.end_char <= sentence.end_char:
            start, end = mention.start_char - offset, mention.end_char - offset
            text = text[:start] + placeholder + text[end:]
    return text.strip()


def abstract_sentences(doc: Doc) -> list[str]:
    """The abstract's sentences; the title when there is no abstract; [] when neither exists."""
    sentences = [s.text.strip() for span in doc.spans.get("abstract", []) for s in span.sents if s.text.strip()]
    if sentences:
        return sentences
    title = " ".join(s.text for s in doc.spans.get("title", [])).strip()
    return [title] if title else []


def sentence_of(doc: Doc, mention: Span) -> Optional[Span]:
    """The sentence that contains a mention."""
    return doc[mention.start].sent if len(doc) else None
