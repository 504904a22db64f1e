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


@hookimpl
def similar_papers(doc, corpus, nlp, model, k):
    """Papers of ``corpus`` like ``doc`` on each query aspect, with the aspect scores and the
    sentence pair that explains each match (``scholarly-nlp analyze --similar``). The corpus
    index is built with the pipeline's aspect pipes only, cached as ``similar``'s is, and
    reused while the corpus and the pipeline are unchanged. None for a pipeline without an
    aspect embedder."""
    from scholarly_nlp import QUERY_ASPECTS

    from .cli import ASPECT_PIPES, corpus_index
    from .search import similar

    if "aspect_embedder" not in nlp.pipe_names:
        return None
    with nlp.select_pipes(enable=[name for name in nlp.pipe_names if name in ASPECT_PIPES]):
        index = corpus_index(corpus, nlp, model, rebuild=False)
    return {aspect: [hit.to_dict() for hit in similar(doc, index, aspect=aspect, k=k)] for aspect in QUERY_ASPECTS}

