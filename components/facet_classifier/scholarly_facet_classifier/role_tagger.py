"""The ``sentence_role_tagger`` pipeline component: the rhetorical role of each abstract sentence.

Every sentence of a paper's abstract (:func:`scholarly_nlp.doc.roles.abstract_sentences`)
gets one of the CSAbstruct roles ``background``, ``objective``, ``method``, ``result``,
``other``: the ``roles`` span group (read back by ``Span._.role``) and
``doc._.role_scores``, one ``{role: probability}`` dict per abstract sentence. Two models:

* ``scholarly_facet_classifier.AbstractRoleEncoder.v1`` (:mod:`.role_encoder`, shipped since
  2026-11-27): its own all-MiniLM-L6-v2 with LoRA adapters reads the whole abstract as one
  sequence; each sentence's mean hidden state and position go through a BiLSTM over the
  abstract and a softmax. Fine-tuned on CSAbstruct (dev accuracy .62 -> .68, macro-F1 .55 -> .66; issue 19).
  It needs no ``transformer`` pipe and saves as adapter + head beside a backbone reference;
* ``scholarly_facet_classifier.SentenceRoleTagger.v1`` (:mod:`.role_model`): the same head
  over mean-pooled token vectors of the shared ``transformer`` pipe, read through a
  ``TransformerListener`` (the default factory config; cheap to train, weaker).

Both are trained with cross-entropy on CSAbstruct's gold labels.

Architecture decision: the shared transformer is frozen
-------------------------------------------------------
Either way the shared ``transformer`` pipe is never moved by role training. A listener
tagger trains on it **frozen** (``frozen_components = ["transformer"]`` and
``annotating_components = ["transformer"]`` in ``configs/roles_frozen.cfg``; the listener
then reads ``doc._.trf_data``, set by the transformer as it annotates each batch), so:

* one encoder pass per paper serves both the role tagger and the aspect embedder;
* the aspect embedder's zero-shot behaviour is kept: fine-tuning MiniLM on role labels
  would move the embedding space that its similarity search relies on;
* training on a CPU costs forward passes of the encoder only (no backprop through it).

Only the projection, BiLSTM and softmax layers (about 0.2M parameters with MiniLM) learn. The
frozen MiniLM's token vectors carry little role signal (.62 dev accuracy), which is why the
shipped tagger pays a second, adapted encoder pass over the abstract (a few hundred word
pieces) instead: the aspect space still stays where it was. A frozen component is not
initialised by ``spacy train``, so configs initialise the transformer from its backbone
with the ``[initialize.before_init]`` callback
``scholarly_facet_classifier.init_frozen_transformer.v1`` defined here.

Shipped roles: a Doc that already has a non-empty ``roles`` group (CSFCube papers come with
their ``pred_labels``) keeps it unless the pipe is configured with ``overwrite = true``;
``doc._.role_scores`` always holds this tagger's probabilities.
"""

# No ``from __future__ import annotations``: spaCy validates initialize()'s settings from its
# signature with pydantic, which must resolve the annotations.
from itertools import islice
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

import numpy
import srsly
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.util import minibatch, registry
from spacy.vocab import Vocab
from thinc.api import Model, Optimizer, set_dropout_rate
from thinc.types import Floats2d

from scholarly_nlp import ROLE_GROUP, ROLES, ComponentSpec, abstract_sentences, set_roles
from scholarly_nlp.ml import (TrainingState, check_transformer_ran, folder_from_bytes, folder_to_bytes, is_loaded,
                              resolve_backbone, transformer_listener_config)

from .role_encoder import load_role_encoder, owns_encoder, save_role_encoder
from .role_model import ROLE_TAGGER_ARCH

__all__ = [
    "DEFAULT_ROLE_MODEL",
    "SentenceRoleTagger",
    "cohen_kappa",
    "gold_roles",
    "init_frozen_transformer",
    "make_sentence_role_tagger",
    "predicted_roles",
    "role_metrics",
]

DEFAULT_ROLE_MODEL = {
    "@architectures": ROLE_TAGGER_ARCH,
    "hidden_width": 128,
    "dropout": 0.1,
    "tok2vec": transformer_listener_config(),
}
ASSIGNS = ["doc.spans", "doc._.role_scores"]  # the "roles" span group and the scores
SCORE_WEIGHTS = {"roles_macro_f": 1.0, "roles_acc": 0.0}


SPEC = ComponentSpec(
    name="sentence_role_tagger",
    default_config={"model": DEFAULT_ROLE_MODEL, "overwrite": False, "batch_size": 32},
    assigns=ASSIGNS,
    default_score_weights=SCORE_WEIGHTS,
    extensions={
        # One {role: probability} dict per abstract sentence; None until the pipe ran.
        "doc._.role_scores": {"default": None},
    },
)
"""The component's one declaration: the factory, the plugin hook and the extensions read it."""


