"""Evaluation metrics shared by every scholarly_nlp task.

* :mod:`.ranking` - precision/recall/hit@k, reciprocal rank, average precision, NDCG
  (gain = grade, discount log2(rank + 1)), accuracy@k, and their means over a run.
* :mod:`.csfcube` - CSFCube's official evaluation variant and its file readers.
* :mod:`.clscisumm` - CL-SciSumm 2018 Task 1A/1B scoring (the annotation cell parsers are
  :mod:`scholarly_nlp.readers.clscisumm_cells`).
* :mod:`.facets` - multi-label facet P/R/F1 (per label, micro, macro).
* :mod:`.significance` - paired bootstrap test.

:data:`BUILTIN_METRICS` maps a registry name to its function. The run-level ranking
metrics share the call ``f(rankings, qrels, ...)`` with ``rankings = {query: [id, ...]}``
and ``qrels = {query: {id: grade}}`` (or ``{query: {id, ...}}``); the ``*_at_k`` ones
also take ``k``; ``acc_at_k`` takes ``{query: target id}`` instead of qrels. The other
entries keep the signatures documented on their functions.
"""

from typing import Callable, Dict

from .clscisumm import (
    FACET_LABELS,
    Counts,
    Task1Pair,
    aggregate_counts,
    clscisumm_task1a,
    clscisumm_task1b,
    clscisumm_task1_official,
    clscisumm_task1_per_citance,
    canonical_sentence_id,
    normalize_facet,
    official_task1_counts,
    prf,
    task1a_counts,
    task1b_counts,
)
from .csfcube import (
    csfcube_dcg,
    csfcube_ndcg,
    csfcube_per_query,
    csfcube_query_metrics,
    evaluate_csfcube,
    load_csfcube_qrels,
    ranked_grades,
    read_csfcube_folds,
    read_csfcube_qrels,
)
from .facets import facet_f1, per_label_prf
from .ranking import (
    accuracy_at_k,
    average_precision,
    dcg_at_k,
    hit_at_k,
    mean_average_precision,
    mean_hit_at_k,
    mean_ndcg_at_k,
    mean_precision_at_k,
    mean_recall_at_k,
    mean_reciprocal_rank,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
    reciprocal_rank,
)
from .significance import paired_bootstrap

BUILTIN_METRICS: Dict[str, Callable[..., object]] = {
    "map": mean_average_precision,
    "mrr": mean_reciprocal_rank,
    "ndcg": mean_ndcg_at_k,
    "acc_at_k": accuracy_at_k,
    "precision_at_k": mean_precision_at_k,
    "recall_at_k": mean_recall_at_k,
    "hit_at_k": mean_hit_at_k,
    "csfcube": evaluate_csfcube,
    "clscisumm_task1a": clscisumm_task1a,
    "clscisumm_task1b": clscisumm_task1b,
    "facet_f1": facet_f1,
    "paired_bootstrap": paired_bootstrap,
}
"""Registry name -> metric function, registered by the plugin system."""

__all__ = [
    "BUILTIN_METRICS",
    # ranking
    "precision_at_k",
    "recall_at_k",
    "hit_at_k",
    "reciprocal_rank",
    "average_precision",
    "dcg_at_k",
    "ndcg_at_k",
    "accuracy_at_k",
    "mean_precision_at_k",
    "mean_recall_at_k",
    "mean_hit_at_k",
    "mean_reciprocal_rank",
    "mean_average_precision",
    "mean_ndcg_at_k",
    # csfcube
    "csfcube_dcg",
    "csfcube_ndcg",
    "csfcube_query_metrics",
    "ranked_grades",
    "csfcube_per_query",
    "evaluate_csfcube",
    "read_csfcube_qrels",
    "load_csfcube_qrels",
    "read_csfcube_folds",
    # clscisumm
    "FACET_LABELS",
    "Counts",
    "Task1Pair",
    "canonical_sentence_id",
    "normalize_facet",
    "prf",
    "task1a_counts",
    "task1b_counts",
    "aggregate_counts",
    "clscisumm_task1a",
    "clscisumm_task1b",
    "official_task1_counts",
    "clscisumm_task1_official",
    "clscisumm_task1_per_citance",
    # facets
    "per_label_prf",
    "facet_f1",
    # significance
    "paired_bootstrap",
]
