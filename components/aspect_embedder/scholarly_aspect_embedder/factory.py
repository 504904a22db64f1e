"""The ``aspect_embedder`` pipeline component (a spaCy ``TrainablePipe``).

It needs the shared ``transformer`` pipe before it (its model listens to it) and sentence
roles on the abstract (``sentence_role_tagger``, or roles shipped with the data); without
roles every abstract aspect falls back to the whole title+abstract.

Outputs per Doc: ``doc._.aspect_vectors`` ({aspect: float32 vector}),
``doc._.sentence_vectors`` (mean-pooled token vectors of each title/abstract sentence,
rows aligned with :func:`scholarly_nlp.doc.roles.aspect_sentences`, for explanations) and
``doc._.aspect_fallbacks`` ({aspect: reason} for aspects pooled over everything). A Doc
with no text gets ``aspect_vectors = None`` and the reason in ``aspect_fallbacks``.

Training (``update``) is weakly supervised: Examples whose reference Doc has
``paper_meta["aspect_group"]`` set form groups of views of one paper, and the loss is
:func:`~.loss.aspect_triplet_loss` over the batch (see that module for the supervision);
``paper_meta["aspect_group_aspects"]`` (a list of query aspects) limits what a group teaches,
and ``paper_meta["aspect_paper"]`` names the paper of a Doc whose ``paper_id`` names a view of it.
"""

# No ``from __future__ import annotations``: spaCy validates the factory's signature.
from typing import Callable, Iterable, List, Optional

import numpy
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc
from spacy.training import Example, validate_examples
from spacy.vocab import Vocab
from thinc.api import Model, Optimizer

from scholarly_nlp import ASPECTS, ComponentSpec, aspect_sentences
from scholarly_nlp.ml import check_transformer_ran, transformer_listener_config

from .loss import aspect_triplet_loss
from .model import ARCH

GROUP_KEY = "aspect_group"
"""``paper_meta`` key naming the group a training Doc belongs to (a paper and its views, or a
co-citation)."""

GROUP_ASPECTS_KEY = "aspect_group_aspects"
"""``paper_meta`` key listing the query aspects a Doc's group teaches (absent: all of them)."""

PAPER_KEY = "aspect_paper"
"""``paper_meta`` key naming the paper a Doc is a view of when its ``paper_id`` names the view
(e.g. a pseudo-abstract of a paper's citances): a Doc of that paper is never its negative."""

DEFAULT_MODEL = {
    "@architectures": ARCH,
    "width": 384,
    "max_tokens": 512,
    "dropout": 0.1,
    "tok2vec": transformer_listener_config(),
}


SPEC = ComponentSpec(
    name="aspect_embedder",
    default_config={"model": DEFAULT_MODEL, "margin": 0.2, "aspect_weight": 1.0},
    assigns=("doc._.aspect_vectors", "doc._.sentence_vectors", "doc._.aspect_fallbacks"),
    requires=("doc._.trf_data",),
    default_score_weights={"aspect_loss": None},
    extensions={
        # {aspect: float32 vector} for title/background/method/result; None for a Doc with no text.
        "doc._.aspect_vectors": {"default": None},
        # float32 (n, width), one row per scholarly_nlp.aspect_sentences(doc).
        "doc._.sentence_vectors": {"default": None},
        # Aspects whose vector is a fallback (no sentence of that aspect): {aspect: reason}.
        "doc._.aspect_fallbacks": {"default": None},
    },
)
"""The component's one declaration: the factory, the plugin hook and the extensions read it."""


@SPEC.factory
def make_aspect_embedder(nlp: Language, name: str, model: Model, margin: float,
                         aspect_weight: float) -> "AspectEmbedder":
    """spaCy factory of the aspect embedder."""
    return AspectEmbedder(nlp.vocab, model, name, margin=margin, aspect_weight=aspect_weight)


def sentence_vectors(doc: Doc, tokvecs) -> numpy.ndarray:
    """Mean token vector of each title/abstract sentence (rows of ``aspect_sentences``)."""
    vecs = numpy.asarray(tokvecs.get() if hasattr(tokvecs, "get") else tokvecs, dtype="float32")
    units = aspect_sentences(doc)
    out = numpy.zeros((len(units), vecs.shape[1] if vecs.ndim == 2 else 0), dtype="float32")
    for i, (span, _) in enumerate(units):
        if len(span):
            out[i] = vecs[span.start : span.end].mean(axis=0)
    return out


