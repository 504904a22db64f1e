"""The ``contribution_detector`` pipeline component (a spaCy ``TrainablePipe``).

On a paper Doc it scores every introduction sentence
(:func:`.features.introduction_features`, i.e.
``scholarly_nlp.introduction_and_body(doc)[0]``) with the
probability that the sentence states one of the paper's contributions, and writes:

* ``doc._.contribution_scores``: a list of floats aligned with those sentences (``[]`` for
  a Doc without sections or without an introduction);
* ``doc._.contribution_sentence_offsets``: ``[[start, end], ...]`` token offsets of the
  sentences scoring at least ``threshold`` (a plain list, so it survives ``DocBin``);
* ``doc._.contribution_sentences``: those sentences as Spans (a getter over the offsets).

The model is any thinc model from a list of Docs to a ``(n, 1)`` array of probabilities;
the default is spaCy's sparse linear n-gram classifier ``spacy.TextCatBOW.v3``
(``exclusive_classes=false``, so a sigmoid output) over one small Doc per sentence: its
tokens plus context pseudo-tokens (:mod:`.features`).

Training reads the gold from the *reference* Doc of each Example:
``doc._.contribution_gold`` (made for NCG papers by :mod:`.ncg_docs`); the loss is binary
cross-entropy, positives weighted by ``positive_weight`` (default 4.5, about the
negative/positive ratio of NCG introduction sentences: 3883/853). :meth:`ContributionDetector.score`
gives precision/recall/F1 of the positive class over the gold sentences.

**Stage 2** (optional): ``stage2`` is a boosted-tree model (``scholarly_nlp.BoostedTrees.v1``)
that rescores each introduction sentence from its stage-1 probability *relative to the rest of
its introduction* (:mod:`.stacking`: neighbours' probabilities, rank, position, cosines to the
title and to the abstract's sentences with the frozen ``sentence_encoder``, first cue phrases).
With an ``embedding_scorer`` (a ``scholarly_nlp.LogisticRegression.v1`` over the frozen
embeddings of each sentence and its neighbours and the sentence's place in the paper), stage 2
also sees that second stage-1 probability and its relations; with a ``tagger`` (a
``scholarly_contribution_detector.IntroductionTagger.v1``, :mod:`.tagger`: the backbone
fine-tuned through LoRA over whole introductions), a third. ``spacy train`` leaves them
unfitted, and an unfitted stage 2 is skipped. :meth:`ContributionDetector.fit_stage2` fits the
embedding scorer and the tagger on the gold labels, once per fold of the training papers and
then on all of them, and the trees on out-of-fold probabilities of all the stage-1 scorers (the
n-gram model's from :func:`.stacking.out_of_fold_scores`; the contribution linker project's
``fit-detector-stage2`` step); all are saved with the pipe (the tagger as a LoRA adapter and
its head, beside a reference to the backbone). Trees record which scorers they were fitted
with, so a pipeline fitted with fewer scorers loads and runs as it was fitted.
"""

# No ``from __future__ import annotations``: spaCy validates initialize()'s settings from its
# signature with pydantic, which must resolve the annotations.
import shutil
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Optional, Sequence

import numpy
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc
from spacy.training import Example, validate_examples
from spacy.vocab import Vocab
import srsly
from thinc.api import Model, Optimizer

from scholarly_nlp import ComponentSpec, abstract_sentences
from scholarly_nlp.ml import (DEFAULT_BACKBONE, TrainingState, backbone_record_name, drop_trees, drop_weights,
                              fit_boosted_trees, fit_logistic_regression, folder_from_bytes, folder_to_bytes,
                              has_trees, has_weights)

from .data import CUE_PATTERNS, cue_flags, id_folds
from .features import contribution_sentences, introduction_features, model_docs
from .stacking import (ABSTRACT_COLUMNS, NEIGHBOURS, abstract_similarity, introduction_context, neighbour_vectors,
                       paper_ids, sentence_context, stage2_matrix)
from .tagger import (TAGGER_MODEL, drop_introduction_tagger, fit_introduction_tagger, has_introduction_tagger,
                     load_introduction_tagger, move_introduction_tagger, save_introduction_tagger, take_fit,
                     unfitted_copy)

ASSIGNS = ("doc._.contribution_scores", "doc._.contribution_sentence_offsets", "doc._.contribution_sentences")

DEFAULT_MODEL = {
    "@architectures": "spacy.TextCatBOW.v3",
    "exclusive_classes": False,
    "ngram_size": 2,
    "no_output_layer": False,
    "nO": 1,
    "length": 262144,
}

DEFAULT_STAGE2 = {
    "@architectures": "scholarly_nlp.BoostedTrees.v1",
    "n_trees": 150,
    "learning_rate": 0.05,
    "max_leaf_nodes": 15,
    "min_samples_leaf": 1,
    "balanced": True,
}
"""The stage-2 settings chosen by out-of-fold F1 on the training papers
(``benchmarks/contribution_detector_stacking_bow.py``: candidate ``embedding_context+textcat_bow |
cues=False | fast``, so with the embedding scorer and without the cue window)."""

EMBEDDING_C = 0.3
DEFAULT_EMBEDDING_SCORER = {
    "@architectures": "scholarly_nlp.LogisticRegression.v1",
    "C": EMBEDDING_C,
    "balanced": True,
}
"""The second stage-1 scorer: a logistic regression over the frozen embeddings of the sentence
and its two neighbours and the sentence's context in the paper (:func:`.stacking.sentence_context`),
C chosen by grouped CV on the training papers (``benchmarks/contribution_detector_embeddings.py``,
feature set ``embedding_context``)."""

