"""The ``scholarly-nlp`` command line: ``parse``, ``analyze``, ``plugins``, ``demo`` and plugin commands (``similar`` is the aspect embedder's)."""

from __future__ import annotations

import json
import os
import sys
import warnings
from pathlib import Path
from typing import Optional

import click

from .analysis import analysis_record, summary_lines
from .api import DocResult, blank, load, read_many
from .doc.serialize import save_docbin, save_json, write_atomic
from .errors import InputError, ScholarlyNLPError
from .naming import output_names, paper_stem
from .plugins import get_registry, package_root
from .readers.dispatch import expand_inputs

OUTPUT_FORMATS = ("json", "docbin")
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
@click.option("--quiet", is_flag=True, help="Only the summary line and failures.")
def parse(paths: tuple[str, ...], out_dir: str, out_format: str, json_full: bool, reader: Optional[str],
          grobid_url: Optional[str], images: bool, jobs: Optional[int], quiet: bool) -> None:
    """Parse PDFs, TEI files, folders or globs into paper Docs, one output file per paper.

    Each output is named after its input file less the format extension (D10-1042.pdf ->
    D10-1042.json); inputs of one run that would share a name keep their whole file name
    (demo_paper.pdf.json, demo_paper.tei.xml.json), then their folders (a__x.pdf.json).
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
    options = _reader_options(out, names, images, with_grobid=reader == "grobid", grobid_url=grobid_url)
    default_jobs = options["grobid"]["service"].concurrency if reader == "grobid" else 1
    results = read_many(files, blank(), format=reader, workers=jobs or default_jobs, reader_options=options)
    ok, failed = 0, []
    show_progress = not quiet and len(files) >= PROGRESS_MIN_FILES
    with click.progressbar(results, length=len(files), label="parsing", file=sys.stderr) if show_progress else _nullbar(results) as bar:
        for result in bar:
            if result.ok:
                _write(result.doc, out, names[result.path], out_format, json_full)
                ok += 1
            else:
                failed.append(result)
    for result in failed:
        click.echo(f"failed: {one_line(result.error)}", err=True)
    click.echo(f"parsed {len(files)} file(s): {ok} ok, {len(failed)} failed; output in {out}")
    if failed:
        sys.exit(1)


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
    if out_format == "json":
        save_json(doc, out / f"{name}.json", full=json_full)
    else:
        save_docbin([doc], out / f"{name}.spacy")


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
@click.option("--quiet", is_flag=True, help="Only the summary line and failures.")
def analyze(paths: tuple[str, ...], out_dir: str, pipeline: str, gpu_id: int, n_process: int, images: bool,
            quiet: bool) -> None:
    """Run a trained pipeline over PDFs, TEI files, folders or globs: one analysis JSON per paper.

    Each record holds the paper's title, its abstract sentences with their roles, its
    citances with bibliography ids, and what each component found (central figure and
    figure scores, contributions with their paragraphs, aspect vectors, ...). Bad files are
    reported and skipped, as in ``parse``.
    """
    nlp = load(pipeline, gpu_id=gpu_id)
    out = Path(out_dir)
    files = _unique(expand_inputs(paths))
    if not files:
        raise click.UsageError(f"no input files found in {', '.join(paths)}")
    names = dict(zip(files, output_names(files)))
    ok, failed = 0, []
    for result in read_many(files, nlp, run_pipeline=True, workers=n_process,
                            reader_options=_reader_options(out, names, images)):
        if not result.ok:
            failed.append(result)
            continue
        try:
            record = analysis_record(result.doc, nlp)
            write_atomic(out / f"{names[result.path]}.analysis.json", json.dumps(record, ensure_ascii=False))
        except (ScholarlyNLPError, OSError, ValueError, TypeError) as exc:
            failed.append(DocResult(path=result.path, error=InputError(result.path, f"could not be written ({exc})")))
            continue
        ok += 1
        if not quiet:
            click.echo("\n".join(summary_lines(record)))
    for result in failed:
        click.echo(f"failed: {one_line(result.error)}", err=True)
    click.echo(f"analyzed {len(files)} file(s) with {pipeline}: {ok} ok, {len(failed)} failed; output in {out}")
    if failed:
        sys.exit(1)


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
