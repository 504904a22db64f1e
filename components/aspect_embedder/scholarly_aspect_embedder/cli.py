"""``scholarly-nlp similar QUERY CORPUS``: papers most similar to one paper on one aspect.

Registered on the ``scholarly-nlp`` command group by this package's plugin
(``register_commands``). ``--aspect`` is one of :data:`scholarly_nlp.QUERY_ASPECTS`
(``--facet``, its name before "facet" came to mean the citation facet only, still works,
hidden and deprecated). The corpus index is saved in scholarly_nlp's cache, or next to the
corpus with ``--index-in-corpus`` (:func:`~scholarly_aspect_embedder.index.index_path_for`), and reused while the corpus and
the model are unchanged.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterator, Optional

import click
from click.core import ParameterSource

from scholarly_nlp import QUERY_ASPECTS, ScholarlyNLPError, expand_inputs, load, pipeline_path, read, read_many
from scholarly_nlp.readers import abstract_doc, read_csfcube_abstracts

from .index import (FORMAT_VERSION, INDEX_DIRNAME, AspectIndex, IndexFormatError, corpus_fingerprint, index_path_for,
                    read_meta)
from .search import similar as rank_similar


ASPECT_MODEL_ENV = "SCHOLARLY_NLP_ASPECT_MODEL"
"""Environment variable naming the default aspect-embedder pipeline for ``similar``."""

DEFAULT_MODEL = "scholarly_core"
"""The pipeline ``similar`` uses when neither --model nor the environment names one."""

ASPECT_PIPES = ("transformer", "sentence_role_tagger", "aspect_embedder")
"""The pipes aspect vectors need; a pipeline's others are not loaded."""


@click.command("similar")
@click.argument("query")
@click.argument("corpus")
@click.option("--aspect", type=click.Choice(QUERY_ASPECTS), default="method", show_default=True,
              help="The query aspect to match on.")
@click.option("--facet", "deprecated_aspect", type=click.Choice(QUERY_ASPECTS), default=None, hidden=True,
              help="Deprecated name of --aspect.")
@click.option("-k", "k", type=click.IntRange(min=1), default=10, show_default=True, help="Number of papers to show.")
@click.option("--model", default=None,
              help=f"spaCy pipeline that sets aspect vectors (default: ${ASPECT_MODEL_ENV}, else {DEFAULT_MODEL}).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per hit.")
@click.option("--rebuild", is_flag=True, help="Rebuild the corpus index even if it is up to date.")
@click.option("--index-in-corpus", is_flag=True,
              help="Keep the corpus index next to the corpus (CORPUS/.scholarly-index) instead of the cache.")
def similar_command(query: str, corpus: str, aspect: str, deprecated_aspect: Optional[str], k: int,
                    model: Optional[str], as_json: bool, rebuild: bool, index_in_corpus: bool) -> None:
    """Papers of CORPUS most similar to QUERY on one aspect, with the best-matching sentences.

    CORPUS is a folder or glob of paper files (TEI, PDF...) or a CSFCube-style abstracts
    .jsonl; QUERY is a paper file or a paper id of a .jsonl corpus. The corpus index is saved
    in scholarly_nlp's cache ($SCHOLARLY_NLP_CACHE, default ~/.cache/scholarly_nlp), or next
    to the corpus with --index-in-corpus, and reused while the corpus and model are unchanged.
    """
    aspect = _aspect_option(aspect, deprecated_aspect)
    nlp, model_name = _load_aspect_model(model)
    index = corpus_index(corpus, nlp, model_name, rebuild, index_in_corpus)
    hits = rank_similar(_query_doc(query, corpus, nlp), index, aspect=aspect, k=k)
    if as_json:
        for hit in hits:
            click.echo(json.dumps(hit.to_dict(), ensure_ascii=False))
        return
    if not hits:
        click.echo("no other papers in the corpus")
    for hit in hits:
        click.echo(f"{hit.rank:>3}. {hit.paper_id}  distance {hit.distance:.4f}  {_clip(hit.title, 90)}")
        click.echo("     " + "  ".join(f"{name} {score:.3f}" for name, score in hit.aspect_scores.items()))
        match = hit.explanation
        if match is not None:
            click.echo(f"     query [{match.query_aspect or 'other'}]: {_clip(match.query_sentence, 110)}")
            click.echo(f"     match [{match.candidate_aspect or 'other'}] cos {match.similarity:.3f}: "
                       f"{_clip(match.candidate_sentence, 110)}")


def _aspect_option(aspect: str, deprecated_aspect: Optional[str]) -> str:
    """The query aspect of ``--aspect``, or of the deprecated ``--facet`` (with a warning);
    UsageError when both are given and differ."""
    if deprecated_aspect is None:
        return aspect
    click.echo("warning: --facet is deprecated, use --aspect", err=True)
    given = click.get_current_context().get_parameter_source("aspect") is not ParameterSource.DEFAULT
    if given and aspect != deprecated_aspect:
        raise click.UsageError(f"--aspect {aspect} and --facet {deprecated_aspect} disagree; give --aspect only")
    return deprecated_aspect


