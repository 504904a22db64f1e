"""Rank CSFCube-style pools with an aspect pipeline (transformer, roles, aspect embedder).

:class:`AspectPipelineRanker` follows the ranker protocol of
:mod:`scholarly_aspect_embedder.baselines` (``prepare(records)``, then ``rank(query,
candidates, aspect)``), so the trained model and the baselines go through the same
evaluation code. Distances are the Euclidean distances of
:func:`~scholarly_aspect_embedder.vectors.aspect_search_vector`, the ones :func:`similar` and
the saved index rank by.
"""

from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

import numpy
from spacy.language import Language

from scholarly_nlp import check_aspect
from scholarly_nlp.readers import AbstractRecord, abstract_doc
from .vectors import aspect_search_vector

ROLE_SOURCES = ("shipped", "predicted")


class AspectPipelineRanker:
    """Ranks candidates by the aspect search distance of the aspect vectors ``nlp`` gives each paper.

    ``roles="shipped"`` keeps the records' own sentence labels (CSFCube's ``pred_labels``)
    and the role tagger only fills in papers without them; ``"predicted"`` drops them so
    the pipeline's role tagger labels every abstract.
    """

    def __init__(self, nlp: Language, roles: str = "shipped", batch_size: int = 32) -> None:
        if roles not in ROLE_SOURCES:
            raise ValueError(f"roles must be one of {ROLE_SOURCES}, got {roles!r}")
        if "aspect_embedder" not in nlp.pipe_names:
            raise ValueError(f"the pipeline has no aspect_embedder (pipes: {nlp.pipe_names})")
        self.nlp = nlp
        self.roles = roles
        self.batch_size = batch_size
        self.aspects: Dict[str, dict] = {}

    def prepare(self, records: Sequence[AbstractRecord]) -> None:
        """Run the pipeline over every record not seen yet and keep its aspect vectors."""
        todo = [r for r in records if r.paper_id not in self.aspects]
        if self.roles == "predicted":
            todo = [AbstractRecord(r.paper_id, r.title, r.sentences, None, r.metadata) for r in todo]
        docs = (abstract_doc(r, self.nlp) for r in todo)
        for record, doc in zip(todo, self.nlp.pipe(docs, batch_size=self.batch_size)):
            self.aspects[record.paper_id] = doc._.aspect_vectors

    def rank(self, query: AbstractRecord, candidates: Sequence[AbstractRecord],
             aspect: str) -> List[Tuple[str, float]]:
        """``(candidate pid, distance)`` pairs, smallest distance first."""
        check_aspect(aspect)
        self.prepare([query, *candidates])
        q = aspect_search_vector(self.aspects[query.paper_id], aspect)
        dist = [float(numpy.linalg.norm(aspect_search_vector(self.aspects[c.paper_id], aspect) - q))
                for c in candidates]
        order = sorted(range(len(candidates)), key=lambda i: dist[i])
        return [(candidates[i].paper_id, dist[i]) for i in order]
