"""Reading a batch of files several at a time, results in input order, constant memory.

Readers are CPU-bound (PDF layout analysis, XML parsing) and pdfium serialises threads, so
files are read in worker processes; a reader registered as ``io_bound`` (it waits on a
server, as ``grobid`` does) runs in threads instead. Workers are forked where the platform
allows, so they inherit the parent's plugin registry (plugins added at run time included);
elsewhere they load the installed plugins. At most ``2 * workers`` files are in flight, and
results come back in input order.

Per-file limits (:mod:`.limits`) hold here as at ``workers=1``: a worker reads a PDF (or
another isolated format) in a child process of its own, killed past its time limit and
unable to map more than its memory limit, so such a file fails alone and the worker lives
on. A worker process that dies all the same (a library aborting the interpreter in a
format read in the worker itself) costs that file only: the file being awaited is read
again alone in a fresh worker (failed if it kills that one too), and the other files in
flight are submitted again to a new pool.
"""

from __future__ import annotations

import multiprocessing
import pickle
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Iterable, Iterator, Mapping, Optional

from ..errors import InputError
from ..plugins import PluginRegistry, get_registry
from .dispatch import ReaderOptions, ReadResult, prepare, read_prepared
from .limits import ReadLimits, recorded_warnings, replay_warnings

#: The registry a forked worker reads with (set in the parent just before the pool forks).
_worker_registry: Optional[PluginRegistry] = None


def _read_in_worker(name: str, path: str, options: Mapping[str, Any], limits: ReadLimits) -> ReadResult:
    with recorded_warnings() as notes:
        result = read_prepared(_worker_registry or get_registry(), name, path, options, limits)
    result.notes = notes
    if result.error is not None:
        try:
            pickle.dumps(result.error)
        except Exception:  # a plugin's error class that cannot cross processes: keep its message
            result = ReadResult(path=path, error=InputError(path, getattr(result.error, "reason", str(result.error))))
    return result


def _process_pool(workers: int, registry: PluginRegistry) -> ProcessPoolExecutor:
    global _worker_registry
    _worker_registry = registry
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    return ProcessPoolExecutor(max_workers=workers, mp_context=context)


class _Pools:
    """A process pool and a thread pool, each started on first use."""

    def __init__(self, workers: int, registry: PluginRegistry, limits: ReadLimits):
        self.workers, self.registry, self.limits = workers, registry, limits
        self.processes: Optional[ProcessPoolExecutor] = None
        self.threads: Optional[ThreadPoolExecutor] = None

    def submit(self, name: str, path: str, options: Mapping[str, Any]) -> Future:
        if self.registry.reader(name).io_bound:
            if self.threads is None:
                self.threads = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="scholarly-read")
            return self.threads.submit(read_prepared, self.registry, name, path, options)
        if self.processes is None:
            self.processes = _process_pool(self.workers, self.registry)
        return self.processes.submit(_read_in_worker, name, path, options, self.limits)

    def restart_processes(self) -> None:
        """Drop a broken process pool; the next submit starts a new one."""
        if self.processes is not None:
            self.processes.shutdown(wait=False, cancel_futures=True)
            self.processes = None

    def close(self) -> None:
        for pool in (self.processes, self.threads):
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)


def read_concurrently(paths: Iterable[str], fmt: Optional[str], registry: PluginRegistry, workers: int,
                      reader_options: Optional[ReaderOptions], options: Mapping[str, Any],
                      limits: ReadLimits) -> Iterator[ReadResult]:
    """The ReadResults of ``paths`` in input order, ``workers`` files read at a time, each
    held to ``limits``."""
    pools = _Pools(workers, registry, limits)
    # (path, prepared (name, options) or None, future or a ready ReadResult)
    window: deque[tuple[str, Optional[tuple[str, dict]], Any]] = deque()
    paths = iter(paths)
    try:
        while True:
            while len(window) < 2 * workers:
                path = next(paths, None)
                if path is None:
                    break
                try:
                    name, opts = prepare(path, fmt, registry, options, reader_options, limits)
                except InputError as exc:
                    window.append((path, None, ReadResult(path=path, error=exc)))
                    continue
                window.append((path, (name, opts), pools.submit(name, path, opts)))
            if not window:
                return
            path, prepared, pending = window.popleft()
            if not isinstance(pending, Future):
                yield pending
                continue
            try:
                result = pending.result()
            except BrokenProcessPool:
                pools.restart_processes()
                name, opts = prepared
                result = _read_isolated(registry, name, path, opts, limits)
                _resubmit(window, pools)
            replay_warnings(result.notes)
            yield result
    finally:
        pools.close()


def _read_isolated(registry: PluginRegistry, name: str, path: str, options: Mapping[str, Any],
                   limits: ReadLimits) -> ReadResult:
    """Read one file alone in a fresh worker: after a crash, this tells whether the file is the culprit."""
    pool = _process_pool(1, registry)
    try:
        return pool.submit(_read_in_worker, name, path, options, limits).result()
    except BrokenProcessPool:
        return ReadResult(path=path, error=InputError(path, "the reader's worker process died while reading it "
                                                           "(a library aborted on this file)"))
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _resubmit(window: deque, pools: _Pools) -> None:
    """Submit again the files in flight whose futures the crashed process pool broke."""
    for index, (path, prepared, pending) in enumerate(window):
        if isinstance(pending, Future) and pending.done() and isinstance(pending.exception(), BrokenProcessPool):
            name, opts = prepared
            window[index] = (path, prepared, pools.submit(name, path, opts))
