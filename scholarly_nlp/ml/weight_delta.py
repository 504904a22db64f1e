"""A fully fine-tuned encoder stored as its backbone plus a low-rank weight difference.

Full fine-tuning moves a sentence-embedding encoder's matrices by a small update whose
energy sits mostly in a few directions (the central-figure cross-encoder: a rank-32 truncated
SVD of each matrix's change keeps its top figure on all 30 papers of its project's dev
split, and rank 64 in int8, the same 4.9 MB, halves its score error), so the change ships in
a few megabytes where the whole model is 88 MB.
:func:`write_weight_delta` keeps, for every weight the fine-tuning changed:

* a matrix whose change is smaller stored whole than as factors: the change, whole;
* any other matrix: the two factors of the change's truncated SVD at ``rank``
  (``U * S`` and ``Vh``), so ``weight = backbone + a @ b``: in float16 (``bits=16``) or, with
  ``bits=8``, as int8 with one float32 scale per rank component (``a``'s columns, ``b``'s
  rows; symmetric, the largest magnitude maps to 127). At equal bytes int8 keeps twice the
  rank, and the SVD's truncation error at rank r is far larger than int8's rounding error;
* a vector (bias, layer norm) or a weight the backbone lacks (a new head): the weight itself.

:func:`apply_weight_delta` rebuilds the weights on a freshly loaded backbone. Weights the
fine-tuning left alone are not written. The result is an approximation whose error is set by
``rank`` (and, far less, ``bits``); a rank at which the factors would outweigh the matrix
stores its change whole (float32), which is exact.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

DELTA_FILE = "weight_delta.safetensors"
_WHOLE, _FACTOR_A, _FACTOR_B, _CHANGE = "weight:", "a:", "b:", "change:"
_SCALE = "scale:"  # prefixed to a factor's key: the per-component scales of an int8 factor
FACTOR_BITS = (8, 16)
"""The storage widths a factor can have: int8 with scales, or float16."""


def write_weight_delta(module: Any, backbone: Any, path: Path, rank: int,
                       new_keys: Iterable[str] = (), bits: int = 16) -> dict[str, int]:
    """Write ``module``'s difference to ``backbone`` (same architecture) into ``path``.

    ``new_keys`` are weights the backbone checkpoint lacked (initialised at random when it was
    loaded, such as a new classification head): they are stored whole, never as a change.
    ``bits`` (8 or 16) is the storage width of the SVD factors.

    Returns counts: ``{"factored", "whole_changes", "weights", "unchanged", "stored_values"}``.
    """
    import torch
    from safetensors.torch import save_file

    if rank <= 0:
        raise ValueError(f"a weight delta needs a rank > 0, got {rank!r}")
    check_factor_bits(bits)
    random_init = set(new_keys)
    base = {name: tensor for name, tensor in backbone.state_dict().items() if name not in random_init}
    tensors: dict[str, Any] = {}
    counts = {"factored": 0, "whole_changes": 0, "weights": 0, "unchanged": 0, "stored_values": 0}
    for name, weight in module.state_dict().items():
        weight = weight.detach().cpu()
        start = base.get(name)
        if start is not None and start.shape == weight.shape and torch.equal(start.cpu(), weight):
            counts["unchanged"] += 1
            continue
        if start is not None and start.shape != weight.shape:
            raise ValueError(f"{name!r} has shape {tuple(weight.shape)}, the backbone's {tuple(start.shape)}: "
                             "a resized weight cannot be stored as a difference")
        if start is None or weight.dim() != 2 or not weight.is_floating_point():
            tensors[_WHOLE + name] = weight.clone().contiguous()  # tied weights would share memory
            counts["weights"] += 1
            continue
        change = weight.double() - start.cpu().double()
        rows, cols = change.shape
        # counted in values, not bytes, at either width: the same matrices are factored at a rank
        if rank * (rows + cols) >= rows * cols:
            tensors[_CHANGE + name] = change.float().contiguous()
            counts["whole_changes"] += 1
            continue
        u, s, vh = torch.linalg.svd(change, full_matrices=False)
        a, b = u[:, :rank] * s[:rank], vh[:rank]
        if bits == 8:
            tensors[_FACTOR_A + name], tensors[_SCALE + _FACTOR_A + name] = quantized_int8(a, dim=0)
            tensors[_FACTOR_B + name], tensors[_SCALE + _FACTOR_B + name] = quantized_int8(b, dim=1)
        else:
            tensors[_FACTOR_A + name], tensors[_FACTOR_B + name] = a.half().contiguous(), b.half().contiguous()
        counts["factored"] += 1
    counts["stored_values"] = sum(t.numel() for t in tensors.values())
    Path(path).mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(Path(path) / DELTA_FILE))
    return counts


def check_factor_bits(bits: int) -> int:
    """``bits`` if a factor can be stored at that width (:data:`FACTOR_BITS`), else a ValueError."""
    if bits not in FACTOR_BITS:
        raise ValueError(f"delta_bits must be 8 or 16 (the width weight-delta factors are stored in), got {bits!r}")
    return bits


def quantized_int8(values: Any, dim: int) -> tuple[Any, Any]:
    """``values`` as int8 and the float32 scales of its slices along ``dim`` (``values ~ q * scales``,
    the scales broadcast along ``dim``): each slice's largest magnitude maps to 127."""
    import torch

    scales = values.abs().amax(dim=dim, keepdim=True) / 127.0
    scales = torch.where(scales > 0, scales, torch.ones_like(scales))  # an all-zero slice stays zero
    quantized = torch.round(values / scales).clamp_(-127, 127).to(torch.int8)
    return quantized.contiguous(), scales.float().contiguous()


def apply_weight_delta(module: Any, path: Path) -> None:
    """Add the difference :func:`write_weight_delta` wrote in ``path`` to ``module`` (the backbone)."""
    import torch
    from safetensors.torch import load_file

    stored = load_file(str(Path(path) / DELTA_FILE))
    state = module.state_dict()

    def start(name: str) -> Any:
        if name not in state:
            raise ValueError(f"{path}: the weight delta names {name!r}, which the backbone lacks")
        return state[name].detach().cpu().double()

    updated: dict[str, Any] = {}
    for key, tensor in stored.items():
        if key.startswith(_WHOLE):
            updated[key[len(_WHOLE):]] = tensor
        elif key.startswith(_CHANGE):
            name = key[len(_CHANGE):]
            updated[name] = start(name) + tensor.double()
        elif key.startswith(_FACTOR_A):
            name = key[len(_FACTOR_A):]
            if _FACTOR_B + name not in stored:
                raise ValueError(f"{path}: the weight delta of {name!r} lacks its second factor")
            updated[name] = start(name) + factor(stored, _FACTOR_A + name, path) @ factor(stored, _FACTOR_B + name, path)
    for name, tensor in updated.items():
        if name not in state or state[name].shape != tensor.shape:
            raise ValueError(f"{path}: the weight delta's {name!r} does not fit the backbone "
                             f"({tuple(tensor.shape)} vs {tuple(state[name].shape) if name in state else 'absent'})")
    with torch.no_grad():
        for name, tensor in updated.items():
            state[name].copy_(tensor.to(device=state[name].device, dtype=state[name].dtype))


def factor(stored: dict, key: str, path: Path) -> Any:
    """The factor stored under ``key`` in float64: float16 as it is, int8 times its scales."""
    tensor = stored[key]
    if not tensor.is_floating_point():
        scales = stored.get(_SCALE + key)
        if scales is None:
            raise ValueError(f"{path}: the weight delta's int8 factor {key!r} has no scales")
        return tensor.double() * scales.double()
    return tensor.double()