STAGE2_FILE = "stage2"
STAGE2_MODEL = "scholarly_nlp.boosted_trees"
EMBEDDING_FILE = "embedding_scorer"
EMBEDDING_MODEL = "scholarly_nlp.logistic_regression"
TAGGER_FILE = "tagger"
STAGE2_RECORDS = ("abstract", "cue_window", "embedding_scorer", "sentence_encoder", "tagger")
"""What fitted trees record in their attrs about the features they were fitted on."""
RELATIONAL_WIDTH = 2 * NEIGHBOURS + 6
"""Features per stage-1 probability set (:func:`.stacking.relational_features`)."""


SPEC = ComponentSpec(
    name="contribution_detector",
    default_config={"model": DEFAULT_MODEL, "threshold": 0.5, "positive_weight": 4.5, "stage2": DEFAULT_STAGE2,
                    "embedding_scorer": DEFAULT_EMBEDDING_SCORER, "stage2_cue_window": False,
                    "sentence_encoder": DEFAULT_BACKBONE, "tagger": None},
    assigns=list(ASSIGNS),
    default_score_weights={"contribution_f1": 1.0, "contribution_p": 0.0, "contribution_r": 0.0},
    extensions={
        # One probability per introduction sentence.
        "doc._.contribution_scores": {"default": None},
        # [start, end] token offsets of the detected sentences.
        "doc._.contribution_sentence_offsets": {"default": None},
        "doc._.contribution_sentences": {"getter": contribution_sentences},
        # Training labels of NCG Docs.
        "doc._.contribution_gold": {"default": None},
    },
)
"""The component's one declaration: the factory, the plugin hook and the extensions read it."""


@SPEC.factory
def make_contribution_detector(nlp: Language, name: str, model: Model, threshold: float,
                               positive_weight: float, stage2: Optional[Model], embedding_scorer: Optional[Model],
                               stage2_cue_window: bool, sentence_encoder: str,
                               tagger: Optional[Model]) -> "ContributionDetector":
    """spaCy factory of the contribution detector."""
    return ContributionDetector(nlp.vocab, model, name, threshold=threshold, positive_weight=positive_weight,
                                stage2=stage2, embedding_scorer=embedding_scorer,
                                stage2_cue_window=stage2_cue_window, sentence_encoder=sentence_encoder, tagger=tagger)


def gold_items(doc: Doc) -> list[dict]:
    """The Doc's ``contribution_gold`` items ([] when it has none)."""
    return list(doc._.contribution_gold or [])


