"""The ``contribution_linker`` pipeline component (a spaCy ``TrainablePipe``), issue #6.

It runs on a paper Doc (e.g. read from GROBID TEI by :func:`scholarly_nlp.read`) and links
each contribution sentence of the introduction to the body paragraphs that explain it:

1. Queries: the introduction sentences of
   :func:`scholarly_nlp.introduction_and_body` that state a
   contribution: with ``doc._.contribution_scores`` (per-introduction-sentence probabilities
   from a ``contribution_detector`` pipe) those with probability >= ``detection_threshold``;
   without it, those with a first-person-plural cue (we / our / ours / us), see
   :func:`scholarly_contribution_linker.candidates.contribution_sentences`.
2. Candidates: the body paragraphs of the same function (all of them; a paper has tens).
3. Score: the pair scorer's score (default ``scholarly_nlp.BiEncoderScorer.v1`` on
   all-MiniLM-L6-v2, the cosine of mean-pooled embeddings, zero-shot) plus ``bm25_weight`` x
   the paragraph's BM25 score (:class:`~scholarly_nlp.retrieval.BM25Ranker`)
   scaled by its maximum over the paper's paragraphs. The BM25 index of a Doc is built once
   and cached (:class:`~scholarly_contribution_linker.candidates.PaperIndex`).
4. Output: ``doc._.contributions``, one entry per contribution sentence in document order::

       {"sentence": {"start_char", "end_char", "text"},
        "score": detection probability or None (rule),
        "paragraphs": [{"start_char", "end_char", "text_start" (first 80 characters), "score"}, ...]}

   with the best ``k`` paragraphs, best first.

Defined results: a paper without an introduction section takes the text before its first
head, else its first titled section, as the introduction (:func:`scholarly_nlp.introduction_range`);
an introduction without a contribution sentence (or a Doc without
sections) gives ``[]``; a body of one paragraph gives that paragraph with its score; an empty
body gives empty ``paragraphs`` lists. :meth:`ContributionLinker.link` ranks the paragraphs of
a Doc for any sentence (a Span or a string).

Training: each reference Doc of an Example may carry ``doc._.contribution_pairs``, a list
of ``{"sentence": text, "paragraph_start_char": int}`` (e.g. the silver pairs of
:func:`scholarly_contribution_linker.silver.silver_pairs`). For each pair, the gold paragraph
and up to ``max_negatives`` other body paragraphs (the BM25-hardest first) form one list; the
loss is the softmax cross-entropy of the list's pair-scorer scores divided by
``loss_temperature`` against the gold paragraph (a listwise ranking loss, as in the citance
linker). BM25 is not trained, so it stays out of the loss.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable, Iterable, Optional, Union

import numpy
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc, Span
from spacy.training import Example, validate_examples
from spacy.vocab import Vocab
from thinc.api import Model

from scholarly_nlp import ComponentSpec
from scholarly_nlp.ml import HuggingFaceModelPipe, ListwiseRankingPipe, is_loaded

from .candidates import PaperIndex, contribution_sentences, fuse

DEFAULT_MODEL = {
    "@architectures": "scholarly_nlp.BiEncoderScorer.v1",
    "name": "all-MiniLM-L6-v2",
    "max_length": 256,
    "scale": 1.0,
    "mixed_precision": False,
}
#: Characters of a paragraph kept as ``text_start`` in ``doc._.contributions``.
TEXT_START_CHARS = 80


SPEC = ComponentSpec(
    name="contribution_linker",
    default_config={
        "model": DEFAULT_MODEL,
        "k": 5,
        "detection_threshold": 0.5,
        "bm25_weight": 0.5,
        "max_sentences_per_doc": 8,
        "max_negatives": 15,
        "loss_temperature": 0.05,
        "batch_size": 64,
        "seed": 0,
    },
    assigns=["doc._.contributions"],
    default_score_weights={"contribution_link_hit1": 1.0, "contribution_link_mrr": 0.0},
    extensions={
        # The output: one entry per contribution sentence with its linked paragraphs.
        "doc._.contributions": {"default": None},
        # The contribution detector's per-introduction-sentence probabilities, read when set
        # (declared with the detector's arguments, so either package may install it).
        "doc._.contribution_scores": {"default": None},
        # Training pairs on reference Docs.
        "doc._.contribution_pairs": {"default": None},
    },
)
"""The component's one declaration: the factory, the plugin hook and the extensions read it."""


