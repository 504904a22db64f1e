"""The ``scholarly-nlp`` command line: ``parse``, ``analyze``, ``plugins``, ``demo`` and plugin commands (``similar`` is the aspect embedder's)."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import traceback
import warnings
from pathlib import Path
from typing import Callable, Optional

import click

from . import __version__
from .analysis import FORMAT_VERSION as ANALYSIS_FORMAT_VERSION
from .analysis import analysis_record, summary_lines
from .api import blank, load, read_many
from .doc.serialize import JSON_FORMAT_VERSION, save_docbin, save_json, strict_json, write_atomic
from .errors import InputError, ScholarlyNLPError
from .naming import output_names, paper_stem
from .pipelines import pipeline_path
from .plugins import get_registry, package_root
from .readers.dispatch import expand_inputs
from .resume import Manifest, input_digest
from .view import render, render_index
from .view.page import relative_link

OUTPUT_FORMATS = ("json", "docbin")
OUTPUT_SUFFIXES = {"json": ".json", "docbin": ".spacy"}
ANALYSIS_SUFFIX = ".analysis.json"
PAGE_SUFFIX = ".html"
#: What ``analyze --format`` writes per paper: the analysis JSON, its HTML page, or both.
ANALYSIS_FORMATS = {"json": (ANALYSIS_SUFFIX,), "html": (PAGE_SUFFIX,), "json,html": (ANALYSIS_SUFFIX, PAGE_SUFFIX)}
DEFAULT_PIPELINE = "scholarly_core"
"""The pipeline ``analyze`` loads when none is named."""
PROGRESS_MIN_FILES = 20


DEBUG_ENV = "SCHOLARLY_NLP_DEBUG"
"""Set to 1 to get the full traceback of an unexpected error instead of one line."""


def one_line(text: object) -> str:
    """``text`` as a single line (an error message from a library may span several)."""
    return " ".join(str(text).split())


def _fail(message: str, code: int = 1) -> None:
    click.echo(f"error: {one_line(message)}", err=True)
    sys.exit(code)


class _Group(click.Group):
    """A click group that prints any error as one line and exits 1.

    Click's own usage errors keep click's format. An unexpected exception (a bug) is one
    line too, naming its type; ``SCHOLARLY_NLP_DEBUG=1`` shows its traceback instead.
    """

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except ScholarlyNLPError as exc:
            _fail(str(exc))
        except OSError as exc:
            _fail(str(exc) if exc.filename else f"{type(exc).__name__}: {exc}")
        except Exception as exc:
            if _debug():
                raise
            _fail(f"unexpected {type(exc).__name__}: {exc} (set {DEBUG_ENV}=1 for the traceback)")


def _debug() -> bool:
    return os.environ.get(DEBUG_ENV, "").strip().lower() not in ("", "0", "false", "no", "off")


@click.group(cls=_Group)
@click.version_option(package_name="scholarly-nlp", message="%(prog)s %(version)s")
def cli() -> None:
    """Scientific papers as spaCy Docs."""


@cli.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False), help="Output folder.")
@click.option("--format", "out_format", type=click.Choice(OUTPUT_FORMATS), default="json", show_default=True,
              help="One JSON export or one .spacy DocBin file per paper.")
@click.option("--json-full", is_flag=True,
              help="Also write spaCy's per-token dump (the 'spacy' key) into each JSON export (4-5x larger).")
@click.option("--reader", default=None, help="Force a reader (tei, pdf, grobid, or a plugin's); default: sniffed.")
@click.option("--grobid-url", default=None, help="Send PDFs to this GROBID server instead of the built-in PDF reader.")
@click.option("--images/--no-images", default=True, show_default=True, help="Save cropped figure PNGs (PDF reader).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
              help="Files read at once (worker processes; threads for GROBID). Default: 1, or 4 with GROBID.")
@click.option("--force", is_flag=True, help="Redo every paper, also those the output folder already holds.")
@click.option("--quiet", is_flag=True, help="Only the summary line and failures.")
def parse(paths: tuple[str, ...], out_dir: str, out_format: str, json_full: bool, reader: Optional[str],
          grobid_url: Optional[str], images: bool, jobs: Optional[int], force: bool, quiet: bool) -> None:
    """Parse PDFs, TEI files, folders or globs into paper Docs, one output file per paper.

    Each output is named after its input file less the format extension (D10-1042.pdf ->
    D10-1042.json); inputs of one run that would share a name keep their whole file name
    (demo_paper.pdf.json, demo_paper.tei.xml.json), then their folders (a__x.pdf.json).
    A paper that cannot be read or written is reported and the batch goes on. Papers the
    output folder already holds, written from the same bytes with the same options, are
    skipped (--force redoes them).
    """
    if json_full and out_format != "json":
        raise click.UsageError("--json-full applies to --format json only")
    out = Path(out_dir)
    files = _unique(expand_inputs(paths))
    if not files:
        raise click.UsageError(f"no input files found in {', '.join(paths)}")
    names = dict(zip(files, output_names(files)))
    if grobid_url:
        reader = "grobid"
    suffix = OUTPUT_SUFFIXES[out_format]
    batch = _Batch(out, {"command": "parse", "format": out_format, "json_full": json_full, "reader": reader,
                         "images": images, "format_version": JSON_FORMAT_VERSION, "scholarly_nlp": __version__})
    todo = batch.plan(files, {path: name + suffix for path, name in names.items()}, force)
    if todo:
        options = _reader_options(out, names, images, with_grobid=reader == "grobid", grobid_url=grobid_url)
        default_jobs = options["grobid"]["service"].concurrency if reader == "grobid" else 1
        results = read_many(todo, blank(), format=reader, workers=jobs or default_jobs, reader_options=options)
        show_progress = not quiet and len(todo) >= PROGRESS_MIN_FILES
        with click.progressbar(results, length=len(todo), label="parsing", file=sys.stderr) if show_progress else _nullbar(results) as bar:
            for result in bar:
                if result.ok:
                    batch.write(result.path, lambda path, doc=result.doc: _write_doc(doc, path, out_format, json_full))
                else:
                    batch.fail(result.error)
    batch.finish(f"parsed {len(files)} file(s)")


def _unique(paths) -> list[str]:
    """The paths in order, each file once (a folder and a glob may both name it)."""
    seen, unique = set(), []
    for path in paths:
        key = os.path.normcase(os.path.abspath(path))
        if key not in seen:
            seen.add(key)
            unique.append(path)
    return unique


class _nullbar:
    def __init__(self, items):
        self.items = items

    def __enter__(self):
        return self.items

    def __exit__(self, *exc):
        return False


def _reader_options(out: Path, names: dict[str, str], images: bool, with_grobid: bool = False,
                    grobid_url: Optional[str] = None) -> dict:
    """Per-reader options of a run: where the PDF reader saves figure crops, which GROBID server to ask."""
    options: dict = {}
    if images:
        options["pdf"] = lambda path: {"image_dir": str(_image_dir(out, path, names[path]))}
    if with_grobid:
        from .readers.grobid_service import GrobidService

        options["grobid"] = {"service": GrobidService(url=grobid_url)}
    return options


def _image_dir(out: Path, path: str, name: str) -> Path:
    """``<out>/images``; ``<out>/images/<name>`` for a paper whose output name was
    disambiguated (its figure files would otherwise take another paper's names)."""
    return out / "images" if name == paper_stem(path) else out / "images" / name


def _write(doc, out: Path, name: str, out_format: str, json_full: bool = False) -> None:
    _write_doc(doc, out / f"{name}{OUTPUT_SUFFIXES[out_format]}", out_format, json_full)


def _write_doc(doc, path: Path, out_format: str, json_full: bool = False) -> None:
    if out_format == "json":
        save_json(doc, path, full=json_full)
    else:
        save_docbin([doc], path)


class _Batch:
    """One run of ``parse`` or ``analyze`` into an output folder: which papers to skip as
    already written (:mod:`scholarly_nlp.resume`), each paper's output written or its failure
    kept, and the closing report. Anything that fails for one paper fails that paper only.
    """

    def __init__(self, out: Path, options: dict):
        out.mkdir(parents=True, exist_ok=True)  # a folder that cannot be made stops the run, before any work
        self.out = out
        self.manifest = Manifest(out, options)
        self.outputs: dict[str, str] = {}
        self.digests: dict[str, Optional[str]] = {}
        self.ok, self.skipped = 0, 0
        self.failures: list[str] = []

    def plan(self, files: list[str], outputs: dict[str, str], force: bool) -> list[str]:
        """The files to do, in order: all with ``force``, else those not already written."""
        self.outputs = outputs
        self.digests = {path: input_digest(path) for path in files}
        todo = [path for path in files if force or not self.manifest.is_done(outputs[path], self.digests[path])]
        self.skipped = len(files) - len(todo)
        return todo

    def write(self, path: str, write: Callable[[Path], object]) -> bool:
        """Write ``path``'s output with ``write(output_path)``; any error fails that paper only."""
        output = self.outputs[path]
        try:
            write(self.out / output)
        except Exception as exc:  # one paper must not stop the batch, whatever went wrong
            self.fail(_paper_error(path, "could not be written", exc))
            return False
        self.manifest.record(output, self.digests.get(path))
        self.ok += 1
        return True

    def fail(self, error: object) -> None:
        """Count one failed paper; ``error`` names it and the reason."""
        self.failures.append(one_line(error))

    def finish(self, done: str) -> None:
        """Print each failure and the summary line; exit 1 when any paper failed."""
        self.manifest.close()
        for failure in self.failures:
            click.echo(f"failed: {failure}", err=True)
        if self.manifest.error is not None:
            click.echo(f"warning: could not update {self.manifest.path} ({one_line(self.manifest.error)}); "
                       "the papers of this run will be redone next time", err=True)
        skipped = f", skipped {self.skipped} already written (use --force to redo)" if self.skipped else ""
        click.echo(f"{done}: {self.ok} ok, {len(self.failures)} failed{skipped}; output in {self.out}")
        if self.failures:
            sys.exit(1)


def _paper_error(path: str, what: str, exc: BaseException) -> InputError:
    """One paper's failure as an error naming the file, what failed, and the exception's type and message."""
    if _debug():
        traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
    return InputError(path, f"{what} ({type(exc).__name__}: {exc})")


@cli.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--out", "out_dir", default="out/analysis", show_default=True, type=click.Path(file_okay=False),
              help="Output folder.")