class ContributionDetector(TrainingState, TrainablePipe):
    """Scores a paper's introduction sentences as contribution statements."""

    training_project = "projects/contribution_linker"

    def __init__(self, vocab: Vocab, model: Model, name: str = "contribution_detector", *,
                 threshold: float = 0.5, positive_weight: float = 4.5, stage2: Optional[Model] = None,
                 embedding_scorer: Optional[Model] = None, stage2_cue_window: bool = False,
                 sentence_encoder: str = DEFAULT_BACKBONE, tagger: Optional[Model] = None):
        if not 0.0 <= float(threshold) <= 1.0:
            raise ValueError(f"contribution_detector: threshold must be in [0, 1], got {threshold!r}")
        if not float(positive_weight) > 0:
            raise ValueError(f"contribution_detector: positive_weight must be > 0, got {positive_weight!r}")
        SPEC.install_extensions()
        self.vocab = vocab
        self.model = model
        self.name = name
        if stage2 is not None and stage2.name != STAGE2_MODEL:
            raise ValueError(f"contribution_detector: stage2 must be a scholarly_nlp.BoostedTrees.v1 model, got {stage2.name!r}")
        if embedding_scorer is not None and embedding_scorer.name != EMBEDDING_MODEL:
            raise ValueError("contribution_detector: embedding_scorer must be a scholarly_nlp.LogisticRegression.v1 "
                             f"model, got {embedding_scorer.name!r}")
        if tagger is not None and tagger.name != TAGGER_MODEL:
            raise ValueError("contribution_detector: tagger must be a "
                             f"scholarly_contribution_detector.IntroductionTagger.v1 model, got {tagger.name!r}")
        self.cfg = {"threshold": float(threshold), "positive_weight": float(positive_weight)}
        # The config, not the saved cfg, says which encoder and features stage 2 uses: what a
        # fitted stage 2 was fitted with is recorded in its attrs and checked (check_stage2).
        self.stage2 = stage2
        self.embedding_scorer = embedding_scorer
        self.tagger = tagger
        self.stage2_cue_window = bool(stage2_cue_window)
        self.sentence_encoder = str(sentence_encoder)
        # the sentence Docs only feed hashed n-grams to the model: keep their strings out of nlp.vocab
        self._inner_vocab = Vocab()
        self._encoder = None  # loaded on first use by a fitted stage 2

    @property
    def has_stage2(self) -> bool:
        """Whether a fitted stage 2 rescores the stage-1 probabilities."""
        return self.stage2 is not None and has_trees(self.stage2)

    @property
    def stage2_uses_embeddings(self) -> bool:
        """Whether the fitted stage 2 was fitted with the embedding scorer's probabilities."""
        return self.has_stage2 and bool(self.stage2.attrs.get("embedding_scorer"))

    @property
    def stage2_uses_tagger(self) -> bool:
        """Whether the fitted stage 2 was fitted with the introduction tagger's probabilities."""
        return self.has_stage2 and bool(self.stage2.attrs.get("tagger"))

    @property
    def stage2_uses_abstract(self) -> bool:
        """Whether the fitted stage 2 was fitted with the cosines to the abstract's sentences
        (trees fitted before those existed record nothing and run without them)."""
        return self.has_stage2 and bool(self.stage2.attrs.get("abstract"))

    # -- inference --------------------------------------------------------------------
    def predict_proba(self, texts: Sequence[str], features: Sequence[Sequence[str]]) -> numpy.ndarray:
        """Stage-1 probabilities (float32, one per sentence) for sentence texts with their context
        features (stage 2 needs whole introductions: :meth:`predict`)."""
        texts = list(texts)
        if not texts:
            return numpy.zeros((0,), dtype="float32")
        scores = self.model.predict(model_docs(self._inner_vocab, texts, features))
        return self.model.ops.to_numpy(scores).reshape(len(texts), -1)[:, 0].astype("float32")

    def predict_stage1(self, docs: Iterable[Doc]) -> list[tuple[list, numpy.ndarray]]:
        """Per doc: ``(introduction sentence Spans, their stage-1 probabilities)``; all docs'
        sentences go through the model in one call."""
        docs = list(docs)
        inputs = [introduction_features(doc) for doc in docs]
        texts = [s.text for sentences, _ in inputs for s in sentences]
        features = [f for _, feats in inputs for f in feats]
        probs = self.predict_proba(texts, features)
        out, start = [], 0
        for sentences, _ in inputs:
            out.append((sentences, probs[start : start + len(sentences)]))
            start += len(sentences)
        return out

    def predict(self, docs: Iterable[Doc]) -> list[tuple[list, numpy.ndarray]]:
        """Per doc: ``(introduction sentence Spans, their probabilities)``: stage 1's, rescored
        by stage 2 when it is fitted."""
        self.warn_if_untrained()
        docs = list(docs)
        stage1 = self.predict_stage1(docs)
        if not self.has_stage2:
            return stage1
        self.check_stage2()
        matrices = self.stage2_features(docs, [probs for _, probs in stage1], embeddings=self.stage2_uses_embeddings,
                                        abstract=self.stage2_uses_abstract, tagger=self.stage2_uses_tagger)
        out = []
        for doc, (sentences, probs), matrix in zip(docs, stage1, matrices):
            if len(sentences):
                try:
                    rescored = self.stage2.predict(matrix.astype("float32"))
                except ValueError as error:
                    raise ValueError(f"contribution_detector: stage 2 failed on the doc {doc_label(doc)}: {error}") from error
                probs = self.stage2.ops.to_numpy(rescored)[:, 0].astype("float32")
            out.append((sentences, probs))
        return out

    def drop_stage2(self, reason: str) -> None:
        """Forget fitted stage-2 trees (with a warning): they were fitted on scores of the stage 1
        that ``reason`` (an ``initialize`` or ``update``) is about to change."""
        if self.has_stage2:
            warnings.warn(f"contribution_detector: {reason} changes stage 1, so the stage-2 trees fitted on its "
                          "old scores are dropped; fit them again (fit-detector-stage2)", stacklevel=3)
            drop_trees(self.stage2)

    def stage2_width(self, embeddings: Optional[bool] = None, abstract: bool = True,
                     tagger: Optional[bool] = None) -> int:
        """How many features :meth:`stage2_features` computes per sentence with this config
        (``embeddings``, ``tagger``: with the embedding scorer's, the introduction tagger's
        probabilities, by default when one is configured; ``abstract``: with the cosines to the
        abstract, as :meth:`fit_stage2` fits)."""
        if embeddings is None:
            embeddings = self.embedding_scorer is not None
        if tagger is None:
            tagger = self.tagger is not None
        return (RELATIONAL_WIDTH * (1 + bool(embeddings) + bool(tagger)) + 8 + 2 * len(CUE_PATTERNS)
                + (ABSTRACT_COLUMNS if abstract else 0) + (3 * len(CUE_PATTERNS) if self.stage2_cue_window else 0))

    def check_stage2(self) -> None:
        """Refuse a fitted stage 2 whose recorded features differ from the configured ones
        (``stage2_cue_window``) or from what this version computes; warn when it was fitted
        with another sentence encoder."""
        fitted_cues = self.stage2.attrs.get("cue_window")
        if fitted_cues is not None and bool(fitted_cues) != self.stage2_cue_window:
            raise ValueError(f"contribution_detector: stage 2 was fitted with stage2_cue_window={bool(fitted_cues)}, "
                             f"but the config says {self.stage2_cue_window}")
        if self.stage2_uses_embeddings and not (self.embedding_scorer is not None and has_weights(self.embedding_scorer)):
            raise ValueError("contribution_detector: stage 2 was fitted with the embedding scorer's probabilities, but "
                             "the pipe has no fitted embedding_scorer: fit both again (fit-detector-stage2)")
        if self.stage2_uses_tagger and not (self.tagger is not None and has_introduction_tagger(self.tagger)):
            raise ValueError("contribution_detector: stage 2 was fitted with the introduction tagger's probabilities, "
                             "but the pipe has no fitted tagger: fit both again (fit-detector-stage2)")
        width = self.stage2_width(self.stage2_uses_embeddings, self.stage2_uses_abstract, self.stage2_uses_tagger)
        if self.stage2.get_dim("nI") != width:
            raise ValueError(f"contribution_detector: stage 2 was fitted on {self.stage2.get_dim('nI')} features per "
                             f"sentence; this version computes {width}: fit it again (fit-detector-stage2)")
        fitted_encoder = self.stage2.attrs.get("sentence_encoder")
        if fitted_encoder is not None and fitted_encoder != backbone_record_name(self.sentence_encoder):
            warnings.warn(f"contribution_detector: stage 2 was fitted with the sentence encoder {fitted_encoder!r}; "
                          f"the config names {self.sentence_encoder!r}, so its title similarities may differ", stacklevel=2)

    # -- stage 2 ----------------------------------------------------------------------
    def sentence_vectors(self, texts: Sequence[str]) -> numpy.ndarray:
        """Unit sentence embeddings of ``texts`` from the frozen ``sentence_encoder`` (loaded once,
        on the GPU when the pipe's model runs there, as after ``spacy.require_gpu()``)."""
        if self._encoder is None:
            from scholarly_nlp.ml import SentenceEncoder

            self._encoder = SentenceEncoder(self.sentence_encoder, device=self.encoder_device())
        return self._encoder.encode(list(texts))

    def encoder_device(self) -> Optional[str]:
        """The torch device of the sentence encoder: the GPU the pipe's thinc ops use, else None (CPU)."""
        ops = self.model.ops
        return f"cuda:{ops.device_id}" if getattr(ops, "device_type", "cpu") == "gpu" else None

    def embed_introductions(self, docs: Sequence[Doc], *, abstract: bool = True
                            ) -> list[tuple[list, Optional[numpy.ndarray], numpy.ndarray, numpy.ndarray]]:
        """Per doc: ``(introduction sentence Spans, title vector, sentence vectors, abstract
        sentence vectors)`` from the frozen ``sentence_encoder``, all docs in one call (without
        ``abstract``, no abstract sentence is embedded and each doc's abstract vectors are a
        ``(0, width)`` array); a doc without an introduction embeds nothing (``(spans, None,
        (0, 1) array, (0, 1) array)``)."""
        sentences = [introduction_features(doc)[0] for doc in docs]
        scored = [i for i, spans in enumerate(sentences) if spans]
        titles = [docs[i].spans["title"][0].text if docs[i].spans.get("title") else "" for i in scored]
        abstracts = {i: [s.text for s in abstract_sentences(docs[i])] if abstract else [] for i in scored}
        texts = [s.text for i in scored for s in sentences[i]] + [t for i in scored for t in abstracts[i]]
        vectors = self.sentence_vectors(titles + texts) if scored else None
        title_of = {i: row for row, i in enumerate(scored)}
        out, start = [], len(scored)
        abstract_start = start + sum(len(sentences[i]) for i in scored)
        empty = numpy.zeros((0, 1), dtype="float32")
        for i, spans in enumerate(sentences):
            if spans:
                n_abstract = len(abstracts[i])
                out.append((spans, vectors[title_of[i]], vectors[start : start + len(spans)],
                            vectors[abstract_start : abstract_start + n_abstract]))
                abstract_start += n_abstract
            else:
                out.append((spans, None, empty, empty))
            start += len(spans)
        return out

    @staticmethod
    def embedding_features(docs: Sequence[Doc], embedded: Sequence[tuple]) -> list[numpy.ndarray]:
        """Per doc, the embedding scorer's rows of its introduction sentences: the embeddings of
        the sentence and its two neighbours (:func:`.stacking.neighbour_vectors`), then the
        sentence's context in the paper (:func:`.stacking.sentence_context`); ``embedded``: the
        docs' :meth:`embed_introductions`."""
        return [numpy.hstack([neighbour_vectors(vectors), sentence_context(doc, spans)]) if spans
                else numpy.zeros((0, 0), dtype="float32") for doc, (spans, _, vectors, _) in zip(docs, embedded)]

    def embedding_probs(self, docs: Sequence[Doc], embedded: Sequence[tuple]) -> list[numpy.ndarray]:
        """The fitted embedding scorer's probability for each introduction sentence of each doc
        (``embedded``: the docs' :meth:`embed_introductions`)."""
        out = []
        for rows in self.embedding_features(docs, embedded):
            if not len(rows):
                out.append(numpy.zeros((0,), dtype="float32"))
                continue
            probs = self.embedding_scorer.predict(rows)
            out.append(self.embedding_scorer.ops.to_numpy(probs)[:, 0].astype("float32"))
        return out

    def stage2_features(self, docs: Sequence[Doc], stage1_probs: Sequence[Sequence[float]], *,
                        embeddings: bool = False, abstract: bool = True,
                        embedding_probs: Optional[Sequence[Sequence[float]]] = None,
                        embedded: Optional[Sequence[tuple]] = None, tagger: bool = False,
                        tagger_probs: Optional[Sequence[Sequence[float]]] = None) -> list[numpy.ndarray]:
        """Per doc, the stage-2 rows of its introduction sentences (:func:`.stacking.stage2_matrix`)
        from their stage-1 probabilities ``stage1_probs`` (one array per doc, aligned with
        :func:`.features.introduction_features`); titles, introductions and abstracts are embedded in one call.
        With ``embeddings``, the embedding scorer's probabilities come first: ``embedding_probs``
        when given (out-of-fold ones, for fitting), else the fitted scorer's. With ``abstract``
        (as :meth:`fit_stage2` fits), the context ends with the sentences'
        :func:`.stacking.abstract_similarity`. ``embedded``: the docs' :meth:`embed_introductions`,
        when the caller has them. With ``tagger``, the introduction tagger's probabilities come
        after stage 1's: ``tagger_probs`` when given (out-of-fold ones), else the fitted tagger's."""
        if embedded is None:
            embedded = self.embed_introductions(docs, abstract=abstract)
        for doc, (spans, _, _, _), probs in zip(docs, embedded, stage1_probs):
            if len(spans) != len(probs):
                raise ValueError(f"contribution_detector: {len(probs)} stage-1 probabilities for "
                                 f"{len(spans)} introduction sentences of the doc {doc_label(doc)}")
        if embeddings and embedding_probs is None:
            embedding_probs = self.embedding_probs(docs, embedded)
        if tagger and tagger_probs is None:
            tagger_probs = self.tagger_probs([spans for spans, _, _, _ in embedded])
        out = []
        for i, ((spans, title, vectors, abstract_vectors), probs) in enumerate(zip(embedded, stage1_probs)):
            cues = [cue_flags(s.text) for s in spans]
            if spans:
                context = introduction_context(cues, vectors, title)
            else:
                context = introduction_context([], numpy.zeros((0, 1)), numpy.zeros(1))
            if abstract:
                context = numpy.hstack([context, abstract_similarity(vectors, abstract_vectors)])
            inputs = ([embedding_probs[i]] if embeddings else []) + [probs] + ([tagger_probs[i]] if tagger else [])
            out.append(stage2_matrix(inputs, context, cues if self.stage2_cue_window else None))
        return out

    def tagger_probs(self, introductions: Sequence[Sequence[Any]]) -> list[numpy.ndarray]:
        """The fitted introduction tagger's probability for each sentence (Span) of each
        introduction, on the device of :meth:`encoder_device` (the CPU unless the pipe runs on a GPU)."""
        move_introduction_tagger(self.tagger, self.encoder_device())
        return self.tagger.predict([[s.text for s in spans] for spans in introductions])

    def out_of_fold_tagger_probs(self, docs: Sequence[Doc], labels: Sequence[numpy.ndarray], *, folds: int,
                                 seed: int, device: str = "cpu") -> list[numpy.ndarray]:
        """Per doc, the introduction tagger's probabilities from a tagger fine-tuned (on the torch
        ``device``) on the other folds (the folds of :meth:`out_of_fold_embedding_probs`);
        ``labels``: each doc's gold per introduction sentence."""
        ids = paper_ids(docs, "contribution_detector.fit_stage2")
        intros = [[s.text for s in introduction_features(doc)[0]] for doc in docs]
        out: list[Optional[numpy.ndarray]] = [None] * len(docs)
        for fold in id_folds(ids, folds, seed):
            train = [i for i, paper_id in enumerate(ids) if paper_id not in fold and intros[i]]
            scored = [i for i, paper_id in enumerate(ids) if paper_id in fold]
            tagger = unfitted_copy(self.tagger)
            fit_introduction_tagger(tagger, [intros[i] for i in train], [labels[i] for i in train], seed=seed,
                                    device=device)
            for i, probs in zip(scored, tagger.predict([intros[i] for i in scored])):
                out[i] = probs
        return out

    def out_of_fold_embedding_probs(self, docs: Sequence[Doc], embedded: Sequence[tuple],
                                    labels: Sequence[numpy.ndarray], *, folds: int, seed: int) -> list[numpy.ndarray]:
        """Per doc, the embedding scorer's probabilities from a copy fitted on the other folds
        (``folds`` folds of the paper ids, :func:`.data.id_folds`, the folds of
        :func:`.stacking.out_of_fold_scores`); ``embedded``: their :meth:`embed_introductions`;
        ``labels``: each doc's gold per introduction sentence."""
        ids = paper_ids(docs, "contribution_detector.fit_stage2")
        rows = self.embedding_features(docs, embedded)
        out: list[Optional[numpy.ndarray]] = [None] * len(docs)
        for fold in id_folds(ids, folds, seed):
            train = [i for i, paper_id in enumerate(ids) if paper_id not in fold and len(rows[i])]
            scorer = fit_logistic_regression(self.embedding_scorer.copy(), numpy.vstack([rows[i] for i in train]),
                                             numpy.concatenate([labels[i] for i in train]), seed=seed)
            for i, paper_id in enumerate(ids):
                if paper_id in fold:
                    scored = scorer.predict(rows[i]) if len(rows[i]) else numpy.zeros((0, 1), dtype="float32")
                    # the copy may hold other ops than the pipe's (spacy train switches them to the GPU)
                    out[i] = scorer.ops.to_numpy(scored)[:, 0].astype("float32")
        return out

    def fit_stage2(self, docs: Sequence[Doc], stage1_probs: Sequence[Sequence[float]], *, seed: int = 0,
                   folds: int = 5, device: str = "cpu") -> dict:
        """Fit stage 2 on training Docs with gold (``doc._.contribution_gold``) from their
        *out-of-fold* stage-1 probabilities (:func:`.stacking.out_of_fold_scores`) and the
        sentences' cosines to the abstract (recorded as ``abstract`` in its attrs); with an
        ``embedding_scorer`` or a ``tagger``, also fit it: once per fold of ``folds`` (its
        out-of-fold probabilities are what stage 2 learns from), then on all the docs (the
        tagger is fine-tuned on the torch ``device``). Returns ``{"papers", "sentences",
        "positives", "embedding_scorer", "tagger"}`` (the last two: that scorer's out-of-fold
        ``tp``, ``fp``, ``fn`` at the threshold, or None without one)."""
        if self.stage2 is None:
            raise ValueError("contribution_detector: no stage2 model is configured")
        docs = list(docs)
        if len(docs) != len(stage1_probs):
            raise ValueError(f"contribution_detector: {len(stage1_probs)} stage-1 probability sets for {len(docs)} docs")
        labels = []
        for doc, probs in zip(docs, stage1_probs):
            spans = introduction_features(doc)[0]
            if len(spans) != len(probs):
                raise ValueError(f"contribution_detector: {len(probs)} stage-1 probabilities for "
                                 f"{len(spans)} introduction sentences of the doc {doc_label(doc)}")
            gold = {(int(g["start"]), int(g["end"])): int(g["label"]) for g in gold_items(doc)}
            missing = [s.text[:60] for s in spans if (s.start, s.end) not in gold]
            if missing:
                raise ValueError(f"contribution_detector: {len(missing)} introduction sentences of the doc "
                                 f"{doc_label(doc)} have no gold label (first: {missing[0]!r})")
            labels.append(numpy.array([gold[(s.start, s.end)] for s in spans], dtype=int))
        embeddings = self.embedding_scorer is not None
        tagger = self.tagger is not None
        papers = len(set(paper_ids(docs, "contribution_detector.fit_stage2"))) if embeddings or tagger else folds
        if papers < folds:
            raise ValueError(f"contribution_detector: the embedding scorer and tagger are fitted out of fold over "
                             f"{folds} folds, but the docs hold {papers} papers")
        embedded = self.embed_introductions(docs)
        truth = numpy.concatenate(labels).astype(bool)
        oof = self.out_of_fold_embedding_probs(docs, embedded, labels, folds=folds, seed=seed) if embeddings else None
        tagger_oof = (self.out_of_fold_tagger_probs(docs, labels, folds=folds, seed=seed, device=device)
                      if tagger else None)
        matrices = self.stage2_features(docs, stage1_probs, embeddings=embeddings, abstract=True, embedding_probs=oof,
                                        embedded=embedded, tagger=tagger, tagger_probs=tagger_oof)
        y = numpy.concatenate(labels)
        if tagger:  # the longest fit first, apart: if it fails, the pipe is left as it was
            final_tagger = unfitted_copy(self.tagger)
            fit_introduction_tagger(final_tagger, [[s.text for s in spans] for spans, _, _, _ in embedded], labels,
                                    seed=seed, device=device)
        fit_boosted_trees(self.stage2, numpy.vstack(matrices), y, seed=seed)
        if embeddings:
            rows = [r for r in self.embedding_features(docs, embedded) if len(r)]
            fit_logistic_regression(self.embedding_scorer, numpy.vstack(rows), y, seed=seed)
        if tagger:
            take_fit(self.tagger, final_tagger)
            move_introduction_tagger(self.tagger, self.encoder_device() or "cpu")
        self.stage2.attrs["abstract"] = True
        self.stage2.attrs["cue_window"] = self.stage2_cue_window
        self.stage2.attrs["embedding_scorer"] = embeddings
        self.stage2.attrs["tagger"] = tagger
        self.stage2.attrs["sentence_encoder"] = backbone_record_name(self.sentence_encoder)
        return {"papers": len(docs), "sentences": len(y), "positives": int(y.sum()),
                "embedding_scorer": self.outcome(oof, truth) if embeddings else None,
                "tagger": self.outcome(tagger_oof, truth) if tagger else None}

    def outcome(self, probs: Sequence[numpy.ndarray], truth: numpy.ndarray) -> dict[str, int]:
        """``{"tp", "fp", "fn"}`` of per-doc probabilities at the threshold against the docs'
        concatenated gold ``truth``."""
        chosen = numpy.concatenate(probs) >= self.cfg["threshold"]
        return {"tp": int((chosen & truth).sum()), "fp": int((chosen & ~truth).sum()),
                "fn": int((~chosen & truth).sum())}

    def set_annotations(self, docs: Iterable[Doc], predictions: list[tuple[list, numpy.ndarray]]) -> None:
        """Write ``contribution_scores`` and ``contribution_sentence_offsets`` (see the module docstring)."""
        threshold = self.cfg["threshold"]
        for doc, (sentences, probs) in zip(docs, predictions):
            doc._.contribution_scores = [float(p) for p in probs]
            doc._.contribution_sentence_offsets = [
                [int(s.start), int(s.end)] for s, p in zip(sentences, probs) if float(p) >= threshold
            ]

    # -- training ---------------------------------------------------------------------
    def training_data(self, examples: Iterable[Example]) -> tuple[list[str], list[list[str]], numpy.ndarray]:
        """``(texts, features, labels)`` of the gold sentences of the examples' reference Docs."""
        texts, features, labels = [], [], []
        for eg in examples:
            doc = eg.reference
            for item in gold_items(doc):
                texts.append(doc[int(item["start"]) : int(item["end"])].text)
                features.append(list(item.get("features") or []))
                labels.append(float(item["label"]))
        return texts, features, numpy.asarray(labels, dtype="float32")

    def initialize(self, get_examples: Callable[[], Iterable[Example]], *, nlp: Optional[Language] = None) -> None:
        """Initialise the model (its shapes from a sample of the examples' gold sentences).

        Examples without ``doc._.contribution_gold`` are allowed (the model is then
        initialised from its configured dimensions), but ``update`` learns only from gold.
        """
        examples = list(get_examples())
        validate_examples(examples, "ContributionDetector.initialize")
        self.drop_stage2("initialize")
        texts, features, labels = self.training_data(examples[:20])
        if texts:
            X = model_docs(self._inner_vocab, texts[:200], features[:200])
            Y = self.model.ops.asarray2f(labels[:200].reshape(-1, 1))
            self.model.initialize(X=X, Y=Y)
        else:
            self.model.initialize()

    def analysis(self, doc: Doc) -> dict:
        """The detector's part of ``scholarly-nlp analyze``'s record: the introduction sentences
        it detected as contribution statements."""
        return {"detected_contributions": [{"text": s.text, "start_char": s.start_char, "end_char": s.end_char}
                                           for s in doc._.contribution_sentences or []]}

    def update(self, examples: Iterable[Example], *, drop: float = 0.0, sgd: Optional[Optimizer] = None,
               losses: Optional[dict[str, float]] = None) -> dict[str, float]:
        """One optimiser step of weighted binary cross-entropy on the examples' gold sentences."""
        losses = {} if losses is None else losses
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_examples(examples, "ContributionDetector.update")
        texts, features, labels = self.training_data(examples)
        if not texts:
            return losses
        self.drop_stage2("update")
        scores, backprop = self.model.begin_update(model_docs(self._inner_vocab, texts, features))
        loss, d_scores = self.get_loss(examples, scores, labels)
        backprop(d_scores)
        if sgd is not None:
            self.finish_update(sgd)
        losses[self.name] += loss
        self.mark_trained()
        return losses

    def get_loss(self, examples: Iterable[Example], scores: Any, labels: Optional[numpy.ndarray] = None) -> tuple[float, Any]:
        """Weighted BCE (mean over sentences) of the sigmoid ``scores`` and its gradient.

        The gradient is taken with respect to the probabilities (the model's sigmoid layer
        turns it into ``weight * (p - y)`` for the logits). ``labels`` default to the gold of
        ``examples`` (:meth:`training_data`).
        """
        if labels is None:
            labels = self.training_data(examples)[2]
        probs = self.model.ops.to_numpy(scores).reshape(-1).astype("float64")
        y = numpy.asarray(labels, dtype="float64").reshape(-1)
        weights = numpy.where(y > 0.5, self.cfg["positive_weight"], 1.0)
        clipped = numpy.clip(probs, 1e-7, 1 - 1e-7)
        n = max(len(y), 1)
        loss = float(-(weights * (y * numpy.log(clipped) + (1 - y) * numpy.log(1 - clipped))).sum() / n)
        grad = weights * (probs - y) / numpy.maximum(clipped * (1 - clipped), 1e-7) / n
        return loss, self.model.ops.asarray2f(grad.reshape(-1, 1).astype("float32"))

    def count_outcomes(self, examples: Iterable[Example]) -> Optional[dict[str, int]]:
        """``{"tp", "fp", "fn"}`` of the positive class over the gold sentences of the
        examples' reference Docs (None when there is no gold): the counts :meth:`score` rests on.

        A gold sentence is predicted positive when its (start, end) is among the predicted
        Doc's ``contribution_sentence_offsets``; when the predicted Doc was not annotated,
        the reference Doc is predicted here (both stages, a whole introduction at a time).
        """
        tp = fp = fn = 0
        seen = False
        for eg in examples:
            gold = gold_items(eg.reference)
            if not gold:
                continue
            seen = True
            offsets = eg.predicted._.contribution_sentence_offsets
            if offsets is None:
                ((sentences, probs),) = self.predict([eg.reference])
                chosen = {(s.start, s.end) for s, p in zip(sentences, probs) if p >= self.cfg["threshold"]}
            else:
                chosen = {(int(s), int(e)) for s, e in offsets}
            positives = {(int(g["start"]), int(g["end"])) for g in gold if int(g["label"])}
            in_scope = {(int(g["start"]), int(g["end"])) for g in gold}
            predicted = chosen & in_scope
            tp += len(predicted & positives)
            fp += len(predicted - positives)
            fn += len(positives - predicted)
        return {"tp": tp, "fp": fp, "fn": fn} if seen else None

    def score(self, examples: Iterable[Example], **kwargs: Any) -> dict[str, Any]:
        """Precision, recall and F1 of the positive class over the gold sentences of the
        examples' reference Docs, from :meth:`count_outcomes`. None when there is no gold.
        """
        counts = self.count_outcomes(examples)
        if counts is None:
            return {"contribution_p": None, "contribution_r": None, "contribution_f1": None}
        tp, fp, fn = counts["tp"], counts["fp"], counts["fn"]
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return {"contribution_p": precision, "contribution_r": recall, "contribution_f1": f1}

    # -- serialisation ----------------------------------------------------------------
    def fitted_parts(self) -> dict[str, "FittedPart"]:
        """The parts fitted outside ``spacy train``, by file name."""
        return {STAGE2_FILE: FittedPart(self.stage2, has_trees, drop_trees),
                EMBEDDING_FILE: FittedPart(self.embedding_scorer, has_weights, drop_weights),
                TAGGER_FILE: FittedPart(self.tagger, has_introduction_tagger, drop_introduction_tagger,
                                        save_introduction_tagger, load_introduction_tagger, folder=True)}

    def to_disk(self, path: Any, *, exclude: Iterable[str] = tuple()) -> None:
        """Save the pipe as spaCy does, plus the fitted stage 2 (``stage2``), embedding scorer
        (``embedding_scorer``) and introduction tagger (folder ``tagger``) when there are (and no
        stale file or folder of any when there are not)."""
        super().to_disk(path, exclude=exclude)
        for name, part in self.fitted_parts().items():
            if name in exclude:
                continue
            part_path = Path(path) / name
            if part.is_fitted:
                part.save(part.model, part_path)
            elif part_path.is_dir():
                shutil.rmtree(part_path)
            elif part_path.exists():
                part_path.unlink()

    def from_disk(self, path: Any, *, exclude: Iterable[str] = tuple()) -> "ContributionDetector":
        """Load what :meth:`to_disk` wrote; a folder without ``stage2`` (such as one saved before
        stage 2 existed) gives a detector without a fitted stage 2, and likewise for the
        embedding scorer and the tagger."""
        super().from_disk(path, exclude=exclude)
        for name, part in self.fitted_parts().items():
            part_path = Path(path) / name
            if name not in exclude:
                self._load_part(name, (lambda model, p=part_path, load=part.load: load(model, p))
                                if part_path.exists() else None, str(path))
        return self

    def to_bytes(self, *, exclude: Iterable[str] = tuple()) -> bytes:
        """The pipe's bytes as spaCy writes them, with the fitted parts' (stage 2, embedding
        scorer, tagger)."""
        data = {"pipe": super().to_bytes(exclude=exclude)}
        for name, part in self.fitted_parts().items():
            data[name] = part.to_bytes() if part.is_fitted and name not in exclude else None
        return srsly.msgpack_dumps(data)

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()) -> "ContributionDetector":
        """Load what :meth:`to_bytes` wrote, or the plain spaCy bytes of a detector saved before
        stage 2 existed (which has no fitted stage 2 or embedding scorer)."""
        data = srsly.msgpack_loads(bytes_data)
        if not (isinstance(data, dict) and "pipe" in data):
            data = {"pipe": bytes_data}
        super().from_bytes(data["pipe"], exclude=exclude)
        for name, part in self.fitted_parts().items():
            if name not in exclude:
                stored = data.get(name)
                self._load_part(name, (lambda model, b=stored, p=part: p.from_bytes(model, b))
                                if stored is not None else None, "the bytes")
        return self

    def _load_part(self, name: str, load: Optional[Callable[[Model], Any]], source: str) -> None:
        """Load the fitted part ``name`` that ``source`` holds with ``load(model)``; ``load``
        None: ``source`` holds none, and any fit the pipe had is dropped."""
        part = self.fitted_parts()[name]
        model = part.model
        if model is not None and name == STAGE2_FILE:
            # thinc keeps attrs the loaded bytes lack: trees saved before a record existed must
            # not inherit the one of the trees they replace
            for key in STAGE2_RECORDS:
                model.attrs.pop(key, None)
        if load is None:
            if part.is_fitted:
                part.drop(model)
            return
        if model is None:
            raise ValueError(f"contribution_detector: {source} holds a fitted {name} but the config has no {name} model")
        if part.is_fitted:  # thinc refuses new widths while params are set
            part.drop(model)
        load(model)


