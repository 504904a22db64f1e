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
its introduction* (:mod:`.stacking`: neighbours' probabilities, rank, position, cosine to the
title with the frozen ``sentence_encoder``, first cue phrases). ``spacy train`` leaves it
unfitted, and an unfitted stage 2 is skipped; :meth:`ContributionDetector.fit_stage2` fits it
on out-of-fold stage-1 probabilities (:func:`.stacking.out_of_fold_scores`; the contribution
linker project's ``fit-detector-stage2`` step), and it is saved with the pipe.
"""

# No ``from __future__ import annotations``: spaCy validates initialize()'s settings from its
# signature with pydantic, which must resolve the annotations.
import warnings
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

from scholarly_nlp import ComponentSpec
from scholarly_nlp.ml import (DEFAULT_BACKBONE, TrainingState, backbone_record_name, drop_trees,
                              fit_boosted_trees, has_trees)

from .data import CUE_PATTERNS, cue_flags
from .features import contribution_sentences, introduction_features, model_docs
from .stacking import NEIGHBOURS, introduction_context, stage2_matrix

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
(``benchmarks/contribution_detector_stacking_bow.py``, candidate ``fast``)."""

STAGE2_FILE = "stage2"
STAGE2_MODEL = "scholarly_nlp.boosted_trees"


SPEC = ComponentSpec(
    name="contribution_detector",
    default_config={"model": DEFAULT_MODEL, "threshold": 0.5, "positive_weight": 4.5, "stage2": DEFAULT_STAGE2,
                    "stage2_cue_window": True, "sentence_encoder": DEFAULT_BACKBONE},
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
                               positive_weight: float, stage2: Optional[Model], stage2_cue_window: bool,
                               sentence_encoder: str) -> "ContributionDetector":
    """spaCy factory of the contribution detector."""
    return ContributionDetector(nlp.vocab, model, name, threshold=threshold, positive_weight=positive_weight,
                                stage2=stage2, stage2_cue_window=stage2_cue_window,
                                sentence_encoder=sentence_encoder)


def gold_items(doc: Doc) -> list[dict]:
    """The Doc's ``contribution_gold`` items ([] when it has none)."""
    return list(doc._.contribution_gold or [])


class ContributionDetector(TrainingState, TrainablePipe):
    """Scores a paper's introduction sentences as contribution statements."""

    training_project = "projects/contribution_linker"

    def __init__(self, vocab: Vocab, model: Model, name: str = "contribution_detector", *,
                 threshold: float = 0.5, positive_weight: float = 4.5, stage2: Optional[Model] = None,
                 stage2_cue_window: bool = True, sentence_encoder: str = DEFAULT_BACKBONE):
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
        self.cfg = {"threshold": float(threshold), "positive_weight": float(positive_weight)}
        # The config, not the saved cfg, says which encoder and features stage 2 uses: what a
        # fitted stage 2 was fitted with is recorded in its attrs and checked (check_stage2).
        self.stage2 = stage2
        self.stage2_cue_window = bool(stage2_cue_window)
        self.sentence_encoder = str(sentence_encoder)
        # the sentence Docs only feed hashed n-grams to the model: keep their strings out of nlp.vocab
        self._inner_vocab = Vocab()
        self._encoder = None  # loaded on first use by a fitted stage 2

    @property
    def has_stage2(self) -> bool:
        """Whether a fitted stage 2 rescores the stage-1 probabilities."""
        return self.stage2 is not None and has_trees(self.stage2)

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
        matrices = self.stage2_features(docs, [probs for _, probs in stage1])
        out = []
        for doc, (sentences, probs), matrix in zip(docs, stage1, matrices):
            if len(sentences):
                try:
                    rescored = self.stage2.predict(matrix.astype("float32"))
                except ValueError as error:
                    raise ValueError(f"contribution_detector: stage 2 failed on the doc {doc_label(doc)}: {error}") from error
                probs = self.model.ops.to_numpy(rescored)[:, 0].astype("float32")
            out.append((sentences, probs))
        return out

    def drop_stage2(self, reason: str) -> None:
        """Forget fitted stage-2 trees (with a warning): they were fitted on scores of the stage 1
        that ``reason`` (an ``initialize`` or ``update``) is about to change."""
        if self.has_stage2:
            warnings.warn(f"contribution_detector: {reason} changes stage 1, so the stage-2 trees fitted on its "
                          "old scores are dropped; fit them again (fit-detector-stage2)", stacklevel=3)
            drop_trees(self.stage2)

    def stage2_width(self) -> int:
        """How many features :meth:`stage2_features` computes per sentence with this config."""
        return 2 * NEIGHBOURS + 6 + 8 + 2 * len(CUE_PATTERNS) + (3 * len(CUE_PATTERNS) if self.stage2_cue_window else 0)

    def check_stage2(self) -> None:
        """Refuse a fitted stage 2 whose recorded features differ from the configured ones
        (``stage2_cue_window``) or from what this version computes; warn when it was fitted
        with another sentence encoder."""
        fitted_cues = self.stage2.attrs.get("cue_window")
        if fitted_cues is not None and bool(fitted_cues) != self.stage2_cue_window:
            raise ValueError(f"contribution_detector: stage 2 was fitted with stage2_cue_window={bool(fitted_cues)}, "
                             f"but the config says {self.stage2_cue_window}")
        if self.stage2.get_dim("nI") != self.stage2_width():
            raise ValueError(f"contribution_detector: stage 2 was fitted on {self.stage2.get_dim('nI')} features per "
                             f"sentence; this version computes {self.stage2_width()}: fit it again (fit-detector-stage2)")
        fitted_encoder = self.stage2.attrs.get("sentence_encoder")
        if fitted_encoder is not None and fitted_encoder != backbone_record_name(self.sentence_encoder):
            warnings.warn(f"contribution_detector: stage 2 was fitted with the sentence encoder {fitted_encoder!r}; "
                          f"the config names {self.sentence_encoder!r}, so its title similarities may differ", stacklevel=2)

    # -- stage 2 ----------------------------------------------------------------------
    def sentence_vectors(self, texts: Sequence[str]) -> numpy.ndarray:
        """Unit sentence embeddings of ``texts`` from the frozen ``sentence_encoder`` (loaded once)."""
        if self._encoder is None:
            from scholarly_nlp.ml import SentenceEncoder

            self._encoder = SentenceEncoder(self.sentence_encoder)
        return self._encoder.encode(list(texts))

    def stage2_features(self, docs: Sequence[Doc], stage1_probs: Sequence[Sequence[float]]) -> list[numpy.ndarray]:
        """Per doc, the stage-2 rows of its introduction sentences (:func:`.stacking.stage2_matrix`)
        from their stage-1 probabilities ``stage1_probs`` (one array per doc, aligned with
        :func:`.features.introduction_features`); titles and sentences are embedded in one call."""
        sentences = [introduction_features(doc)[0] for doc in docs]
        for doc, spans, probs in zip(docs, sentences, stage1_probs):
            if len(spans) != len(probs):
                raise ValueError(f"contribution_detector: {len(probs)} stage-1 probabilities for "
                                 f"{len(spans)} introduction sentences of the doc {doc_label(doc)}")
        scored = [i for i, spans in enumerate(sentences) if spans]  # docs without an introduction embed nothing
        titles = [docs[i].spans["title"][0].text if docs[i].spans.get("title") else "" for i in scored]
        texts = [s.text for i in scored for s in sentences[i]]
        vectors = self.sentence_vectors(titles + texts) if scored else None
        title_of = {i: row for row, i in enumerate(scored)}
        out, start = [], len(scored)
        for i, (spans, probs) in enumerate(zip(sentences, stage1_probs)):
            cues = [cue_flags(s.text) for s in spans]
            if spans:
                context = introduction_context(cues, vectors[start : start + len(spans)], vectors[title_of[i]])
            else:
                context = introduction_context([], numpy.zeros((0, 1)), numpy.zeros(1))
            out.append(stage2_matrix([probs], context, cues if self.stage2_cue_window else None))
            start += len(spans)
        return out

    def fit_stage2(self, docs: Sequence[Doc], stage1_probs: Sequence[Sequence[float]], *, seed: int = 0) -> dict:
        """Fit stage 2 on training Docs with gold (``doc._.contribution_gold``) from their
        *out-of-fold* stage-1 probabilities (:func:`.stacking.out_of_fold_scores`); returns
        ``{"papers", "sentences", "positives"}`` it learnt from."""
        if self.stage2 is None:
            raise ValueError("contribution_detector: no stage2 model is configured")
        docs = list(docs)
        matrices = self.stage2_features(docs, stage1_probs)
        rows, labels = [], []
        for doc, matrix in zip(docs, matrices):
            spans = introduction_features(doc)[0]
            gold = {(int(g["start"]), int(g["end"])): int(g["label"]) for g in gold_items(doc)}
            missing = [s.text[:60] for s in spans if (s.start, s.end) not in gold]
            if missing:
                raise ValueError(f"contribution_detector: {len(missing)} introduction sentences of the doc "
                                 f"{doc_label(doc)} have no gold label (first: {missing[0]!r})")
            rows.append(matrix)
            labels.extend(gold[(s.start, s.end)] for s in spans)
        fit_boosted_trees(self.stage2, numpy.vstack(rows), numpy.asarray(labels), seed=seed)
        self.stage2.attrs["cue_window"] = self.stage2_cue_window
        self.stage2.attrs["sentence_encoder"] = backbone_record_name(self.sentence_encoder)
        return {"papers": len(docs), "sentences": len(labels), "positives": int(sum(labels))}

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
    def to_disk(self, path: Any, *, exclude: Iterable[str] = tuple()) -> None:
        """Save the pipe as spaCy does, plus the fitted stage 2 (``stage2``) when there is one
        (and no stale ``stage2`` file when there is none)."""
        super().to_disk(path, exclude=exclude)
        if STAGE2_FILE in exclude:
            return
        stage2_path = Path(path) / STAGE2_FILE
        if self.has_stage2:
            self.stage2.to_disk(stage2_path)
        elif stage2_path.exists():
            stage2_path.unlink()

    def from_disk(self, path: Any, *, exclude: Iterable[str] = tuple()) -> "ContributionDetector":
        """Load what :meth:`to_disk` wrote; a folder without ``stage2`` (such as one saved before
        stage 2 existed) gives a detector without a fitted stage 2."""
        super().from_disk(path, exclude=exclude)
        stage2_path = Path(path) / STAGE2_FILE
        if STAGE2_FILE not in exclude:
            self._load_stage2((lambda model: model.from_disk(stage2_path)) if stage2_path.exists() else None, str(path))
        return self

    def to_bytes(self, *, exclude: Iterable[str] = tuple()) -> bytes:
        """The pipe's bytes as spaCy writes them, with the fitted stage 2's."""
        stage2 = self.stage2.to_bytes() if self.has_stage2 and STAGE2_FILE not in exclude else None
        return srsly.msgpack_dumps({"pipe": super().to_bytes(exclude=exclude), STAGE2_FILE: stage2})

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()) -> "ContributionDetector":
        """Load what :meth:`to_bytes` wrote, or the plain spaCy bytes of a detector saved before
        stage 2 existed (which has no fitted stage 2)."""
        data = srsly.msgpack_loads(bytes_data)
        if not (isinstance(data, dict) and "pipe" in data):
            data = {"pipe": bytes_data, STAGE2_FILE: None}
        super().from_bytes(data["pipe"], exclude=exclude)
        if STAGE2_FILE not in exclude:
            stage2 = data.get(STAGE2_FILE)
            self._load_stage2((lambda model: model.from_bytes(stage2)) if stage2 is not None else None, "the bytes")
        return self

    def _load_stage2(self, load: Optional[Callable[[Model], Any]], source: str) -> None:
        """Load the stage 2 that ``source`` holds into ``self.stage2`` with ``load(model)``;
        ``load`` None: ``source`` holds none, and any trees the pipe had are dropped."""
        if load is None:
            if self.has_stage2:
                drop_trees(self.stage2)
            return
        if self.stage2 is None:
            raise ValueError(f"contribution_detector: {source} holds a fitted stage 2 but the config has no stage2 model")
        if self.has_stage2:  # thinc refuses new widths while params are set
            drop_trees(self.stage2)
        load(self.stage2)


def doc_label(doc: Doc) -> str:
    """A name for ``doc`` in error messages: its paper id or title, else its first words."""
    meta = doc._.paper_meta if Doc.has_extension("paper_meta") else None
    if meta and meta.get("paper_id"):
        return repr(meta["paper_id"])
    if doc.spans.get("title"):
        return repr(doc.spans["title"][0].text[:80])
    return repr(doc.text[:40])
