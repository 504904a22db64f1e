"""``scholarly_figure_embedder.FigureEmbedder.v1``: the figure embedding network as a thinc model.

Input: a :class:`FigureBatch` - per figure the text features (the caption's sentence vector
and the mean of its context sentences' vectors, each ``encoder_width`` wide, concatenated)
and, for the figures that have one, the image as a (1, size, size) array in [0, 1].
Output: one L2-normalised embedding per figure, ``(n, embedding_width)``.

Network (torch, wrapped with thinc's ``PyTorchWrapper_v2``):

* text: dense layer + ReLU (+ dropout) on the precomputed sentence vectors;
* image: ``len(conv_channels)`` blocks of 3x3 convolution, batch norm, ReLU and 2x2 max
  pooling, global average pooling, then a dense layer; trained from scratch (no weights to
  download). A figure without an image gets a learned "missing image" vector instead;
* fusion: concatenation, batch norm, dense layer, L2 normalisation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy
from spacy.util import registry
from thinc.api import ArgsKwargs, Model, PyTorchWrapper_v2, xp2torch
from thinc.types import Floats2d

DEFAULT_CHANNELS = (16, 32, 64, 64)


@dataclass
class FigureBatch:
    """Model input: ``text`` float32 (n, 2 * encoder_width); ``images`` float32 (m, 1, s, s)
    for the figures listed in ``image_rows`` (int64 (m,), row indices into ``text``)."""

    text: numpy.ndarray
    images: numpy.ndarray
    image_rows: numpy.ndarray

    def __len__(self) -> int:
        return int(self.text.shape[0])


def _build_torch_module(encoder_width: int, text_width: int, image_size: int, conv_channels: Sequence[int],
                        image_width: int, embedding_width: int, dropout: float):
    """The torch module (imported lazily so that importing this package does not load torch)."""
    import torch
    from torch import nn

    class FigureEmbedderNet(nn.Module):
        """Text and image branches, fused by concatenation, batch norm and a dense layer."""

        def __init__(self):
            super().__init__()
            self.text = nn.Sequential(nn.Linear(2 * encoder_width, text_width), nn.ReLU(), nn.Dropout(dropout))
            blocks, channels = [], 1
            for out in conv_channels:
                blocks += [nn.Conv2d(channels, out, 3, padding=1), nn.BatchNorm2d(out), nn.ReLU(), nn.MaxPool2d(2)]
                channels = out
            self.cnn = nn.Sequential(*blocks, nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                                     nn.Linear(channels, image_width), nn.ReLU())
            self.missing_image = nn.Parameter(torch.zeros(image_width))
            self.fuse_norm = nn.BatchNorm1d(text_width + image_width)
            self.project = nn.Linear(text_width + image_width, embedding_width)
            self.image_size = image_size

        def forward(self, text, images, image_rows):
            """Unit-length embeddings of n figures; ``images`` belong to the rows ``image_rows``."""
            n = text.shape[0]
            image_features = self.missing_image.unsqueeze(0).expand(n, -1)
            if images.shape[0]:
                image_features = image_features.index_put((image_rows,), self.cnn(images))
            fused = torch.cat([self.text(text), image_features], dim=1)
            # Batch norm needs two rows in training; a one-figure batch uses the running stats.
            if self.training and n < 2:
                fused = nn.functional.batch_norm(fused, self.fuse_norm.running_mean, self.fuse_norm.running_var,
                                                 self.fuse_norm.weight, self.fuse_norm.bias, training=False)
            else:
                fused = self.fuse_norm(fused)
            return nn.functional.normalize(self.project(fused), dim=1)

    return FigureEmbedderNet()


def _convert_inputs(model: Model, X: FigureBatch, is_train: bool) -> tuple[ArgsKwargs, Callable[[Any], Any]]:
    """FigureBatch -> torch tensors on the shim's device; inputs get no gradient."""
    device = model.shims[0].device
    args = (
        xp2torch(model.ops.asarray2f(X.text), device=device),
        xp2torch(model.ops.asarray4f(X.images), device=device),
        xp2torch(model.ops.asarray1i(X.image_rows), device=device).long(),
    )
    return ArgsKwargs(args=args, kwargs={}), lambda d_inputs: X


@registry.architectures("scholarly_figure_embedder.FigureEmbedder.v1")
def build_figure_embedder(encoder_width: int = 384, text_width: int = 256, image_size: int = 128,
                          conv_channels: Sequence[int] = DEFAULT_CHANNELS, image_width: int = 64,
                          embedding_width: int = 128, dropout: float = 0.1) -> Model[FigureBatch, Floats2d]:
    """The figure embedder: text + image -> unit-length embeddings (see the module docstring).

    ``encoder_width`` must be the frozen sentence encoder's vector size (384 for
    all-MiniLM-L6-v2); ``image_size`` the side of the square image arrays.
    """
    if encoder_width < 1 or embedding_width < 1 or not conv_channels:
        raise ValueError("encoder_width and embedding_width must be positive and conv_channels non-empty")
    module = _build_torch_module(encoder_width, text_width, image_size, list(conv_channels), image_width,
                                 embedding_width, dropout)
    wrapped = PyTorchWrapper_v2(module, convert_inputs=_convert_inputs)
    wrapped.attrs.update({"encoder_width": encoder_width, "image_size": image_size,
                          "embedding_width": embedding_width})
    wrapped.set_dim("nO", embedding_width)
    return wrapped