@SPEC.factory
def make_contribution_linker(nlp: Language, name: str, model: Model, k: int, detection_threshold: float,
                             bm25_weight: float, max_sentences_per_doc: int, max_negatives: int,
                             loss_temperature: float, batch_size: int, seed: int) -> "ContributionLinker":
    """spaCy factory of the contribution linker."""
    return ContributionLinker(nlp.vocab, model, name, k=k, detection_threshold=detection_threshold,
                              bm25_weight=bm25_weight, max_sentences_per_doc=max_sentences_per_doc,
                              max_negatives=max_negatives, loss_temperature=loss_temperature,
                              batch_size=batch_size, seed=seed)


def _check_k(k: Any) -> None:
    """ValueError unless ``k`` is a positive integer."""
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")


def _check_settings(cfg: dict) -> None:
    """ValueError naming the first bad setting."""
    for key in ("k", "max_sentences_per_doc", "max_negatives", "batch_size"):
        value = cfg[key]
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"contribution_linker: {key} must be a positive integer, got {value!r}")
    if not 0.0 <= float(cfg["detection_threshold"]) <= 1.0:
        raise ValueError(f"contribution_linker: detection_threshold must be in [0, 1], got {cfg['detection_threshold']!r}")
    if float(cfg["bm25_weight"]) < 0:
        raise ValueError(f"contribution_linker: bm25_weight must be >= 0, got {cfg['bm25_weight']!r}")
    if float(cfg["loss_temperature"]) <= 0:
        raise ValueError(f"contribution_linker: loss_temperature must be > 0, got {cfg['loss_temperature']!r}")


