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

:func:`paired_bootstrap_micro_f1` is the same test for a pooled metric: the items (papers,
say) carry counts ``(tp, fp, fn)``, each resample draws items with replacement, and the
statistic is the micro F1 of the summed counts of A minus that of B.
:func:`paired_bootstrap_pooled` is that test for any statistic of summed count vectors
(accuracy, macro-F1 over per-label counts). Resampling whole items
keeps the dependence between an item's sentences, which a per-sentence test would ignore.

Every test here needs at least two items to mean anything: with one, every resample equals the
observation, the interval is ``[delta, delta]`` and ``p_value`` is its floor ``1 /
(n_resamples + 1)`` whatever ``delta`` is.

:func:`versus_baselines` runs these tests for a system against each of its baselines,
metric by metric, as an evaluation report gives them (``vs_baselines``); it skips a baseline
scored on fewer than two items instead of reporting such a test.

The same ``seed`` and inputs always give the same result (numpy ``default_rng``).
Resampling is vectorised in blocks so that memory stays bounded for long inputs.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Mapping, Sequence, Union

import numpy as np

__all__ = ["micro_f1", "paired_bootstrap", "paired_bootstrap_micro_f1", "paired_bootstrap_pooled", "versus_baselines",
           "versus_summary"]

# resample cells drawn at once: about 32 MB of int64 indices (paired_bootstrap), or of the
# draw counts, which the micro-F1 path also holds as float64 (about 100 MB at its peak)
_BLOCK_CELLS = 4_000_000


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
    _check_settings(n_resamples, confidence)

    diffs = a - b
    delta = float(diffs.mean())
    means = _bootstrap_means(diffs, int(n_resamples), np.random.default_rng(seed))
    return _summary(delta, means, n_resamples, confidence)


def micro_f1(counts) -> Union[float, np.ndarray]:
    """F1 of counts ``(..., 3)`` = ``(tp, fp, fn)``: ``2 tp / (2 tp + fp + fn)``, 0 where nothing
    was predicted or gold (a float for one triple, an array for many). Raises ValueError when
    the last axis is not of length 3 or a count is negative."""
    counts = np.asarray(counts, dtype=float)
    if counts.ndim == 0 or counts.shape[-1] != 3:
        raise ValueError(f"counts must end in (tp, fp, fn), got shape {counts.shape}")
    if (counts < 0).any():
        raise ValueError("counts must not be negative")
    tp, fp, fn = counts[..., 0], counts[..., 1], counts[..., 2]
    denominator = 2 * tp + fp + fn
    f1 = np.where(denominator > 0, 2 * tp / np.where(denominator > 0, denominator, 1.0), 0.0)
    return float(f1) if f1.ndim == 0 else f1


def paired_bootstrap_micro_f1(
    counts_a: Sequence[Sequence[float]],
    counts_b: Sequence[Sequence[float]],
    n_resamples: int = 10000,
    seed: int = 0,
    *,
    confidence: float = 0.95,
) -> Dict[str, float]:
    """Paired bootstrap test of system A against system B on micro F1 over items.

    ``counts_a[i]`` and ``counts_b[i]`` are the two systems' ``(tp, fp, fn)`` on item ``i``
    (e.g. a paper's sentences). ``delta`` is the micro F1 of A's summed counts minus B's; each
    resample draws the items with replacement, the same items for both systems. Returns
    ``{"delta", "p_value", "ci_low", "ci_high"}`` as :func:`paired_bootstrap` does. Raises
    ValueError for inputs that are not two ``(n, 3)`` arrays of one shape, empty inputs,
    negative or non-finite counts, ``n_resamples < 1`` or ``confidence`` outside (0, 1).
    """
    a = np.asarray(counts_a, dtype=float)
    if a.ndim != 2 or a.shape[1:] != (3,):
        raise ValueError(f"counts must be two (n, 3) arrays of (tp, fp, fn) of one shape, got {a.shape} and "
                         f"{np.shape(counts_b)}")
    return paired_bootstrap_pooled(counts_a, counts_b, micro_f1, n_resamples, seed, confidence=confidence)


