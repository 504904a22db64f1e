"""``scholarly_nlp.BiEncoderScorer.v1``: text-pair scores from a bi-encoder, as a thinc model.

The drop-in alternative to ``scholarly_nlp.CrossEncoder.v1`` for components that score
(text_a, text_b) pairs: each text is embedded on its own (mean-pooled last hidden states,
L2-normalised, the sentence-transformers recipe of all-MiniLM-L6-v2) and the score is
``scale`` x the cosine of the two embeddings. Unlike a cross-encoder built from a plain
encoder checkpoint, it needs no trained head, so a sentence-embedding backbone scores pairs
sensibly zero-shot; it is still trainable end to end with any loss over its scores.
Repeated texts in one batch (one citance against many candidates) are encoded once.

Loading, saving and ``score_pairs`` are shared with the cross-encoder
(:mod:`scholarly_nlp.ml.cross_encoder`): an untrained scorer saves as a reference to its
backbone, one trained with ``lora_rank`` as the backbone reference plus its LoRA adapter.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Sequence

from spacy.util import registry
from thinc.api import ArgsKwargs, Model, PyTorchShim
from thinc.types import Floats1d

from .adapters import load_encoder, load_pretrained
from .backbones import resolve_backbone
from .cross_encoder import _TOKENIZER, Pair, adapt_for_training

_EPS = 1e-12


@registry.architectures("scholarly_nlp.BiEncoderScorer.v1")
def BiEncoderScorer(name: str = "all-MiniLM-L6-v2", max_length: int = 256, scale: float = 1.0,
                    mixed_precision: bool = False, lora_rank: int = 0, lora_alpha: float = 0.0) -> Model[list, Floats1d]:
    """Cosine x ``scale`` of mean-pooled embeddings of each pair's two texts (default MiniLM);
    ``lora_rank`` > 0 trains LoRA adapters of the encoder instead of all its weights."""
    if scale <= 0:
        raise ValueError(f"BiEncoderScorer: scale must be > 0, got {scale!r}")
    return Model(
        "scholarly_nlp.bi_encoder_scorer",
        _forward,
        init=_init,
        attrs={"name": name, "max_length": max_length, "scale": scale, "mixed_precision": mixed_precision,
               "load": load_bi_encoder, "lora_rank": int(lora_rank), "lora_alpha": float(lora_alpha)},
    )


def _init(model: Model, X: Any = None, Y: Any = None) -> None:
    if not model.shims:
        load_bi_encoder(model, resolve_backbone(model.attrs["name"]))
        adapt_for_training(model, task="FEATURE_EXTRACTION")


def _module_class():
    import torch

    class PairCosine(torch.nn.Module):
        """A Hugging Face encoder that maps two tokenised text sets and index maps to pair cosines."""

        def __init__(self, encoder, scale: float):
            super().__init__()
            self.encoder = encoder
            self.scale = scale

        def embed(self, input_ids, attention_mask, **extra):
            hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask, **extra).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp_min(1.0)
            return pooled / pooled.norm(dim=1, keepdim=True).clamp_min(_EPS)

        def forward(self, texts: dict, index_a, index_b):
            vectors = self.embed(**texts)
            return (vectors[index_a] * vectors[index_b]).sum(dim=1) * self.scale

    return PairCosine


def load_bi_encoder(model: Model, path: str) -> None:
    """Load a Hugging Face encoder (name, folder, or a compact folder of :mod:`.adapters`) and its tokenizer."""
    from transformers import AutoModel, AutoTokenizer

    loaded = load_encoder(Path(path), lambda source: load_pretrained(AutoModel.from_pretrained, source),
                          backbone=model.attrs["name"])
    tokenizer = AutoTokenizer.from_pretrained(loaded.source)
    module = _module_class()(loaded.module, model.attrs["scale"])
    model.shims[:] = [PyTorchShim(module, mixed_precision=model.attrs.get("mixed_precision", False))]
    model.attrs[_TOKENIZER] = tokenizer
    model.attrs["backbone_digest"] = loaded.digest  # weights it lacked (a pooler) are not used
    model.attrs["untracked_keys"] = loaded.missing


def _forward(model: Model, pairs: Sequence[Pair], is_train: bool) -> tuple[Floats1d, Callable]:
    import torch
    from thinc.api import torch2xp, xp2torch

    if not pairs:
        return model.ops.alloc1f(0), lambda d_scores: []
    shim = model.shims[0]
    position: dict[str, int] = {}
    for a, b in pairs:
        position.setdefault(a, len(position))
        position.setdefault(b, len(position))
    encoded = model.attrs[_TOKENIZER](list(position), truncation=True, max_length=model.attrs["max_length"],
                                      padding=True, return_tensors="pt")
    device = next(shim._model.parameters()).device
    index_a = torch.tensor([position[a] for a, _ in pairs], device=device)
    index_b = torch.tensor([position[b] for _, b in pairs], device=device)
    texts = {k: v.to(device) for k, v in encoded.items() if k in ("input_ids", "attention_mask", "token_type_ids")}
    inputs = ArgsKwargs(args=(texts, index_a, index_b), kwargs={})
    output, shim_backprop = shim(inputs, is_train)
    scores = torch2xp(output.detach().float())

    def backprop(d_scores: Floats1d) -> list:
        grad = xp2torch(d_scores).to(output.device, dtype=output.dtype)
        shim_backprop(ArgsKwargs(args=(output,), kwargs={"grad_tensors": (grad,)}))
        return []

    return model.ops.asarray1f(scores), backprop