class AspectEmbedder(TrainablePipe):
    """Sets per-aspect paper vectors by attention pooling over the shared transformer."""

    def __init__(self, vocab: Vocab, model: Model, name: str = "aspect_embedder", *, margin: float = 0.2,
                 aspect_weight: float = 1.0) -> None:
        SPEC.install_extensions()
        self.vocab = vocab
        self.model = model
        self.name = name
        self.cfg = {"margin": float(margin), "aspect_weight": float(aspect_weight)}

    def predict(self, docs: Iterable[Doc]):
        """Aspect matrices (4, width) and sentence vectors of each Doc."""
        docs = list(docs)
        # spacy-transformers' pooling fails on a batch of token-less Docs: they get None.
        texts = [i for i, doc in enumerate(docs) if len(doc)]
        aspects: list = [None] * len(docs)
        sentvecs: list = [numpy.zeros((0, self.model.get_dim("nO")), dtype="float32")] * len(docs)
        if texts:
            batch = [docs[i] for i in texts]
            check_transformer_ran(self.name, batch)
            matrices = self.model.predict(batch)
            tokvecs = self.model.get_ref("tok2vec").predict(batch)
            for i, matrix, doc, vecs in zip(texts, matrices, batch, tokvecs):
                aspects[i] = matrix
                sentvecs[i] = sentence_vectors(doc, vecs)
        return aspects, sentvecs

    def set_annotations(self, docs: Iterable[Doc], predictions) -> None:
        """Write ``aspect_vectors``, ``sentence_vectors`` and ``aspect_fallbacks``."""
        from .model import aspect_layout

        aspects, sentvecs = predictions
        for doc, matrix, svecs in zip(docs, aspects, sentvecs):
            fallbacks = aspect_layout(doc, self.model.attrs["max_tokens"]).fallbacks
            if matrix is None or not len(doc):
                doc._.aspect_vectors = None
            else:
                matrix = numpy.asarray(matrix.get() if hasattr(matrix, "get") else matrix, dtype="float32")
                doc._.aspect_vectors = {a: matrix[i].copy() for i, a in enumerate(ASPECTS)}
            doc._.sentence_vectors = svecs
            doc._.aspect_fallbacks = fallbacks

    def analysis(self, doc: Doc) -> dict:
        """The embedder's part of ``scholarly-nlp analyze``'s record: the title, background, method
        and result vectors (None for a Doc without text) and the aspects computed by fallback."""
        vectors = doc._.aspect_vectors
        return {
            "aspects": None if vectors is None else {a: [round(float(x), 6) for x in v] for a, v in vectors.items()},
            "aspect_fallbacks": dict(doc._.aspect_fallbacks or {}),
        }

    def update(self, examples: Iterable[Example], *, drop: float = 0.0, sgd: Optional[Optimizer] = None,
               losses: Optional[dict] = None) -> dict:
        """One weakly supervised step: triplet loss over the groups in the batch."""
        losses = {} if losses is None else losses
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_examples(examples, "AspectEmbedder.update")
        if not examples:
            return losses
        docs = [eg.predicted for eg in examples]
        outputs, backprop = self.model.begin_update(docs)
        loss, d_outputs = self.get_loss(examples, outputs)
        xp = self.model.ops.xp
        backprop([xp.asarray(d) for d in d_outputs])
        if sgd is not None:
            self.finish_update(sgd)
        losses[self.name] += loss
        return losses

    def get_loss(self, examples: Iterable[Example], scores) -> tuple:
        """Triplet loss over the batch and its gradient, one (4, width) array per example."""
        examples = list(examples)
        xp = self.model.ops.xp
        loss, grad = self._triplet_loss(examples, xp.stack(list(scores)))
        return loss, [grad[i] for i in range(len(grad))]

    def _triplet_loss(self, examples: List[Example], stacked) -> tuple:
        metas = [eg.reference._.paper_meta or {} for eg in examples]
        return aspect_triplet_loss(stacked, [meta.get(GROUP_KEY) for meta in metas], margin=self.cfg["margin"],
                                   aspect_weight=self.cfg["aspect_weight"], papers=_paper_ids(examples),
                                   aspects=[meta.get(GROUP_ASPECTS_KEY) for meta in metas])

    def initialize(self, get_examples: Callable[[], Iterable[Example]], *, nlp: Optional[Language] = None) -> None:
        """Initialise the model from a sample of the training Docs."""
        validate_examples(get_examples(), "AspectEmbedder.initialize")
        sample = [eg.predicted for eg in list(get_examples())[:10]]
        self.model.initialize(X=sample)

    def score(self, examples: Iterable[Example], **kwargs) -> dict:
        """Mean triplet loss of the examples' groups (lower is better; None without groups)."""
        examples = list(examples)
        groups = [(eg.reference._.paper_meta or {}).get(GROUP_KEY) for eg in examples]
        if not any(g is not None for g in groups):
            return {"aspect_loss": None}
        outputs = self.model.predict([eg.predicted for eg in examples])
        loss, _ = self._triplet_loss(examples, self.model.ops.xp.stack(list(outputs)))
        return {"aspect_loss": loss}


def _paper_ids(examples: List[Example]) -> list:
    """Each example's paper (``paper_meta["aspect_paper"]``, else its paper id; None where
    unknown), so a paper is never its own negative."""
    return [(eg.reference._.paper_meta or {}).get(PAPER_KEY) or getattr(eg.reference._, "paper_id", None) or None
            for eg in examples]
