"""Choosing a reader for a file and reading batches without aborting on a bad file."""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Optional, Union

from ..errors import InputError, ScholarlyNLPError, UnknownFormatError
from ..paper import Paper
from ..plugins import PluginRegistry, get_registry

PathLike = Union[str, Path]


@dataclass
class ReadResult:
    """The outcome of reading one file: a paper, or the error that names why not."""

    path: str
    paper: Optional[Paper] = None
    error: Optional[ScholarlyNLPError] = None

    @property
    def ok(self) -> bool:
        """True when the file was read."""
        return self.error is None


def expand_inputs(inputs: Iterable[PathLike], registry: Optional[PluginRegistry] = None) -> Iterator[str]:
    """Yield the files named by paths, folders (files with a known extension, sorted) or globs.

    A path that does not exist and matches no glob is yielded as is, so that reading it
    reports the error in its place in the batch.
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
            yield from (m for m in matches if os.path.isfile(m))
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


def read_paper(path: PathLike, fmt: Optional[str] = None, registry: Optional[PluginRegistry] = None, **options: Any) -> Paper:
    """Read one file with the chosen (or sniffed) reader; errors name the file and reason."""
    registry = registry or get_registry()
    path = str(path)
    if not os.path.exists(path):
        raise InputError(path, "does not exist")
    if not os.access(path, os.R_OK) or os.path.isdir(path):
        raise InputError(path, "cannot be read (permission denied or not a file)")
    name = choose_format(path, fmt, registry)
    try:
        return registry.reader(name).function(path, **options)
    except ScholarlyNLPError:
        raise
    except (OSError, ValueError, RuntimeError, KeyError, IndexError, TypeError) as exc:
        # A reader bug or a file that breaks a library: still one clear line for this file.
        raise InputError(path, f"could not be read by the {name!r} reader ({type(exc).__name__}: {exc})") from exc


def read_papers(inputs: Iterable[PathLike], fmt: Optional[str] = None, registry: Optional[PluginRegistry] = None,
                **options: Any) -> Iterator[ReadResult]:
    """Read many files lazily (constant memory); a bad file becomes a failed ReadResult."""
    registry = registry or get_registry()
    for path in expand_inputs(inputs, registry):
        try:
            yield ReadResult(path=path, paper=read_paper(path, fmt, registry, **options))
        except ScholarlyNLPError as exc:
            yield ReadResult(path=path, error=exc)
