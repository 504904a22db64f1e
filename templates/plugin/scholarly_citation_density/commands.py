"""``scholarly-nlp citation-density PATH...``: the plugin's command-line addition."""

from __future__ import annotations

import json

import click


@click.command("citation-density")
@click.argument("paths", nargs=-1, required=True)
@click.option("--rollup", is_flag=True, help="Count subsections with their level-1 section.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per paper.")
def citation_density_command(paths: tuple[str, ...], rollup: bool, as_json: bool) -> None:
    """Citances per body section of each paper (files, folders or globs)."""
    import scholarly_nlp

    nlp = scholarly_nlp.blank()
    nlp.add_pipe("citation_density", config={"rollup": rollup})
    failed = 0
    for result in scholarly_nlp.read_many(paths, nlp=nlp, run_pipeline=True):
        if not result.ok:
            failed += 1
            click.echo(f"error: {result.error}", err=True)
            continue
        doc = result.doc
        summary = doc._.citation_density
        if as_json:
            click.echo(json.dumps({"paper_id": doc._.paper_id, **summary}))
            continue
        click.echo(f"{doc._.paper_id}: {summary['total']} citances, {summary['outside_sections']} outside body sections")
        for row in summary["sections"]:
            heading = " ".join(part for part in (row["number"], row["title"]) if part)
            click.echo(f"  {heading}: {row['citances']}/{row['sentences']} sentences cite ({row['density']:.2f})")
    if failed:
        raise SystemExit(1)