@click.option("--pipeline", default=DEFAULT_PIPELINE, show_default=True,
              help="An installed pipeline package or a trained pipeline folder.")
@click.option("--gpu-id", type=int, default=-1, show_default=True, help="Run the pipeline on this GPU (-1: CPU).")
@click.option("--n-process", type=click.IntRange(min=1), default=1, show_default=True,
              help="Files read at once (worker processes).")
@click.option("--images/--no-images", default=True, show_default=True, help="Save cropped figure PNGs (PDF reader).")
@click.option("--format", "out_format", type=click.Choice(tuple(ANALYSIS_FORMATS)), default="json", show_default=True,
              help="Per paper: the analysis JSON, a self-contained HTML page (plus index.html), or both.")
@click.option("--similar", "similar_corpus", default=None, metavar="CORPUS",
              help="Also find each paper's most similar papers in CORPUS (folder, glob or abstracts .jsonl), per aspect.")
@click.option("--similar-k", type=click.IntRange(min=1), default=5, show_default=True,
              help="Similar papers per aspect (with --similar).")
@click.option("--force", is_flag=True, help="Redo every paper, also those the output folder already holds.")
@click.option("--quiet", is_flag=True, help="Only the summary line and failures.")
def analyze(paths: tuple[str, ...], out_dir: str, pipeline: str, gpu_id: int, n_process: int, images: bool,
            out_format: str, similar_corpus: Optional[str], similar_k: int, force: bool, quiet: bool) -> None:
    """Run a trained pipeline over PDFs, TEI files, folders or globs: one analysis JSON per paper.

    Each record holds the paper's title, its abstract sentences with their roles, its
    citances with bibliography ids, and what each component found (central figure and
    figure scores, contributions with their paragraphs, aspect vectors, ...). With
    ``--format html`` (or ``json,html``) each paper also gets a page to look at, and the run an
    ``index.html``; with ``--similar CORPUS`` each record (and page) also lists the papers of
    CORPUS most like it on each aspect, with the sentence pair that explains each match. Bad
    files are reported and skipped, as in ``parse``, and so are papers already analysed with
    the same pipeline (--force redoes them).
    """
    folder = pipeline_path(pipeline)
    nlp = None if folder else load(pipeline, gpu_id=gpu_id)  # no pipeline there: load says why
    out = Path(out_dir)
    files = _unique(expand_inputs(paths))
    if not files:
        raise click.UsageError(f"no input files found in {', '.join(paths)}")
    if similar_corpus is not None and not any(Path(f).is_file() for f in expand_inputs([similar_corpus])):
        raise click.UsageError(f"--similar: no paper files found in {similar_corpus}")
    names = dict(zip(files, output_names(files)))
    suffixes = ANALYSIS_FORMATS[out_format]
    batch = _Batch(out, {"command": "analyze", "pipeline": _pipeline_identity(pipeline, folder), "images": images,
                         "format": out_format, "similar": [similar_corpus, similar_k] if similar_corpus else None,
                         "format_version": ANALYSIS_FORMAT_VERSION, "scholarly_nlp": __version__})
    todo = batch.plan(files, {path: name + suffixes[0] for path, name in names.items()}, force)
    pages: list[dict] = []
    if todo:
        if nlp is None:
            nlp = load(pipeline, gpu_id=gpu_id)
        # what keys the --similar corpus index: the pipeline's folder
        model_name = str((folder or pipeline_path(pipeline) or Path(pipeline)).resolve())
        for result in read_many(todo, nlp, run_pipeline=True, workers=n_process,
                                reader_options=_reader_options(out, names, images)):
            if not result.ok:
                batch.fail(result.error)
                continue
            try:
                record = analysis_record(result.doc, nlp)
                if similar_corpus is not None:
                    record["similar"] = get_registry().similar_papers(result.doc, similar_corpus, nlp, model_name, similar_k)
                texts = {suffix: strict_json(record) if suffix == ANALYSIS_SUFFIX else render(result.doc, record=record,
                                                                                              image_base=out)
                         for suffix in suffixes}
                summary = summary_lines(record)
            except Exception as exc:  # a pipe's analysis() is third-party code: it fails its paper only
                batch.fail(_paper_error(result.path, "could not be analysed", exc))
                continue
            stem = names[result.path]
            if batch.write(result.path, lambda path, texts=texts, stem=stem: _write_outputs(out, stem, texts)):
                if PAGE_SUFFIX in suffixes:
                    pages.append(_index_row(result.doc, record, stem + PAGE_SUFFIX, out))
                if not quiet:
                    click.echo("\n".join(summary))
    if PAGE_SUFFIX in suffixes:
        write_atomic(out / "index.html", render_index(pages, _failure_rows(batch.failures)))
    batch.finish(f"analyzed {len(files)} file(s) with {pipeline}")


