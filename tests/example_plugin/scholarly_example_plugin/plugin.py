"""The pluggy plugin module named by the ``scholarly_nlp`` entry point.

Every hook imports what it needs inside its body, so loading the plugin costs nothing
until a hook runs.
"""

from __future__ import annotations

from typing import Any, Optional

from scholarly_nlp import hookimpl

PDF_MAGIC = b"%PDF-"


@hookimpl
def register_components(register: Any) -> None:
    """``example_keyword_tagger``: flags the sentences that contain a keyword."""
    from .keyword_tagger import ASSIGNS, DEFAULT_CONFIG, FACTORY_NAME, make_keyword_tagger

    register(FACTORY_NAME, make_keyword_tagger, default_config=dict(DEFAULT_CONFIG), assigns=ASSIGNS)


@hookimpl
def register_extensions(register: Any) -> None:
    """``Span._.has_example_keyword`` (set by the tagger) and ``Doc._.example_keyword_sents``."""
    from .keyword_tagger import EXTENSIONS

    for obj, name, kwargs in EXTENSIONS:
        register(obj, name, **kwargs)


@hookimpl
def register_readers(register: Any) -> None:
    """The ``papermd`` reader for ``.papermd`` files."""
    from .papermd import EXTENSIONS, FORMAT, read_papermd

    register(FORMAT, read_papermd, extensions=EXTENSIONS, description="Markdown-like paper file (example plugin)")


@hookimpl
def sniff_format(path: str, head: bytes) -> Optional[str]:
    """``papermd`` for a ``.papermd`` file, unless its content is a PDF (left to the core)."""
    from .papermd import EXTENSIONS, FORMAT

    if head.lstrip().startswith(PDF_MAGIC):
        return None
    return FORMAT if str(path).lower().endswith(EXTENSIONS) else None


@hookimpl
def register_metrics(register: Any) -> None:
    """``example_precision_at_1``: mean precision at rank 1 over the judged queries."""
    from .metrics import precision_at_1

    register("example_precision_at_1", precision_at_1, description="mean precision@1 over judged queries")


@hookimpl
def register_commands(cli: Any) -> None:
    """``scholarly-nlp example-papermd FILE``: summarise a paper file."""
    from .commands import example_papermd

    cli.add_command(example_papermd)
