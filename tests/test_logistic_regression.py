"""``scholarly_nlp.LogisticRegression.v1``: the fitted model predicts what scikit-learn predicts,
its gradients are right, it saves and loads as a thinc model, and it refuses what it cannot do
with a clear error."""

from __future__ import annotations

import numpy
import pytest
from sklearn.linear_model import LogisticRegression as SklearnLogisticRegression
from spacy.util import registry

from scholarly_nlp.ml import LogisticRegression, drop_weights, fit_logistic_regression, has_weights


def _data(n: int = 800, d: int = 12, seed: int = 0):
    """Dense rows whose labels depend linearly on a few columns (about a fifth positive)."""
    rng = numpy.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = ((X[:, 0] - 0.7 * X[:, 1] + 0.4 * X[:, 5] + rng.normal(size=n) * 0.6) > 1.0).astype(int)
    return X, y


@pytest.mark.parametrize("balanced", [True, False])
def test_predictions_match_scikit_learn(balanced):
    X, y = _data()
    model = fit_logistic_regression(LogisticRegression(C=0.3, balanced=balanced), X, y)
    reference = SklearnLogisticRegression(C=0.3, solver="liblinear", max_iter=2000, random_state=0,
                                          class_weight="balanced" if balanced else None).fit(X, y)
    X_new, y_new = _data(seed=1)
    ours = model.predict(X_new.astype("float32"))
    assert ours.shape == (len(X_new), 1)
    numpy.testing.assert_allclose(ours[:, 0], reference.predict_proba(X_new)[:, 1], atol=1e-5)
    assert ((ours[:, 0] >= 0.5) == y_new).mean() > 0.8


def test_backprop_gives_the_gradients_of_the_logistic_loss():
    X, y = _data(n=60, d=6)
    model = fit_logistic_regression(LogisticRegression(), X, y)
    X32 = X.astype("float32")
    probs, backprop = model.begin_update(X32)
    # d(log loss)/d(prob) for each row; the chain through the sigmoid gives (p - y)
    d_probs = (probs[:, 0] - y) / numpy.maximum(probs[:, 0] * (1 - probs[:, 0]), 1e-7)
    d_X = backprop(d_probs.reshape(-1, 1).astype("float32"))
    residual = (probs[:, 0] - y).reshape(-1, 1)
    numpy.testing.assert_allclose(model.get_grad("W"), residual.T @ X32, rtol=1e-3, atol=1e-3)
    numpy.testing.assert_allclose(model.get_grad("b"), residual.sum(axis=0), rtol=1e-3, atol=1e-3)
    numpy.testing.assert_allclose(d_X, residual @ model.get_param("W"), rtol=1e-3, atol=1e-4)


def test_saves_and_loads_as_a_thinc_model(tmp_path):
    X, y = _data()
    model = fit_logistic_regression(LogisticRegression(C=2.0), X, y)
    loaded = LogisticRegression(C=2.0).from_bytes(model.to_bytes())
    assert has_weights(loaded) and loaded.get_dim("nI") == X.shape[1]
    numpy.testing.assert_array_equal(loaded.predict(X.astype("float32")), model.predict(X.astype("float32")))
    model.to_disk(tmp_path / "lr")
    from_disk = LogisticRegression(C=2.0).from_disk(tmp_path / "lr")
    numpy.testing.assert_array_equal(from_disk.predict(X.astype("float32")), model.predict(X.astype("float32")))


def test_the_registered_architecture_builds_from_a_config():
    make = registry.architectures.get("scholarly_nlp.LogisticRegression.v1")
    model = make(C=0.5, balanced=False)
    assert model.name == "scholarly_nlp.logistic_regression"
    assert model.attrs == {"C": 0.5, "balanced": False}
    assert not has_weights(model)
    # spaCy finds it through the entry point too, where scholarly_nlp.ml was never imported
    from importlib import metadata

    names = {ep.name for ep in metadata.entry_points(group="spacy_architectures")}
    assert "scholarly_nlp.LogisticRegression.v1" in names


def test_drop_weights_then_refit_on_another_width():
    X, y = _data()
    model = fit_logistic_regression(LogisticRegression(), X, y)
    drop_weights(model)
    assert not has_weights(model)
    with pytest.raises(ValueError, match="no weights yet"):
        model.predict(X.astype("float32"))
    fit_logistic_regression(model, X[:, :5], y)
    assert model.get_dim("nI") == 5
    # a fitted model refits over its weights without dropping them first
    fit_logistic_regression(model, X, y)
    assert model.get_dim("nI") == X.shape[1]


def test_refuses_bad_input():
    X, y = _data()
    with pytest.raises(ValueError, match="C must be > 0"):
        LogisticRegression(C=0)
    with pytest.raises(ValueError, match="both classes"):
        fit_logistic_regression(LogisticRegression(), X, numpy.zeros(len(X)))
    with pytest.raises(ValueError, match="does not match"):
        fit_logistic_regression(LogisticRegression(), X, y[:-1])
    bad = X.copy()
    bad[3, 2] = numpy.nan
    with pytest.raises(ValueError, match="NaN"):
        fit_logistic_regression(LogisticRegression(), bad, y)
    model = fit_logistic_regression(LogisticRegression(), X, y)
    with pytest.raises(ValueError, match="expected rows of 12 features"):
        model.predict(X[:, :3].astype("float32"))
    with pytest.raises(ValueError, match="NaN"):
        model.predict(bad.astype("float32"))
