"""``scholarly_nlp.BoostedTrees.v1``: the fitted ensemble predicts what scikit-learn predicts,
saves and loads as a thinc model, and refuses what it cannot do with a clear error."""

from __future__ import annotations

import numpy
import pytest
from sklearn.ensemble import GradientBoostingClassifier
from spacy.util import registry

from scholarly_nlp.ml import BoostedTrees, drop_trees, fit_boosted_trees, has_trees


def _data(n: int = 1200, seed: int = 0):
    """Rows with continuous, tied (rounded) and near-float32-boundary features, and labels
    that need interactions between them (about a quarter positive)."""
    rng = numpy.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    X[:, 3] = numpy.round(X[:, 3], 1)
    X[:, 4] = 0.1 + rng.integers(0, 3, size=n) * 1e-8  # values a float32 step or two apart
    y = ((X[:, 0] + X[:, 1] * X[:, 2] + 0.3 * X[:, 3] + rng.normal(size=n) * 0.5) > 0.9).astype(int)
    return X, y


def _sklearn(X, y, seed=0, weight=None, balanced=True, **settings):
    weight = numpy.ones(len(y)) if weight is None else weight
    if balanced:
        weight = weight * numpy.where(y == 1, weight[y == 0].sum() / weight[y == 1].sum(), 1.0)
    return GradientBoostingClassifier(init="zero", max_depth=None, random_state=seed, **settings).fit(X, y, sample_weight=weight)


def test_predictions_match_scikit_learn():
    X, y = _data()
    model = fit_boosted_trees(BoostedTrees(n_trees=40, learning_rate=0.1, max_leaf_nodes=7), X, y, seed=3)
    reference = _sklearn(X, y, seed=3, n_estimators=40, learning_rate=0.1, max_leaf_nodes=7)
    X_new, _ = _data(seed=1)
    ours = model.predict(X_new.astype("float32"))
    assert ours.shape == (len(X_new), 1)
    numpy.testing.assert_allclose(ours[:, 0], reference.predict_proba(X_new)[:, 1], atol=1e-5)
    # the fit is worth something: better than the base rate on unseen rows
    _, y_new = _data(seed=1)
    assert ((ours[:, 0] >= 0.5) == y_new).mean() > 0.8


@pytest.mark.parametrize("balanced", [True, False])
def test_sample_weights_match_scikit_learn(balanced):
    X, y = _data()
    weight = numpy.random.default_rng(5).uniform(0.2, 3.0, size=len(y))
    model = fit_boosted_trees(BoostedTrees(n_trees=20, max_leaf_nodes=5, balanced=balanced), X, y, sample_weight=weight)
    reference = _sklearn(X, y, weight=weight, balanced=balanced, n_estimators=20, learning_rate=0.05, max_leaf_nodes=5)
    numpy.testing.assert_allclose(model.predict(X.astype("float32"))[:, 0], reference.predict_proba(X)[:, 1], atol=1e-5)


def test_refit_on_other_features_replaces_the_trees():
    X, y = _data()
    model = fit_boosted_trees(BoostedTrees(n_trees=10), X, y)
    fit_boosted_trees(model, X[:, :4], y)
    assert model.get_dim("nI") == 4
    reference = _sklearn(X[:, :4], y, n_estimators=10, learning_rate=0.05, max_leaf_nodes=15)
    numpy.testing.assert_allclose(model.predict(X[:, :4].astype("float32"))[:, 0],
                                  reference.predict_proba(X[:, :4])[:, 1], atol=1e-5)
    with pytest.raises(ValueError, match="rows of 4 features"):
        model.predict(X.astype("float32"))


