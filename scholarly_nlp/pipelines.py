"""Trained pipelines on disk: find the folder behind a name, and check it fits this release.

A name is a pipeline folder (with a ``config.cfg``) or an installed pipeline package, such as
the shipped ``scholarly_core``, whose module holds the spaCy pipeline in ``pipeline/``
(:mod:`scholarly_nlp.packaging` builds them). Its ``meta.json`` records, under
:data:`META_KEY`, the scholarly_nlp release line it loads in.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Optional, Union

from .errors import IncompatiblePipelineError

PathLike = Union[str, Path]

PIPELINE_DIR = "pipeline"
"""The spaCy pipeline folder inside a pipeline package's module."""

META_KEY = "scholarly_nlp"
"""The key of ``meta.json`` that holds this library's record of the pipeline."""

def pipeline_path(name: PathLike) -> Optional[Path]:
    """The pipeline folder behind ``name``: a folder with a ``config.cfg``, or the folder an
    installed pipeline package loads from; None when ``name`` is neither."""
    path = Path(name)
    if (path / "config.cfg").is_file():
        return path
    text = str(name)
    if not text.isidentifier():
        return None
    try:
        from importlib import metadata

        metadata.distribution(text)
    except Exception:
        return None
    try:
        module = importlib.import_module(text)
    except ImportError:
        return None
    locate = getattr(module, "pipeline_path", None)
    if callable(locate):
        located = Path(locate())
        return located if (located / "config.cfg").is_file() else None
    root = Path(module.__file__).parent
    found = sorted(p.parent for p in root.glob("*/config.cfg"))
    return found[0] if found else None


def check_compatible(path: PathLike) -> dict:
    """Read the pipeline's ``meta.json`` and raise :class:`IncompatiblePipelineError` when it
    was built for another version of scholarly_nlp than the installed one. Returns the meta."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    from . import __version__

    path = Path(path)
    meta_file = path / "meta.json"
    if not meta_file.is_file():
        return {}
    meta = json.loads(meta_file.read_text(encoding="utf-8"))
    required = (meta.get(META_KEY) or {}).get("requires")
    if not required:
        return meta
    try:
        ok = SpecifierSet(required).contains(__version__, prereleases=True)
    except InvalidSpecifier:
        ok = False
    if not ok:
        raise IncompatiblePipelineError(str(path), required, __version__, (meta.get(META_KEY) or {}).get("built_with"))
    return meta


def compatible_range(version: str) -> str:
    """The versions a pipeline built with ``version`` loads in: the same minor release line, from
    ``version`` on (a patch release may add a storage format that earlier ones would misread,
    as 0.1.1 added int8 weight differences)."""
    from packaging.version import Version

    built = Version(version)
    major, minor, patch = (built.release + (0, 0))[:3]
    lowest = str(built) if built.is_prerelease else f"{major}.{minor}.{patch}"  # a dev build loads its own
    return f">={lowest},<{major}.{minor + 1}.0"