@SPEC.factory
def make_sentence_role_tagger(nlp: Language, name: str, model: Model, overwrite: bool,
                              batch_size: int) -> "SentenceRoleTagger":
    """spaCy factory of the abstract sentence role tagger."""
    return SentenceRoleTagger(nlp.vocab, model, name, overwrite=overwrite, batch_size=batch_size)


@registry.callbacks("scholarly_facet_classifier.init_frozen_transformer.v1")
# The old name (before issue 16), kept so configs written with it still load.
@registry.callbacks("scholarly_facets.init_frozen_transformer.v1")
def init_frozen_transformer(component: str = "transformer") -> Callable[[Language], Language]:
    """An ``[initialize.before_init]`` callback: load the backbone of a frozen transformer pipe.

    ``spacy train`` does not initialise frozen components, but a frozen shared transformer
    that comes straight from a Hugging Face backbone (not sourced from a trained pipeline)
    still needs its weights, and its listeners their width. The callback loads the weights
    when the pipe has none (the backbone name goes through
    :func:`scholarly_nlp.ml.backbones.resolve_backbone` first, so ``all-MiniLM-L6-v2`` means
    the packaged copy) and gives every listener of the pipe (in any later component) the
    transformer's width; a pipe that already has its weights is left alone.
    """

    def before_init(nlp: Language) -> Language:
        if component not in nlp.component_names:
            return nlp
        trf = nlp.get_pipe(component)
        if not trf.model.attrs.get("has_transformer", True):
            name = trf.model.attrs.get("name")
            if isinstance(name, str):  # "all-MiniLM-L6-v2" -> the packaged copy, folders -> absolute
                trf.model.attrs["name"] = resolve_backbone(name)
            trf.model.initialize(X=[Doc(Vocab(), words=["hello"])])
        later = nlp.component_names[nlp.component_names.index(component) + 1:]
        for name in later:
            if hasattr(trf, "find_listeners"):
                trf.find_listeners(nlp.get_pipe(name))
        if trf.model.has_dim("nO"):
            for listener in getattr(trf, "listeners", []):
                if not listener.has_dim("nO"):
                    listener.set_dim("nO", trf.model.get_dim("nO"))
        return nlp

    return before_init


def gold_roles(doc: Doc) -> Optional[List[str]]:
    """The roles of a Doc's ``roles`` group in sentence order, or None when it has none."""
    spans = sorted(doc.spans.get(ROLE_GROUP, []), key=lambda s: s.start) if ROLE_GROUP in doc.spans else []
    return [s.label_ for s in spans] if spans else None


