"""Query latency of the saved aspect index (paper similarity on one aspect) at 100k papers.

Synthetic random unit aspect vectors (width 384, 10% of papers lack each abstract aspect)
are indexed with ``AspectIndex.from_arrays``; then 100 queries (k=10, aspect ``method``) are
timed against the memory-mapped index and against the same index loaded into memory, and
checked to give identical results.

    python benchmarks/bench_aspect_index.py [--papers 100000] [--width 384] [--queries 100] [--aspect method]

(``--facet``, the old name of ``--aspect``, still works.)
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from _common import RESULTS_DIR, ensure_repo_on_path, machine_info, markdown_table, write_json

ensure_repo_on_path()
# One BLAS thread unless told otherwise: a matrix-vector product per query gains little from
# threads and suffers badly when other processes share the cores (set before numpy loads).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy  # noqa: E402

from scholarly_aspect_embedder.index import AspectIndex  # noqa: E402
from scholarly_aspect_embedder.vectors import aspect_search_vectors  # noqa: E402

MISSING_SHARE = 0.1


def synthetic_aspects(n: int, width: int, seed: int) -> numpy.ndarray:
    """(n, 4, width) random unit vectors; each abstract aspect missing (NaN) for ~10% of papers."""
    rng = numpy.random.default_rng(seed)
    aspects = rng.standard_normal((n, 4, width), dtype=numpy.float32)
    aspects /= numpy.linalg.norm(aspects, axis=-1, keepdims=True)
    aspects[:, 1:][rng.random((n, 3)) < MISSING_SHARE] = numpy.nan
    return aspects


def folder_bytes(path: Path) -> int:
    """Total size of the files under ``path``."""
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def time_queries(indexes: list[AspectIndex], queries: numpy.ndarray, aspect: str, k: int) -> list[tuple[list, list]]:
    """Per-query seconds and results for each index, interleaved query by query (so that load
    from other processes hits all alike), after one warm-up query each."""
    for index in indexes:
        index.search(queries[0], aspect, k)
    out: list[tuple[list, list]] = [([], []) for _ in indexes]
    for query in queries:
        for index, (times, results) in zip(indexes, out):
            start = time.perf_counter()
            results.append(index.search(query, aspect, k))
            times.append(time.perf_counter() - start)
    return out


def summary(times: list[float]) -> dict:
    """Median and p95 in milliseconds."""
    ordered = sorted(times)
    return {"median_ms": 1000 * statistics.median(ordered),
            "p95_ms": 1000 * ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]}


def main() -> None:
    """Build, measure, print a table and write benchmarks/results/aspect_index.json."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--width", type=int, default=384)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("-k", type=int, default=10)
    parser.add_argument("--aspect", "--facet", dest="aspect", default="method",
                        help="the query aspect (--facet: its deprecated name)")
    parser.add_argument("--workdir", default=None, help="where to build the index (default: a temporary folder)")
    parser.add_argument("--out", default=str(RESULTS_DIR / "aspect_index.json"))
    args = parser.parse_args()

    aspects = synthetic_aspects(args.papers, args.width, seed=0)
    queries = aspect_search_vectors(synthetic_aspects(args.queries, args.width, seed=1), args.aspect)
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="bench-aspect-index-"))
    try:
        start = time.perf_counter()
        AspectIndex.from_arrays(workdir / "index", aspects, [str(i) for i in range(args.papers)], model_name="synthetic")
        build_s = time.perf_counter() - start
        del aspects
        size = folder_bytes(workdir / "index")
        mmapped = AspectIndex.load(workdir / "index")
        start = time.perf_counter()
        in_memory = AspectIndex.load(workdir / "index", mmap=False)
        load_s = time.perf_counter() - start
        (mmap_times, mmap_results), (memory_times, memory_results) = time_queries(
            [mmapped, in_memory], queries, args.aspect, args.k)
        matrix = numpy.asarray(in_memory.search_vectors[args.aspect])
        brute = [numpy.argsort(numpy.linalg.norm(matrix - q, axis=1), kind="stable")[: args.k].tolist() for q in queries[:5]]
        exact = all([r for r, _d in res] == b for res, b in zip(memory_results, brute))
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)

    result = {
        "papers": args.papers, "width": args.width, "queries": args.queries, "k": args.k, "aspect": args.aspect,
        "build_s": build_s, "index_bytes": size, "in_memory_load_s": load_s,
        "mmap": summary(mmap_times), "in_memory": summary(memory_times),
        "mmap_equals_in_memory": mmap_results == memory_results, "equals_brute_force_first_5": exact,
        "machine": machine_info(), "threads_env": {k: os.environ.get(k) for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")},
        "load_average_at_end": os.getloadavg(),
    }
    print(markdown_table(["measure", "value"], [
        ["papers x width", f"{args.papers} x {args.width}"],
        ["build (s)", f"{build_s:.1f}"],
        ["index on disk (MB)", f"{size / 1e6:.0f}"],
        ["load into memory (s)", f"{load_s:.2f}"],
        ["query mmap median / p95 (ms)", f"{result['mmap']['median_ms']:.1f} / {result['mmap']['p95_ms']:.1f}"],
        ["query in-memory median / p95 (ms)",
         f"{result['in_memory']['median_ms']:.1f} / {result['in_memory']['p95_ms']:.1f}"],
        ["mmap == in-memory == brute force", f"{result['mmap_equals_in_memory']} / {exact}"],
    ]))
    write_json(Path(args.out), result)


if __name__ == "__main__":
    main()
