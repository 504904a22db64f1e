"""The ``figure_embedder`` pipeline component (a spaCy ``TrainablePipe``).

Inference: each candidate figure (kind "figure"; tables too with ``include_tables``) gets an
L2-normalised embedding in ``doc._.figure_vectors`` (figure id -> list of floats, JSON-able,
so it survives DocBin and the JSON export). Defined results for awkward papers: no figure
-> ``{}``; a figure with no caption and no mention still gets a vector (its text features
are zero); a figure without a decodable image uses the learned missing-image vector.

Training (weak supervision, Kuzi and Zhai): pairs of figures with a target relatedness -
1 for the same paper, 0.6 for papers in a citation relation, 0 for random papers - and a
loss on the embeddings' dot product (``loss``: ``mse`` as in the paper, ``cross_entropy``
or ``triplet``). The batch's figures are the anchors; partners come from a store of all
training figures and a citation-relation table, both set up by :meth:`initialize`
(``[initialize.components.figure_embedder]``: ``relations_path``, ``text_cache_path``).

The text side's sentence encoder is frozen and not saved with the pipeline: it is named by
``encoder`` (the default all-MiniLM-L6-v2 is a pip-installed package).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any, Callable, Iterable, Optional, Sequence

import numpy
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc
from spacy.training import Example, validate_examples
from spacy.vocab import Vocab
from thinc.api import Model, Optimizer

from scholarly_nlp import ComponentSpec, ScholarlyNLPError, write_atomic
from scholarly_nlp.ml import TrainingState, folder_from_bytes, folder_to_bytes

from .features import FigureFeatures, Featurizer, make_batch
from .losses import LOSSES, pair_loss
from .relations import KINDS, RelationTable
from .sampling import PairSampler
from .scoring import embedding_aucs
from .text_vectors import TextVectorCache

log = logging.getLogger(__name__)

DEFAULT_MODEL = {
    "@architectures": "scholarly_figure_embedder.FigureEmbedder.v1",
    "encoder_width": 384,
    "text_width": 256,
    "image_size": 128,
    "conv_channels": [16, 32, 64, 64],
    "image_width": 64,
    "embedding_width": 128,
    "dropout": 0.1,
}
CONFIG_FILE = "cfg"
MODEL_FILE = "model"
RELATIONS_FILE = "relations.json"


SPEC = ComponentSpec(
    name="figure_embedder",
    default_config={
        "model": DEFAULT_MODEL,
        "encoder": "all-MiniLM-L6-v2",
        "include_tables": False,
        "window": 1,
        "max_mentions": 3,
        "loss": "mse",
        "same_paper_target": 1.0,
        "citation_target": 0.6,
        "random_target": 0.0,
        "related_kinds": list(KINDS),
        "n_same": 1,
        "n_related": 1,
        "n_random": 2,
        "max_anchors": 48,
        "margin": 0.2,
        "ce_scale": 5.0,
        "rerank_weight": 0.1,
        "n_candidates": 100,
        "batch_size": 64,
        "seed": 0,
    },
    assigns=["doc._.figure_vectors"],
    default_score_weights={"figure_same_auc": 0.5, "figure_citing_auc": 0.5},
    extensions={
        # figure id -> embedding (list of floats); None until the pipe ran.
        "doc._.figure_vectors": {"default": None},
    },
)
"""The component's one declaration: the factory, the plugin hook and the extensions read it."""


