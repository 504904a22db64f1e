"""``scholarly-nlp example-papermd FILE``: the plugin's command-line addition.

The command is hidden (``hidden=True``): it runs when invoked but is not listed by
``scholarly-nlp --help``, so installing the test suite's example plugin does not add an
entry to a user's command list.
"""

from __future__ import annotations

import click


@click.command("example-papermd", hidden=True)
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@click.option("--keyword", default=None, help="Also count the sentences that contain this keyword.")
def example_papermd(path: str, keyword: str) -> None:
    """Summarise a paper file (any format scholarly_nlp reads) in one line."""
    import scholarly_nlp

    doc = scholarly_nlp.read(path)
    line = (f"{doc._.paper_id}: {len(list(doc.sents))} sentences, {len(doc._.sections)} sections, "
            f"{len(doc._.figures)} figures/tables, {len(doc._.citances)} citances")
    if keyword:
        nlp = scholarly_nlp.blank()
        tagger = nlp.add_pipe("example_keyword_tagger", config={"keyword": keyword})
        line += f", {len(tagger(doc)._.example_keyword_sents)} with {keyword!r}"
    click.echo(line)
