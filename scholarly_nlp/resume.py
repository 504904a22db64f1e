"""Resuming a batch: which papers an output folder already holds for the same input and options.

``scholarly-nlp parse`` and ``analyze`` keep a manifest in their output folder,
``.scholarly_nlp-manifest.jsonl``: one JSON line per output written,
``{"output": <file name>, "sha256": <digest of the input's bytes>, "options": {...}, "size": <bytes
written>}``, where
the options are those that change the output (the command, the format, ``--json-full``, the
reader, the pipeline, the scholarly_nlp version). A paper counts as done, and a later run
skips it, only when its output file is there with the size it was written with and the
manifest's last line for that output has the same input digest and options; a failed, missing, changed or differently-made paper is
redone, and ``--force`` redoes them all.

A line is appended (and flushed) right after its output is renamed into place, so a batch
that is killed loses at most the record of the paper it was writing, which is then redone;
a torn last line is ignored. :meth:`Manifest.close` rewrites the file with one line per
output (atomically), so it does not grow with the number of runs. Only regular files are
hashed (a FIFO or device is never skipped, and never read here), in bounded memory.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path
from typing import IO, Any, Optional, Union

PathLike = Union[str, Path]

MANIFEST_NAME = ".scholarly_nlp-manifest.jsonl"
_CHUNK = 1 << 20


def input_digest(path: PathLike) -> Optional[str]:
    """The SHA-256 of a regular file's bytes; None for anything else (a FIFO, a device, a
    file that cannot be read): such an input is never taken as already done."""
    try:
        with open(path, "rb", opener=_regular_file_opener) as handle:
            digest = hashlib.sha256()
            while chunk := handle.read(_CHUNK):
                digest.update(chunk)
            return digest.hexdigest()
    except (OSError, ValueError):
        return None


def _regular_file_opener(path: str, flags: int) -> int:
    """Open without blocking (a FIFO would wait for a writer) and refuse what is not a regular file."""
    fd = os.open(path, flags | getattr(os, "O_NONBLOCK", 0))
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ValueError(f"{path} is not a regular file")
    return fd


class Manifest:
    """The record of an output folder's written papers (see the module doc)."""

    def __init__(self, folder: PathLike, options: dict):
        self.folder = Path(folder)
        self.path = self.folder / MANIFEST_NAME
        self.options = _canonical(options)
        self.entries = _read_entries(self.path)
        self.error: Optional[OSError] = None
        self._journal: Optional[IO[str]] = None

    def is_done(self, output: str, digest: Optional[str]) -> bool:
        """True when ``output`` is there as it was written (same size), from input bytes of
        ``digest`` with these options: a truncated or edited output is redone."""
        entry = self.entries.get(output)
        return (digest is not None and entry is not None and entry.get("sha256") == digest
                and entry.get("options") == self.options and _size(self.folder / output) == entry.get("size"))

    def record(self, output: str, digest: Optional[str]) -> None:
        """Note that ``output`` was just written from input bytes of ``digest``.

        A manifest that cannot be written costs only the skipping next time: the first
        error is kept in :attr:`error` for the caller to report, and the batch goes on.
        """
        if digest is None or self.error is not None:
            return
        entry = {"output": output, "sha256": digest, "options": self.options, "size": _size(self.folder / output)}
        self.entries[output] = entry
        try:
            if self._journal is None:
                self._journal = open(self.path, "a", encoding="utf-8")
            self._journal.write(_line(entry))
            self._journal.flush()
        except OSError as exc:
            self.error = exc

    def close(self) -> None:
        """Rewrite the manifest with one line per output (after a run that recorded any)."""
        if self._journal is None:
            return
        from .doc.serialize import write_atomic

        try:
            self._journal.close()
            text = "".join(_line(entry) for entry in self.entries.values())
            write_atomic(self.path, text)
        except OSError as exc:
            self.error = self.error or exc
        finally:
            self._journal = None


def _size(path: Path) -> Optional[int]:
    """The size of a regular file; None when there is none."""
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_size if stat.S_ISREG(info.st_mode) else None


def _line(entry: dict) -> str:
    # ASCII: an output name from an undecodable file name keeps its \udcXX escapes.
    return json.dumps(entry, sort_keys=True) + "\n"


def _canonical(options: dict) -> Any:
    """``options`` as they read back from JSON (tuples become lists), for comparison."""
    return json.loads(json.dumps(options, sort_keys=True))


def _read_entries(path: Path) -> dict[str, dict]:
    """The last entry per output of a manifest; lines that do not parse (a torn last line) are ignored."""
    entries: dict[str, dict] = {}
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if isinstance(entry, dict) and isinstance(entry.get("output"), str):
                    entries[entry["output"]] = entry
    except OSError:  # no manifest yet, or one that cannot be read: nothing counts as done
        pass
    return entries