@SPEC.factory
def make_figure_embedder(nlp: Language, name: str, model: Model, encoder: str, include_tables: bool, window: int,
                         max_mentions: int, loss: str, same_paper_target: float, citation_target: float,
                         random_target: float, related_kinds: list[str], n_same: int, n_related: int, n_random: int,
                         max_anchors: int, margin: float, ce_scale: float, rerank_weight: float, n_candidates: int,
                         batch_size: int, seed: int) -> "FigureEmbedder":
    """spaCy factory of the figure embedder."""
    return FigureEmbedder(nlp.vocab, model, name, encoder=encoder, include_tables=include_tables, window=window,
                          max_mentions=max_mentions, loss=loss, same_paper_target=same_paper_target,
                          citation_target=citation_target, random_target=random_target,
                          related_kinds=related_kinds, n_same=n_same, n_related=n_related, n_random=n_random,
                          max_anchors=max_anchors, margin=margin, ce_scale=ce_scale, rerank_weight=rerank_weight,
                          n_candidates=n_candidates, batch_size=batch_size, seed=seed)


class FigureEmbedder(TrainingState, TrainablePipe):
    """Embeds each figure of a paper from its text and its image."""

    training_project = "projects/figure_embeddings"

    def __init__(self, vocab: Vocab, model: Model, name: str = "figure_embedder", *,
                 encoder: str = "all-MiniLM-L6-v2", include_tables: bool = False, window: int = 1,
                 max_mentions: int = 3, loss: str = "mse", same_paper_target: float = 1.0,
                 citation_target: float = 0.6, random_target: float = 0.0,
                 related_kinds: Sequence[str] = KINDS, n_same: int = 1, n_related: int = 1, n_random: int = 2,
                 max_anchors: int = 48, margin: float = 0.2, ce_scale: float = 5.0, rerank_weight: float = 0.1,
                 n_candidates: int = 100, batch_size: int = 64, seed: int = 0):
        if loss not in LOSSES:
            raise ValueError(f"unknown loss {loss!r}; known: {', '.join(LOSSES)}")
        unknown = [k for k in related_kinds if k not in KINDS]
        if unknown:
            raise ValueError(f"unknown relation kinds {unknown}; known: {', '.join(KINDS)}")
        SPEC.install_extensions()
        self.vocab = vocab
        self.model = model
        self.name = name
        self.cfg = {
            "encoder": encoder, "include_tables": include_tables, "window": window, "max_mentions": max_mentions,
            "loss": loss, "same_paper_target": same_paper_target, "citation_target": citation_target,
            "random_target": random_target, "related_kinds": list(related_kinds), "n_same": n_same,
            "n_related": n_related, "n_random": n_random, "max_anchors": max_anchors, "margin": margin,
            "ce_scale": ce_scale, "rerank_weight": rerank_weight, "n_candidates": n_candidates,
            "batch_size": batch_size, "seed": seed,
        }
        self.relations = RelationTable()
        self._featurizer: Optional[Featurizer] = None
        self._sampler: Optional[PairSampler] = None

    # -- inputs -----------------------------------------------------------------------
    @property
    def featurizer(self) -> Featurizer:
        """Text vectors (frozen encoder, cached) and images of the figures, per config."""
        if self._featurizer is None:
            self._featurizer = Featurizer(TextVectorCache(self.cfg["encoder"]), self.model.attrs["image_size"],
                                          self.cfg["include_tables"], self.cfg["window"], self.cfg["max_mentions"])
        return self._featurizer

    def use_text_cache(self, path: Any) -> int:
        """Load precomputed text vectors (``.npz`` from :meth:`TextVectorCache.save`); returns their number."""
        return self.featurizer.texts.load(path)

    def _check_widths(self) -> None:
        expected = self.model.attrs["encoder_width"]
        if self.featurizer.texts.dim != expected:
            raise ScholarlyNLPError(
                f"figure_embedder: the encoder {self.cfg['encoder']!r} gives {self.featurizer.texts.dim}-d vectors but "
                f"the model expects encoder_width = {expected}; set [components.{self.name}.model] encoder_width")

    def features(self, docs: Iterable[Doc]) -> list[list[FigureFeatures]]:
        """Per doc, the model inputs of its candidate figures."""
        features = self.featurizer.features(docs)
        if any(features):
            self._check_widths()
        return features

    def embed(self, figures: Sequence[FigureFeatures]) -> numpy.ndarray:
        """Embeddings (n, width) of figures at inference, ``batch_size`` figures per forward pass."""
        width = self.model.attrs["embedding_width"]
        parts = []
        for start in range(0, len(figures), self.cfg["batch_size"]):
            chunk = figures[start : start + self.cfg["batch_size"]]
            batch = make_batch(chunk, 2 * self.model.attrs["encoder_width"], self.model.attrs["image_size"])
            parts.append(self.model.ops.to_numpy(self.model.predict(batch)))
        return numpy.concatenate(parts) if parts else numpy.zeros((0, width), dtype=numpy.float32)

    # -- inference --------------------------------------------------------------------
    def predict(self, docs: Iterable[Doc]) -> list[dict[str, list[float]]]:
        """Per doc, figure id -> embedding (a list of floats)."""
        self.warn_if_untrained()
        per_doc = self.features(docs)
        flat = [f for figures in per_doc for f in figures]
        vectors = self.embed(flat)
        results, row = [], 0
        for figures in per_doc:
            results.append({f.fig_id: [float(x) for x in vectors[row + i]] for i, f in enumerate(figures)})
            row += len(figures)
        return results

    def set_annotations(self, docs: Iterable[Doc], vectors: list[dict[str, list[float]]]) -> None:
        """Write ``doc._.figure_vectors``."""
        for doc, doc_vectors in zip(docs, vectors):
            doc._.figure_vectors = doc_vectors

    def similar_figures(self, query_doc: Doc, fig_id: str, candidate_docs: Iterable[Doc], k: int = 10, *,
                        same_paper: bool = False) -> list[tuple[str, str, float]]:
        """TF-IDF retrieval then embedding rerank (see :func:`scholarly_figure_embedder.similar_figures`)."""
        from .recommend import similar_figures

        return similar_figures(query_doc, fig_id, candidate_docs, k, embedder=self, same_paper=same_paper)

    # -- training ---------------------------------------------------------------------
    def _make_sampler(self) -> PairSampler:
        cfg = self.cfg
        return PairSampler(self.relations, cfg["related_kinds"], same=cfg["same_paper_target"],
                           related=cfg["citation_target"], unrelated=cfg["random_target"], n_same=cfg["n_same"],
                           n_related=cfg["n_related"], n_random=cfg["n_random"], max_anchors=cfg["max_anchors"],
                           seed=cfg["seed"])

    @property
    def sampler(self) -> PairSampler:
        """The training pair sampler (its store fills at :meth:`initialize` or as batches come)."""
        if self._sampler is None:
            self._sampler = self._make_sampler()
        return self._sampler

    def initialize(self, get_examples: Callable[[], Iterable[Example]], *, nlp: Optional[Language] = None,
                   relations_path: Optional[str] = None, text_cache_path: Optional[str] = None,
                   chunk_size: int = 32) -> None:
        """Load the relation table and text-vector cache (optional), and store every training figure."""
        validate_examples(get_examples(), "FigureEmbedder.initialize")
        if text_cache_path:
            count = self.use_text_cache(text_cache_path)
            log.info("figure_embedder: %d cached text vectors from %s", count, text_cache_path)
        if relations_path:
            self.relations = RelationTable.load(relations_path)
        self._sampler = self._make_sampler()
        chunk: list[Doc] = []
        for eg in get_examples():
            chunk.append(eg.reference)
            if len(chunk) >= chunk_size:
                self.sampler.add(self.features(chunk))
                chunk = []
        if chunk:
            self.sampler.add(self.features(chunk))
        self.model.initialize()

    def _batch_features(self, docs: Sequence[Doc]) -> list[list[FigureFeatures]]:
        """The batch papers' features: from the store when known, else computed (and stored)."""
        store = self.sampler.store
        unknown = [doc for doc in docs if doc._.paper_id not in store]
        if unknown:
            self.sampler.add(self.features(unknown))
        return [store.get(doc._.paper_id, []) for doc in docs]

    def update(self, examples: Iterable[Example], *, drop: float = 0.0, sgd: Optional[Optimizer] = None,
               losses: Optional[dict[str, float]] = None) -> dict[str, float]:
        """One step on the weakly supervised pairs of the examples' papers."""
        losses = {} if losses is None else losses
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_examples(examples, "FigureEmbedder.update")
        pairs = self.sampler.sample(self._batch_features([eg.reference for eg in examples]))
        if not len(pairs):
            return losses
        batch = make_batch(pairs.figures, 2 * self.model.attrs["encoder_width"], self.model.attrs["image_size"])
        embeddings, backprop = self.model.begin_update(batch)
        loss, d_embeddings = self.get_loss(examples, (embeddings, pairs))
        backprop(self.model.ops.asarray2f(d_embeddings))
        if sgd is not None:
            self.finish_update(sgd)
        losses[self.name] += loss
        self.mark_trained()
        return losses

    def get_loss(self, examples: Iterable[Example], scores: Any) -> tuple[float, numpy.ndarray]:
        """The configured pair loss; ``scores`` is (embeddings, the ``PairBatch`` they embed)."""
        embeddings, pairs = scores
        host = self.model.ops.to_numpy(embeddings)
        return pair_loss(self.cfg["loss"], host, pairs.left, pairs.right, pairs.targets,
                         scale=self.cfg["ce_scale"], margin=self.cfg["margin"])

    def score(self, examples: Iterable[Example], **kwargs: Any) -> dict[str, Optional[float]]:
        """Threshold-free dev scores on held-out papers: ROC AUC of the embedding cosine for
        same-paper vs other-paper pairs (``figure_same_auc``) and citation-related vs unrelated
        pairs of different papers (``figure_citing_auc``; None without related pairs)."""
        docs = [eg.predicted for eg in examples]
        missing = [d for d in docs if d._.figure_vectors is None]
        if missing:
            self.set_annotations(missing, self.predict(missing))
        keys, rows = [], []
        for doc in docs:
            for fig_id, vector in (doc._.figure_vectors or {}).items():
                keys.append(doc._.paper_id or "")
                rows.append(vector)
        matrix = numpy.asarray(rows, dtype=numpy.float32).reshape(len(rows), -1)
        return embedding_aucs(matrix, keys, self.relations, self.cfg["related_kinds"])

    # -- serialisation ----------------------------------------------------------------
    def to_disk(self, path: Any, *, exclude: Iterable[str] = tuple()) -> None:
        """Save the config, the network's weights and the relation table."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        # The standard json module both ways: ujson (srsly) reads 0.6 back as 0.6000000000000001.
        write_atomic(path / CONFIG_FILE, json.dumps(self.cfg, indent=2))
        self.model.to_disk(path / MODEL_FILE)
        if len(self.relations):
            self.relations.save(path / RELATIONS_FILE)

    def from_disk(self, path: Any, *, exclude: Iterable[str] = tuple()) -> "FigureEmbedder":
        """Load what :meth:`to_disk` wrote (the text encoder is found by name, it is not stored)."""
        path = Path(path)
        if (path / CONFIG_FILE).exists():
            self.cfg.update(json.loads((path / CONFIG_FILE).read_text(encoding="utf-8")))
            self._featurizer = None
            self._sampler = None
        if (path / MODEL_FILE).exists():
            self.model.from_disk(path / MODEL_FILE)
        if (path / RELATIONS_FILE).exists():
            self.relations = RelationTable.load(path / RELATIONS_FILE)
        return self

    def to_bytes(self, *, exclude: Iterable[str] = tuple()) -> bytes:
        """The :meth:`to_disk` folder as one tar archive in bytes."""
        return folder_to_bytes(self.to_disk)

    def from_bytes(self, data: bytes, *, exclude: Iterable[str] = tuple()) -> "FigureEmbedder":
        """Load what :meth:`to_bytes` produced."""
        return folder_from_bytes(data, self.from_disk)