def _write_outputs(out: Path, stem: str, texts: dict[str, str]) -> None:
    """Write one paper's outputs (``stem`` + each suffix) under ``out``."""
    for suffix, text in texts.items():
        write_atomic(out / f"{stem}{suffix}", text)


def _index_row(doc, record: dict, page: str, out: Path) -> dict:
    """One paper's row of ``index.html``: its page, title, counts and central figure's image."""
    central = next((f for f in doc._.figures if f.id == record.get("central_figure")), None)
    thumbnail = relative_link(central.image_path, out) if central is not None and central.image_path else None
    return {"page": page, "title": record.get("title"), "paper_id": record.get("paper_id"),
            "counts": record.get("counts") or {}, "thumbnail": thumbnail}


def _failure_rows(failures: list[str]) -> list[tuple[str, str]]:
    """(file, reason) of each failure line ("FILE: reason")."""
    return [tuple(line.split(": ", 1)) if ": " in line else (line, "") for line in failures]


def _pipeline_identity(name: str, folder: Optional[Path]) -> dict:
    """What tells one pipeline from another for resuming: its folder and each file's size and
    modification time there (a retrained or reinstalled pipeline is a new one), without loading it."""
    if folder is None:
        return {"name": name}
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    digest = hashlib.sha256()
    for path in files:
        info = path.stat()
        digest.update(f"{path.relative_to(folder).as_posix()}\0{info.st_size}\0{info.st_mtime_ns}\n"
                      .encode("utf-8", "surrogateescape"))
    return {"name": name, "folder": str(folder.resolve()), "files": digest.hexdigest()[:16]}


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def plugins(as_json: bool) -> None:
    """List installed plugins, their versions and what each registered."""
    records = [r.to_dict() for r in get_registry().plugins.values()]
    if as_json:
        click.echo(json.dumps(records, indent=2))
        return
    for record in records:
        version = record["version"] or "unknown version"
        status = "" if record["status"] == "loaded" else f"  [{record['status']}{': ' + record['error'] if record['error'] else ''}]"
        click.echo(f"{record['name']} {version} ({record['module']}){status}")
        for kind, names in record["registered"].items():
            click.echo(f"  {kind}: {', '.join(names)}")


