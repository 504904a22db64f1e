"""``scholarly_contribution_detector.IntroductionTagger.v1``: a fine-tuned tagger of whole introductions.

The detector's third stage-1 scorer. The n-gram model and the embedding scorer read one
sentence (and its neighbours' cues or frozen vectors) at a time; the SemEval-2021 Task 11 leaders
fine-tuned their encoders. This one fine-tunes the backbone (all-MiniLM-L6-v2 by default)
through LoRA adapters over the whole introduction, as sequential sentence classification
(:mod:`scholarly_nlp.ml.sentence_sequence`): windows of whole consecutive sentences, each
sentence the mean of its hidden states plus its position, a BiLSTM over all of the
introduction's sentences and one sigmoid output per sentence. Alone it is below the stacked
detector; as a third scorer under stage 2 it lifted the training papers' cross-validation and
the held-out papers over three fold seeds (``benchmarks/contribution_detector_finetune_stacked.py``,
which scored the held-out papers with the mean of the five fold models). What ships is one
tagger fine-tuned on all the training papers, under trees fitted on the fold models'
out-of-fold probabilities; ``evaluate-detector`` measured it on the held-out papers
(``projects/contribution_linker/README.md``).

* **Forward**: a list of introductions (each a list of sentence texts) -> per introduction a
  float32 array of probabilities; an empty introduction gives an empty array.
* **Fitting**: :func:`fit_introduction_tagger`, a fixed schedule (AdamW with warm-up and
  linear decay over ``epochs``, the head at ``head_lr_scale`` times ``learn_rate``, weighted
  binary cross-entropy with positives x ``positive_weight``), not ``spacy train``: the tagger
  is fitted with stage 2 (``ContributionDetector.fit_stage2``), once per fold for its
  out-of-fold probabilities and once on all the training papers. ``begin_update`` is refused.
* **Unfitted**: a model with no module (:func:`has_introduction_tagger` false) cannot predict.
* **Saved** (:func:`save_introduction_tagger`) as the LoRA adapter (2.7 MB for MiniLM at rank
  16: every attention and feed-forward projection is adapted) beside a reference to the
  backbone, the head (0.6 MB) in safetensors and ``tagger.json``, never a copy of the backbone.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, List, Optional, Sequence

import numpy
from spacy.util import registry
from thinc.api import Model, PyTorchShim

from scholarly_nlp.ml import (DEFAULT_BACKBONE, plain_encoder, resolve_backbone, sentence_sequence_module, sentence_windows,
                              sequence_batch)

__all__ = ["TAGGER_ARCH", "IntroductionTagger", "drop_introduction_tagger", "fit_introduction_tagger",
           "has_introduction_tagger", "load_introduction_tagger", "save_introduction_tagger", "take_fit",
           "unfitted_copy"]

TAGGER_ARCH = "scholarly_contribution_detector.IntroductionTagger.v1"
TAGGER_MODEL = "scholarly_contribution_detector.introduction_tagger"
_TOKENIZER = "tokenizer"  # the fitted model's tokenizer; not a setting
ENCODER_DIR = "encoder"
HEAD_FILE = "head.safetensors"
RECORD_FILE = "tagger.json"
SETTINGS = ("name", "lora_rank", "hidden_width", "dropout", "sentence_tokens", "max_length", "epochs",
            "batch_size", "learn_rate", "head_lr_scale", "weight_decay", "positive_weight")
FITTED_SETTINGS = ("lora_rank", "hidden_width", "sentence_tokens", "max_length")
"""Settings a saved tagger must share with the config that loads it: its parameters' shapes and
how its inputs were cut."""


@registry.architectures(TAGGER_ARCH)
def IntroductionTagger(name: Optional[str] = "all-MiniLM-L6-v2", lora_rank: int = 16, hidden_width: int = 128,
                       dropout: float = 0.1, sentence_tokens: int = 64, max_length: int = 512, epochs: int = 4,
                       batch_size: int = 4, learn_rate: float = 1e-3, head_lr_scale: float = 2.0,
                       weight_decay: float = 0.01, positive_weight: float = 4.5) -> Model:
    """Contribution probabilities of each introduction sentence from a LoRA-fine-tuned encoder of
    the whole introduction (fitted by :func:`fit_introduction_tagger` with these settings).

    ``name``: a Hugging Face name or folder (default and None: the packaged all-MiniLM-L6-v2);
    ``hidden_width`` (even): the projection and BiLSTM width; ``sentence_tokens``: the word
    pieces a sentence keeps; ``max_length``: a window's pieces (longer introductions take several)."""
    if lora_rank < 1:
        raise ValueError(f"IntroductionTagger: lora_rank must be >= 1, got {lora_rank!r}")
    if hidden_width < 2 or hidden_width % 2:
        raise ValueError(f"IntroductionTagger: hidden_width must be an even number >= 2, got {hidden_width!r}")
    if sentence_tokens < 1 or max_length < sentence_tokens + 2:
        raise ValueError("IntroductionTagger: sentence_tokens must be >= 1 and max_length >= sentence_tokens + 2, "
                         f"got {sentence_tokens!r}, {max_length!r}")
    if epochs < 1 or batch_size < 1:
        raise ValueError(f"IntroductionTagger: epochs and batch_size must be >= 1, got {epochs!r}, {batch_size!r}")
    if learn_rate <= 0 or head_lr_scale <= 0 or positive_weight <= 0 or weight_decay < 0:
        raise ValueError("IntroductionTagger: learn_rate, head_lr_scale and positive_weight must be > 0 and "
                         "weight_decay >= 0")
    settings = {"name": str(name or DEFAULT_BACKBONE), "lora_rank": int(lora_rank), "hidden_width": int(hidden_width),
                "dropout": float(dropout), "sentence_tokens": int(sentence_tokens), "max_length": int(max_length),
                "epochs": int(epochs), "batch_size": int(batch_size), "learn_rate": float(learn_rate),
                "head_lr_scale": float(head_lr_scale), "weight_decay": float(weight_decay),
                "positive_weight": float(positive_weight)}
    return Model(TAGGER_MODEL, _forward, attrs=settings)


