"""``scholarly_facet_classifier.AbstractRoleEncoder.v1``: a role tagger with its own fine-tuned encoder.

Same contract as ``SentenceRoleTagger.v1`` (:mod:`.role_model`): a batch of paper Docs in, per
Doc an ``(n_abstract_sentences, 5)`` matrix of role probabilities out, rows aligned with
:func:`scholarly_nlp.abstract_sentences`; the backprop takes the gradient with respect to the
logits (``probabilities - one_hot(gold)``), as the pipe's loss gives it.

Why a second architecture: the shipped tagger reads the frozen shared transformer, so the
aspect embedder's space is kept, but a frozen MiniLM leaves it at .62 CSAbstruct dev accuracy.
This one fine-tunes its own copy of the backbone through LoRA adapters (the shared
``transformer`` pipe is neither read nor moved), as sequential sentence classification
(Cohan et al. 2019, who built CSAbstruct) does:

1. the abstract is one sequence, ``[CLS] s1 [SEP] s2 [SEP] ...`` (each sentence cut to
   ``sentence_tokens`` word pieces, fewer when the abstract would exceed ``max_length``, so
   every sentence keeps some), so a sentence's tokens attend to its neighbours;
2. sentence vector = the mean of its last hidden states + position features (relative
   position, first, last; :func:`scholarly_nlp.ml.position_features`);
3. a layer-normalised projection to ``hidden_width``, a bidirectional LSTM over the
   abstract's sentences (packed: a Doc's output does not depend on its batch) and a linear
   layer over the roles.

The LoRA adapters and the head save as a few megabytes beside a reference to the backbone
(:func:`save_role_encoder`; the backbone comes from the installed package or any Hugging Face
name or folder), never a copy of the backbone. An encoder fine-tuned in full (``lora_rank`` 0)
saves, with ``delta_rank`` > 0, as the backbone plus a low-rank difference of each weight matrix
(:mod:`scholarly_nlp.ml.weight_delta`), else whole. The head, new to the checkpoint, learns at
``head_lr_scale`` times the optimiser's rate.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, List, Optional, Sequence, Tuple

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import ArgsKwargs, Model
from thinc.types import Floats2d

from scholarly_nlp import ROLES, abstract_sentences
from scholarly_nlp.ml import check_factor_bits, plain_encoder, resolve_backbone, sentence_sequence_module

__all__ = ["ROLE_ENCODER_ARCH", "AbstractRoleEncoder", "encode_abstract", "load_role_encoder", "owns_encoder",
           "save_role_encoder"]

ROLE_ENCODER_ARCH = "scholarly_facet_classifier.AbstractRoleEncoder.v1"
_NAME = "scholarly_facet_classifier.abstract_role_encoder"
_TOKENIZER = "tokenizer"  # not serialisable: thinc skips attrs it cannot pack
ENCODER_DIR = "encoder"
HEAD_FILE = "head.safetensors"
HEAD_RECORD = "head.json"


@registry.architectures(ROLE_ENCODER_ARCH)
def AbstractRoleEncoder(name: str = "all-MiniLM-L6-v2", lora_rank: int = 16, lora_alpha: float = 0.0,
                        hidden_width: int = 128, dropout: float = 0.1, sentence_tokens: int = 64,
                        max_length: int = 512, head_lr_scale: float = 2.0,
                        mixed_precision: bool = False, delta_rank: int = 0,
                        delta_bits: int = 0) -> Model[List[Doc], List[Floats2d]]:
    """Role probabilities of each abstract sentence from a LoRA-fine-tuned encoder of the whole abstract.

    ``name``: a Hugging Face name or folder (default: the packaged all-MiniLM-L6-v2);
    ``lora_rank`` 0 trains every encoder weight, saved whole unless ``delta_rank`` > 0 saves it
    as the backbone plus a rank-``delta_rank`` weight difference (a few megabytes; with LoRA the
    adapter is saved and ``delta_rank`` is not used; a tagger loaded from a difference saves as
    one again at its rank and width); ``delta_bits`` 8 stores the difference's factors as int8,
    16 as float16 (0: as loaded, else 16);
    ``hidden_width`` (even): the projection and BiLSTM width; ``sentence_tokens`` and
    ``max_length``: the word pieces a sentence and an abstract may take.
    """
    if hidden_width < 2 or hidden_width % 2:
        raise ValueError(f"hidden_width must be an even number >= 2, got {hidden_width!r}")
    if sentence_tokens < 1 or max_length < 4:
        raise ValueError(f"sentence_tokens must be >= 1 and max_length >= 4, got {sentence_tokens!r}, {max_length!r}")
    if head_lr_scale <= 0:
        raise ValueError(f"head_lr_scale must be > 0, got {head_lr_scale!r}")
    if delta_rank < 0:
        raise ValueError(f"delta_rank must be >= 0, got {delta_rank!r}")
    if delta_bits:
        check_factor_bits(delta_bits)
    return Model(_NAME, _forward, init=_init, dims={"nO": len(ROLES)},
                 attrs={"name": name, "lora_rank": int(lora_rank), "lora_alpha": float(lora_alpha),
                        "hidden_width": int(hidden_width), "dropout": float(dropout),
                        "sentence_tokens": int(sentence_tokens), "max_length": int(max_length),
                        "head_lr_scale": float(head_lr_scale), "mixed_precision": bool(mixed_precision),
                        "delta_rank": int(delta_rank), "delta_bits": int(delta_bits)})


def owns_encoder(model: Model) -> bool:
    """True for a role model with its own encoder (this architecture), False for a listener one."""
    return model.name == _NAME


def _init(model: Model, X: Any = None, Y: Any = None) -> None:
    if not model.shims:
        load_role_encoder(model, None)


def encode_abstract(tokenizer, sentences: Sequence[str], sentence_tokens: int,
                    max_length: int) -> Tuple[List[int], List[Tuple[int, int]]]:
    """Word-piece ids of ``[CLS] s1 [SEP] s2 [SEP] ...`` and each sentence's (start, end) piece span.

    Sentences are cut to ``sentence_tokens`` pieces, fewer when the abstract would exceed
    ``max_length``; an abstract with more sentences than ``max_length`` allows keeps the first
    ones whole and gives the rest an empty span (their vector is then the position alone).
    """
    pieces = [tokenizer(s, add_special_tokens=False)["input_ids"] or [tokenizer.unk_token_id] for s in sentences]
    budget = sentence_tokens
    while budget > 1 and 1 + sum(min(len(p), budget) + 1 for p in pieces) > max_length:
        budget -= 1
    ids, spans = [tokenizer.cls_token_id], []
    for piece in pieces:
        piece = piece[:budget] if len(ids) + min(len(piece), budget) + 1 <= max_length else []
        spans.append((len(ids), len(ids) + len(piece)))
        ids.extend(piece)
        if piece:
            ids.append(tokenizer.sep_token_id)
    return ids, spans


def _batch_inputs(model: Model, sentence_lists: List[List[str]], device) -> dict:
    """The torch inputs of one batch of abstracts (each a non-empty list of sentences): one
    window per abstract (:func:`encode_abstract`)."""
    from scholarly_nlp.ml import sequence_batch

    encoded = [encode_abstract(model.attrs[_TOKENIZER], sentences, model.attrs["sentence_tokens"],
                               model.attrs["max_length"]) for sentences in sentence_lists]
    return sequence_batch([([ids], [(0, start, end) for start, end in spans]) for ids, spans in encoded], device)


def _forward(model: Model, docs: List[Doc], is_train: bool) -> Tuple[List[Floats2d], Callable]:
    import torch
    from thinc.api import torch2xp, xp2torch

    ops = model.ops
    n_labels = model.get_dim("nO")
    sentence_lists = [[s.text for s in abstract_sentences(doc)] for doc in docs]
    filled = [i for i, sentences in enumerate(sentence_lists) if sentences]
    outputs: List[Floats2d] = [ops.alloc2f(0, n_labels) for _ in docs]
    if not filled:
        return outputs, lambda d_outputs: []
    shim = model.shims[0]
    device = next(shim._model.parameters()).device
    inputs = _batch_inputs(model, [sentence_lists[i] for i in filled], device)
    logits, shim_backprop = shim(ArgsKwargs(args=(), kwargs=inputs), is_train)
    probs = torch.softmax(logits.detach().float(), dim=-1)
    for row, i in enumerate(filled):
        outputs[i] = ops.asarray2f(torch2xp(probs[row, : len(sentence_lists[i])].contiguous()))

    def backprop(d_outputs: List[Floats2d]) -> List[Doc]:
        grad = torch.zeros_like(logits)
        for row, i in enumerate(filled):
            grad[row, : len(sentence_lists[i])] = xp2torch(ops.asarray2f(d_outputs[i])).to(grad.device, grad.dtype)
        shim_backprop(ArgsKwargs(args=(logits,), kwargs={"grad_tensors": (grad,)}))
        return []

    return outputs, backprop


def load_role_encoder(model: Model, path: Optional[Path]) -> None:
    """Build the torch module: the encoder from ``path/encoder`` (or, with ``path`` None, the
    configured backbone, LoRA-wrapped for training) and the head from ``path/head.safetensors``."""
    from transformers import AutoTokenizer

    from scholarly_nlp.ml import NewWeightRateShim, add_lora, backbone_record_name, is_adapted, keep_loaded_delta, load_encoder

    source = Path(path) / ENCODER_DIR if path is not None else Path(resolve_backbone(model.attrs["name"]))
    # backbone: a whole folder that is not the configured backbone (fine-tuned weights) gets no
    # digest, so it is never saved again as a bare reference to the backbone
    loaded = load_encoder(source, plain_encoder, backbone=model.attrs["name"])
    tokenizer = AutoTokenizer.from_pretrained(loaded.source)
    encoder = loaded.module
    if model.attrs["lora_rank"] > 0 and not is_adapted(encoder):
        encoder = add_lora(encoder, model.attrs["lora_rank"], model.attrs["lora_alpha"] or None,
                           dropout=model.attrs["dropout"])
    module = sentence_sequence_module(encoder, model.get_dim("nO"), model.attrs["hidden_width"], model.attrs["dropout"])
    head_file = Path(path) / HEAD_FILE if path is not None else None
    trained_head = head_file is not None and head_file.exists()
    if trained_head:
        from safetensors.torch import load_file

        module.head.load_state_dict(load_file(str(head_file)))
    new_keys = [] if trained_head else [f"head.{key}" for key, _ in module.head.named_parameters()]
    model.shims[:] = [NewWeightRateShim(module, new_keys=new_keys, lr_scale=model.attrs["head_lr_scale"],
                                        mixed_precision=model.attrs["mixed_precision"])]
    model.attrs[_TOKENIZER] = tokenizer
    # What a save refers to: the model the weights were trained from (a whole fine-tuned folder's
    # own backbone, not the folder), as the packaged name or an absolute folder.
    model.attrs["name"] = backbone_record_name(resolve_backbone(loaded.origin))
    model.attrs["backbone_digest"] = loaded.digest
    model.attrs["untracked_keys"] = loaded.missing
    model.attrs["random_head"] = not trained_head
    keep_loaded_delta(model, loaded)


def save_role_encoder(model: Model, path: Path) -> str:
    """Write the encoder (a backbone reference plus LoRA adapter or, fine-tuned in full with
    ``delta_rank``, a low-rank weight difference; see :mod:`scholarly_nlp.ml.adapters`) and the
    head; returns the encoder's layout."""
    from safetensors.torch import save_file

    from scholarly_nlp.ml import delta_bits_of, save_encoder

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    module = model.shims[0]._model
    layout = save_encoder(module.encoder, path / ENCODER_DIR, model.attrs["name"], model.attrs.get("backbone_digest"),
                          model.attrs.get("untracked_keys", ()), delta_rank=model.attrs.get("delta_rank", 0),
                          load_backbone=plain_encoder, delta_bits=delta_bits_of(model),
                          stored_delta=getattr(model.shims[0], "stored_delta", None))
    if layout == "full":
        model.attrs[_TOKENIZER].save_pretrained(str(path / ENCODER_DIR))
    save_file({k: v.detach().cpu().contiguous() for k, v in module.head.state_dict().items()}, str(path / HEAD_FILE))
    record = {"labels": list(ROLES), "hidden_width": model.attrs["hidden_width"], "encoder_layout": layout}
    (path / HEAD_RECORD).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return layout
