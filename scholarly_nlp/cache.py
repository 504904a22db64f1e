"""Where scholarly_nlp caches what it can rebuild (GROBID answers, corpus indexes).

``$SCHOLARLY_NLP_CACHE`` when set, else ``$XDG_CACHE_HOME/scholarly_nlp``, else
``~/.cache/scholarly_nlp``: never inside a user's data folders unless they ask.
"""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "SCHOLARLY_NLP_CACHE"


def cache_dir(*parts: str) -> Path:
    """The cache folder (not created), or a path below it."""
    root = os.environ.get(CACHE_ENV)
    if root:
        base = Path(root).expanduser()
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "scholarly_nlp"
    return base.joinpath(*parts)
