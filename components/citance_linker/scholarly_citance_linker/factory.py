"""The ``citance_linker`` pipeline component (a spaCy ``TrainablePipe``).

It runs on a *reference* paper's Doc and links every citance in
``doc._.incoming_citances`` (the citances that cite the paper, e.g. read by
:func:`scholarly_nlp.readers.clscisumm.reference_folder_doc`) to the paper's sentences:

1. BM25 over the Doc's sentences with the citance as query (citation markers and
   maths masked), times a position prior (``position_boost`` for the first
   ``prior_fraction`` of the paper); the best ``candidates`` sentences go on.
2. A cross-encoder scores (citance, sentence) for each candidate; the final score is the
   cross-encoder score plus ``bm25_weight`` x the BM25 score scaled by its maximum.
3. The best ``k`` (and, with ``threshold``, only those scoring at least that; the best
   one is always kept) are written to ``doc._.citance_links``.

Outside a Doc pipeline, :meth:`CitanceLinker.link` links one citance text to a reference
Doc and returns scored sentence Spans. The BM25 index of a reference Doc is built once and
cached (:class:`scholarly_nlp.retrieval.SentenceIndex`), not per citance.

Training: for each citance with gold sids, the gold sentences and the hardest BM25
candidates form one list; the loss is the softmax cross-entropy of the list's scores
against a uniform distribution over the gold sentences (a listwise ranking loss).
"""

from __future__ import annotations

import warnings
from typing import Any, Callable, Iterable, Optional

import numpy
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc
from spacy.training import Example, validate_examples
from spacy.vocab import Vocab
from thinc.api import Model

from scholarly_nlp import ComponentSpec
from scholarly_nlp.retrieval import SentenceIndex
from scholarly_nlp.metrics import prf, task1a_counts
from scholarly_nlp.ml import HuggingFaceModelPipe, ListwiseRankingPipe, is_loaded, score_pairs

from .candidates import bm25_candidates, encoder_query, fuse, gold_indices, select, sentence_sids, sentence_texts

DEFAULT_MODEL = {
    "@architectures": "scholarly_nlp.CrossEncoder.v1",
    "name": "all-MiniLM-L6-v2",
    "max_length": 256,
    "mixed_precision": False,
}


SPEC = ComponentSpec(
    name="citance_linker",
    default_config={
        "model": DEFAULT_MODEL,
        "candidates": 30,
        "k": 3,
        "threshold": None,
        "position_boost": 1.5,
        "prior_fraction": 0.3,
        "bm25_weight": 1.0,
        "max_citances_per_doc": 8,
        "max_negatives": 15,
        "batch_size": 64,
        "seed": 0,
    },
    assigns=["doc._.citance_links"],
    default_score_weights={"citance_link_f1": 1.0, "citance_link_p": 0.0, "citance_link_r": 0.0},
    extensions={
        # citance id -> [{"sid", "index", "score"}, ...], best first; None until the pipe ran.
        "doc._.citance_links": {"default": None},
    },
)
"""The component's one declaration: the factory, the plugin hook and the extensions read it."""


@SPEC.factory
def make_citance_linker(nlp: Language, name: str, model: Model, candidates: int, k: int, threshold: Optional[float],
                        position_boost: float, prior_fraction: float, bm25_weight: float, max_citances_per_doc: int,
                        max_negatives: int, batch_size: int, seed: int) -> "CitanceLinker":
    """spaCy factory of the citance linker."""
    return CitanceLinker(nlp.vocab, model, name, candidates=candidates, k=k, threshold=threshold,
                         position_boost=position_boost, prior_fraction=prior_fraction, bm25_weight=bm25_weight,
                         max_citances_per_doc=max_citances_per_doc, max_negatives=max_negatives,
                         batch_size=batch_size, seed=seed)


def _check_settings(cfg: dict) -> None:
    for key in ("candidates", "k", "batch_size", "max_negatives"):
        value = cfg[key]
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"citance_linker: {key} must be a positive integer, got {value!r}")
    if cfg["k"] > cfg["candidates"]:
        raise ValueError(f"citance_linker: k ({cfg['k']}) cannot exceed candidates ({cfg['candidates']})")


