"""The figure embedder's scholarly_nlp plugin: its component (declared in :data:`.factory.SPEC`)
and its command."""

from __future__ import annotations

from scholarly_nlp import hookimpl


@hookimpl
def register_components(register):
    """The ``figure_embedder`` pipe and its ``doc._.figure_vectors``."""
    from .factory import SPEC, make_figure_embedder

    register(SPEC, make_figure_embedder)


@hookimpl
def register_commands(cli):
    """``scholarly-nlp similar-figures QUERY_FILE FIG_ID CORPUS... -k 10``."""
    from .cli import similar_figures_command

    cli.add_command(similar_figures_command)
