"""The page's one style sheet, inlined into every page (no network, no script needed).

Jumps use fragment links: the element a link points to is the page's ``:target`` and is
highlighted; a citation marker's bibliography entry shows on hover and on keyboard focus.
"""

from __future__ import annotations

#: Colour of each abstract sentence role (and of the legend).
ROLE_COLOURS = {
    "background": "#dbeafe",
    "objective": "#fde68a",
    "method": "#d1fae5",
    "result": "#fbcfe8",
    "other": "#e5e7eb",
}

CSS = """
:root { --ink: #1f2937; --muted: #6b7280; --rule: #e5e7eb; --accent: #b45309; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--ink); font: 16px/1.55 Georgia, "Times New Roman", serif; background: #fff; }
.layout { display: grid; grid-template-columns: minmax(12rem, 18rem) minmax(0, 48rem); gap: 2.5rem;
          max-width: 72rem; margin: 0 auto; padding: 2rem 1.5rem 6rem; }
nav.outline { position: sticky; top: 1rem; align-self: start; max-height: calc(100vh - 2rem); overflow: auto;
              font: 14px/1.4 system-ui, sans-serif; }
nav.outline ol { list-style: none; padding-left: 0.9rem; margin: 0.2rem 0; }
nav.outline > ol { padding-left: 0; }
nav.outline a { color: var(--ink); text-decoration: none; }
nav.outline a:hover, nav.outline a:focus { text-decoration: underline; }
h1 { font-size: 1.8rem; line-height: 1.25; margin: 0 0 0.6rem; }
h2 { font-size: 1.3rem; margin: 2rem 0 0.6rem; border-bottom: 1px solid var(--rule); }
h3, h4, h5 { font-size: 1.08rem; margin: 1.4rem 0 0.4rem; }
.authors { color: var(--muted); font: 15px/1.4 system-ui, sans-serif; margin: 0 0 1rem; }
.num { color: var(--muted); margin-right: 0.4em; }
.legend { font: 13px/1.4 system-ui, sans-serif; display: flex; flex-wrap: wrap; gap: 0.4rem; margin: 0.4rem 0; }
.legend span, .role { border-radius: 3px; padding: 0 0.2em; }
.role-label { font: 11px system-ui, sans-serif; color: var(--muted); margin-left: 0.2em; }
p { margin: 0 0 0.9rem; }
:target { outline: 3px solid var(--accent); outline-offset: 3px; background: #fff7ed; }
a.cite, a.figref, a.fnref { color: #1d4ed8; text-decoration: none; position: relative; }
a.cite:hover, a.cite:focus, a.figref:hover, a.figref:focus { text-decoration: underline; }
a.cite .tip { display: none; position: absolute; left: 0; top: 1.5em; z-index: 5; width: 22rem; padding: 0.4rem 0.6rem;
              background: #111827; color: #f9fafb; font: 13px/1.4 system-ui, sans-serif; border-radius: 4px; }
a.cite:hover .tip, a.cite:focus .tip { display: block; }
mark.contribution { background: #fef3c7; padding: 0 0.1em; }
a.jump, a.back { font: 12px system-ui, sans-serif; color: var(--accent); margin-left: 0.3em; }
.formula { margin: 0.6rem 0 1rem 1.5rem; display: flex; justify-content: space-between; gap: 1rem; }
.formula code { font: 15px/1.5 "DejaVu Sans Mono", monospace; white-space: pre-wrap; }
figure { margin: 1rem 0 1.6rem; padding: 0.6rem; border: 1px solid var(--rule); border-radius: 4px; }
figure.central { border: 3px solid var(--accent); }
figure img { max-width: 100%; height: auto; display: block; margin: 0 auto 0.5rem; }
figcaption { font-size: 0.95rem; }
.badge { display: inline-block; font: 12px/1.6 system-ui, sans-serif; padding: 0 0.45em; border-radius: 9px;
         background: #e0e7ff; color: #3730a3; margin-right: 0.3em; }
.badge.central { background: var(--accent); color: #fff; }
.score, .why { font: 13px system-ui, sans-serif; color: var(--muted); }
.why::before { content: " \\00b7  "; }
ol.refs li, ol.notes li { margin-bottom: 0.4rem; font-size: 0.95rem; }
table.papers { border-collapse: collapse; width: 100%; font: 14px/1.4 system-ui, sans-serif; }
table.papers th, table.papers td { border-bottom: 1px solid var(--rule); padding: 0.4rem; text-align: left; vertical-align: top; }
table.papers img { max-width: 8rem; max-height: 6rem; }
.failed { color: #b91c1c; }
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
@media (max-width: 60rem) { .layout { grid-template-columns: 1fr; } nav.outline { position: static; } }
"""
