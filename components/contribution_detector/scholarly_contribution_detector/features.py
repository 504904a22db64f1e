"""Sentence features of the contribution detector, shared by NCG training Docs and TEI paper Docs.

A sentence reaches the model as a small Doc (:func:`model_docs`) whose words are the
sentence's tokens (:func:`text_tokens`: lower-cased, digits mapped to ``0``) followed by
context pseudo-tokens (:func:`context_features`):

* ``__sec_intro``: always (only introduction sentences are scored);
* ``__pos_q1`` .. ``__pos_q4``: the quarter of the introduction the sentence lies in,
  plus ``__pos_first`` / ``__pos_last`` for its first and last sentence;
* ``__first_in_section``: the sentence follows a heading (the introduction's or a
  subsection's);
* ``__cue_<name>``: each cue phrase of
  :data:`.data.CUE_PATTERNS` found in the sentence;
  ``__prev_cue_<name>`` the same for the sentence before (``__prev_none`` for the first).

The introduction's sentences come from
:func:`scholarly_nlp.introduction_and_body` for every Doc
(:func:`introduction_features`), so a TEI paper and an NCG training Doc
(:mod:`.ncg_docs`, which gives its introduction the same span-group layout) get their
features from the same code.
"""

from __future__ import annotations

import re
from typing import Optional, Sequence

from spacy.tokens import Doc
from spacy.vocab import Vocab

from .data import cue_flags

__all__ = [
    "contribution_sentences",
    "text_tokens",
    "context_features",
    "first_in_section_flags",
    "introduction_features",
    "model_docs",
]

_TOKEN = re.compile(r"[^\W\d_]+|\d+|[^\w\s]")


def contribution_sentences(doc: Doc) -> Optional[list]:
    """The detected contribution sentences as Spans (None until the pipe ran); the getter of
    ``doc._.contribution_sentences``."""
    offsets = doc._.contribution_sentence_offsets
    if offsets is None:
        return None
    return [doc[int(start):int(end)] for start, end in offsets]


def text_tokens(text: str) -> list[str]:
    """The sentence's word tokens: letter runs, digit runs (as ``0``) and punctuation, lower-cased.

    The same for Stanza's space-separated NCG sentences and raw TEI sentences.
    """
    return ["0" if token[0].isdigit() else token for token in _TOKEN.findall((text or "").lower())]


def context_features(texts: Sequence[str], first_in_section: Optional[Sequence[bool]] = None) -> list[list[str]]:
    """The context pseudo-tokens of each introduction sentence (see the module docstring).

    ``texts`` are the introduction's sentences in order; ``first_in_section[i]`` tells
    whether sentence ``i`` follows a heading (default: only the first does).
    """
    n = len(texts)
    if first_in_section is None:
        first_in_section = [i == 0 for i in range(n)]
    out = []
    previous: Optional[dict] = None
    for i, text in enumerate(texts):
        flags = cue_flags(text)
        features = ["__sec_intro", f"__pos_q{min(4, 1 + (4 * i) // max(1, n))}"]
        if i == 0:
            features.append("__pos_first")
        if i == n - 1:
            features.append("__pos_last")
        if first_in_section[i]:
            features.append("__first_in_section")
        features.extend(f"__cue_{name}" for name, on in flags.items() if on)
        if previous is None:
            features.append("__prev_none")
        else:
            features.extend(f"__prev_cue_{name}" for name, on in previous.items() if on)
        out.append(features)
        previous = flags
    return out


def first_in_section_flags(doc: Doc, sentences: Sequence) -> list[bool]:
    """For each sentence Span: is it the first one, or does a section heading
    (``doc.spans["section_heads"]``) start between it and the sentence before?"""
    heads = sorted(span.start for span in doc.spans.get("section_heads", []))
    flags = []
    for i, sentence in enumerate(sentences):
        if i == 0:
            flags.append(True)
            continue
        lo = sentences[i - 1].start
        flags.append(any(lo < h <= sentence.start for h in heads))
    return flags


def introduction_features(doc: Doc) -> tuple[list, list[list[str]]]:
    """``(introduction sentence Spans, their context features)`` of a paper Doc.

    The sentences are ``introduction_and_body(doc)[0]``; a Doc without sections or
    without an introduction gives ``([], [])``.
    """
    from scholarly_nlp import introduction_and_body

    if "sections" not in doc.spans or not len(doc.spans["sections"]):
        return [], []
    sentences = introduction_and_body(doc)[0]
    if not sentences:
        return [], []
    features = context_features([s.text for s in sentences], first_in_section_flags(doc, sentences))
    return sentences, features


def model_docs(vocab: Vocab, texts: Sequence[str], features: Sequence[Sequence[str]]) -> list[Doc]:
    """One small Doc per sentence: its :func:`text_tokens` then its feature pseudo-tokens.

    These are the inputs of the n-gram model (``spacy.TextCatBOW.v3`` hashes each token's
    ORTH, so ``vocab`` can be a private one).
    """
    docs = []
    for text, feats in zip(texts, features):
        words = text_tokens(text) + list(feats)
        docs.append(Doc(vocab, words=words or ["__empty"]))
    return docs
