"""Sentence embeddings from a Hugging Face encoder (a bi-encoder), without sentence-transformers.

:class:`SentenceEncoder` loads ``AutoModel`` and ``AutoTokenizer`` from the folder or name that
:func:`~scholarly_nlp.ml.backbones.resolve_backbone` gives (all-MiniLM-L6-v2 by default, the
locally packaged copy), and embeds texts the way sentence-transformers' MiniLM models were
trained to be used: the mean of the last hidden states over the tokens the attention mask
keeps, then L2 normalisation, so a dot product of two embeddings is their cosine.

Inference only: the model is in eval mode and runs under ``torch.no_grad()``. Texts are
batched in order of length (less padding) and the rows are put back in input order; the
output does not depend on the batch size beyond float rounding.
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy

from .backbones import DEFAULT_BACKBONE, resolve_backbone

__all__ = ["SentenceEncoder", "cosine_matrix", "mean_pool"]

_EPS = 1e-12


class SentenceEncoder:
    """Mean-pooled, L2-normalised sentence embeddings from a Hugging Face encoder.

    ``name`` is a backbone name or folder (see :func:`resolve_backbone`); ``device`` is a torch
    device string (None: CPU; ``"cuda"`` works when a GPU is there); ``batch_size`` texts go
    through the model at once; longer texts are truncated to ``max_length`` tokens.
    """

    def __init__(self, name: str = DEFAULT_BACKBONE, device: Optional[str] = None, batch_size: int = 32,
                 max_length: int = 256):
        import torch
        from transformers import AutoModel, AutoTokenizer

        if batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        if max_length < 2:
            raise ValueError(f"max_length must be at least 2 (the special tokens), got {max_length!r}")
        self.name = name
        self.path = resolve_backbone(name)
        self.device = torch.device(device or "cpu")
        self.batch_size = batch_size
        self.max_length = max_length
        self.tokenizer = AutoTokenizer.from_pretrained(self.path)
        self.model = AutoModel.from_pretrained(self.path).to(self.device).eval()

    @property
    def dim(self) -> int:
        """The embedding size (the backbone's hidden size)."""
        return int(self.model.config.hidden_size)

    def encode(self, texts: Sequence[str]) -> numpy.ndarray:
        """Embed ``texts``: a float32 array of shape ``(len(texts), dim)``, rows of unit length.

        An empty list gives an array of shape ``(0, dim)``. A text that is empty still gets a
        (unit) embedding, that of the special tokens alone.
        """
        texts = [str(t) for t in texts]
        out = numpy.zeros((len(texts), self.dim), dtype=numpy.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            out[rows] = self._encode_batch([texts[i] for i in rows])
        return out

    def _encode_batch(self, texts: list[str]) -> numpy.ndarray:
        """Embeddings of one batch, in the batch's order."""
        import torch

        encoded = self.tokenizer(texts, padding=True, truncation=True, max_length=self.max_length,
                                 return_tensors="pt")
        encoded = {key: value.to(self.device) for key, value in encoded.items()}
        with torch.no_grad():
            hidden = self.model(**encoded).last_hidden_state.float()
        pooled = mean_pool(hidden, encoded["attention_mask"])
        pooled = pooled / pooled.norm(dim=1, keepdim=True).clamp_min(_EPS)
        return pooled.cpu().numpy().astype(numpy.float32)


def mean_pool(hidden, attention_mask):
    """Mean of ``hidden`` (batch, tokens, dim) over the tokens where ``attention_mask`` is 1."""
    mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp_min(1.0)


def cosine_matrix(a: numpy.ndarray, b: numpy.ndarray) -> numpy.ndarray:
    """Cosine similarities (len(a), len(b)) of two sets of row vectors (zero rows give 0)."""
    a = numpy.asarray(a, dtype=numpy.float32)
    b = numpy.asarray(b, dtype=numpy.float32)
    a = a / numpy.maximum(numpy.linalg.norm(a, axis=1, keepdims=True), _EPS)
    b = b / numpy.maximum(numpy.linalg.norm(b, axis=1, keepdims=True), _EPS)
    return a @ b.T
