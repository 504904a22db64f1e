"""Choosing a reader for a file and reading batches without aborting on a bad file."""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Optional, Union

from ..errors import InputError, ScholarlyNLPError, UnknownFormatError
from ..paper import Paper
from ..plugins import PluginRegistry, get_registry
from .limits import ReadLimits, check_input_file, resolve_limits, run_limited

PathLike = Union[str, Path]


@dataclass
class ReadResult:
    """The outcome of reading one file: a paper, or the error that names why not."""

    path: str
    paper: Optional[Paper] = None
    error: Optional[ScholarlyNLPError] = None
    #: warnings the reader raised in a worker process, raised again where the result arrives
    notes: list = field(default_factory=list, repr=False)

    @property
    def ok(self) -> bool:
        """True when the file was read."""
        return self.error is None


def expand_inputs(inputs: Iterable[PathLike], registry: Optional[PluginRegistry] = None) -> Iterator[str]:
    """Yield the files named by paths, folders (files with a known extension, sorted) or globs.

    A path that does not exist and matches no glob is yielded as is, so that reading it
    reports the error in its place in the batch; so is a FIFO, device or socket in a folder
    (reading it fails with "is not a regular file").
    """
    registry = registry or get_registry()
    extensions = tuple(sorted({e for spec in registry.readers.values() for e in spec.extensions}))
    for item in inputs:
        item = str(item)
        if os.path.isdir(item):
            for root, _dirs, files in sorted(os.walk(item)):
                for name in sorted(files):
                    if name.lower().endswith(extensions):
                        yield os.path.join(root, name)
        elif not os.path.exists(item) and glob.has_magic(item):
            matches = sorted(glob.glob(item, recursive=True))
            yield from (m for m in matches if not os.path.isdir(m))
        else:
            yield item


def choose_format(path: PathLike, fmt: Optional[str] = None, registry: Optional[PluginRegistry] = None) -> str:
    """The reader name for a file: ``fmt`` if given, else what ``sniff_format`` says."""
    registry = registry or get_registry()
    if fmt:
        registry.reader(fmt)
        return fmt
    sniffed = registry.sniff(str(path))
    if sniffed is None:
        raise UnknownFormatError(path, f"is not a format any reader knows (readers: {', '.join(sorted(registry.readers))})")
    return sniffed


ReaderOptions = Mapping[str, Union[Mapping[str, Any], Callable[[str], Mapping[str, Any]]]]
"""Per-reader options: reader name -> options, or -> a function of the path giving them."""


def options_for(path: str, name: str, options: Mapping[str, Any], reader_options: Optional[ReaderOptions]) -> dict:
    """The options the ``name`` reader gets for ``path``: ``options`` (for every reader), then
    that reader's entry of ``reader_options`` (a dict, or a function of the path)."""
    merged = dict(options)
    entry = (reader_options or {}).get(name)
    if entry is not None:
        merged.update(entry(path) if callable(entry) else entry)
    return merged


def read_paper(path: PathLike, fmt: Optional[str] = None, registry: Optional[PluginRegistry] = None, *,
               reader_options: Optional[ReaderOptions] = None, limits: Optional[ReadLimits] = None,
               **options: Any) -> Paper:
    """Read one file with the chosen (or sniffed) reader; errors name the file and reason.

    ``options`` go to whichever reader reads the file (each reader ignores those it does not
    know); ``reader_options`` maps a reader name to options for that reader alone, e.g.
    ``{"pdf": {"image_dir": "figures/"}}``. A reader that fails in an unexpected way or
    returns something other than a Paper gives an :class:`InputError` naming the file and
    the reader; errors that are not about the file (no GROBID server) propagate.

    ``limits`` (default: :meth:`ReadLimits.from_env <scholarly_nlp.readers.limits.ReadLimits.from_env>`,
    300 s and 4096 MiB per file, inputs up to 512 MiB) bound what the file may cost: only
    regular files are read, and a PDF (or plugin format) is read in a child process that is
    killed past its time and cannot map more than its memory; over a limit, the file fails
    with an InputError naming it.
    """
    registry = registry or get_registry()
    limits = resolve_limits(limits)
    path = _check_readable(str(path), limits)
    name = choose_format(path, fmt, registry)
    return _read_with(registry, name, path, options_for(path, name, options, reader_options), limits)


