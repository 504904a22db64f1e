"""Output file names for a batch of inputs: one distinct, predictable name per input.

The rule (``scholarly-nlp parse`` and ``demo`` follow it; the README states it):

1. An input is named after its file name without the format's extension:
   ``papers/D10-1042.pdf`` -> ``D10-1042``, ``tei/D14-1003.tei.xml`` -> ``D14-1003``.
2. When several inputs of the same run would get the same name, each of them keeps its
   whole file name instead: ``demo_paper.pdf`` -> ``demo_paper.pdf``,
   ``demo_paper.tei.xml`` -> ``demo_paper.tei.xml``.
3. When that is still shared (the same file name in different folders), each of them is
   named by its path below the deepest folder the colliding inputs have in common, with
   ``__`` for the folder separator: ``a/D10-1042.pdf`` -> ``a__D10-1042.pdf``,
   ``b/D10-1042.pdf`` -> ``b__D10-1042.pdf``.
4. Any name still taken (the same file given twice, say) gets ``-2``, ``-3``... in input
   order.
5. A name longer than 200 bytes (``MAX_NAME_BYTES``, counted as the file system stores it)
   is cut to its first 189 bytes (at a character boundary) plus ``~`` and the first 10 hex
   digits of the SHA-256 of the whole name (in UTF-8), so that the name and any output
   suffix (``.analysis.json``) fit the file system's limit of 255 bytes per name: the
   245-byte ``aaa...a.pdf`` (241 ``a``) becomes ``aaa...a~ec6e326ef2`` (189 ``a``), the
   same in every run.

Names are compared case-insensitively (``Paper.pdf`` and ``paper.pdf`` are a collision),
so outputs also stay apart on case-insensitive file systems. A name depends only on the
run's inputs, never on what the output folder already holds, so running the same command
again writes the same files. The caller adds the output suffix (``.json``, ``.spacy``).
"""

from __future__ import annotations

import hashlib
import os
from collections import defaultdict
from pathlib import Path
from typing import Iterable, Optional, Sequence, Union

PathLike = Union[str, Path]
SEPARATOR = "__"
MAX_NAME_BYTES = 200
"""The longest output name (without its suffix), in bytes; longer ones are shortened (rule 5)."""
NAME_HASH_LENGTH = 10


def paper_stem(path: PathLike, extensions: Iterable[str] = ()) -> str:
    """The file name less its format extension: the longest of ``extensions`` it ends with
    (case-insensitive), else its last suffix (``D14-1003.tei.xml`` -> ``D14-1003``)."""
    name = os.path.basename(os.fspath(path))
    lowered = name.lower()
    for extension in sorted((e.lower() for e in extensions), key=len, reverse=True):
        if extension and lowered.endswith(extension) and len(name) > len(extension):
            return name[: -len(extension)]
    stem = Path(name).stem
    return stem or name


def output_names(paths: Sequence[PathLike], extensions: Optional[Iterable[str]] = None) -> list[str]:
    """One distinct output name (no suffix) per input path, in input order; see the module doc.

    ``extensions``: the format extensions to strip (default: those the registered readers
    declare, such as ``.tei.xml`` and ``.pdf``).
    """
    if extensions is None:
        extensions = _reader_extensions()
    extensions = tuple(extensions)
    paths = [os.fspath(p) for p in paths]
    names = [paper_stem(p, extensions) for p in paths]
    for level in (_file_name, _path_below_common_folder):
        groups = _collisions(names)
        if not groups:
            break
        for group in groups:
            for index, name in zip(group, level([paths[i] for i in group])):
                names[index] = name
    return [fitted_name(name) for name in _numbered(names)]


def name_bytes(name: str) -> int:
    """The length of ``name`` as the file system stores it (undecodable bytes count as one)."""
    try:
        return len(os.fsencode(name))
    except UnicodeEncodeError:  # a lone surrogate no file name decodes to
        return len(name.encode("utf-8", "surrogatepass"))


def fitted_name(name: str, limit: int = MAX_NAME_BYTES) -> str:
    """``name`` when it has at most ``limit`` bytes, else its head plus ``~`` and a short hash
    of the whole name (rule 5 of the module doc): deterministic, and distinct names stay distinct."""
    if name_bytes(name) <= limit:
        return name
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:NAME_HASH_LENGTH]
    return f"{truncate_bytes(name, limit - NAME_HASH_LENGTH - 1)}~{digest}"


def truncate_bytes(name: str, limit: int) -> str:
    """The longest head of ``name`` with at most ``limit`` bytes, never cutting a character."""
    used, end = 0, 0
    for end, char in enumerate(name):
        used += name_bytes(char)
        if used > limit:
            return name[:end]
    return name


def _file_name(paths: list[str]) -> list[str]:
    return [os.path.basename(p) for p in paths]


def _path_below_common_folder(paths: list[str]) -> list[str]:
    absolute = [os.path.abspath(p) for p in paths]
    try:
        common = os.path.commonpath([os.path.dirname(p) for p in absolute])
    except ValueError:  # different drives
        common = ""
    names = []
    for path in absolute:
        relative = os.path.relpath(path, common) if common else path.lstrip(os.sep)
        names.append(SEPARATOR.join(part for part in Path(relative).parts if part not in (os.sep, "")))
    return names


def _collisions(names: list[str]) -> list[list[int]]:
    groups: dict[str, list[int]] = defaultdict(list)
    for index, name in enumerate(names):
        groups[name.casefold()].append(index)
    return [group for group in groups.values() if len(group) > 1]


def _numbered(names: list[str]) -> list[str]:
    taken = {name.casefold() for name in names}
    seen: set[str] = set()
    result = []
    for name in names:
        candidate, number = name, 1
        # A numbered name must not take another input's own name either.
        while candidate.casefold() in seen or (number > 1 and candidate.casefold() in taken):
            number += 1
            candidate = f"{name}-{number}"
        seen.add(candidate.casefold())
        result.append(candidate)
    return result


def _reader_extensions() -> tuple[str, ...]:
    from .plugins import get_registry

    return tuple(sorted({e for spec in get_registry().readers.values() for e in spec.extensions}))