class SentenceRoleTagger(TrainingState, TrainablePipe):
    """Tags each abstract sentence with its rhetorical role (see the module docstring)."""

    training_project = "projects/aspect_embedder"

    def __init__(self, vocab: Vocab, model: Model, name: str = "sentence_role_tagger", *,
                 overwrite: bool = False, batch_size: int = 32):
        SPEC.install_extensions()
        self.vocab = vocab
        self.model = model
        self.name = name
        self.cfg = {"overwrite": bool(overwrite), "batch_size": int(batch_size), "labels": list(ROLES)}

    @property
    def labels(self) -> Tuple[str, ...]:
        """The roles, in the order of the model's output columns."""
        return tuple(self.cfg["labels"])

    # -- inference --------------------------------------------------------------------
    def pipe(self, stream: Iterable[Doc], *, batch_size: Optional[int] = None) -> Iterator[Doc]:
        """Tag a stream of Docs, ``batch_size`` (default: the configured one) at a time."""
        size = max(1, int(batch_size or self.cfg["batch_size"]))
        for docs in minibatch(stream, size=size):
            docs = list(docs)
            self.set_annotations(docs, self.predict(docs))
            yield from docs

    def predict(self, docs: Iterable[Doc]) -> List[numpy.ndarray]:
        """Per Doc, an ``(abstract sentences, 5)`` float32 array of role probabilities."""
        self.warn_if_untrained()
        docs = list(docs)
        if not docs:
            return []
        if not owns_encoder(self.model):
            check_transformer_ran(self.name, docs)
        probs = self.model.predict(docs)
        return [self.model.ops.to_numpy(p).astype("float32") for p in probs]

    def set_annotations(self, docs: Iterable[Doc], probs: List[numpy.ndarray]) -> None:
        """Write ``doc._.role_scores`` and, unless shipped roles are kept, the ``roles`` group.

        The ``roles`` group gets each sentence's most probable role; a Doc that already has
        a non-empty ``roles`` group keeps it unless ``overwrite`` is set.
        """
        for doc, doc_probs in zip(docs, probs):
            sentences = abstract_sentences(doc)
            if len(sentences) != len(doc_probs):
                raise ValueError(f"{self.name}: {len(doc_probs)} score rows for {len(sentences)} abstract sentences")
            doc._.role_scores = [{role: float(p) for role, p in zip(self.labels, row)} for row in doc_probs]
            if self.cfg["overwrite"] or not doc.spans.get(ROLE_GROUP):
                set_roles(doc, [self.labels[int(i)] for i in numpy.argmax(doc_probs, axis=1)] if len(doc_probs)
                          else [], sentences)

    # -- training ---------------------------------------------------------------------
    def update(self, examples: Iterable[Example], *, drop: float = 0.0, sgd: Optional[Optimizer] = None,
               losses: Optional[Dict[str, float]] = None) -> Dict[str, float]:
        """One step of cross-entropy training on the examples whose reference has roles.

        The listener hands the gradient of the token vectors back to the transformer pipe
        when that pipe is trained too; with a frozen transformer it is dropped.
        """
        losses = {} if losses is None else losses
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_examples(examples, "SentenceRoleTagger.update")
        if not any(len(eg.predicted) for eg in examples):
            return losses
        set_dropout_rate(self.model, drop)
        scores, backprop = self.model.begin_update([eg.predicted for eg in examples])
        loss, d_scores = self.get_loss(examples, scores)
        backprop(d_scores)
        if sgd not in (None, False):
            self.finish_update(sgd)
        losses[self.name] += loss
        self.mark_trained()
        return losses

    def get_loss(self, examples: Iterable[Example], scores: List[Floats2d]) -> Tuple[float, List[Floats2d]]:
        """Mean cross-entropy over the gold-labelled sentences and its gradient wrt the logits.

        Gold roles come from each reference Doc's ``roles`` group, aligned by index with the
        predicted Doc's abstract sentences (both Docs share their tokens); an example whose
        reference has no roles gets a zero gradient. ValueError when the counts differ.
        """
        ops = self.model.ops
        grads, total_loss, n_total = [], 0.0, 0
        rows = []
        for eg, doc_scores in zip(examples, scores):
            probs = ops.to_numpy(doc_scores).astype("float64")
            gold = gold_roles(eg.reference)
            if gold is None or not len(probs):
                rows.append((probs, None))
                continue
            if len(gold) != len(probs):
                raise ValueError(f"{self.name}: the reference has {len(gold)} roles but the predicted Doc "
                                 f"{len(probs)} abstract sentences")
            rows.append((probs, numpy.asarray([self.labels.index(r) for r in gold])))
            n_total += len(gold)
        for probs, gold_idx in rows:
            grad = numpy.zeros(probs.shape, dtype="float32")
            if gold_idx is not None:
                picked = probs[numpy.arange(len(gold_idx)), gold_idx]
                total_loss += float(-numpy.log(numpy.clip(picked, 1e-9, 1.0)).sum())
                grad = probs.copy()
                grad[numpy.arange(len(gold_idx)), gold_idx] -= 1.0
                grad = (grad / n_total).astype("float32")
            grads.append(ops.asarray2f(grad))
        return (total_loss / n_total if n_total else 0.0), grads

    def initialize(self, get_examples: Callable[[], Iterable[Example]], *, nlp: Optional[Language] = None) -> None:
        """Initialise the model's layers from a sample of (up to 16) training examples."""
        validate_get_examples(get_examples, "SentenceRoleTagger.initialize")
        sample = [eg.predicted for eg in islice(get_examples(), 16)]
        self.model.initialize(X=sample or None)

    # -- serialisation ----------------------------------------------------------------
    # A listener model saves as any thinc model. A model with its own encoder
    # (AbstractRoleEncoder.v1) would save its whole backbone that way, so it writes a
    # backbone reference, its LoRA adapter or weight difference, and its head instead
    # (role_encoder.save_role_encoder).
    def to_disk(self, path: Any, *, exclude: Iterable[str] = tuple()) -> None:
        """Write ``cfg`` and the model (compactly for a model with its own encoder)."""
        if not owns_encoder(self.model):
            return super().to_disk(path, exclude=exclude)
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        srsly.write_json(path / "cfg", self.cfg)
        if is_loaded(self.model):
            save_role_encoder(self.model, path / "model")

    def from_disk(self, path: Any, *, exclude: Iterable[str] = tuple()) -> "SentenceRoleTagger":
        """Load what :meth:`to_disk` wrote."""
        if not owns_encoder(self.model):
            return super().from_disk(path, exclude=exclude)
        path = Path(path)
        if (path / "cfg").exists():
            self.cfg.update(srsly.read_json(path / "cfg"))
        if (path / "model").is_dir():
            load_role_encoder(self.model, path / "model")
        return self

    def to_bytes(self, *, exclude: Iterable[str] = tuple()) -> bytes:
        """The pipe as bytes (for a model with its own encoder: the :meth:`to_disk` folder as a tar archive)."""
        if not owns_encoder(self.model):
            return super().to_bytes(exclude=exclude)
        return folder_to_bytes(self.to_disk)

    def from_bytes(self, data: bytes, *, exclude: Iterable[str] = tuple()) -> "SentenceRoleTagger":
        """Load what :meth:`to_bytes` produced."""
        if not owns_encoder(self.model):
            return super().from_bytes(data, exclude=exclude)
        return folder_from_bytes(data, self.from_disk)

    # -- evaluation -------------------------------------------------------------------
    def score(self, examples: Iterable[Example], **kwargs: Any) -> Dict[str, Any]:
        """``roles_acc``, ``roles_macro_f`` and ``roles_per_type`` over the gold-labelled sentences.

        Predictions are the argmax of the predicted Doc's ``doc._.role_scores`` (this tagger's
        own output, also when shipped roles were kept), else its ``roles`` group. Scores are
        None when no example has gold roles.
        """
        gold_all: List[str] = []
        pred_all: List[str] = []
        for eg in examples:
            gold = gold_roles(eg.reference)
            if gold is None:
                continue
            pred = predicted_roles(eg.predicted)
            if pred is None or len(pred) != len(gold):
                pred = (pred or []) + ["<none>"] * max(0, len(gold) - len(pred or []))
                pred = pred[: len(gold)]
            gold_all.extend(gold)
            pred_all.extend(pred)
        if not gold_all:
            return {"roles_acc": None, "roles_macro_f": None, "roles_per_type": None}
        metrics = role_metrics(gold_all, pred_all, self.labels)
        return {"roles_acc": metrics["accuracy"], "roles_macro_f": metrics["macro_f1"],
                "roles_per_type": metrics["per_label"]}


