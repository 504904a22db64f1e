"""Multi-label classification scores for facet labels (per label, micro, macro).

Each item (a citance, a sentence, ...) has a set of gold labels and a set of predicted
labels; a bare string is one label. Per label, an item is a true positive when the label
is in both sets, a false positive when only predicted, a false negative when only gold.
Precision, recall and F1 are 0.0 when their denominator is 0 (scikit-learn's
``zero_division=0``). *Micro* scores come from the counts summed over labels; *macro*
scores are the unweighted means of the per-label scores over ``labels``, which default
to every label seen in gold or predictions (sorted).
"""

from __future__ import annotations

from typing import Dict, Hashable, Iterable, List, Optional, Sequence, Set, Union

LabelSet = Union[str, Iterable[Hashable]]

__all__ = ["per_label_prf", "facet_f1"]


def _as_set(labels: LabelSet) -> Set[Hashable]:
    """One item's labels as a set; a bare string is a single label."""
    return {labels} if isinstance(labels, str) else set(labels)


def _scores(tp: int, fp: int, fn: int) -> Dict[str, float]:
    """Precision, recall, F1 and support (tp + fn) of one count triple."""
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "support": tp + fn, "tp": tp, "fp": fp, "fn": fn}


def _check_aligned(gold: Sequence[LabelSet], predicted: Sequence[LabelSet]) -> None:
    if len(gold) != len(predicted):
        raise ValueError(f"gold has {len(gold)} items but predicted has {len(predicted)}")


def per_label_prf(
    gold: Sequence[LabelSet], predicted: Sequence[LabelSet], labels: Optional[Sequence[Hashable]] = None
) -> Dict[Hashable, Dict[str, float]]:
    """``{label: {"precision", "recall", "f1", "support", "tp", "fp", "fn"}}``.

    ``gold[i]`` and ``predicted[i]`` are the label sets of item ``i``. ``labels`` fixes
    the labels reported (default: all labels seen, sorted by ``str``). Raises ValueError
    when the two sequences differ in length.
    """
    _check_aligned(gold, predicted)
    gold_sets: List[Set[Hashable]] = [_as_set(g) for g in gold]
    pred_sets: List[Set[Hashable]] = [_as_set(p) for p in predicted]
    if labels is None:
        labels = sorted(set().union(*gold_sets, *pred_sets), key=str)
    result = {}
    for label in labels:
        tp = sum(1 for g, p in zip(gold_sets, pred_sets) if label in g and label in p)
        fp = sum(1 for g, p in zip(gold_sets, pred_sets) if label not in g and label in p)
        fn = sum(1 for g, p in zip(gold_sets, pred_sets) if label in g and label not in p)
        result[label] = _scores(tp, fp, fn)
    return result


def facet_f1(
    gold: Sequence[LabelSet], predicted: Sequence[LabelSet], labels: Optional[Sequence[Hashable]] = None
) -> Dict[str, object]:
    """Micro and macro P/R/F1 over labels, with the per-label table.

    Returns ``precision_micro``, ``recall_micro``, ``f1_micro``, ``precision_macro``,
    ``recall_macro``, ``f1_macro`` (mean of per-label F1, as scikit-learn's
    ``average="macro"``) and ``per_label`` (:func:`per_label_prf`). With no label at all
    every score is 0.0.
    """
    table = per_label_prf(gold, predicted, labels)
    micro = _scores(*(sum(int(row[key]) for row in table.values()) for key in ("tp", "fp", "fn")))
    n = len(table)
    return {
        "precision_micro": micro["precision"],
        "recall_micro": micro["recall"],
        "f1_micro": micro["f1"],
        "precision_macro": sum(row["precision"] for row in table.values()) / n if n else 0.0,
        "recall_macro": sum(row["recall"] for row in table.values()) / n if n else 0.0,
        "f1_macro": sum(row["f1"] for row in table.values()) / n if n else 0.0,
        "per_label": table,
    }