def demo_dir() -> Path:
    """The folder of the built-in demo paper (``corpora/demo`` of the source tree)."""
    for candidate in (Path.cwd() / "corpora" / "demo", package_root().parent / "corpora" / "demo"):
        if candidate.is_dir():
            return candidate
    raise ScholarlyNLPError("the demo paper (corpora/demo) is not available in this installation")


@cli.command()
@click.option("--out", "out_dir", default="out/demo", show_default=True, type=click.Path(file_okay=False))
def demo(out_dir: str) -> None:
    """Parse the built-in demo paper (PDF and TEI) and print what was found."""
    folder = demo_dir()
    nlp = blank()
    out = Path(out_dir)
    paths = [str(p) for p in sorted(folder.glob("demo_paper.*")) if p.suffix in (".pdf", ".xml")]
    names = dict(zip(paths, output_names(paths)))
    for result in read_many(paths, nlp, reader_options=_reader_options(out, names, images=True)):
        path = result.path
        if not result.ok:
            raise result.error
        doc = result.doc
        _write(doc, out, names[path], "json")
        click.echo(f"{Path(path).name}: {len(list(doc.sents))} sentences, {len(doc._.sections)} sections, "
                   f"{len(doc._.figures)} figures/tables, {len(doc._.citances)} citances -> {names[path]}.json")
        for figure in doc._.figures:
            click.echo(f"  {figure.id} ({figure.kind} {figure.label}): {len(figure.mentions)} mention(s); "
                       f"{one_line(figure.caption_text)[:70]}")
    click.echo(f"JSON exports written to {out}")


def main() -> None:
    """Console-script entry point: core commands plus those plugins add.

    Errors before a command runs (a plugin failing in strict mode) are one line too, and
    warnings (a plugin skipped) print as ``warning: ...`` lines.
    """
    warnings.showwarning = _show_warning
    try:
        get_registry().add_commands(cli)
    except ScholarlyNLPError as exc:
        if _debug():
            raise
        _fail(str(exc))
    cli(prog_name="scholarly-nlp")


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    click.echo(f"warning: {one_line(message)}", err=True)


if __name__ == "__main__":
    main()