class CitanceLinker(HuggingFaceModelPipe, ListwiseRankingPipe, TrainablePipe):
    """Links the citances of a reference paper to the sentences they refer to.

    Saved as the scorer's Hugging Face folder (:class:`HuggingFaceModelPipe`); the settings
    (k, threshold, ...) live in the pipeline config, so a loaded pipeline takes overrides
    such as ``{"k": 1}``.
    """

    training_project = "projects/citance_linkage"

    def needs_training(self) -> bool:
        """Only a scorer with a new, random head (a cross-encoder built from a plain encoder)."""
        return bool(self.model.attrs.get("random_head"))

    per_doc_limit_key = "max_citances_per_doc"

    def __init__(self, vocab: Vocab, model: Model, name: str = "citance_linker", *, candidates: int = 30, k: int = 3,
                 threshold: Optional[float] = None, position_boost: float = 1.5, prior_fraction: float = 0.3,
                 bm25_weight: float = 1.0, max_citances_per_doc: int = 8, max_negatives: int = 15,
                 batch_size: int = 64, seed: int = 0):
        SPEC.install_extensions()
        self.vocab = vocab
        self.model = model
        self.name = name
        self.cfg = {"candidates": candidates, "k": k, "threshold": threshold, "position_boost": position_boost,
                    "prior_fraction": prior_fraction, "bm25_weight": bm25_weight,
                    "max_citances_per_doc": max_citances_per_doc, "max_negatives": max_negatives,
                    "batch_size": batch_size, "seed": seed}
        _check_settings(self.cfg)
        self._rng = numpy.random.default_rng(seed)

    # -- inference --------------------------------------------------------------------
    def _require_model(self) -> None:
        if not is_loaded(self.model):
            raise ValueError(f"{self.name}: the cross-encoder is not loaded; call nlp.initialize() or load a "
                             "trained pipeline (spacy.load) first")

    def _candidates(self, doc: Doc, text: str) -> list[tuple[int, float]]:
        return bm25_candidates(doc, text, self.cfg["candidates"], position_boost=self.cfg["position_boost"],
                               prior_fraction=self.cfg["prior_fraction"])

    def rank(self, requests: list[tuple[str, Doc]]) -> list[list[tuple[int, float]]]:
        """For each (citance text, reference Doc): all candidates as (sentence index, final score), best first.

        All (citance, candidate) pairs of the requests go through the cross-encoder together,
        ``batch_size`` pairs per forward pass. Raises ValueError for an empty citance.
        """
        self._require_model()
        pairs, spans = [], []
        per_request = []
        for text, doc in requests:
            candidates = self._candidates(doc, text)
            sentences = sentence_texts(doc)
            query = encoder_query(text)
            start = len(pairs)
            pairs.extend((query, sentences[i]) for i, _ in candidates)
            spans.append((start, len(pairs)))
            per_request.append(candidates)
        scores = self.model.ops.to_numpy(score_pairs(self.model, pairs, self.cfg["batch_size"])) if pairs else []
        ranked = []
        for candidates, (start, end) in zip(per_request, spans):
            final = fuse(scores[start:end], [b for _, b in candidates], self.cfg["bm25_weight"])
            order = sorted(range(len(candidates)), key=lambda j: (-final[j], j))
            ranked.append([(candidates[j][0], final[j]) for j in order])
        return ranked

    def link(self, citance: str, reference_doc: Doc, k: Optional[int] = None,
             threshold: Optional[float] = None) -> list[tuple[Any, float]]:
        """The reference sentences a citance refers to: ``[(sentence Span, score), ...]``, best first.

        ``k`` and ``threshold`` default to the component's settings; the best sentence is
        always returned. Raises ValueError naming the problem for an empty citance, a
        ``k < 1`` or a reference Doc without sentences.
        """
        k = self.cfg["k"] if k is None else k
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise ValueError(f"k must be a positive integer, got {k!r}")
        threshold = self.cfg["threshold"] if threshold is None else threshold
        ranked = self.rank([(citance, reference_doc)])[0]
        sentences = SentenceIndex.for_doc(reference_doc).sentences
        return [(sentences[i], score) for i, score in select(ranked, k, threshold)]

    def predict(self, docs: Iterable[Doc]) -> list[dict[str, list[tuple[int, float]]]]:
        """Per doc: citance id -> chosen (sentence index, score) pairs, best first."""
        self.warn_if_untrained()
        docs = list(docs)
        requests, owners = [], []
        for d, doc in enumerate(docs):
            for citance in doc._.incoming_citances or []:
                text = (citance.get("text") or "").strip()
                if text and len(doc) > 0:
                    requests.append((text, doc))
                    owners.append((d, str(citance["id"])))
        results: list[dict[str, list[tuple[int, float]]]] = [{} for _ in docs]
        if requests:
            for (d, cid), ranked in zip(owners, self.rank(requests)):
                results[d][cid] = select(ranked, self.cfg["k"], self.cfg["threshold"])
        return results

    def set_annotations(self, docs: Iterable[Doc], links: list[dict[str, list[tuple[int, float]]]]) -> None:
        """Write ``doc._.citance_links``: citance id -> ``[{"sid", "index", "score"}, ...]``."""
        for doc, doc_links in zip(docs, links):
            sids = sentence_sids(doc) if doc_links else []
            doc._.citance_links = {
                cid: [{"sid": sids[i], "index": int(i), "score": float(score)} for i, score in chosen]
                for cid, chosen in doc_links.items()
            }

    def analysis(self, doc: Doc) -> dict:
        """The linker's part of ``scholarly-nlp analyze``'s record (reference papers with incoming citances)."""
        return {"citance_links": dict(doc._.citance_links or {})}

    # -- training ---------------------------------------------------------------------
    def initialize(self, get_examples: Callable[[], Iterable[Example]], *, nlp: Optional[Language] = None) -> None:
        """Load the backbone; warn when the examples hold no citance with gold sids.

        Without such examples (``spacy assemble``, a zero-shot scorer) the pipe still links,
        but ``update`` would have nothing to learn from.
        """
        examples = list(get_examples())
        validate_examples(examples, "CitanceLinker.initialize")
        if not any(c.get("sids") for eg in examples[:50] for c in eg.reference._.incoming_citances or []):
            warnings.warn(f"{self.name}: none of the initialisation examples has a citance with gold sids in "
                          "doc._.incoming_citances; the pipe links but cannot be trained on them", stacklevel=2)
        if not is_loaded(self.model):
            self.model.initialize()

    def _training_lists(self, doc: Doc, limit: Optional[int]) -> list[tuple[str, list[str], list[int]]]:
        """(encoder query, candidate sentence texts, positions of the gold ones) per usable citance."""
        citances = [c for c in doc._.incoming_citances or [] if (c.get("text") or "").strip() and c.get("sids")]
        if limit is not None and len(citances) > limit:
            picked = self._rng.choice(len(citances), size=limit, replace=False)
            citances = [citances[i] for i in sorted(picked)]
        if not citances:
            return []
        sentences = sentence_texts(doc)
        lists = []
        for citance in citances:
            gold = gold_indices(doc, citance)
            if not gold:
                continue
            ranked = [i for i, _ in self._candidates(doc, citance["text"])]
            negatives = [i for i in ranked if i not in gold][: self.cfg["max_negatives"]]
            if not negatives:
                continue
            members = gold + negatives
            lists.append((encoder_query(citance["text"]), [sentences[i] for i in members], list(range(len(gold)))))
        return lists

    def score(self, examples: Iterable[Example], **kwargs: Any) -> dict[str, float]:
        """Task 1A micro precision/recall/F1 over the examples' citances (keyed per citance)."""
        tp = fp = fn = 0
        for eg in examples:
            gold = {str(c["id"]): c.get("sids") or [] for c in eg.reference._.incoming_citances or []}
            links = eg.predicted._.citance_links or {}
            system = {cid: [item["sid"] for item in chosen] for cid, chosen in links.items()}
            counts = task1a_counts(system, {cid: sids for cid, sids in gold.items() if sids})
            tp, fp, fn = tp + counts.tp, fp + counts.fp, fn + counts.fn
        if tp + fp + fn == 0:
            return {"citance_link_p": None, "citance_link_r": None, "citance_link_f1": None}
        scores = prf((tp, fp, fn))
        return {"citance_link_p": scores["precision"], "citance_link_r": scores["recall"],
                "citance_link_f1": scores["f1"]}
