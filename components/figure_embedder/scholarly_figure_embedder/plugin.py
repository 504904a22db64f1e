"""The figure embedder's scholarly_nlp plugin: its component, its Doc attribute, its command."""

from __future__ import annotations

from scholarly_nlp import hookimpl


@hookimpl
def register_components(register):
    """The ``figure_embedder`` pipe."""
    from .factory import make_figure_embedder

    register("figure_embedder", make_figure_embedder, assigns=["doc._.figure_vectors"])


@hookimpl
def register_extensions(register):
    """``doc._.figure_vectors``: figure id -> embedding (list of floats); None until the pipe ran."""
    register("doc", "figure_vectors", default=None)


@hookimpl
def register_commands(cli):
    """``scholarly-nlp similar-figures QUERY_FILE FIG_ID CORPUS... -k 10``."""
    from .cli import similar_figures_command

    cli.add_command(similar_figures_command)