def has_introduction_tagger(model: Model) -> bool:
    """Whether ``model`` holds a fitted (or loaded) tagger."""
    return bool(model.shims)


def drop_introduction_tagger(model: Model) -> None:
    """Forget the fitted tagger (the settings stay)."""
    model.shims[:] = []
    for key in _BUILT_ATTRS:
        model.attrs.pop(key, None)


def unfitted_copy(model: Model) -> Model:
    """A new, unfitted tagger with ``model``'s settings (one per fold of an out-of-fold fit)."""
    return IntroductionTagger(**{key: model.attrs[key] for key in SETTINGS})


def _module(model: Model) -> Any:
    if not has_introduction_tagger(model):
        raise ValueError("IntroductionTagger: the model is not fitted; fit it with fit_introduction_tagger "
                         "(the contribution linker project's fit-detector-stage2)")
    return model.shims[0]._model


def _inputs(tokenizer: Any, settings: dict, intros: Sequence[Sequence[str]], device: Any) -> dict:
    encoded = [sentence_windows(tokenizer, sentences, settings["sentence_tokens"], settings["max_length"])
               for sentences in intros]
    return sequence_batch(encoded, device)


def _forward(model: Model, intros: List[List[str]], is_train: bool) -> tuple[list, Callable]:
    import torch

    if is_train:
        raise ValueError("IntroductionTagger is fitted by fit_introduction_tagger (with the detector's stage 2), "
                         "not by backprop")
    module = _module(model)
    device = next(module.parameters()).device
    module.eval()
    out = [numpy.zeros((0,), dtype="float32") for _ in intros]
    filled = [i for i, sentences in enumerate(intros) if len(sentences)]
    step = model.attrs["batch_size"]
    with torch.no_grad():
        for start in range(0, len(filled), step):
            chunk = filled[start : start + step]
            logits = module(**_inputs(model.attrs[_TOKENIZER], model.attrs, [intros[i] for i in chunk], device))[..., 0]
            probs = torch.sigmoid(logits.float()).cpu().numpy()
            for row, i in enumerate(chunk):
                out[i] = probs[row, : len(intros[i])].astype("float32")
    return out, lambda d_out: []