def _check_readable(path: str, limits: ReadLimits) -> str:
    check_input_file(path, limits)
    return path


def _read_with(registry: PluginRegistry, name: str, path: str, options: Mapping[str, Any],
               limits: Optional[ReadLimits] = None) -> Paper:
    """Call the ``name`` reader on ``path`` (in a limited child process where ``limits`` say
    so); any failure but a batch-level one becomes an InputError."""
    if limits is not None and limits.isolates(name, registry.reader(name).io_bound):
        return run_limited(_call_reader, (registry, name, path, options), limits, path)
    return _call_reader(registry, name, path, options)


def _call_reader(registry: PluginRegistry, name: str, path: str, options: Mapping[str, Any]) -> Paper:
    """The ``name`` reader's Paper for ``path``, here; a reader bug or a non-Paper is an InputError."""
    try:
        paper = registry.reader(name).function(path, **options)
    except InputError:
        raise
    except ScholarlyNLPError:
        raise  # not about this file (no GROBID server, a plugin error): the batch cannot go on
    except Exception as exc:  # a reader bug or a file that breaks a library: one clear line for this file
        raise InputError(path, f"could not be read by the {name!r} reader ({type(exc).__name__}: {exc})") from exc
    if not isinstance(paper, Paper):
        raise InputError(path, f"the {name!r} reader returned {type(paper).__name__}, not a Paper")
    return paper


def read_papers(inputs: Iterable[PathLike], fmt: Optional[str] = None, registry: Optional[PluginRegistry] = None, *,
                workers: int = 1, reader_options: Optional[ReaderOptions] = None,
                limits: Optional[ReadLimits] = None, **options: Any) -> Iterator[ReadResult]:
    """Read many files lazily, in input order; a bad file becomes a failed ReadResult.

    ``workers`` > 1 reads that many files at once, in worker processes (threads for readers
    registered as ``io_bound``, such as ``grobid``), with a bounded number of files in
    flight, so memory stays constant. ``options`` and ``reader_options`` are those of
    :func:`read_paper`; with workers they must be picklable (a ``reader_options`` function
    runs here, not in the worker). ``limits`` are those of :func:`read_paper`, for each file,
    with any number of workers (at ``workers=1`` a PDF is read in a child process of its own).
    An error that is not about one file (no GROBID server) stops the batch.
    """
    registry = registry or get_registry()
    limits = resolve_limits(limits)
    paths = expand_inputs(inputs, registry)
    if workers <= 1:
        for path in paths:
            try:
                yield ReadResult(path=path, paper=read_paper(path, fmt, registry, reader_options=reader_options,
                                                             limits=limits, **options))
            except InputError as exc:
                yield ReadResult(path=path, error=exc)
        return
    from .concurrent import read_concurrently

    yield from read_concurrently(paths, fmt, registry, workers, reader_options, options, limits)


def prepare(path: str, fmt: Optional[str], registry: PluginRegistry, options: Mapping[str, Any],
            reader_options: Optional[ReaderOptions], limits: Optional[ReadLimits] = None) -> tuple[str, dict]:
    """The reader name and options for one file of a batch (checks it is a readable regular
    file within the input size limit first, so that sniffing never blocks on a FIFO)."""
    _check_readable(path, resolve_limits(limits))
    name = choose_format(path, fmt, registry)
    return name, options_for(path, name, options, reader_options)


def read_prepared(registry: PluginRegistry, name: str, path: str, options: Mapping[str, Any],
                  limits: Optional[ReadLimits] = None) -> ReadResult:
    """Read one prepared file (held to ``limits`` when given); a file-level error becomes a
    failed ReadResult."""
    try:
        return ReadResult(path=path, paper=_read_with(registry, name, path, options, limits))
    except InputError as exc:
        return ReadResult(path=path, error=exc)
