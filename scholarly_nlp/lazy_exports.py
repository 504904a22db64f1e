"""Names of a package loaded from its submodules on first access (PEP 562).

The declared sub-packages (:mod:`scholarly_nlp.ml`, :mod:`scholarly_nlp.readers`,
:mod:`scholarly_nlp.retrieval`) export names whose modules pull in heavy libraries
(transformers, bm25s, pdfium); importing the package must not. Each maps its exported names
to the submodule defining them and takes its ``__getattr__``/``__dir__`` from here.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Mapping


def lazy_exports(package: str, exports: Mapping[str, str],
                 namespace: dict) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``exports`` maps a name to its submodule
    (relative, without the dot); a loaded name is cached in the package's ``namespace``."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{module}", package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(namespace.get("__all__", ())) | set(exports))

    return __getattr__, __dir__
