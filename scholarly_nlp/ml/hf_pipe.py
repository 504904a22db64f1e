"""Serialisation shared by pipes whose ``model`` is a Hugging Face pair scorer.

A pipe that mixes in :class:`HuggingFaceModelPipe` (before ``TrainablePipe``) saves its
fine-tuned scorer (``scholarly_nlp.CrossEncoder.v1`` or ``scholarly_nlp.BiEncoderScorer.v1``)
under ``model/`` in one of the layouts of :mod:`.adapters` (a reference to the backbone, a LoRA
adapter, a low-rank weight difference, or a whole Hugging Face folder) and loads it back; bytes
are that folder as a tar archive.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

from .cross_encoder import is_loaded, load_cross_encoder, save_cross_encoder
from .folder_bytes import folder_from_bytes, folder_to_bytes

MODEL_DIR = "model"
TRAINED_FILE = "trained.json"
"""Whether training updated the scorer and whether its head is still a random one (the pipe's
settings live in the pipeline config)."""


class HuggingFaceModelPipe:
    """``to_disk`` / ``from_disk`` / ``to_bytes`` / ``from_bytes`` for a pipe with a Hugging Face scorer."""

    def to_disk(self, path: Any, *, exclude: Iterable[str] = tuple()) -> None:
        """Write the scorer (once loaded) as a Hugging Face folder ``path/model``."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        if is_loaded(self.model):
            save_cross_encoder(self.model, path / MODEL_DIR)
        state = {"trained": bool(self.cfg.get("trained")), "random_head": bool(self.model.attrs.get("random_head"))}
        (path / TRAINED_FILE).write_text(json.dumps(state) + "\n", encoding="utf-8")

    def from_disk(self, path: Any, *, exclude: Iterable[str] = tuple()):
        """Load what :meth:`to_disk` wrote; a folder without a model leaves the pipe as it is."""
        path = Path(path)
        if (path / MODEL_DIR).exists():
            load_cross_encoder(self.model, str(path / MODEL_DIR))
        if (path / TRAINED_FILE).exists():
            state = json.loads((path / TRAINED_FILE).read_text(encoding="utf-8"))
            self.cfg["trained"] = bool(state.get("trained"))
            # a head saved untrained is still the random one it was given
            self.model.attrs["random_head"] = bool(state.get("random_head")) or bool(self.model.attrs.get("random_head"))
        return self

    def to_bytes(self, *, exclude: Iterable[str] = tuple()) -> bytes:
        """The :meth:`to_disk` folder as one tar archive in bytes."""
        return folder_to_bytes(self.to_disk)

    def from_bytes(self, data: bytes, *, exclude: Iterable[str] = tuple()):
        """Load what :meth:`to_bytes` produced."""
        return folder_from_bytes(data, self.from_disk)
