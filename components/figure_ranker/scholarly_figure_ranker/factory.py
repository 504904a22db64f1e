"""The ``figure_ranker`` pipeline component (a spaCy ``TrainablePipe``).

Inference: every candidate figure gets the sum, over the abstract's sentences, of the
cross-encoder's score for (sentence, caption). By default that caption score is fused by
reciprocal rank fusion with how often the paper refers to the figure (``mentions``;
:mod:`.signals`, which also offers ``context``, the similarity of the referring paragraphs to
the abstract, and ``caption_dense``, the abstract-caption cosine of the frozen sentence encoder
that ``dense_encoder`` names); the best figure is ``doc._.central_figure`` and
``doc._.figure_signals`` keeps every signal. ``signals = ["caption"]`` ranks by the
cross-encoder alone.

Training (self-supervised): a sentence that mentions figure i, with the mention masked, is a
query; caption i is the positive and other captions of the same paper are negatives;
margin ranking loss ``max(0, margin - s(q, c_i) + s(q, c_j))``.

Defined results for awkward papers: no candidate figure -> no scores, no central figure; one
candidate -> it is central; no abstract -> the title is the query; neither -> candidates are
ranked in document order (pick-first) and scores are empty; a figure without caption text
cannot be scored and ranks after the scored ones.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterable, NamedTuple, Optional, Sequence

import numpy
import srsly
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc
from spacy.training import Example, validate_examples
from spacy.vocab import Vocab
from thinc.api import Model, Optimizer

from scholarly_nlp import ComponentSpec
from scholarly_nlp.ml import DEFAULT_BACKBONE, HuggingFaceModelPipe, TrainingState, is_loaded, score_pairs

from .signals import DEFAULT_SIGNALS, SIGNALS, fuse_ranks, signal_values
from .texts import abstract_sentences, caption_text, masked_sentence, sentence_of

DEFAULT_MODEL = {
    "@architectures": "scholarly_nlp.CrossEncoder.v1",
    "name": "all-MiniLM-L6-v2",
    "max_length": 256,
    "mixed_precision": False,
}
CONFIG_FILE = "cfg"
CONFIG_ONLY = ("signals", "dense_encoder")
"""Settings that only the pipeline config gives: not saved with the weights, so that a config
override (``signals = ["caption"]``) holds for a saved pipeline too."""


def figure_ranking(doc: Doc) -> list[str]:
    """Candidate figure ids, best first (empty when the ranker has not run); the getter of
    ``doc._.figure_ranking``."""
    scores = doc._.figure_scores
    if scores is None:
        return []
    candidates = [f.id for f in doc._.figures if f.id in scores or f.kind == "figure"]
    return rank_figures(candidates, scores)


SPEC = ComponentSpec(
    name="figure_ranker",
    default_config={
        "model": DEFAULT_MODEL,
        "include_tables": False,
        "margin": 1.0,
        "max_queries_per_doc": 4,
        "max_negatives": 3,
        "batch_size": 64,
        "seed": 0,
        "signals": list(DEFAULT_SIGNALS),
        "dense_encoder": DEFAULT_BACKBONE,
    },
    assigns=["doc._.figure_scores", "doc._.central_figure", "doc._.figure_signals"],
    default_score_weights={"figure_proxy_mrr": 1.0, "figure_proxy_acc": 0.0},
    extensions={
        # figure id -> score; None until the pipe ran.
        "doc._.figure_scores": {"default": None},
        # The id of the central figure (None when the paper has no candidate).
        "doc._.central_figure": {"default": None},
        # figure id -> {signal name: value} for the scored figures; None until the pipe ran.
        "doc._.figure_signals": {"default": None},
        "doc._.figure_ranking": {"getter": figure_ranking},
    },
)
"""The component's one declaration: the factory, the plugin hook and the extensions read it."""


@SPEC.factory
def make_figure_ranker(nlp: Language, name: str, model: Model, include_tables: bool, margin: float,
                       max_queries_per_doc: int, max_negatives: int, batch_size: int, seed: int,
                       signals: list[str], dense_encoder: str = DEFAULT_BACKBONE) -> "FigureRanker":
    """spaCy factory of the figure ranker."""
    return FigureRanker(nlp.vocab, model, name, include_tables=include_tables, margin=margin,
                        max_queries_per_doc=max_queries_per_doc, max_negatives=max_negatives,
                        batch_size=batch_size, seed=seed, signals=signals, dense_encoder=dense_encoder)


