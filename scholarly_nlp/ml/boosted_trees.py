"""``scholarly_nlp.BoostedTrees.v1``: a gradient-boosted tree ensemble as a thinc model.

Some signals are relational and few: how a sentence's score compares with the rest of its
introduction, its neighbours' scores, its position. Boosted trees learn such interactions from
a few thousand rows; for the contribution detector, trees over such features lifted held-out F1
(``benchmarks/contribution_detector_stacking.py``), and ad hoc logistic and small neural second
stages did less in cross-validation (``projects/contribution_linker/README.md``). This model
holds a fitted ensemble so that it saves, loads and ships like any other thinc model of a
pipeline.

* **Forward**: a ``(n, d)`` float matrix -> ``(n, 1)`` probabilities, the sigmoid of the
  summed leaf values of the rows' paths. Rows are compared in float32, as scikit-learn does,
  and the stored thresholds are the largest float32 not above scikit-learn's, so the paths
  are the ones scikit-learn takes.
* **Fitting**: :func:`fit_boosted_trees`, not gradient descent. It fits scikit-learn's
  ``GradientBoostingClassifier`` (log loss, ``init="zero"``) with the model's settings and
  copies the trees into the model's params, so loading needs no scikit-learn. ``begin_update``
  passes no gradient to its input (the features are not learned).
* **Unfitted**: a model with no trees (:func:`has_trees` is false) cannot predict; callers
  check :func:`has_trees` and fall back to what they had before it was fitted.
* **Bad rows**: a row with NaN or infinite values is refused, as scikit-learn refuses it.
"""

from __future__ import annotations

from typing import Callable, Optional

import numpy
from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d

_PARAMS = ("feature", "threshold", "left", "right", "value", "roots")
_LEAF = -1


@registry.architectures("scholarly_nlp.BoostedTrees.v1")
def BoostedTrees(n_trees: int = 150, learning_rate: float = 0.05, max_leaf_nodes: int = 15,
                 min_samples_leaf: int = 1, balanced: bool = True) -> Model[Floats2d, Floats2d]:
    """A binary boosted-tree classifier, fitted by :func:`fit_boosted_trees` with these
    settings (``balanced``: weight the positive rows by the ratio of the negative rows' total
    weight to the positive rows')."""
    if n_trees < 1:
        raise ValueError(f"BoostedTrees: n_trees must be >= 1, got {n_trees!r}")
    if not 0 < learning_rate <= 1:
        raise ValueError(f"BoostedTrees: learning_rate must be in (0, 1], got {learning_rate!r}")
    if max_leaf_nodes < 2:
        raise ValueError(f"BoostedTrees: max_leaf_nodes must be >= 2, got {max_leaf_nodes!r}")
    if min_samples_leaf < 1:
        raise ValueError(f"BoostedTrees: min_samples_leaf must be >= 1, got {min_samples_leaf!r}")
    return Model(
        "scholarly_nlp.boosted_trees",
        _forward,
        params={name: None for name in _PARAMS},
        dims={"nI": None, "nO": 1},
        attrs={"n_trees": int(n_trees), "learning_rate": float(learning_rate),
               "max_leaf_nodes": int(max_leaf_nodes), "min_samples_leaf": int(min_samples_leaf),
               "balanced": bool(balanced)},
    )


def has_trees(model: Model) -> bool:
    """Whether ``model`` holds a fitted ensemble."""
    return model.has_param("roots") is True


def drop_trees(model: Model) -> None:
    """Forget the fitted ensemble and its input width (``has_trees`` is false afterwards; the
    settings stay), so that trees of any width can be fitted or loaded next."""
    for name in _PARAMS:
        model.set_param(name, None)
    model.set_dim("nI", None, force=True)


def _forward(model: Model, X: Floats2d, is_train: bool) -> tuple[Floats2d, Callable]:
    if not has_trees(model):
        raise ValueError("BoostedTrees: the model has no trees yet; fit it with scholarly_nlp.ml.fit_boosted_trees")
    features = numpy.asarray(model.ops.to_numpy(X), dtype=numpy.float32)
    if features.ndim != 2 or features.shape[1] != model.get_dim("nI"):
        raise ValueError(f"BoostedTrees: expected rows of {model.get_dim('nI')} features, got shape {features.shape}")
    if not numpy.isfinite(features).all():
        raise ValueError("BoostedTrees: the rows hold NaN or infinite values")
    raw = raw_scores(model, features)
    probs = (1.0 / (1.0 + numpy.exp(-raw))).astype(numpy.float32).reshape(-1, 1)

    def backprop(d_probs: Floats2d) -> Floats2d:
        return model.ops.alloc2f(*X.shape)

    return model.ops.asarray2f(probs), backprop


