"""Never silently untrained: pipes whose answers mean nothing before training say so once.

A component built from its factory and initialised, but never updated, gives random or
constant answers (a cross-encoder's new head, a classifier's fresh weights). Such pipes mix
in :class:`TrainingState`: ``update`` calls :meth:`~TrainingState.mark_trained` (saved with
the pipe's config), and ``predict`` calls :meth:`~TrainingState.warn_if_untrained`, which
warns once per pipe, by name, with what to load or train. Pipes that are meaningful zero-shot
(a bi-encoder scorer, the aspect embedder's mean pooling) answer False in
:meth:`~TrainingState.needs_training`.
"""

from __future__ import annotations

import warnings


class UntrainedComponentWarning(UserWarning):
    """A pipeline component is used before it was trained."""


class TrainingState:
    """Mixin for a ``TrainablePipe`` (uses its ``name`` and ``cfg``)."""

    #: The Weasel project that trains the component, named in the warning.
    training_project: str = ""

    def needs_training(self) -> bool:
        """True when an untrained instance gives meaningless answers (override for zero-shot models)."""
        return True

    @property
    def is_trained(self) -> bool:
        """True once ``update`` ran on this pipe or the pipeline it was loaded from."""
        return bool(self.cfg.get("trained"))

    def mark_trained(self) -> None:
        """Record that training updated the weights (kept in the saved config)."""
        self.cfg["trained"] = True

    def warn_if_untrained(self) -> None:
        """Warn once, naming the component and the fix, when it is used untrained."""
        if self.is_trained or getattr(self, "_untrained_warned", False) or not self.needs_training():
            return
        self._untrained_warned = True
        where = f" (weasel run all {self.training_project})" if self.training_project else ""
        warnings.warn(
            f"{self.name} has not been trained: its answers are not meaningful. Load a trained pipeline, "
            f"or train it{where}.", UntrainedComponentWarning, stacklevel=3)
