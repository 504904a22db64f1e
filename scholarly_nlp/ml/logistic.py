"""``scholarly_nlp.LogisticRegression.v1``: a binary logistic regression as a thinc model.

Some features are many, dense and fixed: frozen sentence embeddings of a sentence and its
neighbours. An L2-regularised logistic regression fitted to convergence on a few thousand rows
scores them better than a few hundred SGD steps would, and it fits in seconds, so stacked
models can fit it once per cross-validation fold. This model holds such a fit so that it saves,
loads and ships like any other thinc model of a pipeline.

* **Forward**: a ``(n, d)`` float matrix -> ``(n, 1)`` probabilities, ``sigmoid(X W^T + b)``;
  ``backprop`` gives the gradients of ``W``, ``b`` and ``X``, so the model can also be
  fine-tuned by gradient descent.
* **Fitting**: :func:`fit_logistic_regression` fits scikit-learn's ``LogisticRegression``
  (liblinear, the model's ``C``, balanced classes when ``balanced``) and copies its weights into
  the params, so loading needs no scikit-learn.
* **Unfitted**: a model without weights (:func:`has_weights` is false) cannot predict;
  :func:`drop_weights` forgets a fit and its width.
* **Bad rows**: a row of the wrong width, or with NaN or infinite values, is refused.
"""

from __future__ import annotations

from typing import Callable

import numpy
from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d

from .boosted_trees import binary_training_rows


@registry.architectures("scholarly_nlp.LogisticRegression.v1")
def LogisticRegression(C: float = 1.0, balanced: bool = True) -> Model[Floats2d, Floats2d]:
    """A binary logistic regression, fitted by :func:`fit_logistic_regression` with inverse
    regularisation strength ``C`` (``balanced``: weight the classes inversely to their counts)."""
    if not C > 0:
        raise ValueError(f"LogisticRegression: C must be > 0, got {C!r}")
    return Model("scholarly_nlp.logistic_regression", _forward, params={"W": None, "b": None},
                 dims={"nI": None, "nO": 1}, attrs={"C": float(C), "balanced": bool(balanced)})


def has_weights(model: Model) -> bool:
    """Whether ``model`` (a :func:`LogisticRegression`) holds fitted weights."""
    return model.has_param("W") is True


def drop_weights(model: Model) -> None:
    """Forget the fitted weights and the input width (the settings stay)."""
    model.set_param("W", None)
    model.set_param("b", None)
    model.set_dim("nI", None, force=True)


def _forward(model: Model, X: Floats2d, is_train: bool) -> tuple[Floats2d, Callable]:
    if not has_weights(model):
        raise ValueError("LogisticRegression: the model has no weights yet; fit it with "
                         "scholarly_nlp.ml.fit_logistic_regression")
    if X.ndim != 2 or X.shape[1] != model.get_dim("nI"):
        raise ValueError(f"LogisticRegression: expected rows of {model.get_dim('nI')} features, got shape {X.shape}")
    if not numpy.isfinite(model.ops.to_numpy(X)).all():
        raise ValueError("LogisticRegression: the rows hold NaN or infinite values")
    X = model.ops.asarray2f(X)  # rows from numpy reach a model on the GPU
    W, b = model.get_param("W"), model.get_param("b")
    probs = model.ops.sigmoid(model.ops.gemm(X, W, trans2=True) + b)

    def backprop(d_probs: Floats2d) -> Floats2d:
        d_logits = d_probs * probs * (1.0 - probs)
        model.inc_grad("W", model.ops.gemm(d_logits, X, trans1=True))
        model.inc_grad("b", d_logits.sum(axis=0))
        return model.ops.gemm(d_logits, W)

    return probs, backprop


def fit_logistic_regression(model: Model, X: numpy.ndarray, y: numpy.ndarray, *, seed: int = 0) -> Model:
    """Fit ``model`` (a :func:`LogisticRegression`) on rows ``X`` and binary labels ``y``
    (scikit-learn's liblinear solver; ``seed`` fixes its shuffling); returns it."""
    from sklearn.linear_model import LogisticRegression as SklearnLogisticRegression

    X, y = binary_training_rows(X, y, "fit_logistic_regression")
    if not numpy.isfinite(X).all():
        raise ValueError("fit_logistic_regression: the rows hold NaN or infinite values")
    fitted = SklearnLogisticRegression(C=model.attrs["C"], solver="liblinear", max_iter=2000, random_state=seed,
                                       class_weight="balanced" if model.attrs["balanced"] else None).fit(X, y)
    drop_weights(model)  # thinc refuses a new width while params are set
    model.set_dim("nI", X.shape[1], force=True)
    model.set_param("W", model.ops.asarray2f(fitted.coef_.astype(numpy.float32)))
    model.set_param("b", model.ops.asarray1f(fitted.intercept_.astype(numpy.float32)))
    return model
