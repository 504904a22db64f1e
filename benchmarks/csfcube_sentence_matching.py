"""CSFCube (issue 19): does matching sentences, not whole abstracts, rank a query aspect better?

Aspire (Mysore et al., 2022) ranks faceted queries by matching the query's facet sentences
with the candidate's sentences one by one. This benchmark tries that with the frozen
all-MiniLM-L6-v2, each sentence (and the title) encoded on its own, no training:

* ``max_sim``: for each of the query's sentences of the aspect (all of them when it has none),
  the best cosine with any sentence or the title of the candidate; the mean of those;
* ``aspect_mean``: the cosine of the mean sentence vector of the query's aspect sentences
  and of the candidate's (each falling back to all its sentences and title);

against the ``minilm`` baseline (the whole title + abstract encoded once), on every pool of
``--data-dir`` by CSFCube's protocol (:func:`scholarly_aspect_embedder.csfcube_eval.evaluate_rankers`)
with a paired bootstrap of per-query AP against it. Roles are CSFCube's shipped ``pred_labels``.

    python benchmarks/csfcube_sentence_matching.py [--data-dir DIR] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DEFAULT_DATA_ROOT, RESULTS_DIR, ensure_repo_on_path, machine_info, write_json  # noqa: E402

ensure_repo_on_path()

VARIANTS = ("max_sim", "aspect_mean")


class SentenceMatchRanker:
    """Candidates ranked by sentence-level similarity to the query's aspect sentences."""

    def __init__(self, variant: str, encoder) -> None:
        if variant not in VARIANTS:
            raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
        self.name = variant
        self.variant = variant
        self.encoder = encoder
        self._vectors: dict = {}

    def prepare(self, records) -> None:
        """Encode the title and every sentence of every record once (unit vectors)."""
        todo = [r for r in records if r.paper_id not in self._vectors]
        texts = [t for r in todo for t in (r.title or "", *r.sentences)]
        if not texts:
            return
        vectors = numpy.asarray(self.encoder.encode(texts), dtype=numpy.float32)
        vectors /= numpy.maximum(numpy.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)
        start = 0
        for record in todo:
            size = 1 + len(record.sentences)
            self._vectors[record.paper_id] = vectors[start : start + size]
            start += size

    def _rows(self, record, aspect):
        """The record's title + sentence vectors, and those of its sentences of ``aspect``
        (all of them when it has none)."""
        from scholarly_nlp import aspect_of_role

        vectors = self._vectors[record.paper_id]
        roles = record.roles or [None] * len(record.sentences)
        picked = [1 + i for i, role in enumerate(roles) if aspect_of_role(role) == aspect]
        return vectors, vectors[picked] if picked else vectors

    def rank(self, query, candidates, aspect):
        """``[(pid, distance)]``, most similar first (distance = minus the similarity)."""
        self.prepare([query, *candidates])
        _, query_rows = self._rows(query, aspect)
        scores = []
        for candidate in candidates:
            everything, aspect_rows = self._rows(candidate, aspect)
            if self.variant == "max_sim":
                scores.append(float((query_rows @ everything.T).max(axis=1).mean()))
            else:
                a, b = query_rows.mean(axis=0), aspect_rows.mean(axis=0)
                scores.append(float(a @ b / max(float(numpy.linalg.norm(a) * numpy.linalg.norm(b)), 1e-9)))
        order = sorted(range(len(candidates)), key=lambda i: (-scores[i], i))
        return [(candidates[i].paper_id, -scores[i]) for i in order]


def main(argv=None) -> dict:
    """Rank every pool with each variant and the whole-abstract baseline; print and write the metrics."""
    from scholarly_aspect_embedder.baselines import MiniLMRanker
    from scholarly_aspect_embedder.csfcube_eval import compare_runs, evaluate_rankers, metrics_table
    from scholarly_nlp.ml import DEFAULT_BACKBONE, SentenceEncoder

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_ROOT / "csfcube")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "csfcube_sentence_matching.json")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    encoder = SentenceEncoder(DEFAULT_BACKBONE)
    rankers = {"minilm": MiniLMRanker(encoder=encoder)}
    rankers.update({variant: SentenceMatchRanker(variant, encoder) for variant in VARIANTS})
    results = evaluate_rankers(args.data_dir, rankers)
    versus = {name: compare_runs(results[name], results["minilm"]) for name in VARIANTS}
    write_json(args.out, {"benchmark": "csfcube_sentence_matching", "data_dir": str(args.data_dir),
                          "results": results, "vs_minilm": versus,
                          "seconds": round(time.perf_counter() - started, 1), "machine": machine_info()})
    print(metrics_table(results))
    for name, b in versus.items():
        print(f"{name} vs minilm, all MAP: {b['delta']:+.2f} [{b['ci_low']:+.2f}, {b['ci_high']:+.2f}] p={b['p_value']:.2f}")
    print(f"\nwritten {args.out}")
    return results


if __name__ == "__main__":
    main()
