"""Evaluation metrics shared by every scholarly_nlp task.

* :mod:`.ranking` - precision/recall/hit@k, reciprocal rank, average precision, NDCG
  (gain = grade, discount log2(rank + 1)), accuracy@k, and their means over a run.
* :mod:`.csfcube` - CSFCube's official evaluation variant (its relevance and split files
  are read by :mod:`scholarly_nlp.readers.csfcube`).
* :mod:`.clscisumm` - CL-SciSumm 2018 Task 1A/1B scoring (the annotation cell parsers are
  :mod:`scholarly_nlp.readers.clscisumm_cells`).
* :mod:`.facets` - multi-label citation facet P/R/F1 (per label, micro, macro).
* :mod:`.significance` - paired bootstrap tests (of per-item scores, and of micro F1 over
  items that carry counts), and a system against each of its baselines
  (:func:`~.significance.versus_baselines`, an evaluation report's ``vs_baselines``).

Metrics are pure functions: none reads a file. The package exports each submodule's
``__all__``. :data:`BUILTIN_METRICS` maps a registry name to its function. The run-level
ranking metrics share the call ``f(rankings, qrels, ...)`` with ``rankings = {query: [id,
...]}`` and ``qrels = {query: {id: grade}}`` (or ``{query: {id, ...}}``); the ``*_at_k``
ones also take ``k``; ``acc_at_k`` takes ``{query: target id}`` instead of qrels. The other
entries keep the signatures documented on their functions.
"""

from typing import Callable, Dict

from . import clscisumm, csfcube, facets, ranking, significance
from .clscisumm import *  # noqa: F401,F403 - the names of clscisumm.__all__
from .csfcube import *  # noqa: F401,F403
from .facets import *  # noqa: F401,F403
from .ranking import *  # noqa: F401,F403
from .significance import *  # noqa: F401,F403

BUILTIN_METRICS: Dict[str, Callable[..., object]] = {
    "map": ranking.mean_average_precision,
    "mrr": ranking.mean_reciprocal_rank,
    "ndcg": ranking.mean_ndcg_at_k,
    "acc_at_k": ranking.accuracy_at_k,
    "precision_at_k": ranking.mean_precision_at_k,
    "recall_at_k": ranking.mean_recall_at_k,
    "hit_at_k": ranking.mean_hit_at_k,
    "csfcube": csfcube.evaluate_csfcube,
    "clscisumm_task1a": clscisumm.clscisumm_task1a,
    "clscisumm_task1b": clscisumm.clscisumm_task1b,
    "facet_f1": facets.facet_f1,
    "paired_bootstrap": significance.paired_bootstrap,
    "paired_bootstrap_micro_f1": significance.paired_bootstrap_micro_f1,
}
"""Registry name -> metric function, registered by the plugin system."""

__all__ = [
    "BUILTIN_METRICS",
    *ranking.__all__,
    *csfcube.__all__,
    *clscisumm.__all__,
    *facets.__all__,
    *significance.__all__,
]