def paired_bootstrap_pooled(
    counts_a: Sequence[Sequence[float]],
    counts_b: Sequence[Sequence[float]],
    statistic: Callable[[np.ndarray], Union[float, np.ndarray]],
    n_resamples: int = 10000,
    seed: int = 0,
    *,
    confidence: float = 0.95,
) -> Dict[str, float]:
    """Paired bootstrap test of system A against system B on a statistic of pooled counts.

    ``counts_a[i]`` and ``counts_b[i]`` are the two systems' count vectors on item ``i`` (an
    abstract's correct sentences and per-label tp / fp / fn, say); ``statistic`` maps a count
    vector summed over items, or an array of them (``(..., d)``), to the metric (micro F1,
    accuracy, macro-F1). ``delta`` is the statistic of A's summed counts minus B's; each
    resample draws the items with replacement, the same items for both systems. Returns
    ``{"delta", "p_value", "ci_low", "ci_high"}`` as :func:`paired_bootstrap` does. Raises
    ValueError for inputs that are not two ``(n, d)`` arrays of one shape, empty inputs,
    negative or non-finite counts, ``n_resamples < 1`` or ``confidence`` outside (0, 1).
    """
    a = np.asarray(counts_a, dtype=float)
    b = np.asarray(counts_b, dtype=float)
    if a.ndim != 2 or a.shape != b.shape:
        raise ValueError(f"counts must be two (n, d) arrays of one shape, got {a.shape} and {b.shape}")
    if a.shape[0] == 0:
        raise ValueError("counts are empty")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))) or (a < 0).any() or (b < 0).any():
        raise ValueError("counts must be finite and not negative")
    _check_settings(n_resamples, confidence)

    delta = float(statistic(a.sum(axis=0)) - statistic(b.sum(axis=0)))
    rng = np.random.default_rng(seed)
    n = a.shape[0]
    block = max(1, _BLOCK_CELLS // n)
    deltas = np.empty(int(n_resamples), dtype=float)
    for start in range(0, int(n_resamples), block):
        stop = min(start + block, int(n_resamples))
        # how often each item is drawn in each resample: the summed counts are one product
        drawn = rng.multinomial(n, np.full(n, 1.0 / n), size=stop - start).astype(float)
        resampled = np.asarray(statistic(drawn @ a), dtype=float) - np.asarray(statistic(drawn @ b), dtype=float)
        if resampled.shape != (stop - start,):
            raise ValueError(f"statistic must map an array of count vectors (..., {a.shape[1]}) to one value each "
                             f"(...), got shape {resampled.shape} for {stop - start} resamples")
        deltas[start:stop] = resampled
    return _summary(delta, deltas, n_resamples, confidence)


def versus_baselines(
    ours: Mapping[str, Sequence[Any]],
    baselines: Mapping[str, Mapping[str, Sequence[Any]]],
    *,
    pooled: Union[bool, Mapping[str, Callable[[np.ndarray], Any]]] = False,
    n_resamples: int = 10000,
    seed: int = 0,
) -> Dict[str, Dict[str, Any]]:
    """Paired bootstraps of a system against each baseline, metric by metric, on the same items.

    ``ours[metric]`` holds one value per item: a score averaged over the items (AP, a hit),
    tested by :func:`paired_bootstrap`; with ``pooled=True``, a ``(tp, fp, fn)`` count whose
    pooled F1 is the metric, tested by :func:`paired_bootstrap_micro_f1`; with ``pooled`` a
    mapping, a count vector whose metric is ``pooled[metric]`` of the summed counts, tested by
    :func:`paired_bootstrap_pooled`. Each baseline holds the same metrics over the same items
    in the same order. Returns ``{name: {metric:
    {"delta", "ci_low", "ci_high", "p_value"}, ..., "n_items": n}}`` (positive ``delta``: ours
    is better); a baseline is ``{"skipped": reason}`` when there are fewer than two items,
    where every resample would equal the observation. Raises ValueError when a baseline lacks
    one of our metrics or scores another number of items, or for the tests' own bad inputs.
    """
    def test(metric: str, values: Sequence[Any], theirs: Sequence[Any]) -> Dict[str, float]:
        if isinstance(pooled, Mapping):
            return paired_bootstrap_pooled(values, theirs, pooled[metric], n_resamples, seed)
        if pooled:
            return paired_bootstrap_micro_f1(values, theirs, n_resamples, seed)
        return paired_bootstrap(values, theirs, n_resamples, seed)

    if isinstance(pooled, Mapping) and set(pooled) != set(ours):
        raise ValueError(f"pooled names statistics for {sorted(pooled)}, our metrics are {sorted(ours)}")
    sizes = {len(values) for values in ours.values()}
    if len(sizes) > 1:
        raise ValueError(f"our metrics cover different numbers of items: {sorted(sizes)}")
    n_items = sizes.pop() if sizes else 0
    report: Dict[str, Dict[str, Any]] = {}
    for name, theirs in baselines.items():
        missing = [metric for metric in ours if metric not in theirs]
        if missing:
            raise ValueError(f"baseline {name!r} has no {', '.join(missing)}")
        for metric in ours:
            if len(theirs[metric]) != n_items:
                raise ValueError(f"baseline {name!r} scores {len(theirs[metric])} items for {metric}, ours {n_items}")
        if n_items < 2:
            report[name] = {"skipped": f"a paired bootstrap needs at least 2 items, got {n_items}"}
            continue
        report[name] = {metric: test(metric, values, theirs[metric]) for metric, values in ours.items()}
        report[name]["n_items"] = n_items
    return report


def versus_summary(test: Mapping[str, Any], labels: Mapping[str, str], unit: str = "items") -> str:
    """One baseline's entry of :func:`versus_baselines` as a line: ``hit@1 +0.044 (95% CI
    -0.029..+0.118, p 0.31), ... (68 queries)`` for each metric named in ``labels`` (metric ->
    label, in that order), or ``skipped (reason)``."""
    if "skipped" in test:
        return f"skipped ({test['skipped']})"
    parts = [f"{label} {test[metric]['delta']:+.3f} (95% CI {test[metric]['ci_low']:+.3f}.."
             f"{test[metric]['ci_high']:+.3f}, p {test[metric]['p_value']:.2g})"
             for metric, label in labels.items() if metric in test]
    return ", ".join(parts) + f" ({test['n_items']} {unit})"


def _check_settings(n_resamples: int, confidence: float) -> None:
    """Raise ValueError for a ``n_resamples`` that is not a positive integer or a
    ``confidence`` outside (0, 1)."""
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")


def _summary(delta: float, resampled: np.ndarray, n_resamples: int, confidence: float) -> Dict[str, float]:
    """``delta``, the percentile interval of the ``resampled`` differences and the two-sided
    p-value of the shifted bootstrap distribution (the module docstring)."""
    tail = (1.0 - confidence) / 2.0
    ci_low, ci_high = np.quantile(resampled, [tail, 1.0 - tail])
    # Tolerance so that float noise in the resampled statistics does not decide ties.
    extreme = np.abs(resampled - delta) >= abs(delta) - 1e-12 * max(1.0, abs(delta))
    p_value = (int(extreme.sum()) + 1) / (n_resamples + 1)
    return {"delta": delta, "p_value": float(min(1.0, p_value)), "ci_low": float(ci_low), "ci_high": float(ci_high)}