def _clip(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


def _load_aspect_model(model: Optional[str]):
    """The aspect pipeline from --model, the environment or the shipped pipeline, and its
    folder (the index's model name). Only the pipes aspects need are loaded."""
    model = model or os.environ.get(ASPECT_MODEL_ENV) or DEFAULT_MODEL
    path = pipeline_path(model)
    if path is None:
        raise ScholarlyNLPError(f"aspect model {model} is not a spaCy pipeline folder nor an installed pipeline "
                                f"package: pass --model PATH or set {ASPECT_MODEL_ENV} (the shipped one is "
                                f"{DEFAULT_MODEL}; build one with 'weasel run all' in projects/aspect_embedder)")
    from spacy.util import load_config

    # A pipeline with the aspect_embedder loads only what aspects need; another (a custom
    # embedder) loads whole.
    has_embedder = "aspect_embedder" in load_config(path / "config.cfg")["nlp"]["pipeline"]
    try:
        nlp = load(model, components=ASPECT_PIPES if has_embedder else None)
    except (OSError, ValueError, KeyError) as exc:
        message = " ".join(str(exc).split())
        raise ScholarlyNLPError(f"cannot load the aspect model {model}: {message[:300]}") from exc
    return nlp, os.path.abspath(path)


def _is_abstracts_file(path: str) -> bool:
    """True for an existing ``.jsonl`` file (a CSFCube-style abstracts corpus)."""
    return path.lower().endswith(".jsonl") and os.path.isfile(path)


def corpus_index(corpus: str, nlp, model_name: str, rebuild: bool, in_corpus: bool = False):
    """The corpus's saved index: reused when its fingerprint matches, else (re)built."""
    if _is_abstracts_file(corpus):
        files = [corpus]
    else:
        files = [f for f in expand_inputs([corpus]) if INDEX_DIRNAME not in Path(f).parts]
    if not files:
        raise click.UsageError(f"no paper files found in {corpus}")
    # The model's meta.json is rewritten whenever the pipeline is saved again (retrained).
    fingerprint = corpus_fingerprint(files + [os.path.join(model_name, "meta.json")], model_name)
    path = index_path_for(corpus, model_name, in_corpus=in_corpus)
    meta = read_meta(path)
    if not rebuild and meta and meta.get("fingerprint") == fingerprint and meta.get("format_version") == FORMAT_VERSION:
        try:
            index = AspectIndex.load(path)
            click.echo(f"reused the index of {len(index)} papers at {path}", err=True)
            return index
        except IndexFormatError as exc:
            click.echo(f"rebuilding a damaged index: {exc}", err=True)
    failed: list[str] = []
    index = AspectIndex.build(_corpus_docs(corpus, files, nlp, failed), path, model_name=model_name,
                              fingerprint=fingerprint)
    skipped = f", {len(failed)} file(s) or paper(s) skipped" if failed else ""
    click.echo(f"built an index of {len(index)} papers at {path}{skipped}", err=True)
    return index


def _corpus_docs(corpus: str, files: list[str], nlp, failed: list[str]) -> Iterator:
    """The corpus papers through ``nlp``; a file that fails, or a paper the embedder found no
    text in, is reported, added to ``failed`` and skipped."""
    for doc in _embedded_docs(corpus, files, nlp, failed):
        if doc._.aspect_vectors is None and doc._.aspect_fallbacks:  # the embedder ran: nothing to embed
            reasons = ", ".join(sorted(set(doc._.aspect_fallbacks.values())))
            click.echo(f"skipped: paper {doc._.paper_id} has no text to embed ({reasons})", err=True)
            failed.append(str(doc._.paper_id))
            continue
        yield doc


def _embedded_docs(corpus: str, files: list[str], nlp, failed: list[str]) -> Iterator:
    """The corpus papers through ``nlp``; a file that fails is reported, added to ``failed`` and skipped."""
    if _is_abstracts_file(corpus):
        records = read_csfcube_abstracts(corpus)
        for record in records:
            record.metadata.setdefault("source", corpus)
        yield from nlp.pipe(abstract_doc(record, nlp) for record in records)
        return
    for result in read_many(files, nlp, run_pipeline=True):
        if result.ok:
            yield result.doc
        else:
            click.echo(f"failed: {result.error}", err=True)
            failed.append(result.path)


def _query_doc(query: str, corpus: str, nlp):
    """The query paper through ``nlp``: a paper file, or a paper id of a .jsonl corpus."""
    if os.path.isfile(query):
        return nlp(read(query, nlp))
    if _is_abstracts_file(corpus):
        for record in read_csfcube_abstracts(corpus):
            if record.paper_id == query:
                return nlp(abstract_doc(record, nlp))
        raise ScholarlyNLPError(f"query {query!r} is neither a paper file nor a paper id in {corpus}")
    raise ScholarlyNLPError(f"query {query}: no such paper file")
