"""A fully fine-tuned encoder stored as its backbone plus a low-rank weight difference.

Full fine-tuning moves a sentence-embedding encoder's matrices by an update of very low rank
(the central-figure cross-encoder: a rank-8 truncated SVD of each matrix's change already
reproduces its rankings), so the change ships in a few megabytes where the whole model is
88 MB. :func:`write_weight_delta` keeps, for every weight the fine-tuning changed:

* a matrix whose change is smaller stored whole than as factors: the change, whole;
* any other matrix: the two factors of the change's truncated SVD at ``rank``
  (``U * S`` and ``Vh``, in float16), so ``weight = backbone + a @ b``;
* a vector (bias, layer norm) or a weight the backbone lacks (a new head): the weight itself.

:func:`apply_weight_delta` rebuilds the weights on a freshly loaded backbone. Weights the
fine-tuning left alone are not written. The result is an approximation whose error is set by
``rank``; ``rank`` at least a matrix's smaller side is exact up to float16 rounding.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

DELTA_FILE = "weight_delta.safetensors"
_WHOLE, _FACTOR_A, _FACTOR_B, _CHANGE = "weight:", "a:", "b:", "change:"


def write_weight_delta(module: Any, backbone: Any, path: Path, rank: int,
                       new_keys: Iterable[str] = ()) -> dict[str, int]:
    """Write ``module``'s difference to ``backbone`` (same architecture) into ``path``.

    ``new_keys`` are weights the backbone checkpoint lacked (initialised at random when it was
    loaded, such as a new classification head): they are stored whole, never as a change.

    Returns counts: ``{"factored", "whole_changes", "weights", "unchanged", "stored_values"}``.
    """
    import torch
    from safetensors.torch import save_file

    if rank <= 0:
        raise ValueError(f"a weight delta needs a rank > 0, got {rank!r}")
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
        if start is None or start.shape != weight.shape or weight.dim() != 2 or not weight.is_floating_point():
            tensors[_WHOLE + name] = weight.contiguous()
            counts["weights"] += 1
            continue
        change = weight.double() - start.cpu().double()
        rows, cols = change.shape
        if rank * (rows + cols) >= rows * cols:
            tensors[_CHANGE + name] = change.float().contiguous()
            counts["whole_changes"] += 1
            continue
        u, s, vh = torch.linalg.svd(change, full_matrices=False)
        tensors[_FACTOR_A + name] = (u[:, :rank] * s[:rank]).half().contiguous()
        tensors[_FACTOR_B + name] = vh[:rank].half().contiguous()
        counts["factored"] += 1
    counts["stored_values"] = sum(t.numel() for t in tensors.values())
    Path(path).mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(Path(path) / DELTA_FILE))
    return counts


def apply_weight_delta(module: Any, path: Path) -> None:
    """Add the difference :func:`write_weight_delta` wrote in ``path`` to ``module`` (the backbone)."""
    import torch
    from safetensors.torch import load_file

    stored = load_file(str(Path(path) / DELTA_FILE))
    state = module.state_dict()
    updated: dict[str, Any] = {}
    for key, tensor in stored.items():
        if key.startswith(_WHOLE):
            updated[key[len(_WHOLE):]] = tensor
        elif key.startswith(_CHANGE):
            name = key[len(_CHANGE):]
            updated[name] = (state[name].double() + tensor.double()).to(state[name].dtype)
        elif key.startswith(_FACTOR_A):
            name = key[len(_FACTOR_A):]
            change = tensor.double() @ stored[_FACTOR_B + name].double()
            updated[name] = (state[name].double() + change).to(state[name].dtype)
    unknown = sorted(set(updated) - set(state))
    if unknown:
        raise ValueError(f"{path}: the weight delta names weights the backbone lacks: {unknown[:5]}")
    with torch.no_grad():
        for name, tensor in updated.items():
            state[name].copy_(tensor.to(state[name].device))
