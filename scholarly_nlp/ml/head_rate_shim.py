"""A ``PyTorchShim`` that trains newly initialised weights at a higher learning rate.

A cross-encoder built from a plain encoder checkpoint (MiniLM, SciBERT) starts with a
random one-output head on top of pretrained layers. The rate that fine-tunes the pretrained
layers without wrecking them (about 2e-5) moves the random head so slowly that a listwise
loss over a few hundred steps stays at its chance value: the scores of one citance's
candidates differ by less than 0.01 and the ranking is the BM25 order plus noise. Giving the
new weights their own, larger rate (``lr_scale`` times the optimiser's, the usual
"discriminative learning rates" of fine-tuning) lets the head learn while the encoder moves
gently. thinc's optimiser takes a per-call ``lr_scale``; this shim passes it.
"""

from __future__ import annotations

from typing import Sequence, cast

from thinc.api import Optimizer, PyTorchShim, torch2xp, xp2torch
from thinc.types import FloatsXd


def is_new_weight(parameter: str, new_keys: Sequence[str]) -> bool:
    """True when ``parameter`` (a ``named_parameters`` name) is one of the checkpoint's missing keys.

    Wrappers rename parameters (peft's LoRA model puts a trained head under
    ``base_model.model.classifier.modules_to_save.default.weight`` for ``classifier.weight``),
    so a name matches a key when it has the key's module path and ends with the key's leaf.
    """
    for key in new_keys:
        module, _, leaf = key.rpartition(".")
        if parameter == key:
            return True
        path = parameter.split(".")
        if module and path[-1] == leaf and _contains(path[:-1], module.split(".")):
            return True
    return False


def _contains(path: list[str], module: list[str]) -> bool:
    n = len(module)
    return any(path[i : i + n] == module for i in range(len(path) - n + 1))


class NewWeightRateShim(PyTorchShim):
    """``PyTorchShim`` whose update scales the learning rate of the weights named in ``new_keys``.

    ``new_keys`` are the checkpoint's missing keys (a fresh head); ``lr_scale`` multiplies the
    optimiser's learning rate for them. Every other parameter updates exactly as in
    ``PyTorchShim``.
    """

    def __init__(self, model, *, new_keys: Sequence[str] = (), lr_scale: float = 1.0, **kwargs):
        if lr_scale <= 0:
            raise ValueError(f"lr_scale must be > 0, got {lr_scale!r}")
        super().__init__(model, **kwargs)
        self.new_keys = tuple(new_keys)
        self.lr_scale = float(lr_scale)
        self._scales: dict[str, float] = {}
        #: The weight difference the module was loaded from (``adapters.StoredDelta``), if any:
        #: a save writes it again unchanged while the weights stay as loaded.
        self.stored_delta = None

    def parameter_lr_scale(self, name: str) -> float:
        """The learning-rate factor of the parameter ``name`` (``lr_scale`` for new weights, else 1)."""
        if name not in self._scales:
            self._scales[name] = self.lr_scale if is_new_weight(name, self.new_keys) else 1.0
        return self._scales[name]

    def finish_update(self, optimizer: Optimizer) -> None:
        """One optimiser step per parameter with a gradient, new weights at the scaled rate."""
        for name, torch_data in self._model.named_parameters():
            if torch_data.grad is None:
                continue
            if not self._grad_scaler.found_inf:  # an overflowed mixed-precision step is skipped
                param, _ = optimizer((self.id, name), cast(FloatsXd, torch2xp(torch_data.data)),
                                     cast(FloatsXd, torch2xp(torch_data.grad)), lr_scale=self.parameter_lr_scale(name))
                torch_data.data = xp2torch(param, requires_grad=True, device=torch_data.device)
            torch_data.grad.zero_()
        self._grad_scaler.update()
