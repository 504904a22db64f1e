"""The aspect pooling model: ``scholarly_aspect_embedder.AttentionAspectPooler.v1``.

Input: paper Docs whose title/abstract the shared transformer encoded. Output: one
``(4, width)`` array per Doc, the title, background, method and result vectors (rows in
:data:`scholarly_nlp.doc.roles.ASPECTS` order).

Per Doc, the token vectors of the title and abstract sentences (the listener's output,
one row per spaCy token) are grouped by aspect (the title; abstract sentences by
``Span._.role``). Each group is pooled with attention: a learned query per aspect scores
the tokens, a sinusoidal positional encoding (the token's position in the title+abstract,
scaled by a learned gate) is added to the values, and a linear projection maps the pooled
vector out. Queries and gate start at zero and the projection at the identity, so the
untrained model is exactly mean pooling per aspect, the zero-shot baseline training must
beat. An aspect without a sentence of its own is pooled over the whole title+abstract
(with its own query): the fallback is defined, never a crash.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, List, Optional, Tuple

import numpy
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import ArgsKwargs, Model, PyTorchWrapper_v2, torch2xp, xp2torch
from thinc.types import Floats2d

from scholarly_nlp import ASPECTS, aspect_sentences

ARCH = "scholarly_aspect_embedder.AttentionAspectPooler.v1"


@dataclass
class AspectLayout:
    """Where a Doc's title/abstract tokens are and which aspect each belongs to.

    ``tokens`` are Doc token indices in reading order; ``masks`` is (n_aspects, n_tokens)
    bool; ``fallbacks`` names the aspects pooled over everything for want of their own.
    """

    tokens: numpy.ndarray
    masks: numpy.ndarray
    fallbacks: dict


def aspect_layout(doc: Doc, max_tokens: int) -> AspectLayout:
    """The :class:`AspectLayout` of ``doc`` (at most ``max_tokens`` tokens are pooled)."""
    units = aspect_sentences(doc)
    token_rows: List[int] = []
    aspect_rows: List[Optional[str]] = []
    for span, aspect in units:
        token_rows.extend(range(span.start, span.end))
        aspect_rows.extend([aspect] * len(span))
    if not units:
        token_rows = list(range(min(len(doc), max_tokens)))
        aspect_rows = [None] * len(token_rows)
    token_rows, aspect_rows = token_rows[:max_tokens], aspect_rows[:max_tokens]
    tokens = numpy.asarray(token_rows, dtype="int64")
    masks = numpy.zeros((len(ASPECTS), len(tokens)), dtype=bool)
    fallbacks = {}
    for a, aspect in enumerate(ASPECTS):
        own = numpy.asarray([x == aspect for x in aspect_rows], dtype=bool)
        if own.any():
            masks[a] = own
        else:
            masks[a] = True
            fallbacks[aspect] = "no title" if aspect == "title" else f"no {aspect} sentence"
    if not len(tokens):
        fallbacks = {aspect: "empty document" for aspect in ASPECTS}
    return AspectLayout(tokens, masks, fallbacks)


def sinusoidal_positions(n_positions: int, width: int) -> numpy.ndarray:
    """The (n_positions, width) sinusoidal encoding of Vaswani et al."""
    pos = numpy.arange(n_positions, dtype="float32")[:, None]
    dims = numpy.arange(0, width, 2, dtype="float32")
    angles = pos / numpy.power(10000.0, dims / max(width, 1))
    table = numpy.zeros((n_positions, width), dtype="float32")
    table[:, 0::2] = numpy.sin(angles)
    table[:, 1::2] = numpy.cos(angles[:, : width // 2])
    return table


def _torch_pooler(width: int, n_aspects: int, max_positions: int, dropout: float, trainable_projection: bool):
    """The torch module (built lazily so importing this file does not import torch)."""
    import torch
    from torch import nn

    class AspectAttentionPool(nn.Module):
        """Attention pooling per aspect with positional values and an output projection."""

        def __init__(self) -> None:
            super().__init__()
            self.queries = nn.Parameter(torch.zeros(n_aspects, width))
            self.position_gate = nn.Parameter(torch.zeros(1))
            self.register_buffer("positions", torch.from_numpy(sinusoidal_positions(max_positions, width)))
            self.projection = nn.Linear(width, width)
            with torch.no_grad():
                self.projection.weight.copy_(torch.eye(width))
                self.projection.bias.zero_()
            # Frozen, the head only learns where to attend: the MiniLM space stays as it is.
            self.projection.requires_grad_(trainable_projection)
            self.dropout = nn.Dropout(dropout)

        def forward(self, tokens, masks):  # tokens (B, T, W), masks (B, A, T) bool
            scores = torch.einsum("btw,aw->bat", tokens, self.queries) / math.sqrt(width)
            scores = scores.masked_fill(~masks, -1e4)
            weights = torch.softmax(scores, dim=-1) * masks
            weights = weights / weights.sum(dim=-1, keepdim=True).clamp_min(1e-9)
            values = self.dropout(tokens) + self.position_gate * self.positions[: tokens.shape[1]]
            return self.projection(torch.einsum("bat,btw->baw", weights, values))

    return AspectAttentionPool()


def _convert_inputs(model: Model, inputs: Tuple, is_train: bool):
    tokens, masks = inputs
    args = ArgsKwargs(args=(xp2torch(tokens, requires_grad=is_train), xp2torch(masks)), kwargs={})

    def backprop(d_args: ArgsKwargs):
        return (torch2xp(d_args.args[0]), None)

    return args, backprop


@registry.architectures(ARCH)
def AttentionAspectPooler(tok2vec: Model, width: int = 384, max_tokens: int = 512,
                          dropout: float = 0.1, trainable_projection: bool = True) -> Model:
    """Docs -> one (4, width) aspect matrix each; ``width`` must equal the tok2vec width.

    With ``trainable_projection = false`` the output projection stays the identity and
    training only changes the attention (queries and positional gate).
    """
    pooler = PyTorchWrapper_v2(_torch_pooler(width, len(ASPECTS), max_tokens, dropout, trainable_projection),
                               convert_inputs=_convert_inputs)
    return Model(
        "aspect_pooler",
        _forward,
        init=_init,
        layers=[tok2vec, pooler],
        refs={"tok2vec": tok2vec, "pooler": pooler},
        attrs={"max_tokens": max_tokens},
        dims={"nO": width},
    )


def _init(model: Model, X: Optional[List[Doc]] = None, Y=None) -> Model:
    tok2vec = model.get_ref("tok2vec")
    tok2vec.initialize(X=X)
    if tok2vec.has_dim("nO") and tok2vec.get_dim("nO") not in (None, model.get_dim("nO")):
        raise ValueError(f"{ARCH}: width = {model.get_dim('nO')} but the transformer gives "
                         f"{tok2vec.get_dim('nO')}-dimensional token vectors; set width to match the backbone")
    return model


def pad_batch(model: Model, docs: List[Doc], tokvecs: List[Floats2d]):
    """Padded (B, T, W) token vectors and (B, A, T) masks of the Docs' title/abstract tokens."""
    xp = model.ops.xp
    width = model.get_dim("nO")
    layouts = [aspect_layout(doc, model.attrs["max_tokens"]) for doc in docs]
    longest = max([len(lay.tokens) for lay in layouts] + [1])
    tokens = xp.zeros((len(docs), longest, width), dtype="float32")
    masks = numpy.zeros((len(docs), len(ASPECTS), longest), dtype=bool)
    for i, (lay, vecs) in enumerate(zip(layouts, tokvecs)):
        if len(lay.tokens):
            tokens[i, : len(lay.tokens)] = vecs[xp.asarray(lay.tokens)]
            masks[i, :, : len(lay.tokens)] = lay.masks
    return tokens, xp.asarray(masks), layouts


def _forward(model: Model, docs: List[Doc], is_train: bool) -> Tuple[List[Floats2d], Callable]:
    tok2vec = model.get_ref("tok2vec")
    pooler = model.get_ref("pooler")
    tokvecs, backprop_tok2vec = tok2vec(docs, is_train)
    tokens, masks, layouts = pad_batch(model, docs, tokvecs)
    pooled, backprop_pooler = pooler((tokens, masks), is_train)
    outputs = [pooled[i] for i in range(len(docs))]

    def backprop(d_outputs: List[Floats2d]) -> List[Doc]:
        d_tokens, _ = backprop_pooler(model.ops.xp.stack(d_outputs))
        d_tokvecs = []
        for i, (lay, vecs) in enumerate(zip(layouts, tokvecs)):
            d_vecs = model.ops.alloc2f(*vecs.shape)
            if len(lay.tokens):
                d_vecs[model.ops.xp.asarray(lay.tokens)] = d_tokens[i, : len(lay.tokens)]
            d_tokvecs.append(d_vecs)
        return backprop_tok2vec(d_tokvecs)

    return outputs, backprop
