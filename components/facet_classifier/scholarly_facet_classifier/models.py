"""The facet classifier's thinc architectures: texts in, one logit per facet label out.

* ``scholarly_facet_classifier.TfidfLinear.v1``: TF-IDF word n-grams (fitted on the training texts
  when the model is initialised) and a trainable linear layer; trained with binary
  cross-entropy it is one-vs-rest logistic regression, the CL-SciSumm Task 1B baseline.
  The fitted vocabulary and IDF weights are model attributes, so they serialise with the
  model (``to_bytes``, and so ``nlp.to_disk``).
* ``scholarly_facet_classifier.TransformerClassifier.v1``: a Hugging Face
  ``AutoModelForSequenceClassification`` with one output per label in thinc's
  ``PyTorchShim``, as :mod:`scholarly_nlp.ml.cross_encoder`: the backbone is loaded at
  initialisation (:func:`~scholarly_nlp.ml.backbones.resolve_backbone`) and a trained model
  is written and read as a Hugging Face folder (:func:`write_model`, :func:`read_model`),
  so a saved pipeline does not need the original backbone.

Both are ``Model[list[str], Floats2d]`` with an ``nO`` dimension (the number of labels),
taken from ``Y`` at ``initialize`` when not set before.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import numpy
from spacy.util import registry
from thinc.api import ArgsKwargs, Linear, Model
from thinc.types import Floats2d

from scholarly_nlp.ml import resolve_backbone

__all__ = [
    "TFIDF_ARCH",
    "TRANSFORMER_ARCH",
    "TfidfLinear",
    "TransformerClassifier",
    "is_ready",
    "is_transformer",
    "load_transformer",
    "read_model",
    "write_model",
]

TFIDF_ARCH = "scholarly_facet_classifier.TfidfLinear.v1"
TRANSFORMER_ARCH = "scholarly_facet_classifier.TransformerClassifier.v1"
_TFIDF_NAME = "scholarly_facets.tfidf_linear"
_FEATURES_NAME = "scholarly_facets.tfidf_features"
_TRANSFORMER_NAME = "scholarly_facets.transformer_classifier"
_TOKENIZER = "tokenizer"  # attr holding the HF tokenizer; not serialisable, so thinc skips it
_VECTORIZER = "_vectorizer"  # (vocabulary it was built from, sklearn vectorizer); not serialisable
_WEIGHTS_FILE = "model.bin"  # TfidfLinear: thinc bytes
_HF_DIR = "hf"  # TransformerClassifier: Hugging Face folder


# --------------------------------------------------------------------------- TF-IDF + linear


@registry.architectures(TFIDF_ARCH)
def TfidfLinear(ngram_range_max: int = 2, min_df: int = 1, max_features: int = 50000, sublinear_tf: bool = True,
                nO: Optional[int] = None) -> Model[list[str], Floats2d]:
    """TF-IDF n-grams (1 to ``ngram_range_max`` words) followed by a linear layer to ``nO`` logits.

    The vectoriser (lower-cased words of two or more characters, at most ``max_features``
    n-grams seen in at least ``min_df`` texts, ``1 + log(tf)`` when ``sublinear_tf``,
    L2-normalised rows) is fitted on ``X`` at ``initialize(X=texts, Y=...)``; the linear
    layer starts from zero weights and, when ``Y`` is given, biases at the labels' prior
    log-odds, so an untrained model predicts the label frequencies.
    """
    features = TfidfFeatures(ngram_range_max, min_df, max_features, sublinear_tf)
    return Model(_TFIDF_NAME, _tfidf_linear_forward, init=_tfidf_linear_init, layers=[features, Linear(nO=nO)],
                 dims={"nO": nO}, refs={"features": features})


def TfidfFeatures(ngram_range_max: int = 2, min_df: int = 1, max_features: int = 50000,
                  sublinear_tf: bool = True) -> Model[list[str], Floats2d]:
    """TF-IDF rows (dense Floats2d) of texts; vocabulary and IDF fitted at ``initialize(X=texts)``."""
    attrs = {"ngram_range_max": ngram_range_max, "min_df": min_df, "max_features": max_features,
             "sublinear_tf": sublinear_tf, "vocabulary": None, "idf": None}
    return Model(_FEATURES_NAME, _features_forward, init=_features_init, dims={"nO": None}, attrs=attrs)


def _new_vectorizer(model: Model, vocabulary: Optional[dict] = None):
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(ngram_range=(1, int(model.attrs["ngram_range_max"])), min_df=model.attrs["min_df"],
                           max_features=model.attrs["max_features"], sublinear_tf=model.attrs["sublinear_tf"],
                           vocabulary=vocabulary, dtype=numpy.float32)


def _features_init(model: Model, X: Optional[Sequence[str]] = None, Y: Any = None) -> None:
    if X is None:
        if model.attrs["vocabulary"] is None:
            raise ValueError("the TF-IDF features need texts to fit their vocabulary: initialize(X=texts)")
        return
    vectorizer = _new_vectorizer(model).fit(list(X))
    vocabulary = {str(term): int(i) for term, i in vectorizer.vocabulary_.items()}
    model.attrs["vocabulary"] = vocabulary
    model.attrs["idf"] = [float(v) for v in vectorizer.idf_]
    model.attrs[_VECTORIZER] = (vocabulary, vectorizer)
    model.set_dim("nO", len(vocabulary), force=True)


def _fitted_vectorizer(model: Model):
    """The sklearn vectoriser of the current vocabulary/IDF (rebuilt after deserialisation)."""
    vocabulary = model.attrs["vocabulary"]
    if vocabulary is None:
        raise ValueError("the TF-IDF features are not fitted: initialise the model (or load a trained one) first")
    cached = model.attrs.get(_VECTORIZER)
    if cached is not None and cached[0] is vocabulary:
        return cached[1]
    vectorizer = _new_vectorizer(model, vocabulary=vocabulary)
    vectorizer.idf_ = numpy.asarray(model.attrs["idf"], dtype=numpy.float32)
    model.attrs[_VECTORIZER] = (vocabulary, vectorizer)
    return vectorizer


def _features_forward(model: Model, texts: Sequence[str], is_train: bool) -> tuple[Floats2d, Callable]:
    vectorizer = _fitted_vectorizer(model)
    if not texts:
        return model.ops.alloc2f(0, len(model.attrs["vocabulary"])), lambda d: []
    matrix = vectorizer.transform(list(texts)).toarray().astype("float32")
    return model.ops.asarray2f(matrix), lambda d_features: []


def _tfidf_linear_init(model: Model, X: Optional[Sequence[str]] = None, Y: Optional[Floats2d] = None) -> None:
    features, linear = model.layers
    features.initialize(X=X)
    if Y is not None and not model.has_dim("nO"):
        model.set_dim("nO", int(Y.shape[1]))
    if not model.has_dim("nO"):
        raise ValueError("TfidfLinear needs its number of labels: set nO or pass Y to initialize")
    linear.set_dim("nI", features.get_dim("nO"), force=True)
    linear.set_dim("nO", model.get_dim("nO"), force=True)
    linear.initialize()
    linear.set_param("W", linear.ops.alloc2f(linear.get_dim("nO"), linear.get_dim("nI")))
    if Y is not None and len(Y):
        counts = model.ops.to_numpy(Y).sum(axis=0)
        prior = (counts + 0.5) / (len(Y) + 1.0)  # smoothed label frequencies
        linear.set_param("b", linear.ops.asarray1f(numpy.log(prior / (1.0 - prior)).astype("float32")))


def _tfidf_linear_forward(model: Model, texts: Sequence[str], is_train: bool) -> tuple[Floats2d, Callable]:
    features, linear = model.layers
    matrix, _ = features(texts, is_train)
    logits, backprop_linear = linear(matrix, is_train)

    def backprop(d_logits: Floats2d) -> list:
        backprop_linear(d_logits)
        return []

    return logits, backprop


# --------------------------------------------------------------------------- transformer


@registry.architectures(TRANSFORMER_ARCH)
def TransformerClassifier(name: str = "all-MiniLM-L6-v2", max_length: int = 128, mixed_precision: bool = False,
                          nO: Optional[int] = None) -> Model[list[str], Floats2d]:
    """A Hugging Face sequence classifier with ``nO`` outputs (default 5) over single texts.

    ``name`` is a Hugging Face name or local path (default MiniLM, see
    :func:`~scholarly_nlp.ml.backbones.resolve_backbone`); texts are truncated to
    ``max_length`` word pieces.
    """
    return Model(_TRANSFORMER_NAME, _transformer_forward, init=_transformer_init, dims={"nO": nO},
                 attrs={"name": name, "max_length": max_length, "mixed_precision": mixed_precision})


def _transformer_init(model: Model, X: Any = None, Y: Optional[Floats2d] = None) -> None:
    if Y is not None and not model.has_dim("nO"):
        model.set_dim("nO", int(Y.shape[1]))
    if not model.shims:
        load_transformer(model, resolve_backbone(model.attrs["name"]))


def load_transformer(model: Model, path: str) -> None:
    """Load tokenizer and weights from a Hugging Face folder or name into a TransformerClassifier.

    A plain encoder checkpoint gets a freshly initialised head with ``nO`` outputs (5 when
    unset); a saved classifier keeps its trained head and sets ``nO`` from it.
    """
    import transformers
    from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

    from .labels import FACET_LABELS

    config = AutoConfig.from_pretrained(path)
    trained = config.architectures and any(a.endswith("ForSequenceClassification") for a in config.architectures)
    n_labels = config.num_labels if trained else (model.get_dim("nO") if model.has_dim("nO") else len(FACET_LABELS))
    verbosity = transformers.logging.get_verbosity()
    transformers.logging.set_verbosity_error()  # the "newly initialized head" notice is expected here
    try:
        tokenizer = AutoTokenizer.from_pretrained(path)
        torch_model = AutoModelForSequenceClassification.from_pretrained(
            path, num_labels=n_labels, problem_type="multi_label_classification")
    finally:
        transformers.logging.set_verbosity(verbosity)
    from thinc.api import PyTorchShim

    model.shims[:] = [PyTorchShim(torch_model, mixed_precision=model.attrs.get("mixed_precision", False))]
    model.attrs[_TOKENIZER] = tokenizer
    model.set_dim("nO", n_labels, force=True)


def _transformer_forward(model: Model, texts: Sequence[str], is_train: bool) -> tuple[Floats2d, Callable]:
    from thinc.api import torch2xp, xp2torch

    if not model.shims:
        raise ValueError("the transformer classifier is not loaded: initialise the model (or load a trained one) first")
    if not texts:
        return model.ops.alloc2f(0, model.get_dim("nO")), lambda d: []
    shim = model.shims[0]
    encoded = model.attrs[_TOKENIZER](list(texts), truncation=True, max_length=model.attrs["max_length"],
                                      padding=True, return_tensors="pt")
    device = next(shim._model.parameters()).device
    inputs = ArgsKwargs(args=(), kwargs={k: v.to(device) for k, v in encoded.items()})
    output, shim_backprop = shim(inputs, is_train)
    logits = output.logits

    def backprop(d_logits: Floats2d) -> list:
        grad = xp2torch(d_logits).to(logits.device, dtype=logits.dtype)
        shim_backprop(ArgsKwargs(args=(logits,), kwargs={"grad_tensors": (grad,)}))
        return []

    return model.ops.asarray2f(torch2xp(logits.detach().float())), backprop


# --------------------------------------------------------------------------- state and persistence


def is_transformer(model: Model) -> bool:
    """True for a ``TransformerClassifier`` model."""
    return model.name == _TRANSFORMER_NAME


def is_ready(model: Model) -> bool:
    """True once the model can predict: TF-IDF fitted and linear layer allocated, or transformer loaded.

    Models of other architectures are assumed ready (their own forward pass reports otherwise).
    """
    if is_transformer(model):
        return bool(model.shims)
    if model.name == _TFIDF_NAME:
        features, linear = model.layers
        return features.attrs.get("vocabulary") is not None and bool(linear.has_param("W"))
    return True


def write_model(model: Model, path: Path) -> None:
    """Save a facet model into folder ``path``: a Hugging Face folder, or thinc bytes."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    if is_transformer(model):
        if model.shims:
            model.shims[0]._model.save_pretrained(str(path / _HF_DIR))
            model.attrs[_TOKENIZER].save_pretrained(str(path / _HF_DIR))
    else:
        (path / _WEIGHTS_FILE).write_bytes(model.to_bytes())


def read_model(model: Model, path: Path) -> Model:
    """Load what :func:`write_model` saved into ``model`` (no access to the original backbone)."""
    path = Path(path)
    if is_transformer(model):
        if (path / _HF_DIR).exists():
            load_transformer(model, str(path / _HF_DIR))
    elif (path / _WEIGHTS_FILE).exists():
        model.from_bytes((path / _WEIGHTS_FILE).read_bytes())
    return model