def _build(model: Model, path: Optional[Path]) -> dict:
    """The torch module from ``path`` (a :func:`save_introduction_tagger` folder) or, with
    ``path`` None, the configured backbone LoRA-wrapped with a new head, and what the model
    keeps beside it (:func:`_install`); ``model`` itself is not changed."""
    from transformers import AutoTokenizer

    from scholarly_nlp.ml import add_lora, backbone_record_name, is_adapted, load_encoder

    source = Path(path) / ENCODER_DIR if path is not None else Path(resolve_backbone(model.attrs["name"]))
    loaded = load_encoder(source, plain_encoder, backbone=model.attrs["name"])
    encoder = loaded.module
    positions = getattr(encoder.config, "max_position_embeddings", None)
    if positions is not None and model.attrs["max_length"] > positions:
        raise ValueError(f"IntroductionTagger: max_length {model.attrs['max_length']} is more than the "
                         f"{positions} positions of the encoder {loaded.origin!r}")
    if not is_adapted(encoder):
        encoder = add_lora(encoder, model.attrs["lora_rank"], dropout=model.attrs["dropout"])
    module = sentence_sequence_module(encoder, 1, model.attrs["hidden_width"], model.attrs["dropout"])
    if path is not None:
        from safetensors.torch import load_file

        module.head.load_state_dict(load_file(str(Path(path) / HEAD_FILE)))
    # what a save refers to: the packaged name or an absolute folder, never a training output
    return {"module": module, _TOKENIZER: AutoTokenizer.from_pretrained(loaded.source),
            "backbone": backbone_record_name(resolve_backbone(loaded.origin)), "backbone_digest": loaded.digest,
            "untracked_keys": list(loaded.missing)}


# what a fitted tagger keeps in its attrs beside its module (set by _build, copied by take_fit)
_BUILT_ATTRS = (_TOKENIZER, "backbone", "backbone_digest", "untracked_keys")


def _install(model: Model, built: dict) -> None:
    """Make ``model`` hold what :func:`_build` built."""
    model.shims[:] = [PyTorchShim(built["module"])]
    for key in _BUILT_ATTRS:
        model.attrs[key] = built[key]


def take_fit(target: Model, source: Model) -> None:
    """Make ``target`` hold ``source``'s fitted tagger (fitted apart, so that a failed fit
    leaves ``target`` as it was)."""
    if source.attrs["hidden_width"] != target.attrs["hidden_width"]:
        raise ValueError("take_fit: the taggers' settings differ")
    _install(target, {"module": _module(source), **{key: source.attrs[key] for key in _BUILT_ATTRS}})


def move_introduction_tagger(model: Model, device: Optional[str]) -> None:
    """Move a fitted tagger to the torch ``device`` (None: leave it where it is)."""
    if device is not None and has_introduction_tagger(model):
        _module(model).to(device)


