"""The ``citance_facet_classifier`` pipeline component (a spaCy ``TrainablePipe``).

It runs on reference-paper Docs: every dict of ``doc._.incoming_citances`` (a citance
that cites this paper) is classified from its ``text`` into the CL-SciSumm discourse
facets, multi-label:

* ``doc._.citance_facet_scores = {citance id: {label: probability}}`` (sigmoid of the
  model's logits);
* ``doc._.citance_facets = {citance id: [labels]}``: the labels with probability >=
  ``threshold``; when fewer than ``min_labels`` pass, the most probable others are added
  (by default every citance gets at least its argmax facet, as CL-SciSumm gold always has).

A Doc without incoming citances gets ``{}`` for both. Training (``update``) uses binary
cross-entropy with logits against the gold ``facets`` of the citances of each example's
*reference* Doc; citances without gold facets are skipped. :meth:`classify` and
:meth:`predict_proba` classify plain texts outside a Doc.
"""

# No ``from __future__ import annotations``: spaCy validates initialize()'s settings from its
# signature with pydantic, which must resolve the annotations.
from pathlib import Path
from typing import Any, Callable, Iterable, Optional, Sequence

import numpy
import srsly
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc
from spacy.training import Example, validate_examples
from spacy.vocab import Vocab
from thinc.api import Model, Optimizer
from thinc.types import Floats2d

from scholarly_nlp import ComponentSpec
from scholarly_nlp.metrics import facet_f1
from scholarly_nlp.ml import TrainingState, folder_from_bytes, folder_to_bytes

from .labels import FACET_LABELS, decide_labels, label_matrix
from .models import TFIDF_ARCH, is_ready, read_model, write_model

DEFAULT_MODEL = {
    "@architectures": TFIDF_ARCH,
    "ngram_range_max": 2,
    "min_df": 1,
    "max_features": 50000,
    "sublinear_tf": True,
}
CONFIG_FILE = "cfg"
MODEL_DIR = "model"


SPEC = ComponentSpec(
    name="citance_facet_classifier",
    default_config={"model": DEFAULT_MODEL, "threshold": 0.5, "min_labels": 1, "batch_size": 32},
    assigns=["doc._.citance_facets", "doc._.citance_facet_scores"],
    default_score_weights={"citance_facets_f1": 1.0, "citance_facets_p": 0.0, "citance_facets_r": 0.0},
    extensions={
        # citance id -> labels; None until the pipe ran.
        "doc._.citance_facets": {"default": None},
        # citance id -> {label: probability}.
        "doc._.citance_facet_scores": {"default": None},
    },
)
"""The component's one declaration: the factory, the plugin hook and the extensions read it."""


@SPEC.factory
def make_citance_facet_classifier(nlp: Language, name: str, model: Model, threshold: float, min_labels: int,
                                  batch_size: int) -> "CitanceFacetClassifier":
    """spaCy factory of the citance facet classifier."""
    return CitanceFacetClassifier(nlp.vocab, model, name, threshold=threshold, min_labels=min_labels,
                                  batch_size=batch_size)


def incoming_citances(doc: Doc) -> list[dict]:
    """The citances that cite ``doc`` (``doc._.incoming_citances``; [] when unset)."""
    if not Doc.has_extension("incoming_citances"):
        return []
    return list(doc._.incoming_citances or [])


def own_citances(doc: Doc) -> list[dict]:
    """The paper's own citances (``doc._.citances``) as ``{"id": "c<i>", "text"}`` records."""
    return [{"id": f"c{i}", "text": citance.text} for i, citance in enumerate(doc._.citances)]


def classified_citances(doc: Doc) -> list[dict]:
    """What the classifier labels in ``doc``: the citances that cite it when it has any (a
    reference paper), else its own citances (why it cites each work)."""
    return incoming_citances(doc) or own_citances(doc)


def citance_id(citance: dict, index: int) -> str:
    """A citance's id as a string; its position when it has none."""
    value = citance.get("id")
    return str(index) if value is None or value == "" else str(value)


