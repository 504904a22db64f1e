"""Evaluating figure embeddings as Kuzi and Zhai did, on held-out papers.

**Pair classification.** Two balanced pair sets are built from the figures of the held-out
papers of one split:

* ``same``: pairs of figures of the same paper (positive) vs pairs of figures of two
  different papers (negative);
* ``citing``: pairs of figures of two different papers in a citation relation (positive;
  either kind, ``cites`` or ``co_citing``, whatever the model was trained with, so that
  models stay comparable) vs pairs of figures of two different, unrelated papers
  (negative); ``citing_direct`` restricts the positives to papers where one cites the other.

A pair is classified "related" when its similarity exceeds a threshold, chosen to maximise
accuracy on the validation split's pairs and applied unchanged to the test split. The
embedding cosine is compared with the TF-IDF cosine of the figures' texts (caption +
context), each with its own tuned threshold, and with ``hybrid``, the similarity the
component's recommendation uses (:func:`~scholarly_figure_embedder.recommend.blend`:
``(1 - w) * tfidf + w * embedding``), whose weight ``w`` of :data:`WEIGHT_GRID` is tuned
with its threshold on the same validation pairs (the best validation accuracy; ties go to the
smaller weight). Balanced sets make chance 0.5.

**Recommendation.** Each test figure with at least one relevant figure in the test pool is
a query; the pool (every test figure but the query) is ranked by TF-IDF alone, and by the
TF-IDF top ``n_candidates`` reranked with the embeddings (the configured weight, a weight
tuned on the validation split, and weight 1 = embeddings only). Relevant: the other
figures of the query's paper (``same_paper``), or those plus the figures of
citation-related papers (``same_or_citing``). Precision@3/@5 come from
:mod:`scholarly_nlp.metrics`; ``oracle`` is the best precision reachable given how many
relevant figures each query has.

Differences are given with a paired bootstrap (:func:`scholarly_nlp.metrics.paired_bootstrap`)
over test pairs (``embedding_vs_tfidf``, ``hybrid_vs_tfidf``) and test queries (``rerank_vs_tfidf``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy
from spacy.tokens import Doc

from scholarly_nlp.metrics import mean_precision_at_k, paired_bootstrap, precision_at_k

from .baselines import TfidfSimilarity
from .recommend import Candidate, blend, collect_candidates, rerank
from .relations import KINDS, RelationTable
from .scoring import roc_auc

K_VALUES = (3, 5)
WEIGHT_GRID = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)

__all__ = ["PairSet", "accuracy", "build_pair_sets", "compare_on_pairs", "embedder_pool", "evaluate_embedder",
           "figure_pool", "pair_auc", "pair_classification", "pool_counts", "recommendation", "tune_hybrid_weight",
           "tune_threshold"]
METHODS = ("embedding", "tfidf", "hybrid")


@dataclass
class PairSet:
    """Pairs of pool indices with labels (1 related, 0 not)."""

    left: numpy.ndarray
    right: numpy.ndarray
    labels: numpy.ndarray

    def __len__(self) -> int:
        return int(len(self.labels))


def figure_pool(docs: Sequence[Doc], vectors: Optional[Sequence[dict]] = None, include_tables: bool = False,
                window: int = 1, max_mentions: int = 3) -> list[Candidate]:
    """Every candidate figure of ``docs`` with its text and embedding (``vectors`` per doc, or the docs')."""
    return collect_candidates(docs, include_tables, window, max_mentions, vectors=vectors)


def embedder_pool(embedder: Any, docs: Sequence[Doc]) -> list[Candidate]:
    """:func:`figure_pool` of ``docs`` with a ``figure_embedder`` pipe's embeddings and text options."""
    cfg = embedder.cfg
    return figure_pool(docs, embedder.predict(docs), include_tables=cfg["include_tables"], window=cfg["window"],
                       max_mentions=cfg["max_mentions"])


# --------------------------------------------------------------------------- pair sets


def _sample(pairs: list[tuple[int, int]], size: int, rng: numpy.random.Generator) -> list[tuple[int, int]]:
    if len(pairs) <= size:
        return pairs
    return [pairs[i] for i in sorted(rng.choice(len(pairs), size=size, replace=False))]


def _balanced(positives: list[tuple[int, int]], negatives: list[tuple[int, int]], max_pairs: int,
              rng: numpy.random.Generator) -> PairSet:
    """As many negatives as positives (at most ``max_pairs`` of each), all drawn without replacement."""
    size = min(len(positives), len(negatives), max_pairs)
    chosen = _sample(positives, size, rng) + _sample(negatives, size, rng)
    labels = numpy.array([1] * size + [0] * size, dtype=numpy.int64)
    left = numpy.array([a for a, _ in chosen], dtype=numpy.int64)
    right = numpy.array([b for _, b in chosen], dtype=numpy.int64)
    return PairSet(left, right, labels)


def build_pair_sets(pool: Sequence[Candidate], relations: RelationTable, related_kinds: Optional[Sequence[str]] = None,
                    max_pairs: int = 2000, seed: int = 0) -> dict[str, PairSet]:
    """The balanced ``same``, ``citing`` and ``citing_direct`` pair sets of one pool."""
    rng = numpy.random.default_rng(seed)
    same, different, related, direct, unrelated = [], [], [], [], []
    for i in range(len(pool)):
        for j in range(i + 1, len(pool)):
            a, b = pool[i].paper_id, pool[j].paper_id
            if a == b:
                same.append((i, j))
                continue
            different.append((i, j))
            kind = relations.kind(a, b)
            if kind is None:
                unrelated.append((i, j))
            else:
                if related_kinds is None or kind in related_kinds:
                    related.append((i, j))
                if kind == "cites":
                    direct.append((i, j))
    return {
        "same": _balanced(same, different, max_pairs, rng),
        "citing": _balanced(related, unrelated, max_pairs, rng),
        "citing_direct": _balanced(direct, unrelated, max_pairs, rng),
    }


# --------------------------------------------------------------------------- scores and thresholds


def embedding_pair_scores(pool: Sequence[Candidate], pairs: PairSet) -> numpy.ndarray:
    """Cosine of the two figures' embeddings per pair (0 when one has no vector)."""
    scores = numpy.zeros(len(pairs), dtype=numpy.float32)
    for p, (i, j) in enumerate(zip(pairs.left, pairs.right)):
        a, b = pool[i].vector, pool[j].vector
        if a is not None and b is not None:
            norm = float(numpy.linalg.norm(a) * numpy.linalg.norm(b))
            scores[p] = float(a @ b) / norm if norm > 0 else 0.0
    return scores


def tfidf_pair_scores(pool: Sequence[Candidate], pairs: PairSet) -> numpy.ndarray:
    """TF-IDF cosine of the two figures' texts per pair (IDF fitted on the pool's texts)."""
    similarity = TfidfSimilarity([c.text for c in pool])
    return similarity.pair_scores([pool[i].text for i in pairs.left], [pool[j].text for j in pairs.right])


def tune_threshold(scores: numpy.ndarray, labels: numpy.ndarray) -> Optional[float]:
    """The threshold (score > t means related) with the best accuracy; midpoints between distinct scores.

    Ties between thresholds go to the smallest. None when there is no pair.
    """
    if not len(scores):
        return None
    values = numpy.unique(scores)
    candidates = numpy.concatenate([[values[0] - 1.0], (values[:-1] + values[1:]) / 2.0, [values[-1] + 1.0]])
    best, best_accuracy = float(candidates[0]), -1.0
    for threshold in candidates:
        value = accuracy(scores, labels, float(threshold))
        if value > best_accuracy:
            best, best_accuracy = float(threshold), value
    return best


def accuracy(scores: numpy.ndarray, labels: numpy.ndarray, threshold: float) -> float:
    """Fraction of pairs classified correctly by ``score > threshold``."""
    if not len(scores):
        return 0.0
    return float(numpy.mean((numpy.asarray(scores) > threshold).astype(int) == numpy.asarray(labels)))


def pair_auc(scores: numpy.ndarray, labels: numpy.ndarray) -> Optional[float]:
    """Threshold-free ROC AUC of ``scores`` for the pair ``labels`` (None unless both classes occur)."""
    scores, labels = numpy.asarray(scores), numpy.asarray(labels)
    return roc_auc(scores[labels == 1], scores[labels == 0])


def _method_report(dev_scores, dev_labels, test_scores, test_labels) -> tuple[dict[str, Any], Optional[numpy.ndarray]]:
    """(threshold, test and dev accuracy; per-test-pair correctness or None when it cannot be tuned)."""
    threshold = tune_threshold(dev_scores, dev_labels)
    if threshold is None or not len(test_scores):
        return {"accuracy": None, "threshold": threshold, "dev_accuracy": None}, None
    correct = ((numpy.asarray(test_scores) > threshold).astype(int) == numpy.asarray(test_labels)).astype(float)
    return {"accuracy": float(correct.mean()), "threshold": threshold,
            "dev_accuracy": accuracy(dev_scores, dev_labels, threshold)}, correct


def _significance(a: Optional[numpy.ndarray], b: Optional[numpy.ndarray], seed: int) -> Optional[dict[str, float]]:
    """Paired bootstrap of per-item scores a vs b (None when either is missing).

    Items (pairs sharing figures, queries sharing a pool) are not independent, so the
    interval is optimistic; it says how stable the difference is on this sample.
    """
    if a is None or b is None or not len(a):
        return None
    return paired_bootstrap(a, b, n_resamples=2000, seed=seed)


def pair_scores(pool: Sequence[Candidate], pairs: PairSet) -> dict[str, numpy.ndarray]:
    """The embedding and TF-IDF similarity of each pair of ``pairs`` (``hybrid`` blends them)."""
    return {"embedding": embedding_pair_scores(pool, pairs), "tfidf": tfidf_pair_scores(pool, pairs)}


def tune_hybrid_weight(scores: dict[str, numpy.ndarray], labels: numpy.ndarray) -> Optional[float]:
    """The weight of :data:`WEIGHT_GRID` whose blend of ``scores["tfidf"]`` and
    ``scores["embedding"]`` classifies ``labels`` best at its own tuned threshold (ties: the
    smaller weight); None when there is no pair."""
    if not len(labels):
        return None
    best, best_accuracy = None, -1.0
    for weight in WEIGHT_GRID:
        blended = blend(scores["tfidf"], scores["embedding"], weight)
        value = accuracy(blended, labels, tune_threshold(blended, labels))
        if value > best_accuracy:
            best, best_accuracy = weight, value
    return best


def compare_on_pairs(dev_pool: Sequence[Candidate], dev: PairSet, test_pool: Sequence[Candidate], test: PairSet,
                     seed: int = 0) -> tuple[dict[str, Any], dict[str, numpy.ndarray]]:
    """One pair set's report (each method of :data:`METHODS` tuned on ``dev``, its accuracy on
    ``test``; the paired bootstraps ``embedding_vs_tfidf`` and ``hybrid_vs_tfidf``) and each
    method's scores of the ``test`` pairs."""
    dev_scores, test_scores = pair_scores(dev_pool, dev), pair_scores(test_pool, test)
    weight = tune_hybrid_weight(dev_scores, dev.labels)
    for scores in (dev_scores, test_scores):
        scores["hybrid"] = blend(scores["tfidf"], scores["embedding"], weight if weight is not None else 0.0)
    report: dict[str, Any] = {"n_dev_pairs": len(dev), "n_test_pairs": len(test)}
    correct = {}
    for method in METHODS:
        report[method], correct[method] = _method_report(dev_scores[method], dev.labels, test_scores[method],
                                                         test.labels)
    report["hybrid"]["weight"] = weight
    report["embedding_vs_tfidf"] = _significance(correct["embedding"], correct["tfidf"], seed)
    report["hybrid_vs_tfidf"] = _significance(correct["hybrid"], correct["tfidf"], seed)
    return report, test_scores


def pair_classification(dev_pool: Sequence[Candidate], test_pool: Sequence[Candidate], relations: RelationTable,
                        related_kinds: Optional[Sequence[str]] = None, max_pairs: int = 2000, seed: int = 0
                        ) -> dict[str, dict[str, Any]]:
    """Accuracy of the embeddings, TF-IDF and their blend on each pair set (thresholds and the
    blend's weight tuned on the dev pool).

    ``embedding_vs_tfidf`` and ``hybrid_vs_tfidf`` are paired bootstraps of per-pair correctness
    on the test pairs.
    """
    dev_sets = build_pair_sets(dev_pool, relations, related_kinds, max_pairs, seed)
    test_sets = build_pair_sets(test_pool, relations, related_kinds, max_pairs, seed + 1)
    return {name: compare_on_pairs(dev_pool, dev_sets[name], test_pool, test_sets[name], seed)[0]
            for name in dev_sets}


# --------------------------------------------------------------------------- recommendation


def _relevant(pool: Sequence[Candidate], relations: RelationTable, relevance: str,
              related_kinds: Optional[Sequence[str]]) -> dict[int, set[int]]:
    """Query index -> relevant pool indices (queries without any are left out)."""
    by_paper: dict[str, list[int]] = {}
    for i, c in enumerate(pool):
        by_paper.setdefault(c.paper_id, []).append(i)
    out = {}
    for i, c in enumerate(pool):
        relevant = set(by_paper[c.paper_id]) - {i}
        if relevance == "same_or_citing":
            for other in relations.related(c.paper_id, related_kinds):
                relevant |= set(by_paper.get(other, []))
        elif relevance != "same_paper":
            raise ValueError(f"unknown relevance {relevance!r}; use 'same_paper' or 'same_or_citing'")
        if relevant:
            out[i] = relevant
    return out


def _tfidf_matrix(pool: Sequence[Candidate]) -> numpy.ndarray:
    """Dense (n, n) TF-IDF cosines between the pool's texts."""
    similarity = TfidfSimilarity([c.text for c in pool])
    rows = similarity.matrix([c.text for c in pool])
    if rows is None:
        return numpy.zeros((len(pool), len(pool)), dtype=numpy.float32)
    return numpy.asarray((rows @ rows.T).toarray(), dtype=numpy.float32)


def _rankings(pool: Sequence[Candidate], tfidf: numpy.ndarray, queries: Sequence[int], weight: float,
              n_candidates: int, depth: int) -> dict[int, list[int]]:
    return {q: [i for i, _ in rerank(tfidf[q], pool[q].vector, pool, depth, weight, n_candidates, {q})]
            for q in queries}


def _precisions(rankings: dict[int, list[int]], qrels: dict[int, set[int]]) -> dict[str, float]:
    return {f"p@{k}": mean_precision_at_k(rankings, qrels, k) for k in K_VALUES}


def _per_query(rankings: dict[int, list[int]], qrels: dict[int, set[int]], k: int) -> numpy.ndarray:
    return numpy.array([precision_at_k(rankings[q], qrels[q], k) for q in sorted(qrels)])


def recommendation(pool: Sequence[Candidate], relations: RelationTable, weight: float, n_candidates: int = 100,
                   relevance: str = "same_paper", related_kinds: Optional[Sequence[str]] = None,
                   dev_pool: Optional[Sequence[Candidate]] = None, seed: int = 0) -> dict[str, Any]:
    """P@3/P@5 of TF-IDF alone and of TF-IDF + embedding rerank on ``pool`` (see the module docstring).

    ``rerank_vs_tfidf`` is the paired bootstrap of per-query P@k of the rerank (the dev-tuned
    weight when ``dev_pool`` is given, else ``weight``) against TF-IDF alone.
    """
    qrels = _relevant(pool, relations, relevance, related_kinds)
    queries = sorted(qrels)
    tfidf = _tfidf_matrix(pool)
    depth = max(K_VALUES)
    report: dict[str, Any] = {"relevance": relevance, "n_queries": len(queries), "n_pool": len(pool),
                              "n_candidates": n_candidates}
    runs = {"tfidf": (0.0, _rankings(pool, tfidf, queries, 0.0, n_candidates, depth))}
    runs["tfidf_rerank"] = (weight, _rankings(pool, tfidf, queries, weight, n_candidates, depth))
    runs["embedding_rerank_only"] = (1.0, _rankings(pool, tfidf, queries, 1.0, n_candidates, depth))
    if dev_pool:
        tuned = tune_weight(dev_pool, relations, n_candidates, relevance, related_kinds)
        runs["tfidf_rerank_dev_tuned"] = (tuned, _rankings(pool, tfidf, queries, tuned, n_candidates, depth))
    for name, (run_weight, rankings) in runs.items():
        report[name] = {"weight": run_weight, **_precisions(rankings, qrels)}
    report["oracle"] = {f"p@{k}": (sum(min(k, len(qrels[q])) / k for q in queries) / len(queries) if queries else 0.0)
                        for k in K_VALUES}
    compared = runs["tfidf_rerank_dev_tuned" if dev_pool else "tfidf_rerank"][1]
    report["rerank_vs_tfidf"] = {
        f"p@{k}": _significance(_per_query(compared, qrels, k), _per_query(runs["tfidf"][1], qrels, k), seed)
        for k in K_VALUES} if queries else None
    return report


def tune_weight(dev_pool: Sequence[Candidate], relations: RelationTable, n_candidates: int = 100,
                relevance: str = "same_paper", related_kinds: Optional[Sequence[str]] = None) -> float:
    """The rerank weight of :data:`WEIGHT_GRID` with the best mean of P@3 and P@5 on the dev pool (ties: smaller)."""
    qrels = _relevant(dev_pool, relations, relevance, related_kinds)
    queries = sorted(qrels)
    tfidf = _tfidf_matrix(dev_pool)
    best, best_value = WEIGHT_GRID[0], -1.0
    for weight in WEIGHT_GRID:
        values = _precisions(_rankings(dev_pool, tfidf, queries, weight, n_candidates, max(K_VALUES)), qrels)
        value = sum(values.values()) / len(values)
        if value > best_value:
            best, best_value = weight, value
    return best


# --------------------------------------------------------------------------- everything


def evaluate_embedder(embedder: Any, dev_docs: Sequence[Doc], test_docs: Sequence[Doc],
                      relations: Optional[RelationTable] = None, max_pairs: int = 2000, seed: int = 0
                      ) -> dict[str, Any]:
    """The full report for a ``figure_embedder`` pipe: data counts, pair classification, recommendation."""
    relations = relations if relations is not None else embedder.relations
    cfg = embedder.cfg
    dev_pool, test_pool = embedder_pool(embedder, dev_docs), embedder_pool(embedder, test_docs)
    kinds = list(KINDS)
    return {
        "data": {name: pool_counts(docs, pool, relations) for name, docs, pool in
                 (("dev", dev_docs, dev_pool), ("test", test_docs, test_pool))},
        "pairs": pair_classification(dev_pool, test_pool, relations, kinds, max_pairs, seed),
        "recommendation": {
            relevance: recommendation(test_pool, relations, cfg["rerank_weight"], cfg["n_candidates"], relevance,
                                      kinds, dev_pool=dev_pool)
            for relevance in ("same_paper", "same_or_citing")
        },
    }


def pool_counts(docs: Sequence[Doc], pool: Sequence[Candidate], relations: RelationTable) -> dict[str, int]:
    """Papers, figures (in the pool), figures with a rendered image, and relations between the papers."""
    papers = {d._.paper_id for d in docs}
    keys = {(c.paper_id, c.fig_id) for c in pool}
    images = sum(1 for d in docs for f in d._.figures if f.image_path and (d._.paper_id, f.id) in keys)
    return {"papers": len(papers), "figures": len(pool), "figures_with_image": images,
            "relations": len(relations.restrict(papers))}