class ContributionLinker(HuggingFaceModelPipe, ListwiseRankingPipe, TrainablePipe):
    """Links a paper's contribution sentences to the body paragraphs that explain them.

    Saved as the scorer's Hugging Face folder (:class:`HuggingFaceModelPipe`); the settings
    (k, detection_threshold, bm25_weight, ...) live in the pipeline config, so a loaded
    pipeline takes overrides such as ``{"k": 1}``.
    """

    training_project = "projects/contribution_linker"

    def needs_training(self) -> bool:
        """Only a scorer with a new, random head (a cross-encoder built from a plain encoder)."""
        return bool(self.model.attrs.get("random_head"))

    per_doc_limit_key = "max_sentences_per_doc"

    def __init__(self, vocab: Vocab, model: Model, name: str = "contribution_linker", *, k: int = 5,
                 detection_threshold: float = 0.5, bm25_weight: float = 0.5, max_sentences_per_doc: int = 8,
                 max_negatives: int = 15, loss_temperature: float = 0.05, batch_size: int = 64, seed: int = 0):
        SPEC.install_extensions()
        self.vocab = vocab
        self.model = model
        self.name = name
        self.cfg = {"k": k, "detection_threshold": detection_threshold, "bm25_weight": bm25_weight,
                    "max_sentences_per_doc": max_sentences_per_doc, "max_negatives": max_negatives,
                    "loss_temperature": loss_temperature, "batch_size": batch_size, "seed": seed}
        _check_settings(self.cfg)
        self._rng = numpy.random.default_rng(seed)

    # -- inference --------------------------------------------------------------------
    def _require_model(self) -> None:
        """ValueError when the pair scorer has not been initialised or loaded."""
        if not is_loaded(self.model):
            raise ValueError(f"{self.name}: the pair scorer is not loaded; call nlp.initialize() or load a "
                             "trained pipeline (spacy.load) first")

    def _batches(self, pairs: list[tuple[str, str]]) -> list[list[tuple[str, str]]]:
        """Consecutive batches of ``pairs`` for the scorer.

        The bi-encoder encodes each distinct text of a batch once, so its batches hold up to
        ``batch_size`` distinct texts (many sentences against the same paragraphs cost one
        encoding per paragraph); any other scorer (a cross-encoder) gets ``batch_size`` pairs.
        """
        size = self.cfg["batch_size"]
        if self.model.name != "scholarly_nlp.bi_encoder_scorer":
            return [pairs[i : i + size] for i in range(0, len(pairs), size)]
        batches: list[list[tuple[str, str]]] = []
        current: list[tuple[str, str]] = []
        seen: set = set()
        for pair in pairs:
            new = set(pair) - seen
            if current and len(seen) + len(new) > size:
                batches.append(current)
                current, seen, new = [], set(), set(pair)
            current.append(pair)
            seen |= new
        if current:
            batches.append(current)
        return batches

    def rank(self, requests: list[tuple[str, Doc]]) -> list[list[tuple[int, float]]]:
        """For each (sentence text, paper Doc): every body paragraph as (index, final score), best first.

        Indices point into the Doc's body paragraphs (``PaperIndex.for_doc(doc).paragraphs``).
        All pairs go through the scorer together, ordered paragraph-major and batched by
        :meth:`_batches`, so that the bi-encoder encodes a paragraph about once for all the
        sentences of its paper. Ties keep document order. Raises ValueError for an empty sentence.
        """
        self._require_model()
        entries = []  # (doc order, paragraph index, request index)
        doc_order: dict[int, int] = {}
        indexes = []
        for r, (text, doc) in enumerate(requests):
            if not (text or "").strip():
                raise ValueError("empty sentence: nothing to link")
            index = PaperIndex.for_doc(doc)
            indexes.append(index)
            order = doc_order.setdefault(id(doc), len(doc_order))
            entries.extend((order, p, r) for p in range(len(index.paragraphs)))
        entries.sort()
        pairs = [(requests[r][0].strip(), indexes[r].texts[p]) for _, p, r in entries]
        flat = []
        for batch in self._batches(pairs):
            flat.extend(self.model.ops.to_numpy(self.model.predict(batch)).tolist())
        model_scores = [numpy.zeros(len(index.paragraphs)) for index in indexes]
        for (_, p, r), value in zip(entries, flat):
            model_scores[r][p] = float(value)
        ranked = []
        for (text, _), index, scores in zip(requests, indexes, model_scores):
            final = fuse(scores, index.bm25(text), self.cfg["bm25_weight"])
            order = sorted(range(len(final)), key=lambda j: (-final[j], j))
            ranked.append([(j, final[j]) for j in order])
        return ranked

    def link(self, sentence: Union[str, Span], doc: Doc, k: Optional[int] = None) -> list[tuple[Span, float]]:
        """The body paragraphs of ``doc`` that best explain ``sentence``: ``[(paragraph Span, score), ...]``.

        ``sentence`` is a Span (its text is used) or a string; ``k`` defaults to the
        component's setting. Best first; fewer than ``k`` when the body is shorter, ``[]``
        for a Doc without body paragraphs. Raises ValueError for an empty sentence or a
        ``k < 1``.
        """
        k = self.cfg["k"] if k is None else k
        _check_k(k)
        text = sentence if isinstance(sentence, str) else getattr(sentence, "text", None)
        if not isinstance(text, str) or not text.strip():
            raise ValueError("empty sentence: nothing to link")
        paragraphs = PaperIndex.for_doc(doc).paragraphs
        return [(paragraphs[i], score) for i, score in self.rank([(text, doc)])[0][:k]]

    def predict(self, docs: Iterable[Doc]) -> list[list[tuple[Span, Optional[float], list[tuple[Span, float]]]]]:
        """Per doc: ``(contribution sentence, detection probability or None, [(paragraph, score)] top k)``."""
        self.warn_if_untrained()
        docs = list(docs)
        requests, owners = [], []
        for d, doc in enumerate(docs):
            index = PaperIndex.for_doc(doc)
            for i, prob in contribution_sentences(doc, self.cfg["detection_threshold"], index.sentences):
                sentence = index.sentences[i]
                if sentence.text.strip():
                    requests.append((sentence.text, doc))
                    owners.append((d, sentence, prob))
        results: list[list] = [[] for _ in docs]
        if requests:
            for (d, sentence, prob), ranked in zip(owners, self.rank(requests)):
                paragraphs = PaperIndex.for_doc(docs[d]).paragraphs
                results[d].append((sentence, prob, [(paragraphs[i], s) for i, s in ranked[: self.cfg["k"]]]))
        return results

    def set_annotations(self, docs: Iterable[Doc], links: list) -> None:
        """Write ``doc._.contributions`` (see the module docstring for the layout)."""
        for doc, doc_links in zip(docs, links):
            doc._.contributions = [
                {
                    "sentence": {"start_char": sentence.start_char, "end_char": sentence.end_char,
                                 "text": sentence.text},
                    "score": prob,
                    "paragraphs": [{"start_char": p.start_char, "end_char": p.end_char,
                                    "text_start": p.text[:TEXT_START_CHARS], "score": float(s)}
                                   for p, s in chosen],
                }
                for sentence, prob, chosen in doc_links
            ]

    def analysis(self, doc: Doc) -> dict:
        """The linker's part of ``scholarly-nlp analyze``'s record: each contribution sentence
        with its linked body paragraphs, best first, with scores."""
        return {"contributions": list(doc._.contributions or [])}

    # -- training ---------------------------------------------------------------------
    def initialize(self, get_examples: Callable[[], Iterable[Example]], *, nlp: Optional[Language] = None) -> None:
        """Load the backbone; warn when no example's reference carries ``doc._.contribution_pairs``.

        Without such examples (``spacy assemble``, the zero-shot scorer) the pipe still
        links, but ``update`` would have nothing to learn from.
        """
        examples = list(get_examples())
        validate_examples(examples, "ContributionLinker.initialize")
        if not any(eg.reference._.contribution_pairs for eg in examples[:50]):
            warnings.warn(f"{self.name}: none of the initialisation examples has doc._.contribution_pairs; "
                          "the pipe links but cannot be trained on them", stacklevel=2)
        if not is_loaded(self.model):
            self.model.initialize()

    def _training_lists(self, doc: Doc, limit: Optional[int]) -> list[tuple[str, list[str], list[int]]]:
        """(sentence text, [gold paragraph text, negative texts...], gold position 0) per usable pair.

        A pair is usable when its sentence is not empty, its ``paragraph_start_char`` is the
        start of a body paragraph and the body has another paragraph.
        """
        pairs = [p for p in doc._.contribution_pairs or [] if (p.get("sentence") or "").strip()]
        if limit is not None and len(pairs) > limit:
            picked = self._rng.choice(len(pairs), size=limit, replace=False)
            pairs = [pairs[i] for i in sorted(picked)]
        if not pairs:
            return []
        index = PaperIndex.for_doc(doc)
        by_start = {p.start_char: i for i, p in enumerate(index.paragraphs)}
        lists = []
        for pair in pairs:
            gold = by_start.get(pair.get("paragraph_start_char"))
            if gold is None:
                continue
            bm25 = index.bm25(pair["sentence"])
            hardest = sorted(range(len(index.paragraphs)), key=lambda j: (-bm25[j], j))
            negatives = [j for j in hardest if j != gold][: self.cfg["max_negatives"]]
            if not negatives:
                continue
            texts = [index.texts[gold]] + [index.texts[j] for j in negatives]
            lists.append((pair["sentence"].strip(), texts, [0]))
        return lists

    def score(self, examples: Iterable[Example], **kwargs: Any) -> dict[str, Optional[float]]:
        """hit@1 and MRR (over the top ``k``) of the predicted links against the reference pairs.

        A reference pair whose sentence is not among the predicted contribution sentences
        (matched by stripped text), or whose paragraph is not in its top ``k``, scores 0.
        None for both when the examples carry no pair.
        """
        n, hits, rr = 0, 0.0, 0.0
        for eg in examples:
            predicted = {c["sentence"]["text"].strip(): [p["start_char"] for p in c["paragraphs"]]
                         for c in eg.predicted._.contributions or []}
            for pair in eg.reference._.contribution_pairs or []:
                n += 1
                ranking = predicted.get((pair.get("sentence") or "").strip(), [])
                if pair.get("paragraph_start_char") in ranking:
                    rank = ranking.index(pair["paragraph_start_char"]) + 1
                    rr += 1.0 / rank
                    hits += 1.0 if rank == 1 else 0.0
        if not n:
            return {"contribution_link_hit1": None, "contribution_link_mrr": None}
        return {"contribution_link_hit1": hits / n, "contribution_link_mrr": rr / n}