def predicted_roles(doc: Doc) -> Optional[List[str]]:
    """A tagged Doc's roles: argmax of ``doc._.role_scores`` when set, else its ``roles`` group."""
    scores = doc._.role_scores if Doc.has_extension("role_scores") else None
    if scores is not None:
        return [max(row, key=row.get) for row in scores]
    return gold_roles(doc)


def role_metrics(gold: Sequence[str], predicted: Sequence[str], labels: Sequence[str] = ROLES) -> Dict[str, Any]:
    """Accuracy, macro-F1, Cohen's kappa and per-label P/R/F1 of predicted against gold roles.

    The macro average is over the labels that occur in the gold or the predicted roles (a
    label absent from both has no defined F1). ``per_label`` maps each of ``labels`` to
    ``{"p", "r", "f", "support"}``.
    """
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold roles but {len(predicted)} predicted")
    n = len(gold)
    correct = sum(g == p for g, p in zip(gold, predicted))
    per_label: Dict[str, Dict[str, float]] = {}
    f_values = []
    for label in labels:
        tp = sum(g == label and p == label for g, p in zip(gold, predicted))
        n_gold = sum(g == label for g in gold)
        n_pred = sum(p == label for p in predicted)
        prec = tp / n_pred if n_pred else 0.0
        rec = tp / n_gold if n_gold else 0.0
        f = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
        per_label[label] = {"p": prec, "r": rec, "f": f, "support": n_gold}
        if n_gold or n_pred:
            f_values.append(f)
    return {
        "n": n,
        "accuracy": correct / n if n else 0.0,
        "macro_f1": float(numpy.mean(f_values)) if f_values else 0.0,
        "kappa": cohen_kappa(gold, predicted),
        "per_label": per_label,
    }


def cohen_kappa(a: Sequence[str], b: Sequence[str]) -> float:
    """Cohen's kappa between two label sequences of equal length (1.0 when both are one constant label)."""
    if len(a) != len(b):
        raise ValueError(f"{len(a)} labels against {len(b)}")
    n = len(a)
    if not n:
        return 0.0
    observed = sum(x == y for x, y in zip(a, b)) / n
    labels = set(a) | set(b)
    expected = sum((sum(x == lab for x in a) / n) * (sum(y == lab for y in b) / n) for lab in labels)
    if expected >= 1.0:
        return 1.0
    return (observed - expected) / (1.0 - expected)
