"""Paired bootstrap significance test for two systems scored on the same items.

Method (Efron & Tibshirani 1993; Koehn 2004 for MT; Berg-Kirkpatrick et al. 2012 for
NLP): the per-item differences ``d_i = a_i - b_i`` are resampled with replacement
``n_resamples`` times; each resample gives a mean difference ``d*``.

* ``delta`` is the observed mean difference ``mean(a) - mean(b)``.
* ``ci_low``/``ci_high`` are the percentile bootstrap interval of ``d*``
  (``confidence`` = 0.95 by default).
* ``p_value`` is two-sided, for the null hypothesis "no difference": the bootstrap
  distribution is shifted to mean 0 (``d* - delta``) and the p-value is the share of
  resamples at least as extreme as the observation, ``|d* - delta| >= |delta|``, with
  the add-one correction ``(count + 1) / (n_resamples + 1)`` so it is never 0. A
  ``delta`` of exactly 0 gives 1.0.

The same ``seed`` and inputs always give the same result (numpy ``default_rng``).
Resampling is vectorised in blocks so that memory stays bounded for long inputs.
"""

from __future__ import annotations

from typing import Dict, Sequence

import numpy as np

__all__ = ["paired_bootstrap"]

_BLOCK_CELLS = 4_000_000  # resample indices drawn at once (about 32 MB of int64)


def _bootstrap_means(diffs: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Means of ``n_resamples`` resamples (with replacement) of ``diffs``."""
    n = diffs.size
    block = max(1, _BLOCK_CELLS // n)
    means = np.empty(n_resamples, dtype=float)
    for start in range(0, n_resamples, block):
        stop = min(start + block, n_resamples)
        idx = rng.integers(0, n, size=(stop - start, n))
        means[start:stop] = diffs[idx].mean(axis=1)
    return means


def paired_bootstrap(
    scores_a: Sequence[float],
    scores_b: Sequence[float],
    n_resamples: int = 10000,
    seed: int = 0,
    *,
    confidence: float = 0.95,
) -> Dict[str, float]:
    """Paired bootstrap test of system A against system B.

    ``scores_a[i]`` and ``scores_b[i]`` are the two systems' scores on item ``i`` (e.g.
    per-query average precision). Returns ``{"delta", "p_value", "ci_low", "ci_high"}``
    as described in the module docstring; positive ``delta`` means A is better.
    Raises ValueError for inputs of different or zero length, non-finite scores,
    ``n_resamples < 1`` or ``confidence`` outside (0, 1).
    """
    a = np.asarray(scores_a, dtype=float)
    b = np.asarray(scores_b, dtype=float)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"scores must be two 1-d sequences of equal length, got shapes {a.shape} and {b.shape}")
    if a.size == 0:
        raise ValueError("scores are empty")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("scores must be finite numbers")
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")

    diffs = a - b
    delta = float(diffs.mean())
    means = _bootstrap_means(diffs, int(n_resamples), np.random.default_rng(seed))
    tail = (1.0 - confidence) / 2.0
    ci_low, ci_high = np.quantile(means, [tail, 1.0 - tail])
    # Tolerance so that float noise in the resampled means does not decide ties.
    extreme = np.abs(means - delta) >= abs(delta) - 1e-12 * max(1.0, abs(delta))
    p_value = (int(extreme.sum()) + 1) / (n_resamples + 1)
    return {"delta": delta, "p_value": float(min(1.0, p_value)), "ci_low": float(ci_low), "ci_high": float(ci_high)}