class CitanceFacetClassifier(TrainingState, TrainablePipe):
    """Classifies citances into discourse facets (multi-label): the citances that cite a
    reference paper, or, for a paper without them, the paper's own citances (ids ``c0``,
    ``c1``, ... in ``doc._.citances`` order)."""

    training_project = "projects/citance_linkage"

    def __init__(self, vocab: Vocab, model: Model, name: str = "citance_facet_classifier", *,
                 threshold: float = 0.5, min_labels: int = 1, batch_size: int = 32,
                 labels: Sequence[str] = FACET_LABELS):
        SPEC.install_extensions()
        self.vocab = vocab
        self.model = model
        self.name = name
        self.cfg = {"threshold": threshold, "min_labels": min_labels, "batch_size": batch_size,
                    "labels": list(labels)}

    @property
    def labels(self) -> tuple[str, ...]:
        """The facet labels, in the order of the model's outputs."""
        return tuple(self.cfg["labels"])

    # -- inference on texts -----------------------------------------------------------
    def predict_proba(self, texts: Sequence[str]) -> numpy.ndarray:
        """A (texts, labels) float32 numpy array of sigmoid probabilities.

        Texts go through the model ``batch_size`` at a time, grouped by length (less padding
        for a transformer); rows are in the order of ``texts``.
        """
        texts = list(texts)
        if not texts:
            return numpy.zeros((0, len(self.labels)), dtype="float32")
        if not is_ready(self.model):
            raise ValueError(f"{self.name} is not initialised: call nlp.initialize(...) with training "
                             "examples, or load a trained pipeline")
        order = _by_length(texts)
        size = max(1, int(self.cfg["batch_size"]))
        probs = numpy.zeros((len(texts), len(self.labels)), dtype="float32")
        for start in range(0, len(texts), size):
            rows = order[start : start + size]
            logits = self.model.ops.to_numpy(self.model.predict([texts[i] for i in rows]))
            probs[rows] = _sigmoid(logits.astype("float32"))
        return probs

    def decide(self, probs: Sequence[float]) -> list[str]:
        """Labels of one row of probabilities under the configured threshold and ``min_labels``."""
        return decide_labels(probs, self.labels, self.cfg["threshold"], self.cfg["min_labels"])

    def classify(self, texts: Sequence[str]) -> list[list[str]]:
        """The facet labels of each text (see :meth:`decide`)."""
        return [self.decide(row) for row in self.predict_proba(texts)]

    # -- inference on Docs ------------------------------------------------------------
    def predict(self, docs: Iterable[Doc]) -> list[numpy.ndarray]:
        """Per doc, a (citances, labels) probability array for its :func:`classified_citances`."""
        self.warn_if_untrained()
        docs = list(docs)
        per_doc = [[c.get("text") or "" for c in classified_citances(doc)] for doc in docs]
        probs = self.predict_proba([text for texts in per_doc for text in texts])
        out, start = [], 0
        for texts in per_doc:
            out.append(probs[start : start + len(texts)])
            start += len(texts)
        return out

    def set_annotations(self, docs: Iterable[Doc], probs: list[numpy.ndarray]) -> None:
        """Write ``doc._.citance_facets`` and ``doc._.citance_facet_scores``."""
        for doc, doc_probs in zip(docs, probs):
            facets, scores = {}, {}
            for i, (citance, row) in enumerate(zip(classified_citances(doc), doc_probs)):
                key = citance_id(citance, i)
                facets[key] = self.decide(row)
                scores[key] = {label: float(p) for label, p in zip(self.labels, row)}
            doc._.citance_facets = facets
            doc._.citance_facet_scores = scores

    def analysis(self, doc: Doc) -> dict:
        """The classifier's part of ``scholarly-nlp analyze``'s record: for a reference paper, why
        each incoming citance cites it (by citance id); otherwise the ``facets`` of each of the
        paper's own citances (why it cites that work), merged into the record's ``citances``."""
        facets = dict(doc._.citance_facets or {})
        if incoming_citances(doc):
            return {"incoming_citance_facets": facets}
        return {"citances": [{"facets": facets.get(c["id"], [])} for c in own_citances(doc)]}

    # -- training ---------------------------------------------------------------------
    def training_data(self, examples: Iterable[Example]) -> tuple[list[str], numpy.ndarray]:
        """(texts, gold label matrix) of the citances with gold facets in the examples' reference docs."""
        texts, facets = [], []
        for eg in examples:
            for citance in incoming_citances(eg.reference):
                if citance.get("facets") and (citance.get("text") or "").strip():
                    texts.append(citance["text"])
                    facets.append(citance["facets"])
        return texts, label_matrix(facets, self.labels)

    def initialize(self, get_examples: Callable[[], Iterable[Example]], *, nlp: Optional[Language] = None,
                   labels: Optional[Sequence[str]] = None) -> None:
        """Set the labels (default: the five CL-SciSumm facets) and fit the model on the training citances.

        The TF-IDF model fits its vocabulary on the citance texts of the examples' reference
        docs, so those must carry ``doc._.incoming_citances`` with gold facets; the transformer
        loads its backbone.
        """
        examples = list(get_examples())
        validate_examples(examples, "CitanceFacetClassifier.initialize")
        if labels is not None:
            self.cfg["labels"] = list(labels)
        texts, gold = self.training_data(examples)
        if self.model.has_dim("nO") is not True or self.model.get_dim("nO") != len(self.labels):
            self.model.set_dim("nO", len(self.labels), force=True)
        try:
            self.model.initialize(X=texts or None, Y=gold if texts else None)
        except ValueError as exc:
            if texts:
                raise
            raise ValueError(f"{self.name}.initialize needs examples whose reference docs carry "
                             f"doc._.incoming_citances with gold facets ({exc})") from exc

    def update(self, examples: Iterable[Example], *, drop: float = 0.0, sgd: Optional[Optimizer] = None,
               losses: Optional[dict[str, float]] = None) -> dict[str, float]:
        """One optimiser step of BCE-with-logits on the gold-labelled citances of the examples.

        The citances are passed through the model ``batch_size`` at a time, sorted by length
        (less padding), and their gradients accumulated, so a large batch of papers needs no
        large forward pass.
        """
        losses = {} if losses is None else losses
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_examples(examples, "CitanceFacetClassifier.update")
        texts, gold = self.training_data(examples)
        if not texts:
            return losses
        order = _by_length(texts)
        size = max(1, int(self.cfg["batch_size"]))
        total = 0.0
        for start in range(0, len(texts), size):
            rows = order[start : start + size]
            logits, backprop = self.model.begin_update([texts[i] for i in rows])
            loss, d_logits = bce_with_logits(self.model.ops.to_numpy(logits), gold[rows], len(texts))
            backprop(self.model.ops.asarray2f(d_logits))
            total += loss
        if sgd is not None:
            self.finish_update(sgd)
        losses[self.name] += total
        self.mark_trained()
        return losses

    def get_loss(self, examples: Iterable[Example], scores: Floats2d) -> tuple[float, Floats2d]:
        """BCE with logits (summed over labels, averaged over citances) and its gradient.

        ``scores`` are the model's logits for :meth:`training_data` of ``examples``, in order.
        """
        _, gold = self.training_data(examples)
        loss, d_scores = bce_with_logits(self.model.ops.to_numpy(scores), gold, len(gold))
        return loss, self.model.ops.asarray2f(d_scores)

    def score(self, examples: Iterable[Example], **kwargs: Any) -> dict[str, Any]:
        """Micro P/R/F1 over the gold-labelled citances (per-label sets), plus a per-label table.

        Predictions are read from the predicted doc's ``citance_facets`` by citance id. When
        the predicted doc carries no incoming citances (spaCy's corpus readers build it from
        the text alone), the reference doc's citances are classified here instead. Scores are
        None when no citance has gold facets.
        """
        gold, predicted = [], []
        for eg in examples:
            ref_citances = incoming_citances(eg.reference)
            found = eg.predicted._.citance_facets if incoming_citances(eg.predicted) else None
            if found is None and any(c.get("facets") for c in ref_citances):
                texts = [c.get("text") or "" for c in ref_citances]
                found = {citance_id(c, i): labels for i, (c, labels) in enumerate(zip(ref_citances, self.classify(texts)))}
            for i, citance in enumerate(ref_citances):
                if citance.get("facets"):
                    gold.append(list(citance["facets"]))
                    predicted.append(list((found or {}).get(citance_id(citance, i), [])))
        if not gold:
            return {"citance_facets_f1": None, "citance_facets_p": None, "citance_facets_r": None,
                    "citance_facets_per_type": None}
        result = facet_f1(gold, predicted, labels=self.labels)
        per_type = {label: {"p": row["precision"], "r": row["recall"], "f": row["f1"]}
                    for label, row in result["per_label"].items()}
        return {"citance_facets_f1": result["f1_micro"], "citance_facets_p": result["precision_micro"],
                "citance_facets_r": result["recall_micro"], "citance_facets_per_type": per_type}

    # -- serialisation ----------------------------------------------------------------
    def to_disk(self, path: Any, *, exclude: Iterable[str] = tuple()) -> None:
        """Save the config (labels, threshold...) and the model (thinc bytes or a Hugging Face folder)."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        srsly.write_json(path / CONFIG_FILE, self.cfg)
        write_model(self.model, path / MODEL_DIR)

    def from_disk(self, path: Any, *, exclude: Iterable[str] = tuple()) -> "CitanceFacetClassifier":
        """Load what :meth:`to_disk` wrote; a transformer needs no access to its original backbone."""
        path = Path(path)
        if (path / CONFIG_FILE).exists():
            self.cfg.update(srsly.read_json(path / CONFIG_FILE))
        if (path / MODEL_DIR).exists():
            read_model(self.model, path / MODEL_DIR)
        return self

    def to_bytes(self, *, exclude: Iterable[str] = tuple()) -> bytes:
        """The :meth:`to_disk` folder as one tar archive in bytes."""
        return folder_to_bytes(self.to_disk)

    def from_bytes(self, data: bytes, *, exclude: Iterable[str] = tuple()) -> "CitanceFacetClassifier":
        """Load what :meth:`to_bytes` produced."""
        return folder_from_bytes(data, self.from_disk)


def _by_length(texts: Sequence[str]) -> numpy.ndarray:
    """Indices of ``texts`` from shortest to longest (stable)."""
    return numpy.argsort(numpy.asarray([len(t) for t in texts]), kind="stable")


def _sigmoid(logits: numpy.ndarray) -> numpy.ndarray:
    """Numerically stable logistic function."""
    out = numpy.empty_like(logits)
    positive = logits >= 0
    out[positive] = 1.0 / (1.0 + numpy.exp(-logits[positive]))
    exp = numpy.exp(logits[~positive])
    out[~positive] = exp / (1.0 + exp)
    return out


def bce_with_logits(logits: numpy.ndarray, gold: numpy.ndarray, n_items: int) -> tuple[float, numpy.ndarray]:
    """Binary cross-entropy of ``logits`` against 0/1 ``gold``, summed over labels, divided by ``n_items``.

    Returns (loss, gradient with respect to the logits), both numpy. ``n_items`` is the
    size of the whole batch when ``logits`` is one chunk of it, so chunk losses add up.
    """
    logits = numpy.asarray(logits, dtype="float64")
    gold = numpy.asarray(gold, dtype="float64")
    # log(1 + exp(-|x|)) + max(x, 0) - x * y, the stable form of -[y log p + (1 - y) log(1 - p)]
    loss = numpy.logaddexp(0.0, -numpy.abs(logits)) + numpy.maximum(logits, 0.0) - logits * gold
    n = max(int(n_items), 1)
    grad = (_sigmoid(logits) - gold) / n
    return float(loss.sum() / n), grad.astype("float32")
