"""Test support for the similarity tests: a deterministic stand-in for the aspect embedder.

Sentence vectors are hashed bags of words (normalised); an aspect vector is the normalised
sum of its sentences' vectors. ``hashed_aspect_embedder`` is a spaCy component with this
behaviour, so a saved pipeline using it can be passed to ``scholarly-nlp similar --model``.
"""

from __future__ import annotations

import re
import zlib
from pathlib import Path

import numpy
import spacy
from spacy.language import Language
from spacy.tokens import Doc

import scholarly_nlp
from scholarly_nlp.doc.extensions import install_extensions
from scholarly_nlp.doc.roles import aspect_sentences
from scholarly_nlp.readers.abstracts import abstract_doc, read_csfcube_abstracts

WIDTH = 64
COMPONENT = "hashed_aspect_embedder"
_WORD = re.compile(r"[a-z0-9]+")


def hashed_vector(text: str, width: int = WIDTH) -> numpy.ndarray:
    """A normalised hashed bag of lower-cased words (float32)."""
    vector = numpy.zeros(width, dtype=numpy.float32)
    for word in _WORD.findall(text.lower()):
        vector[zlib.crc32(word.encode()) % width] += 1.0
    norm = numpy.linalg.norm(vector)
    return vector / norm if norm else vector


def embed(doc: Doc, width: int = WIDTH) -> Doc:
    """Set ``doc._.sentence_vectors`` and ``doc._.aspect_vectors`` from hashed bags of words
    (``aspect_vectors`` None and ``aspect_fallbacks`` set for a Doc without title and abstract)."""
    items = aspect_sentences(doc)
    if not items:  # like the real embedder: nothing to embed
        doc._.aspect_vectors, doc._.sentence_vectors = None, numpy.zeros((0, width), "f")
        doc._.aspect_fallbacks = {a: "empty document" for a in ("title", "background", "method", "result")}
        return doc
    vectors = numpy.stack([hashed_vector(s.text, width) for s, _a in items]) if items else numpy.zeros((0, width), "f")
    aspects = {}
    for aspect in ("title", "background", "method", "result"):
        rows = [i for i, (_s, a) in enumerate(items) if a == aspect]
        if rows:
            total = vectors[rows].sum(axis=0)
            aspects[aspect] = total / max(float(numpy.linalg.norm(total)), 1e-12)
    doc._.sentence_vectors = vectors
    doc._.aspect_vectors = aspects
    return doc


@Language.component(COMPONENT)
def hashed_aspect_embedder(doc: Doc) -> Doc:
    """The spaCy component form of :func:`embed`."""
    return embed(doc)


def csfcube_records(path: Path, n: int):
    """The first ``n`` CSFCube abstract records."""
    return read_csfcube_abstracts(path)[:n]


def light_nlp():
    """``scholarly_nlp.blank()`` without loading the plugins (same tokenizer and extensions),
    so that tests not about plugins do not pay for importing their heavy dependencies."""
    install_extensions()
    return spacy.blank("en")


def csfcube_docs(path: Path, n: int, nlp=None) -> list[Doc]:
    """The first ``n`` CSFCube papers as embedded Docs (roles kept)."""
    nlp = nlp or light_nlp()
    return [embed(abstract_doc(r, nlp)) for r in csfcube_records(path, n)]


def save_embedder_pipeline(path: Path) -> Path:
    """Save a blank English pipeline with the hashed embedder; returns ``path``."""
    nlp = scholarly_nlp.blank()
    nlp.add_pipe(COMPONENT)
    nlp.to_disk(path)
    return path
