"""``scholarly-nlp similar-figures``: recommend figures similar to one figure of a paper.

Inputs are paper files (PDF, GROBID TEI, any plugin format), scholarly_nlp JSON exports
(``.json``) or DocBins (``.spacy``), or folders of them. The TF-IDF candidates are reranked
by the ``figure_embedder`` of ``--model`` (default: the shipped ``scholarly_core``, when it is
installed); ``--tfidf-only`` ranks by TF-IDF retrieval alone (or by vectors already stored in
the exports).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Iterator, Optional

import click
from spacy.language import Language
from spacy.tokens import Doc

import scholarly_nlp
from scholarly_nlp import ScholarlyNLPError

from .papers import read_papers
from .recommend import similar_figures

EXPORT_SUFFIXES = (".json", ".spacy")

DEFAULT_MODEL = "scholarly_core"
"""The shipped pipeline whose figure_embedder reranks when --model names none."""


def iter_papers(paths: tuple[str, ...], nlp: Language, image_dir: Optional[str]) -> Iterator[Doc]:
    """Paper Docs from files and folders; a file that cannot be read is reported on stderr and skipped."""
    for item in paths:
        path = Path(item)
        if path.is_dir():
            exports = sorted(path.glob("*.json")) + sorted(path.glob("*.spacy"))
        else:
            exports = [path] if path.suffix in EXPORT_SUFFIXES else []
        for export in exports:
            try:
                if export.suffix == ".json":
                    yield scholarly_nlp.load_json(export, nlp.vocab)
                else:
                    yield from scholarly_nlp.load_docbin(export, nlp.vocab)
            except (ScholarlyNLPError, OSError, ValueError) as exc:
                click.echo(f"skipped: {export}: {exc}", err=True)
        if path.is_file() and path.suffix in EXPORT_SUFFIXES:
            continue
        for result in read_papers([item], nlp, image_dir):
            if result.ok:
                yield result.doc
            else:
                click.echo(f"skipped: {result.error}", err=True)


def _caption(doc: Doc, fig_id: str) -> str:
    figure = next((f for f in doc._.figures if f.id == fig_id), None)
    return " ".join(figure.caption_text.split())[:90] if figure is not None else ""


@click.command("similar-figures")
@click.argument("query_file")
@click.argument("fig_id")
@click.argument("corpus", nargs=-1, required=True)
@click.option("-k", "k", default=10, show_default=True, type=click.IntRange(min=1), help="Number of hits.")
@click.option("--model", default=None,
              help=f"Trained pipeline with a figure_embedder (default: {DEFAULT_MODEL} when installed).")
@click.option("--tfidf-only", is_flag=True, help="Rank by TF-IDF alone; load no pipeline.")
@click.option("--weight", default=None, type=float, help="Embedding weight in the rerank (default: the model's).")
@click.option("--candidates", "n_candidates", default=None, type=click.IntRange(min=1),
              help="TF-IDF candidates to rerank (default: the model's, 100).")
def similar_figures_command(query_file: str, fig_id: str, corpus: tuple[str, ...], k: int, model: Optional[str],
                            tfidf_only: bool, weight: Optional[float], n_candidates: Optional[int]) -> None:
    """Rank the figures of CORPUS papers by similarity to figure FIG_ID of QUERY_FILE."""
    if model and tfidf_only:
        raise click.UsageError("--model and --tfidf-only exclude each other")
    if not model and not tfidf_only and scholarly_nlp.pipeline_path(DEFAULT_MODEL) is not None:
        model = DEFAULT_MODEL
    nlp = scholarly_nlp.load(model, components=["figure_embedder"]) if model else scholarly_nlp.blank()
    embedder = nlp.get_pipe("figure_embedder") if model and "figure_embedder" in nlp.pipe_names else None
    if model and embedder is None:
        raise ScholarlyNLPError(f"the pipeline {model} has no figure_embedder")
    with tempfile.TemporaryDirectory() as image_dir:
        queries = list(iter_papers((query_file,), nlp, image_dir))
        if not queries:
            raise ScholarlyNLPError(f"{query_file}: no paper could be read")
        docs = list(iter_papers(corpus, nlp, image_dir))
        if not docs:
            raise ScholarlyNLPError("no corpus paper could be read")
        hits = similar_figures(queries[0], fig_id, docs, k, embedder=embedder, weight=weight,
                               n_candidates=n_candidates)
    by_paper = {doc._.paper_id: doc for doc in docs}
    for rank, (paper_id, hit_id, score) in enumerate(hits, start=1):
        caption = _caption(by_paper[paper_id], hit_id) if paper_id in by_paper else ""
        click.echo(f"{rank}\t{score:.4f}\t{paper_id}\t{hit_id}\t{caption}")
    if not hits:
        click.echo("no candidate figure", err=True)
        sys.exit(1)
