"""The run's ``index.html``: one row per paper analysed (title, central-figure thumbnail,
counts) and one per paper that failed, with its reason."""

from __future__ import annotations

from typing import Optional

from .page import escape
from .style import CSS


def render_index(rows: list[dict], failures: Optional[list[tuple[str, str]]] = None) -> str:
    """The index page. Each row: ``page`` (the paper's page, relative), ``title``,
    ``paper_id``, ``counts`` (dict), optional ``thumbnail`` (relative image path);
    ``failures``: (input path, reason) pairs."""
    body = []
    for row in rows:
        thumb = (f"<img src=\"{escape(row['thumbnail'])}\" alt=\"Central figure of {escape(row.get('title'))}\">"
                 if row.get("thumbnail") else "")
        counts = ", ".join(f"{escape(v)} {escape(k)}" for k, v in (row.get("counts") or {}).items())
        body.append(f"<tr><td><a href=\"{escape(row['page'])}\">{escape(row.get('title') or row.get('paper_id'))}</a>"
                    f"<br><small>{escape(row.get('paper_id'))}</small></td><td>{thumb}</td><td>{counts}</td></tr>")
    for path, reason in failures or []:
        body.append(f"<tr class=\"failed\"><td>{escape(path)}</td><td></td><td>failed: {escape(reason)}</td></tr>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Analysed papers</title>"
            f"<style>{CSS}</style></head><body><main style=\"max-width:64rem;margin:2rem auto;padding:0 1rem\">"
            f"<h1>Analysed papers</h1><p>{len(rows)} analysed, {len(failures or [])} failed.</p>"
            "<table class=\"papers\"><thead><tr><th scope=\"col\">Paper</th><th scope=\"col\">Central figure</th>"
            f"<th scope=\"col\">Counts</th></tr></thead><tbody>{''.join(body)}</tbody></table></main></body></html>\n")
