"""Weakly supervised training pairs: same paper, citation-related papers, random papers.

The anchors are the figures of a training batch's papers; their partners are drawn from a
store of every training figure (filled once when the component is initialised), so that a
batch of a few papers still sees related papers, which a random batch rarely contains.
Per anchor figure: ``n_same`` other figures of its paper (target ``same``, 1 by default),
``n_related`` figures of papers in a citation relation with it (``related``, 0.6) and
``n_random`` figures of papers that are neither (``unrelated``, 0).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Optional, Sequence

import numpy

from .features import FigureFeatures
from .relations import RelationTable


@dataclass
class PairBatch:
    """Figures to embed and pairs of their row indices with targets."""

    figures: list[FigureFeatures] = field(default_factory=list)
    left: list[int] = field(default_factory=list)
    right: list[int] = field(default_factory=list)
    targets: list[float] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.left)


class PairSampler:
    """Draws training pairs for anchor papers from a store of figure features."""

    def __init__(self, relations: Optional[RelationTable] = None, related_kinds: Optional[Sequence[str]] = None,
                 same: float = 1.0, related: float = 0.6, unrelated: float = 0.0, n_same: int = 1,
                 n_related: int = 1, n_random: int = 2, max_anchors: int = 48, seed: int = 0):
        self.relations = relations or RelationTable()
        self.related_kinds = list(related_kinds) if related_kinds is not None else None
        self.targets = {"same": same, "related": related, "unrelated": unrelated}
        self.n_same, self.n_related, self.n_random = n_same, n_related, n_random
        self.max_anchors = max_anchors
        self.store: dict[str, list[FigureFeatures]] = {}
        self._rng = numpy.random.default_rng(seed)

    def add(self, papers: Iterable[Sequence[FigureFeatures]]) -> None:
        """Add (or replace) papers' figures in the store; papers without figures are skipped."""
        for figures in papers:
            if figures:
                self.store[figures[0].paper_id] = list(figures)

    def related_papers(self, paper_id: str) -> list[str]:
        """Stored papers in a citation relation with ``paper_id`` (sorted, for reproducibility)."""
        return sorted(p for p in self.relations.related(paper_id, self.related_kinds) if p in self.store)

    def _pick(self, items: Sequence, k: int) -> list:
        if k <= 0 or not items:
            return []
        chosen = self._rng.choice(len(items), size=min(k, len(items)), replace=False)
        return [items[i] for i in chosen]

    def sample(self, papers: Sequence[Sequence[FigureFeatures]]) -> PairBatch:
        """Pairs for the figures of ``papers`` (the batch), partners from the store."""
        anchors = [f for figures in papers for f in figures]
        if len(anchors) > self.max_anchors:
            anchors = self._pick(anchors, self.max_anchors)
        batch = PairBatch()
        rows: dict[tuple[str, str], int] = {}

        def row(feature: FigureFeatures) -> int:
            """The batch row of a figure (added on first use)."""
            if feature.key not in rows:
                rows[feature.key] = len(batch.figures)
                batch.figures.append(feature)
            return rows[feature.key]

        def pair(anchor: FigureFeatures, partner: FigureFeatures, kind: str) -> None:
            """Record one (anchor, partner) pair with the target of its kind."""
            batch.left.append(row(anchor))
            batch.right.append(row(partner))
            batch.targets.append(self.targets[kind])

        all_papers = sorted(self.store)
        for anchor in anchors:
            own = self.store.get(anchor.paper_id) or [f for fs in papers for f in fs if f.paper_id == anchor.paper_id]
            for partner in self._pick([f for f in own if f.fig_id != anchor.fig_id], self.n_same):
                pair(anchor, partner, "same")
            related = self.related_papers(anchor.paper_id)
            for paper in self._pick(related, self.n_related):
                pair(anchor, self._pick(self.store[paper], 1)[0], "related")
            excluded = set(related) | {anchor.paper_id}
            for _ in range(self.n_random):
                paper = self._random_paper(all_papers, excluded)
                if paper is not None:
                    pair(anchor, self._pick(self.store[paper], 1)[0], "unrelated")
        return batch

    def _random_paper(self, papers: Sequence[str], excluded: set[str]) -> Optional[str]:
        """A stored paper outside ``excluded`` (a few tries, then a scan), or None."""
        for _ in range(8):
            if not papers:
                return None
            candidate = papers[int(self._rng.integers(len(papers)))]
            if candidate not in excluded:
                return candidate
        rest = [p for p in papers if p not in excluded]
        return rest[int(self._rng.integers(len(rest)))] if rest else None
