"""``scholarly_nlp.CrossEncoder.v1``: a Hugging Face cross-encoder as a thinc model.

Input: a list of (text_a, text_b) pairs. Output: one relevance score per pair (a 1-d
array). The torch module is ``AutoModelForSequenceClassification`` with one output, the
format of sentence-transformers cross-encoders, wrapped in thinc's ``PyTorchShim`` so spaCy
optimisers, GPU allocation and mixed precision work as for any thinc model.

The backbone is loaded when the model is initialised (``nlp.initialize()``) or, for a
saved pipeline, from the folder the owning component wrote with
:func:`save_cross_encoder`, so a saved pipeline needs no access to the original backbone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from spacy.util import registry
from thinc.api import ArgsKwargs, Model, PyTorchShim
from thinc.types import Floats1d

from .backbones import resolve_backbone

Pair = tuple[str, str]
_TOKENIZER = "tokenizer"  # attr holding the HF tokenizer; not serialisable, so thinc skips it


@registry.architectures("scholarly_nlp.CrossEncoder.v1")
def CrossEncoder(name: str = "all-MiniLM-L6-v2", max_length: int = 256, mixed_precision: bool = False) -> Model[list, Floats1d]:
    """A cross-encoder over text pairs; ``name`` is a Hugging Face name or path (default MiniLM)."""
    return Model(
        "scholarly_nlp.cross_encoder",
        _forward,
        init=_init,
        attrs={"name": name, "max_length": max_length, "mixed_precision": mixed_precision},
    )


def _init(model: Model, X: Any = None, Y: Any = None) -> None:
    if not model.shims:
        load_cross_encoder(model, resolve_backbone(model.attrs["name"]))


def is_loaded(model: Model) -> bool:
    """True once the torch module exists (after initialisation or loading)."""
    return bool(model.shims)


def load_cross_encoder(model: Model, path: str) -> None:
    """Load tokenizer and weights from a Hugging Face folder or name into ``model``.

    A plain encoder checkpoint (MiniLM, SciBERT) gets a freshly initialised one-output head;
    a saved cross-encoder keeps its trained head. Pair scorers of other kinds (such as
    ``scholarly_nlp.BiEncoderScorer.v1``) name their own loader in ``model.attrs["load"]``.
    """
    custom = model.attrs.get("load")
    if custom is not None:
        custom(model, path)
        return
    import transformers
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    verbosity = transformers.logging.get_verbosity()
    transformers.logging.set_verbosity_error()  # the "newly initialized head" notice is expected here
    try:
        tokenizer = AutoTokenizer.from_pretrained(path)
        torch_model = AutoModelForSequenceClassification.from_pretrained(path, num_labels=1)
    finally:
        transformers.logging.set_verbosity(verbosity)
    shim = PyTorchShim(torch_model, mixed_precision=model.attrs.get("mixed_precision", False))
    model.shims[:] = [shim]
    model.attrs[_TOKENIZER] = tokenizer


def save_cross_encoder(model: Model, path: Path) -> None:
    """Write the fine-tuned model and its tokenizer as a Hugging Face folder."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    torch_model = model.shims[0]._model
    getattr(torch_model, "encoder", torch_model).save_pretrained(str(path))  # a wrapper saves its HF encoder
    model.attrs[_TOKENIZER].save_pretrained(str(path))


def _forward(model: Model, pairs: Sequence[Pair], is_train: bool) -> tuple[Floats1d, Callable]:
    from thinc.api import torch2xp, xp2torch

    if not pairs:
        return model.ops.alloc1f(0), lambda d_scores: []
    shim = model.shims[0]
    tokenizer = model.attrs[_TOKENIZER]
    encoded = tokenizer(
        [a for a, _ in pairs], [b for _, b in pairs], truncation="longest_first",
        max_length=model.attrs["max_length"], padding=True, return_tensors="pt",
    )
    device = next(shim._model.parameters()).device
    inputs = ArgsKwargs(args=(), kwargs={k: v.to(device) for k, v in encoded.items()})
    output, shim_backprop = shim(inputs, is_train)
    logits = output.logits.reshape(-1)
    scores = torch2xp(logits.detach().float())

    def backprop(d_scores: Floats1d) -> list:
        grad = xp2torch(d_scores).to(logits.device, dtype=logits.dtype)
        shim_backprop(ArgsKwargs(args=(logits,), kwargs={"grad_tensors": (grad,)}))
        return []

    return model.ops.asarray1f(scores), backprop


def score_pairs(model: Model, pairs: Sequence[Pair], batch_size: int = 64) -> Floats1d:
    """Scores for many pairs at inference, ``batch_size`` pairs per forward pass."""
    parts = [model.predict(list(pairs[i : i + batch_size])) for i in range(0, len(pairs), batch_size)]
    return model.ops.xp.concatenate(parts) if parts else model.ops.alloc1f(0)


def backbone_name(model: Model) -> Optional[str]:
    """The configured backbone name of a cross-encoder model."""
    return model.attrs.get("name")
