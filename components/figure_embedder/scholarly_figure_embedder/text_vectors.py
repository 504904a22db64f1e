"""Frozen sentence-encoder vectors of texts, computed once and cached (in memory and on disk).

The text encoder (MiniLM by default) is not trained, so each distinct text needs encoding
only once: :class:`TextVectorCache` keys vectors by a hash of the text, encodes only texts
it has not seen (loading the encoder on first need), and saves/loads ``.npz`` files so a
project can precompute the vectors of a whole corpus in its preprocessing step. A cache
file records the encoder it came from; loading one made by another encoder is refused.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Optional, Sequence, Union

import numpy

from scholarly_nlp import ScholarlyNLPError, write_atomic
from scholarly_nlp.ml import resolve_backbone

PathLike = Union[str, Path]


def text_key(text: str) -> str:
    """The cache key of a text (SHA-1 of its UTF-8 bytes)."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


class TextVectorCache:
    """Sentence vectors of texts from the encoder ``encoder`` (a backbone name or folder)."""

    def __init__(self, encoder: str = "all-MiniLM-L6-v2", max_length: int = 128, batch_size: int = 32):
        self.encoder_name = encoder
        self.max_length = max_length
        self.batch_size = batch_size
        self._encoder = None
        self._vectors: dict[str, numpy.ndarray] = {}
        self._dim: Optional[int] = None

    @property
    def identity(self) -> str:
        """What identifies the encoder: its resolved folder or name."""
        return resolve_backbone(self.encoder_name)

    @property
    def dim(self) -> int:
        """The vector size (loads the encoder when nothing is cached yet)."""
        if self._dim is None:
            self._dim = self.encoder.dim
        return self._dim

    @property
    def encoder(self):
        """The sentence encoder, loaded on first use."""
        if self._encoder is None:
            from scholarly_nlp.ml import SentenceEncoder

            self._encoder = SentenceEncoder(self.encoder_name, max_length=self.max_length, batch_size=self.batch_size)
        return self._encoder

    def __len__(self) -> int:
        return len(self._vectors)

    def vectors(self, texts: Sequence[str]) -> numpy.ndarray:
        """float32 (len(texts), dim) unit vectors; unseen texts are encoded in one pass."""
        keys = [text_key(t) for t in texts]
        missing = {k: t for k, t in zip(keys, texts) if k not in self._vectors}
        if missing:
            encoded = self.encoder.encode(list(missing.values()))
            self._dim = encoded.shape[1]
            self._vectors.update(zip(missing, encoded))
        if not keys:
            return numpy.zeros((0, self.dim), dtype=numpy.float32)
        return numpy.stack([self._vectors[k] for k in keys]).astype(numpy.float32)

    def save(self, path: PathLike) -> None:
        """Write every cached vector and the encoder's identity to an ``.npz`` file."""
        import io

        keys = list(self._vectors)
        matrix = numpy.stack([self._vectors[k] for k in keys]) if keys else numpy.zeros((0, self._dim or 0), numpy.float32)
        buffer = io.BytesIO()
        numpy.savez(buffer, keys=numpy.array(keys, dtype="U40"), vectors=matrix.astype(numpy.float32),
                    encoder=numpy.array(self.identity))
        write_atomic(path, buffer.getvalue())

    def load(self, path: PathLike) -> int:
        """Add the vectors of a file written by :meth:`save`; returns how many it held.

        Raises ScholarlyNLPError when the file came from another encoder.
        """
        with numpy.load(Path(path), allow_pickle=False) as data:
            encoder = str(data["encoder"])
            if encoder != self.identity:
                raise ScholarlyNLPError(f"{path}: text vectors were made with encoder {encoder!r}, "
                                        f"not with {self.identity!r}")
            keys, matrix = data["keys"], data["vectors"]
        if len(keys):
            self._dim = int(matrix.shape[1])
        self._vectors.update(zip((str(k) for k in keys), matrix.astype(numpy.float32)))
        return int(len(keys))
