"""The ``scholarly-nlp`` command line: ``parse``, ``plugins``, ``demo`` and plugin commands."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Iterator, Optional

import click

from .api import DocResult, blank
from .doc.builder import paper_to_doc
from .doc.serialize import save_docbin, save_json
from .errors import ScholarlyNLPError
from .plugins import get_registry, package_root
from .readers.dispatch import expand_inputs

OUTPUT_FORMATS = ("json", "docbin")
PROGRESS_MIN_FILES = 20


class _Group(click.Group):
    """A click group that prints a ScholarlyNLPError as one line and exits 1."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except ScholarlyNLPError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(1)


@click.group(cls=_Group)
@click.version_option(package_name="scholarly-nlp", message="%(prog)s %(version)s")
def cli() -> None:
    """Scientific papers as spaCy Docs."""


@cli.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False), help="Output folder.")
@click.option("--format", "out_format", type=click.Choice(OUTPUT_FORMATS), default="json", show_default=True,
              help="One JSON export or one .spacy DocBin file per paper.")
@click.option("--reader", default=None, help="Force a reader (tei, pdf, grobid, or a plugin's); default: sniffed.")
@click.option("--grobid-url", default=None, help="Send PDFs to this GROBID server instead of the built-in PDF reader.")
@click.option("--images/--no-images", default=True, show_default=True, help="Save cropped figure PNGs (PDF reader).")
@click.option("--quiet", is_flag=True, help="Only the summary line and failures.")
def parse(paths: tuple[str, ...], out_dir: str, out_format: str, reader: Optional[str], grobid_url: Optional[str],
          images: bool, quiet: bool) -> None:
    """Parse PDFs, TEI files, folders or globs into paper Docs, one output file per paper."""
    out = Path(out_dir)
    files = list(expand_inputs(paths))
    if not files:
        raise click.UsageError(f"no input files found in {', '.join(paths)}")
    if grobid_url:
        reader = "grobid"
    nlp = blank()
    results = _read_with_grobid(files, nlp, grobid_url) if reader == "grobid" else _read_local(files, nlp, reader, out, images)
    ok, failed = 0, []
    show_progress = not quiet and len(files) >= PROGRESS_MIN_FILES
    with click.progressbar(results, length=len(files), label="parsing", file=sys.stderr) if show_progress else _nullbar(results) as bar:
        for result in bar:
            if result.ok:
                _write(result, out, out_format)
                ok += 1
            else:
                failed.append(result)
    for result in failed:
        click.echo(f"failed: {result.error}", err=True)
    click.echo(f"parsed {len(files)} file(s): {ok} ok, {len(failed)} failed; output in {out}")
    if failed:
        sys.exit(1)


class _nullbar:
    def __init__(self, items):
        self.items = items

    def __enter__(self):
        return self.items

    def __exit__(self, *exc):
        return False


def _read_local(files: list[str], nlp, reader: Optional[str], out: Path, images: bool) -> Iterator[DocResult]:
    from .readers.dispatch import read_paper

    image_dir = out / "images" if images else None
    for path in files:
        try:
            options = {"image_dir": str(image_dir)} if image_dir and _is_pdf_reader(path, reader) else {}
            yield DocResult(path=path, doc=paper_to_doc(read_paper(path, reader, **options), nlp))
        except ScholarlyNLPError as exc:
            yield DocResult(path=path, error=exc)


def _is_pdf_reader(path: str, reader: Optional[str]) -> bool:
    return (reader or get_registry().sniff(path)) == "pdf"


def _read_with_grobid(files: list[str], nlp, url: Optional[str]) -> Iterator[DocResult]:
    from .readers.grobid_service import GrobidService
    from .readers.tei import parse_tei

    service = GrobidService(url=url)
    for path, outcome in service.process(files):
        if isinstance(outcome, Exception):
            error = outcome if isinstance(outcome, ScholarlyNLPError) else ScholarlyNLPError(f"{path}: {outcome}")
            yield DocResult(path=str(path), error=error)
            continue
        try:
            paper = parse_tei(outcome, source=str(path), paper_id=Path(path).stem)
            paper.reader = "grobid"
            yield DocResult(path=str(path), doc=paper_to_doc(paper, nlp))
        except ScholarlyNLPError as exc:
            yield DocResult(path=str(path), error=exc)


def _write(result: DocResult, out: Path, out_format: str) -> None:
    name = result.doc._.paper_id or Path(result.path).stem
    if out_format == "json":
        save_json(result.doc, out / f"{name}.json")
    else:
        save_docbin([result.doc], out / f"{name}.spacy")


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
    for path in sorted(folder.glob("demo_paper.*")):
        if path.suffix not in (".pdf", ".xml"):
            continue
        (result,) = list(_read_local([str(path)], nlp, None, out, images=True))
        if not result.ok:
            raise result.error
        doc = result.doc
        _write(result, out, "json")
        click.echo(f"{path.name}: {len(list(doc.sents))} sentences, {len(doc._.sections)} sections, "
                   f"{len(doc._.figures)} figures/tables, {len(doc._.citances)} citances")
        for figure in doc._.figures:
            click.echo(f"  {figure.id} ({figure.kind} {figure.label}): {len(figure.mentions)} mention(s); "
                       f"{figure.caption_text[:70]}")
    click.echo(f"JSON exports written to {out}")


def main() -> None:
    """Console-script entry point: core commands plus those plugins add."""
    get_registry().add_commands(cli)
    cli(prog_name="scholarly-nlp")


if __name__ == "__main__":
    main()