class FigureScores(NamedTuple):
    """One paper's prediction: figure id -> ranking score (None for a figure that cannot be
    scored), and signal name -> (figure id -> value) for the scored figures."""

    scores: dict[str, Optional[float]]
    signals: dict[str, dict[str, float]]


def checked_signals(signals: Sequence[str]) -> list[str]:
    """``signals`` as a list, or a ValueError naming what is wrong with it."""
    names = list(signals)
    unknown = [n for n in names if n not in SIGNALS]
    if not names or unknown or len(set(names)) != len(names):
        raise ValueError(f"figure_ranker: signals must be distinct names among {list(SIGNALS)}, got {names}")
    return names


class FigureRanker(HuggingFaceModelPipe, TrainingState, TrainablePipe):
    """Scores each figure of a paper as its central figure (visual summary)."""

    training_project = "projects/figure_ranker"

    def needs_training(self) -> bool:
        """Only a scorer with a new, random head (a cross-encoder built from a plain encoder)."""
        return bool(self.model.attrs.get("random_head"))

    def __init__(self, vocab: Vocab, model: Model, name: str = "figure_ranker", *, include_tables: bool = False,
                 margin: float = 1.0, max_queries_per_doc: int = 4, max_negatives: int = 3, batch_size: int = 64,
                 seed: int = 0, signals: Sequence[str] = DEFAULT_SIGNALS, dense_encoder: str = DEFAULT_BACKBONE):
        SPEC.install_extensions()
        self.vocab = vocab
        self.model = model
        self.name = name
        self.cfg = {"include_tables": include_tables, "margin": margin, "max_queries_per_doc": max_queries_per_doc,
                    "max_negatives": max_negatives, "batch_size": batch_size, "seed": seed,
                    "signals": checked_signals(signals), "dense_encoder": str(dense_encoder)}
        self._rng = numpy.random.default_rng(seed)
        self._dense_encoder = None  # the frozen encoder of caption_dense, loaded on first use

    # -- inference --------------------------------------------------------------------
    def candidates(self, doc: Doc) -> list:
        """The figures that may be central: figures, plus tables when configured."""
        return [f for f in doc._.figures if f.kind == "figure" or self.cfg["include_tables"]]

    def predict(self, docs: Iterable[Doc]) -> list[FigureScores]:
        """Per doc, each candidate's ranking score (None for a figure that cannot be scored:
        no caption text, or no abstract or title to compare it with) and its signals."""
        self.warn_if_untrained()
        docs = list(docs)
        names = self.cfg["signals"]
        queries = [abstract_sentences(doc) for doc in docs]
        candidates_of = [self.candidates(doc) for doc in docs]
        scorable = [[f for f in c if caption_text(f)] if q else [] for c, q in zip(candidates_of, queries)]
        caption_scores = self._caption_scores(queries, scorable) if "caption" in names else [{} for _ in docs]
        encoder = self.dense_encoder() if "caption_dense" in names and any(scorable) else None
        results = []
        for doc, candidates, doc_queries, figures, captions in zip(docs, candidates_of, queries, scorable,
                                                                   caption_scores):
            scores: dict[str, Optional[float]] = {f.id: None for f in candidates}
            signals = signal_values(doc, figures, doc_queries, names, captions, encoder) if figures else {}
            if figures:
                ids = [f.id for f in figures]
                scores.update(fuse_ranks(signals, ids) if len(names) > 1 else signals[names[0]])
            results.append(FigureScores(scores, signals))
        return results

    def dense_encoder(self):
        """The frozen sentence encoder of the ``caption_dense`` signal (config ``dense_encoder``, a
        backbone name or folder), loaded once, on the GPU the pipe's thinc ops use if any."""
        if self._dense_encoder is None:
            from scholarly_nlp.ml import SentenceEncoder

            ops = self.model.ops
            device = f"cuda:{ops.device_id}" if getattr(ops, "device_type", "cpu") == "gpu" else None
            self._dense_encoder = SentenceEncoder(self.cfg["dense_encoder"], device=device,
                                                  batch_size=self.cfg["batch_size"])
        return self._dense_encoder

    def _caption_scores(self, queries: list[list[str]], scorable: list[list]) -> list[dict[str, float]]:
        """Per doc, figure id -> the cross-encoder's score summed over the doc's queries (the
        abstract's sentences), in one batched pass over every pair of every doc."""
        pairs, owners = [], []
        for d, (doc_queries, figures) in enumerate(zip(queries, scorable)):
            for figure in figures:
                pairs.extend((query, caption_text(figure)) for query in doc_queries)
                owners.extend((d, figure.id) for _ in doc_queries)
        sums: list[dict[str, float]] = [{} for _ in queries]
        if pairs:
            scores = self.model.ops.to_numpy(score_pairs(self.model, pairs, self.cfg["batch_size"]))
            for (d, fig_id), score in zip(owners, scores):
                sums[d][fig_id] = sums[d].get(fig_id, 0.0) + float(score)
        return sums

    def set_annotations(self, docs: Iterable[Doc], predictions: list[FigureScores]) -> None:
        """Write ``doc._.figure_scores``, ``doc._.figure_signals`` and ``doc._.central_figure``."""
        for doc, prediction in zip(docs, predictions):
            scored = {k: v for k, v in prediction.scores.items() if v is not None}
            doc._.figure_scores = scored
            doc._.figure_signals = {fid: {name: values[fid] for name, values in prediction.signals.items()}
                                    for fid in scored}
            ranking = rank_figures(list(prediction.scores), scored)
            doc._.central_figure = ranking[0] if ranking else None

    def analysis(self, doc: Doc) -> dict:
        """The figure ranker's part of ``scholarly-nlp analyze``'s record: the central figure and
        every figure with its score, rank (1 = central; None for figures it did not score) and
        the signals its score fuses."""
        scores = doc._.figure_scores or {}
        signals = doc._.figure_signals or {}
        rank = {fid: i + 1 for i, fid in enumerate(doc._.figure_ranking)}
        return {
            "central_figure": doc._.central_figure,
            "figures": [{"id": f.id, "label": f.label, "kind": f.kind, "caption": f.caption_text[:300],
                         "score": scores.get(f.id), "rank": rank.get(f.id), "signals": signals.get(f.id)}
                        for f in doc._.figures],
        }

    # -- training ---------------------------------------------------------------------
    def initialize(self, get_examples: Callable[[], Iterable[Example]], *, nlp: Optional[Language] = None) -> None:
        """Load the backbone; check that the examples hold papers with figure mentions."""
        validate_examples(get_examples(), "FigureRanker.initialize")
        if not is_loaded(self.model):
            self.model.initialize()

    def training_queries(self, doc: Doc, limit: Optional[int]) -> list[tuple[str, str, list[str]]]:
        """(masked mentioning sentence, positive caption, negative captions) triples of one paper."""
        figures = [f for f in self.candidates(doc) if caption_text(f)]
        if len(figures) < 2:
            return []
        queries = []
        for figure in figures:
            others = [caption_text(f) for f in figures if f.id != figure.id]
            for mention in figure.mentions:
                sentence = sentence_of(doc, mention)
                if sentence is None:
                    continue
                mentions_inside = [m for f in doc._.figures for m in f.mentions
                                   if sentence.start <= m.start and m.end <= sentence.end]
                text = masked_sentence(sentence, mentions_inside)
                if len(text.split()) >= 4:
                    queries.append((text, caption_text(figure), others))
        if limit is not None and len(queries) > limit:
            chosen = self._rng.choice(len(queries), size=limit, replace=False)
            queries = [queries[i] for i in sorted(chosen)]
        return queries

    def _pairs(self, queries: list[tuple[str, str, list[str]]]) -> tuple[list[tuple[str, str]], list[tuple[int, list[int]]]]:
        pairs, groups = [], []
        for text, positive, negatives in queries:
            if len(negatives) > self.cfg["max_negatives"]:
                picked = self._rng.choice(len(negatives), size=self.cfg["max_negatives"], replace=False)
                negatives = [negatives[i] for i in picked]
            pos = len(pairs)
            pairs.append((text, positive))
            pairs.extend((text, neg) for neg in negatives)
            groups.append((pos, list(range(pos + 1, pos + 1 + len(negatives)))))
        return pairs, groups

    def update(self, examples: Iterable[Example], *, drop: float = 0.0, sgd: Optional[Optimizer] = None,
               losses: Optional[dict[str, float]] = None) -> dict[str, float]:
        """One margin-ranking step on the mention queries of the examples' papers."""
        losses = {} if losses is None else losses
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_examples(examples, "FigureRanker.update")
        queries = [q for eg in examples for q in self.training_queries(eg.reference, self.cfg["max_queries_per_doc"])]
        pairs, groups = self._pairs(queries)
        if not groups:
            return losses
        scores, backprop = self.model.begin_update(pairs)
        loss, d_scores = self.get_loss(examples, (scores, groups))
        backprop(d_scores)
        if sgd is not None:
            self.finish_update(sgd)
        losses[self.name] += loss
        self.mark_trained()
        return losses

    def get_loss(self, examples: Iterable[Example], scores: Any) -> tuple[float, Any]:
        """Margin ranking loss over (positive, negative) pairs; ``scores`` is (scores, groups)."""
        values, groups = scores
        host = self.model.ops.to_numpy(values).astype("float32")
        grad = numpy.zeros_like(host)
        total, count = 0.0, 0
        for pos, negs in groups:
            for neg in negs:
                violation = self.cfg["margin"] - host[pos] + host[neg]
                count += 1
                if violation > 0:
                    total += float(violation)
                    grad[pos] -= 1.0
                    grad[neg] += 1.0
        count = max(count, 1)
        return total / count, self.model.ops.asarray1f(grad / count)

    def score(self, examples: Iterable[Example], **kwargs: Any) -> dict[str, float]:
        """Self-supervised proxy on held-out papers: does a mentioning sentence rank its own figure first?"""
        hits, reciprocal, total = 0, 0.0, 0
        for eg in examples:
            for text, positive, negatives in self.training_queries(eg.reference, limit=None):
                captions = [positive] + negatives
                scores = self.model.ops.to_numpy(score_pairs(self.model, [(text, c) for c in captions], self.cfg["batch_size"]))
                rank = 1 + int((scores[1:] > scores[0]).sum())
                hits += rank == 1
                reciprocal += 1.0 / rank
                total += 1
        if total == 0:
            return {"figure_proxy_acc": None, "figure_proxy_mrr": None}
        return {"figure_proxy_acc": hits / total, "figure_proxy_mrr": reciprocal / total}

    # -- serialisation ----------------------------------------------------------------
    def to_disk(self, path: Any, *, exclude: Iterable[str] = tuple()) -> None:
        """Save the config and the fine-tuned cross-encoder (``model/``: see ``scholarly_nlp.ml.adapters``)."""
        super().to_disk(path, exclude=exclude)
        srsly.write_json(Path(path) / CONFIG_FILE, {k: v for k, v in self.cfg.items() if k not in CONFIG_ONLY})

    def from_disk(self, path: Any, *, exclude: Iterable[str] = tuple()) -> "FigureRanker":
        """Load what :meth:`to_disk` wrote (the installed backbone plus the saved adapter or weight difference)."""
        if (Path(path) / CONFIG_FILE).exists():
            saved = srsly.read_json(Path(path) / CONFIG_FILE)
            self.cfg.update({k: v for k, v in saved.items() if k not in CONFIG_ONLY})
        return super().from_disk(path, exclude=exclude)


def rank_figures(figure_ids: list[str], scores: dict[str, float]) -> list[str]:
    """Figure ids best first: scored figures by score (ties in document order), then unscored in order."""
    order = {fig_id: i for i, fig_id in enumerate(figure_ids)}
    scored = sorted((f for f in figure_ids if f in scores), key=lambda f: (-scores[f], order[f]))
    return scored + [f for f in figure_ids if f not in scores]
