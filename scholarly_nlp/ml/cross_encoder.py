"""``scholarly_nlp.CrossEncoder.v1``: a Hugging Face cross-encoder as a thinc model.

Input: a list of (text_a, text_b) pairs. Output: one relevance score per pair (a 1-d
array). The torch module is ``AutoModelForSequenceClassification`` with one output, the
format of sentence-transformers cross-encoders, wrapped in thinc's ``PyTorchShim`` so spaCy
optimisers, GPU allocation and mixed precision work as for any thinc model.

The backbone is loaded when the model is initialised (``nlp.initialize()``) or, for a
saved pipeline, from the folder the owning component wrote with :func:`save_cross_encoder`.
With ``lora_rank`` > 0 the encoder trains LoRA adapters and the one-output head only, and
the folder holds just those and a reference to the backbone (:mod:`.adapters`); a fully
fine-tuned encoder is written as a low-rank weight difference to the backbone with
``delta_rank`` > 0, else whole. A head the checkpoint lacks trains at ``head_lr_scale``
times the optimiser's rate (:mod:`.head_rate_shim`: at the encoder's rate it does not learn).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from spacy.util import registry
from thinc.api import ArgsKwargs, Model
from thinc.types import Floats1d

from .adapters import (add_lora, delta_bits_of, is_adapted, keep_loaded_delta, load_encoder, load_pretrained,
                       save_encoder)
from .backbones import resolve_backbone
from .head_rate_shim import NewWeightRateShim
from .weight_delta import check_factor_bits

Pair = tuple[str, str]
_TOKENIZER = "tokenizer"  # attr holding the HF tokenizer; not serialisable, so thinc skips it


@registry.architectures("scholarly_nlp.CrossEncoder.v1")
def CrossEncoder(name: str = "all-MiniLM-L6-v2", max_length: int = 256, mixed_precision: bool = False,
                 lora_rank: int = 0, lora_alpha: float = 0.0, head_lr_scale: float = 1.0,
                 delta_rank: int = 0, delta_bits: int = 0) -> Model[list, Floats1d]:
    """A cross-encoder over text pairs; ``name`` is a Hugging Face name or path (default MiniLM).

    ``lora_rank`` > 0 fine-tunes LoRA adapters of that rank (``lora_alpha``, default twice the
    rank) and the head instead of every weight, so the trained model saves in about a megabyte.
    ``delta_rank`` > 0 saves an encoder fine-tuned in full as the backbone plus a low-rank
    difference of its weights (:mod:`.weight_delta`; a few megabytes, an approximation set by
    the rank) instead of the whole model; ``delta_bits`` 8 stores its factors as int8 with
    per-component scales, 16 as float16 (0: as the folder it was loaded from, else 16), so at 8
    twice the rank fits in the same bytes.
    ``head_lr_scale``: the learning rate of a new head (one the checkpoint lacks) is this many
    times the optimiser's; 1 trains it like the encoder.
    """
    if head_lr_scale <= 0:
        raise ValueError(f"CrossEncoder: head_lr_scale must be > 0, got {head_lr_scale!r}")
    if delta_rank < 0:
        raise ValueError(f"CrossEncoder: delta_rank must be >= 0, got {delta_rank!r}")
    if delta_bits:
        check_factor_bits(delta_bits)
    return Model(
        "scholarly_nlp.cross_encoder",
        _forward,
        init=_init,
        attrs={"name": name, "max_length": max_length, "mixed_precision": mixed_precision,
               "lora_rank": int(lora_rank), "lora_alpha": float(lora_alpha), "head_lr_scale": float(head_lr_scale),
               "delta_rank": int(delta_rank), "delta_bits": int(delta_bits)},
    )


def _init(model: Model, X: Any = None, Y: Any = None) -> None:
    if not model.shims:
        load_cross_encoder(model, resolve_backbone(model.attrs["name"]))
        adapt_for_training(model, task="SEQ_CLS")


def adapt_for_training(model: Model, task: str) -> None:
    """Wrap the loaded encoder with LoRA adapters when the model's ``lora_rank`` asks for it."""
    rank = model.attrs.get("lora_rank") or 0
    shim = model.shims[0]
    if rank <= 0 or is_adapted(shim._model) or is_adapted(getattr(shim._model, "encoder", None)):
        return
    alpha = model.attrs.get("lora_alpha") or None
    if hasattr(shim._model, "encoder") and task == "FEATURE_EXTRACTION":
        shim._model.encoder = add_lora(shim._model.encoder, rank, alpha, task=task)
    else:
        shim._model = add_lora(shim._model, rank, alpha, task=task)


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
    from transformers import AutoTokenizer

    loaded = load_encoder(Path(path), _sequence_classifier, backbone=model.attrs["name"])
    tokenizer = AutoTokenizer.from_pretrained(loaded.source)
    shim = NewWeightRateShim(loaded.module, new_keys=loaded.missing, lr_scale=model.attrs.get("head_lr_scale", 1.0),
                             mixed_precision=model.attrs.get("mixed_precision", False))
    model.shims[:] = [shim]
    model.attrs[_TOKENIZER] = tokenizer
    # A new head is not the backbone's: such a model can never be saved as a reference only.
    model.attrs["backbone_digest"] = None if loaded.missing else loaded.digest
    keep_loaded_delta(model, loaded)
    model.attrs["random_head"] = bool(loaded.missing)


def _sequence_classifier(source: str) -> tuple[Any, list[str]]:
    """A one-output sequence classifier from a name or folder (a new head for a plain encoder)."""
    import functools

    import transformers
    from transformers import AutoModelForSequenceClassification

    verbosity = transformers.logging.get_verbosity()
    transformers.logging.set_verbosity_error()  # the "newly initialized head" notice is expected here
    try:
        return load_pretrained(functools.partial(AutoModelForSequenceClassification.from_pretrained, num_labels=1),
                               source)
    finally:
        transformers.logging.set_verbosity(verbosity)


def save_cross_encoder(model: Model, path: Path) -> str:
    """Write the model compactly (see :mod:`.adapters`); returns the layout written.

    A reference to the backbone when its weights are the backbone's, the LoRA adapter and
    head when it was trained with ``lora_rank``, a low-rank weight difference to the backbone
    when it was fine-tuned in full with ``delta_rank``, else the whole model and its tokenizer.
    """
    path = Path(path)
    torch_model = model.shims[0]._model
    module = getattr(torch_model, "encoder", torch_model)  # a wrapper saves its HF encoder
    load_backbone = None if model.attrs.get("load") is not None else _sequence_classifier
    layout = save_encoder(module, path, model.attrs["name"], model.attrs.get("backbone_digest"),
                          model.attrs.get("untracked_keys", ()), delta_rank=model.attrs.get("delta_rank", 0),
                          load_backbone=load_backbone, delta_bits=delta_bits_of(model),
                          stored_delta=getattr(model.shims[0], "stored_delta", None))
    if layout == "full":
        model.attrs[_TOKENIZER].save_pretrained(str(path))
    return layout


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
