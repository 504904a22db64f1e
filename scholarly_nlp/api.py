"""The high-level entry points: a blank pipeline, and files in, paper Docs out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Optional, Sequence

import spacy
from spacy.language import Language
from spacy.tokens import Doc

from .doc.builder import paper_to_doc
from .doc.extensions import install_extensions
from .errors import InputError, ScholarlyNLPError, UnknownPipelineError
from .plugins import get_registry
from .readers.dispatch import PathLike, ReaderOptions, read_paper, read_papers
from .readers.limits import ReadLimits


def blank(lang: str = "en") -> Language:
    """A blank spaCy pipeline with every scholarly_nlp plugin loaded.

    Components from plugins can then be added by name: ``nlp.add_pipe("figure_ranker")``.
    """
    get_registry()
    install_extensions()
    return spacy.blank(lang)


def load(name: PathLike, *, components: Optional[Sequence[str]] = None, require: Sequence[str] = (),
         gpu_id: Optional[int] = None, **spacy_options: Any) -> Language:
    """Load a trained pipeline: an installed pipeline package's name or a pipeline folder.

    The plugins are loaded first (so every component's factory is known); ``gpu_id`` >= 0
    runs it on that GPU. ``components`` loads only those pipes (names the pipeline lacks are
    ignored; the others are not even read from disk), e.g. ``["transformer",
    "sentence_role_tagger"]`` of the shipped ``scholarly_core``; a pipe named in ``require`` that
    the loaded pipeline lacks is a :class:`~scholarly_nlp.errors.ScholarlyNLPError` naming the
    pipes it has. An unknown name raises
    :class:`~scholarly_nlp.errors.UnknownPipelineError` saying what to install or pass; a
    pipeline built for another scholarly_nlp version raises
    :class:`~scholarly_nlp.errors.IncompatiblePipelineError`. ``spacy_options`` go to
    ``spacy.load`` (``exclude``, ``config`` overrides, ...).
    """
    from .pipelines import check_compatible, pipeline_path

    get_registry()
    install_extensions()
    if gpu_id is not None and gpu_id >= 0:
        spacy.require_gpu(gpu_id)
    path = pipeline_path(name)
    if path is not None:
        check_compatible(path)
        if components is not None:
            pipes = spacy.util.load_config(path / "config.cfg")["nlp"]["pipeline"]
            skipped = [pipe for pipe in pipes if pipe not in components]
            spacy_options["exclude"] = list(spacy_options.get("exclude", ())) + skipped
    try:
        nlp = spacy.load(name, **spacy_options)
    except OSError as exc:
        if "[E050]" in str(exc) or "[E053]" in str(exc):
            raise UnknownPipelineError(str(name)) from exc
        raise
    missing = [pipe for pipe in require if pipe not in nlp.pipe_names]
    if missing:
        raise ScholarlyNLPError(f"the pipeline {name} has no {', '.join(missing)} (pipes: {', '.join(nlp.pipe_names)})")
    return nlp


def read(path: PathLike, nlp: Optional[Language] = None, format: Optional[str] = None, **options: Any) -> Doc:
    """Read one paper file (PDF, TEI, or any plugin format) into a paper Doc.

    ``nlp`` supplies the tokenizer (a blank English pipeline by default); its components
    are *not* run, use ``nlp(doc)`` or :func:`read_many` with ``run_pipeline=True``.
    """
    nlp = nlp or blank()
    return paper_to_doc(read_paper(path, format, **options), nlp)


@dataclass
class DocResult:
    """One file of a batch: the Doc, or the error naming the file and the reason."""

    path: str
    doc: Optional[Doc] = None
    error: Optional[ScholarlyNLPError] = None

    @property
    def ok(self) -> bool:
        """True when the file became a Doc."""
        return self.error is None


def read_many(inputs: Iterable[PathLike], nlp: Optional[Language] = None, format: Optional[str] = None,
              run_pipeline: bool = False, *, workers: int = 1, reader_options: Optional[ReaderOptions] = None,
              limits: Optional[ReadLimits] = None, **options: Any) -> Iterator[DocResult]:
    """Read files, folders or globs lazily, in input order; a bad file is reported and the batch goes on.

    ``workers`` > 1 reads that many files at once (worker processes; see
    :func:`scholarly_nlp.read_papers`); Docs are built here, in order. ``options`` go to
    every reader (each ignores what it does not know); ``reader_options`` maps a reader
    name to options for it alone, or to a function of the path that returns them, e.g.
    ``{"pdf": {"image_dir": "figures/"}}``. With ``run_pipeline=True`` each Doc also goes
    through ``nlp``'s components. Whatever fails for one paper (reading, building the Doc,
    a component) becomes that paper's failed DocResult.

    ``limits`` (:class:`scholarly_nlp.readers.limits.ReadLimits`; default from
    ``$SCHOLARLY_NLP_READ_TIME_LIMIT``, ``$SCHOLARLY_NLP_READ_MEMORY_LIMIT`` and
    ``$SCHOLARLY_NLP_MAX_INPUT_MIB``: 300 s, 4096 MiB, 512 MiB) bound each file: only regular
    files within the input size are read, and each PDF is read in a child process (also at
    ``workers=1``) that is killed past the time limit and cannot map more than the memory
    limit, so a hostile PDF fails alone ("exceeded the 300 s time limit") and the batch goes on.
    """
    nlp = nlp or blank()
    for result in read_papers(inputs, format, workers=workers, reader_options=reader_options, limits=limits,
                              **options):
        if not result.ok:
            yield DocResult(path=result.path, error=result.error)
            continue
        try:
            doc = paper_to_doc(result.paper, nlp)
        except InputError as exc:
            yield DocResult(path=result.path, error=exc)
            continue
        except Exception as exc:  # one paper must not stop the batch
            yield DocResult(path=result.path, error=_paper_failure(result.path, "could not be built into a Doc", exc))
            continue
        if run_pipeline:
            try:
                doc = nlp(doc)
            except Exception as exc:
                yield DocResult(path=result.path, error=_paper_failure(result.path, "the pipeline failed on it", exc))
                continue
        yield DocResult(path=result.path, doc=doc)


def _paper_failure(path: str, what: str, exc: BaseException) -> InputError:
    """One paper's failure naming the file, what failed and the exception; the exception is
    kept as the cause, so its traceback survives for debugging."""
    error = InputError(path, f"{what} ({type(exc).__name__}: {exc})")
    error.__cause__ = exc
    return error
