"""The aspect embedder's scholarly_nlp plugin: its component and its ``similar`` command.

Its outputs (``doc._.aspect_vectors``, ``doc._.sentence_vectors``, ``doc._.aspect_fallbacks``)
are declared in its :data:`~.factory.SPEC`, read by :func:`scholarly_aspect_embedder.similar`.
"""

from __future__ import annotations

from scholarly_nlp import hookimpl


@hookimpl
def register_components(register):
    """The ``aspect_embedder`` pipe."""
    from .factory import SPEC, make_aspect_embedder

    register(SPEC, make_aspect_embedder)


@hookimpl
def register_commands(cli):
    """``scholarly-nlp similar QUERY CORPUS --aspect method -k 10``."""
    from .cli import similar_command

    cli.add_command(similar_command)