@dataclass(frozen=True)
class FittedPart:
    """A part of the detector fitted outside ``spacy train``: its model (None when the config
    has none), whether it is fitted, how to forget the fit, and how it saves (``save(model,
    path)``, ``load(model, path)``: thinc's own files by default; ``folder``: the part saves as
    a folder, packed as a tar archive in the pipe's bytes)."""

    model: Optional[Model]
    fitted: Callable[[Model], bool]
    drop: Callable[[Model], None]
    save: Callable[[Model, Path], None] = lambda model, path: model.to_disk(path)
    load: Callable[[Model, Path], Any] = lambda model, path: model.from_disk(path)
    folder: bool = False

    @property
    def is_fitted(self) -> bool:
        """Whether the config has the part and it is fitted."""
        return self.model is not None and self.fitted(self.model)

    def to_bytes(self) -> bytes:
        """The fitted part's bytes."""
        if self.folder:
            return folder_to_bytes(lambda path: self.save(self.model, path))
        return self.model.to_bytes()

    def from_bytes(self, model: Model, data: bytes) -> None:
        """Load :meth:`to_bytes`' bytes into ``model``."""
        if self.folder:
            folder_from_bytes(data, lambda path: self.load(model, path))
        else:
            model.from_bytes(data)


def doc_label(doc: Doc) -> str:
    """A name for ``doc`` in error messages: its paper id or title, else its first words."""
    meta = doc._.paper_meta if Doc.has_extension("paper_meta") else None
    if meta and meta.get("paper_id"):
        return repr(meta["paper_id"])
    if doc.spans.get("title"):
        return repr(doc.spans["title"][0].text[:80])
    return repr(doc.text[:40])