def fit_introduction_tagger(model: Model, intros: Sequence[Sequence[str]], labels: Sequence[Sequence[int]], *,
                            seed: int = 0, device: str = "cpu",
                            after_epoch: Optional[Callable[[int, float], None]] = None) -> list[float]:
    """Fine-tune a new tagger from the backbone on introductions (lists of sentence texts) and
    their per-sentence 0/1 labels, at the model's fixed schedule, on the torch ``device``;
    the model then holds it (any earlier fit is replaced; a fit that fails leaves the model as it
    was until its first ``after_epoch``). ``after_epoch(epoch, mean_loss)`` is called after each
    epoch (the model predicts with the weights so far). Returns each epoch's mean loss."""
    import torch

    intros = [list(s) for s in intros]
    labels = [numpy.asarray(y, dtype="float32") for y in labels]
    if len(intros) != len(labels) or any(len(s) != len(y) for s, y in zip(intros, labels)):
        raise ValueError("fit_introduction_tagger: every introduction needs one label per sentence")
    kept = [i for i, s in enumerate(intros) if s]
    if not kept:
        raise ValueError("fit_introduction_tagger: no introduction has a sentence")
    attrs = model.attrs
    torch.manual_seed(seed)
    built = _build(model, None)
    module = built["module"].to(device)
    head = [p for n, p in module.named_parameters() if n.startswith("head.")]
    adapters = [p for n, p in module.named_parameters() if n.startswith("encoder.") and p.requires_grad]
    optimizer = torch.optim.AdamW([{"params": adapters, "lr": attrs["learn_rate"]},
                                   {"params": head, "lr": attrs["learn_rate"] * attrs["head_lr_scale"]}],
                                  weight_decay=attrs["weight_decay"])
    step = attrs["batch_size"]
    total = -(-len(kept) // step) * attrs["epochs"]
    warmup = max(1, total // 10)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda done: min((done + 1) / warmup, max(0.0, (total - done) / max(total - warmup, 1))))
    rng = numpy.random.default_rng(seed)
    epoch_losses = []
    for _ in range(attrs["epochs"]):
        module.train()
        order = [kept[i] for i in rng.permutation(len(kept))]
        losses = []
        for start in range(0, len(order), step):
            chosen = order[start : start + step]
            logits = module(**_inputs(built[_TOKENIZER], attrs, [intros[i] for i in chosen], device))[..., 0]
            target = torch.zeros_like(logits)
            mask = torch.zeros_like(logits)
            for row, i in enumerate(chosen):
                target[row, : len(labels[i])] = torch.from_numpy(labels[i]).to(logits.device)
                mask[row, : len(labels[i])] = 1.0
            weight = mask * torch.where(target > 0.5, attrs["positive_weight"], 1.0)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, target, weight=weight,
                                                                        reduction="sum") / mask.sum()
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(module.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            losses.append(loss.item())
        epoch_losses.append(float(numpy.mean(losses)))
        if after_epoch is not None:
            module.eval()
            _install(model, built)
            after_epoch(len(epoch_losses), epoch_losses[-1])
    module.eval()
    _install(model, built)
    return epoch_losses


def save_introduction_tagger(model: Model, path: Path) -> None:
    """Write the fitted tagger to the folder ``path``: ``encoder/`` (a backbone reference and
    the LoRA adapter), ``head.safetensors`` and ``tagger.json`` (its settings and encoder layout)."""
    from safetensors.torch import save_file

    from scholarly_nlp.ml import save_encoder

    module = _module(model)
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    layout = save_encoder(module.encoder, path / ENCODER_DIR, model.attrs["backbone"], model.attrs["backbone_digest"],
                          model.attrs["untracked_keys"])
    save_file({k: v.detach().cpu().contiguous() for k, v in module.head.state_dict().items()}, str(path / HEAD_FILE))
    record = {"settings": {key: model.attrs[key] for key in SETTINGS}, "encoder_layout": layout}
    (path / RECORD_FILE).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


def load_introduction_tagger(model: Model, path: Path) -> None:
    """Load what :func:`save_introduction_tagger` wrote into ``model`` (on the CPU); a folder
    whose tagger differs from the model's config in :data:`FITTED_SETTINGS` is refused."""
    path = Path(path)
    record_file = path / RECORD_FILE
    if not record_file.exists():
        raise ValueError(f"{path}: not a saved introduction tagger (no {RECORD_FILE})")
    saved = json.loads(record_file.read_text(encoding="utf-8")).get("settings", {})
    for key in FITTED_SETTINGS:
        if saved.get(key) != model.attrs[key]:
            raise ValueError(f"{path}: the saved introduction tagger has {key} {saved.get(key)!r}, "
                             f"the config {model.attrs[key]!r}")
    _install(model, _build(model, path))