def test_drop_trees_forgets_the_ensemble_and_its_width():
    X, y = _data(300)
    model = fit_boosted_trees(BoostedTrees(n_trees=5), X, y)
    narrow = fit_boosted_trees(BoostedTrees(n_trees=5), X[:, :3], y)
    drop_trees(model)
    assert not has_trees(model) and not model.has_dim("nI")
    with pytest.raises(ValueError):
        model.predict(X.astype("float32"))
    model.from_bytes(narrow.to_bytes())  # trees of another width load once the old ones are gone
    numpy.testing.assert_allclose(model.predict(X[:, :3].astype("float32")), narrow.predict(X[:, :3].astype("float32")))


def test_thresholds_between_adjacent_float32_values():
    """scikit-learn splits two adjacent float32 values at their float64 midpoint, which rounds
    up to the larger one when that has the even mantissa: the stored threshold must not."""
    low = numpy.float32(1024.0 + 2.0**-13)  # odd mantissa; float32 steps are 2**-13 here
    high = numpy.nextafter(low, numpy.float32(2048.0))
    X = numpy.array([[low], [high]] * 50, dtype=numpy.float64)
    y = numpy.array([0, 1] * 50)
    model = fit_boosted_trees(BoostedTrees(n_trees=3, learning_rate=0.5), X, y)
    reference = _sklearn(X, y, n_estimators=3, learning_rate=0.5)
    probs = model.predict(X[:2].astype("float32"))[:, 0]
    assert probs[1] > 0.5 > probs[0]
    numpy.testing.assert_allclose(probs, reference.predict_proba(X[:2])[:, 1], atol=1e-6)


def test_round_trip_through_bytes_and_the_registry():
    X, y = _data()
    model = fit_boosted_trees(BoostedTrees(n_trees=10), X, y)
    built = registry.resolve({"m": {"@architectures": "scholarly_nlp.BoostedTrees.v1", "n_trees": 10}})["m"]
    assert not has_trees(built)
    built.from_bytes(model.to_bytes())
    assert has_trees(built) and built.get_dim("nI") == 6
    numpy.testing.assert_array_equal(built.predict(X.astype("float32")), model.predict(X.astype("float32")))


def test_balanced_weights_raise_the_minority_class():
    X, y = _data()
    balanced = fit_boosted_trees(BoostedTrees(n_trees=20), X, y).predict(X.astype("float32")).mean()
    plain = fit_boosted_trees(BoostedTrees(n_trees=20, balanced=False), X, y).predict(X.astype("float32")).mean()
    assert balanced > plain + 0.05


def test_backprop_passes_no_gradient():
    X, y = _data(n=200)
    model = fit_boosted_trees(BoostedTrees(n_trees=5), X, y)
    probs, backprop = model.begin_update(X.astype("float32"))
    d_input = backprop(numpy.ones_like(probs))
    assert d_input.shape == X.shape and not d_input.any()


def test_unfitted_and_mismatched_inputs_are_refused():
    model = BoostedTrees()
    with pytest.raises(ValueError, match="no trees yet"):
        model.predict(numpy.zeros((2, 3), dtype="float32"))
    X, y = _data(n=200)
    fit_boosted_trees(model, X, y)
    with pytest.raises(ValueError, match="rows of 6 features"):
        model.predict(numpy.zeros((2, 3), dtype="float32"))
    with pytest.raises(ValueError, match="both classes"):
        fit_boosted_trees(BoostedTrees(), X, numpy.zeros(len(X)))
    with pytest.raises(ValueError, match="does not match"):
        fit_boosted_trees(BoostedTrees(), X, y[:-1])
    with pytest.raises(ValueError, match="sample weights"):
        fit_boosted_trees(BoostedTrees(), X, y, sample_weight=numpy.ones(3))
    rows = X[:2].astype("float32")
    rows[1, 2] = numpy.nan
    with pytest.raises(ValueError, match="NaN or infinite"):
        model.predict(rows)


@pytest.mark.parametrize("settings", [{"n_trees": 0}, {"learning_rate": 0.0}, {"max_leaf_nodes": 1},
                                      {"min_samples_leaf": 0}])
def test_invalid_settings(settings):
    with pytest.raises(ValueError, match="BoostedTrees"):
        BoostedTrees(**settings)