def raw_scores(model: Model, features: numpy.ndarray) -> numpy.ndarray:
    """The summed leaf values (log-odds) of every row of ``features`` (float32, ``(n, nI)``)."""
    feature, threshold, left, right, value, roots = (model.ops.to_numpy(model.get_param(name)) for name in _PARAMS)
    feature = feature.astype(numpy.int64)
    left, right = left.astype(numpy.int64), right.astype(numpy.int64)
    n = features.shape[0]
    node = numpy.tile(roots.astype(numpy.int64), (n, 1))
    rows = numpy.arange(n)[:, None]
    while True:
        inner = feature[node] != _LEAF
        if not inner.any():
            break
        go_left = features[rows, numpy.where(inner, feature[node], 0)] <= threshold[node]
        node = numpy.where(inner, numpy.where(go_left, left[node], right[node]), node)
    return value[node].astype(numpy.float64).sum(axis=1)


def fit_boosted_trees(model: Model, X: numpy.ndarray, y: numpy.ndarray, *, seed: int = 0,
                      sample_weight: Optional[numpy.ndarray] = None) -> Model:
    """Fit ``model`` (a :func:`BoostedTrees`) on rows ``X`` and binary labels ``y``; returns it.

    The trees come from scikit-learn's ``GradientBoostingClassifier`` with the model's
    settings; ``seed`` fixes its tie-breaking between equally good splits.
    """
    from sklearn.ensemble import GradientBoostingClassifier

    X, y = binary_training_rows(X, y, "fit_boosted_trees")
    weight = numpy.ones(len(y)) if sample_weight is None else numpy.asarray(sample_weight, dtype=numpy.float64).reshape(-1)
    if len(weight) != len(y):
        raise ValueError(f"fit_boosted_trees: {len(weight)} sample weights for {len(y)} rows")
    if model.attrs["balanced"]:
        weight = weight * numpy.where(y == 1, weight[y == 0].sum() / weight[y == 1].sum(), 1.0)
    attrs = model.attrs
    fitted = GradientBoostingClassifier(
        n_estimators=attrs["n_trees"], learning_rate=attrs["learning_rate"], max_leaf_nodes=attrs["max_leaf_nodes"],
        min_samples_leaf=attrs["min_samples_leaf"], max_depth=None, init="zero", random_state=seed,
    ).fit(X, y, sample_weight=weight)
    _copy_trees(model, [estimator.tree_ for estimator in fitted.estimators_[:, 0]], attrs["learning_rate"], X.shape[1])
    return model


def binary_training_rows(X, y, caller: str) -> tuple[numpy.ndarray, numpy.ndarray]:
    """``(X, y)`` as float64 rows and int labels, checked for a binary fit: one label per row,
    both classes present; ``caller`` names the fitting function in the error."""
    X = numpy.asarray(X, dtype=numpy.float64)
    y = numpy.asarray(y).reshape(-1).astype(int)
    if X.ndim != 2 or len(X) != len(y):
        raise ValueError(f"{caller}: X of shape {X.shape} does not match {len(y)} labels")
    if set(numpy.unique(y)) != {0, 1}:
        raise ValueError(f"{caller}: the labels must hold both classes, 0 and 1")
    return X, y


def _copy_trees(model: Model, trees: list, learning_rate: float, n_features: int) -> None:
    """Lay the scikit-learn trees end to end in the model's params (leaf values x the rate),
    replacing any trees it held, and set its input width to ``n_features``."""
    n_nodes = sum(tree.node_count for tree in trees)
    if n_nodes >= 2**24:
        raise ValueError(f"BoostedTrees: {n_nodes} nodes do not fit float32 indices")
    feature, threshold, left, right, value, roots = [], [], [], [], [], []
    offset = 0
    for tree in trees:
        is_leaf = tree.children_left == -1
        roots.append(offset)
        feature.append(numpy.where(is_leaf, _LEAF, tree.feature))
        threshold.append(_float32_at_most(tree.threshold))
        left.append(numpy.where(is_leaf, 0, tree.children_left + offset))
        right.append(numpy.where(is_leaf, 0, tree.children_right + offset))
        value.append(numpy.where(is_leaf, tree.value.reshape(-1) * learning_rate, 0.0))
        offset += tree.node_count
    # thinc refuses to change a dimension while params are set: drop the old trees first
    drop_trees(model)
    model.set_dim("nI", n_features, force=True)
    for name, parts in zip(_PARAMS, (feature, threshold, left, right, value, [roots])):
        model.set_param(name, model.ops.asarray(numpy.concatenate(parts).astype(numpy.float32)))


def _float32_at_most(thresholds: numpy.ndarray) -> numpy.ndarray:
    """The largest float32 not above each threshold: for a float32 x, ``x <= t`` and
    ``x <= _float32_at_most(t)`` agree."""
    rounded = thresholds.astype(numpy.float32)
    above = rounded.astype(numpy.float64) > thresholds
    rounded[above] = numpy.nextafter(rounded[above], numpy.float32(-numpy.inf))
    return rounded
