"""From paper Docs to model inputs: per figure its text vectors and its image array.

:class:`Featurizer` holds the frozen text side (a :class:`TextVectorCache`) and an
:class:`ImageCache`. The text features of a figure are two sentence vectors, concatenated:
the caption's and the normalised mean of its context sentences' (each a zero vector when the
figure has no caption text, or no context).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

import numpy
from spacy.tokens import Doc

from .images import ImageCache, stack_images
from .model import FigureBatch
from .text_vectors import TextVectorCache
from .texts import FigureText, figure_texts


@dataclass
class FigureFeatures:
    """One figure ready for the model: ids, texts, text features, and its image (or None)."""

    paper_id: str
    fig_id: str
    text: FigureText
    text_vector: numpy.ndarray
    image: Optional[numpy.ndarray]

    @property
    def key(self) -> tuple[str, str]:
        """(paper id, figure id)."""
        return (self.paper_id, self.fig_id)


def _unit_mean(vectors: numpy.ndarray, width: int) -> numpy.ndarray:
    if not len(vectors):
        return numpy.zeros(width, dtype=numpy.float32)
    mean = vectors.mean(axis=0)
    return (mean / max(float(numpy.linalg.norm(mean)), 1e-12)).astype(numpy.float32)


class Featurizer:
    """Turns the candidate figures of paper Docs into :class:`FigureFeatures`."""

    def __init__(self, texts: TextVectorCache, image_size: int = 128, include_tables: bool = False,
                 window: int = 1, max_mentions: int = 3):
        self.texts = texts
        self.images = ImageCache(image_size)
        self.include_tables = include_tables
        self.window = window
        self.max_mentions = max_mentions

    def figure_texts(self, doc: Doc) -> list:
        """(figure, FigureText) pairs of a Doc's candidate figures."""
        return figure_texts(doc, self.include_tables, self.window, self.max_mentions)

    def features(self, docs: Iterable[Doc]) -> list[list[FigureFeatures]]:
        """Per doc, its figures' features (text vectors of all docs computed in one pass)."""
        docs = list(docs)
        per_doc = [self.figure_texts(doc) for doc in docs]
        sentences = [s for figures in per_doc for _, t in figures for s in ((t.caption,) if t.caption else ()) + t.context]
        vectors = dict(zip(sentences, self.texts.vectors(sentences))) if sentences else {}
        # Only papers with figures need the width (which may load the encoder).
        width = self.texts.dim if any(per_doc) else 0
        out = []
        for doc, figures in zip(docs, per_doc):
            row = []
            for figure, text in figures:
                caption = vectors[text.caption] if text.caption else numpy.zeros(width, dtype=numpy.float32)
                context = _unit_mean(numpy.array([vectors[s] for s in text.context]), width)
                row.append(FigureFeatures(doc._.paper_id or "", figure.id, text,
                                          numpy.concatenate([caption, context]).astype(numpy.float32),
                                          self.images.get(figure.image_path)))
            out.append(row)
        return out

    def sentences(self, docs: Iterable[Doc]) -> list[str]:
        """Every text the encoder has to embed for these docs (for precomputing a cache)."""
        found = []
        for doc in docs:
            for _, text in self.figure_texts(doc):
                found.extend(((text.caption,) if text.caption else ()) + text.context)
        return list(dict.fromkeys(found))


def make_batch(features: Sequence[FigureFeatures], text_width: int, image_size: int) -> FigureBatch:
    """The model input for a list of figures (rows in the given order)."""
    rows = [i for i, f in enumerate(features) if f.image is not None]
    text = (numpy.stack([f.text_vector for f in features]) if features
            else numpy.zeros((0, text_width), dtype=numpy.float32))
    images = stack_images([features[i].image for i in rows])
    if not rows:
        images = numpy.zeros((0, 1, image_size, image_size), dtype=numpy.float32)
    return FigureBatch(text=text.astype(numpy.float32), images=images, image_rows=numpy.asarray(rows, dtype=numpy.int64))
