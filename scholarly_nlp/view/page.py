"""One analysed paper as a self-contained HTML page (``scholarly_nlp.render``).

The page is built from the Doc (its text and structure: title, authors, abstract, sections,
paragraphs, figures, footnotes, back matter, bibliography, citation markers) and from the
paper's analysis record (:func:`scholarly_nlp.analysis_record`: what the pipes found,
abstract roles, the central figure and figure scores, contributions and their paragraphs,
citation facets). Every text from the paper is escaped; the page has no script and loads
nothing: jumps are fragment links, highlighted as the page's ``:target``.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any, Iterable, Optional

from spacy.language import Language
from spacy.tokens import Doc, Span

from ..analysis import analysis_record
from .markup import Inline, mark_up
from .style import CSS, ROLE_COLOURS


def render(doc: Doc, nlp: Optional[Language] = None, *, record: Optional[dict] = None,
           image_base: Optional[Path] = None) -> str:
    """The HTML page of an analysed paper.

    ``record`` is the paper's analysis record; without it one is built with
    :func:`~scholarly_nlp.analysis_record` (pass the ``nlp`` that processed ``doc`` so that
    its pipes' findings are shown). Figure images are linked relative to ``image_base``
    (the folder the page is written to) when given, else by their path as read.
    """
    if record is None:
        record = analysis_record(doc, nlp)
    return _Page(doc, record, image_base).html()


def escape(value: Any) -> str:
    """HTML-escaped text (quotes too: safe in attribute values)."""
    return html.escape("" if value is None else str(value), quote=True)


class _Page:
    """Builds the page; every id it gives an element is derived from the doc, not the text."""

    def __init__(self, doc: Doc, record: dict, image_base: Optional[Path]) -> None:
        self.doc = doc
        self.record = record
        self.image_base = image_base
        self.bibliography: dict = doc._.bibliography or {}
        self.paragraph_ids = {(p.start_char, p.end_char): f"p{i}"
                              for i, p in enumerate(doc.spans.get("paragraphs", []))}
        # contributions whose sentence lies in one body paragraph: those can be marked there
        spans = list(doc.spans.get("paragraphs", []))
        self.contributions = [c for c in record.get("contributions") or [] if c.get("sentence") and any(
            p.start_char <= c["sentence"].get("start_char", -1) < c["sentence"].get("end_char", -1) <= p.end_char
            for p in spans)]

    # -- the page ------------------------------------------------------------------------
    def html(self) -> str:
        title = self.record.get("title") or self.doc._.paper_id or "Untitled paper"
        main = [self._front(title), self._abstract(), self._body(), self._figures(),
                self._contribution_list(), self._citances(), self._similar(), self._footnotes(),
                self._back_matter(), self._references()]
        return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                f"<title>{escape(title)}</title><style>{CSS}</style></head>"
                f"<body><div class=\"layout\">{self._outline()}"
                f"<main>{''.join(part for part in main if part)}</main></div></body></html>\n")

    def _front(self, title: str) -> str:
        authors = ", ".join(escape(a.get("name")) for a in self.doc._.authors or [] if a.get("name"))
        line = f"<p class=\"authors\">{authors}</p>" if authors else ""
        return f"<header><h1 id=\"title\">{escape(title)}</h1>{line}</header>"

    def _outline(self) -> str:
        items = [("abstract", "Abstract", 1)] if self.record.get("abstract_roles") else []
        for i, section in enumerate(self.doc._.sections):
            number = f"{section.number} " if section.number else ""
            items.append((f"s{i}", f"{number}{section.title}", max(1, section.level)))
        for anchor, label, present in (("figures", "Figures and tables", self.doc._.figures),
                                       ("contributions", "Contributions", self.contributions),
                                       ("citances", "Citances", self.record.get("citances")),
                                       ("similar", "Similar papers", self.record.get("similar")),
                                       ("references", "References", self.bibliography)):
            if present:
                items.append((anchor, label, 1))
        return f"<nav class=\"outline\" aria-label=\"Outline\">{_nested_list(items)}</nav>"

    def _abstract(self) -> str:
        sentences = self.record.get("abstract_roles") or []
        if not sentences:
            return ""
        parts = []
        for row in sentences:
            role = row.get("role")
            if role in ROLE_COLOURS:
                parts.append(f"<span class=\"role\" style=\"background:{ROLE_COLOURS[role]}\">"
                             f"{escape(row.get('text'))}<span class=\"role-label\">{escape(role)}</span></span>")
            else:
                parts.append(escape(row.get("text")))
        legend = ""
        if any(r.get("role") for r in sentences):
            keys = "".join(f"<span style=\"background:{colour}\">{role}</span>" for role, colour in ROLE_COLOURS.items())
            legend = f"<div class=\"legend\" aria-label=\"Sentence roles\">{keys}</div>"
        return (f"<section id=\"abstract\" aria-labelledby=\"abstract-h\"><h2 id=\"abstract-h\">Abstract</h2>"
                f"{legend}<p>{' '.join(parts)}</p></section>")

    def _body(self) -> str:
        out = []
        in_sections = {(p.start_char, p.end_char) for s in self.doc._.sections for p in s.paragraphs}
        loose = [p for p in self.doc.spans.get("paragraphs", []) if (p.start_char, p.end_char) not in in_sections]
        out.extend(self._paragraph(p) for p in loose)
        formulas = list(self.doc._.formulas or [])
        for i, section in enumerate(self.doc._.sections):
            level = min(5, 1 + max(1, section.level))
            number = f"<span class=\"num\">{escape(section.number)}</span>" if section.number else ""
            # paragraphs and display formulas in text order
            parts = [(p.start_char, self._paragraph(p)) for p in section.paragraphs]
            parts += [(f.span.start_char, self._formula(f)) for f in formulas
                      if section.span.start_char <= f.span.start_char < section.span.end_char
                      and not any(p.start_char <= f.span.start_char < p.end_char for p in section.paragraphs)]
            content = "".join(html for _, html in sorted(parts, key=lambda part: part[0]))
            out.append(f"<section id=\"s{i}\"><h{level}>{number}{escape(section.title)}</h{level}>{content}</section>")
        return "".join(out)

    def _formula(self, formula) -> str:
        label = f" <span class=\"num\">({escape(formula.label)})</span>" if formula.label else ""
        text = formula.span.text
        if formula.label and text.rstrip().endswith(f"({formula.label})"):
            text = text.rstrip()[: -len(formula.label) - 2].rstrip()  # the label is shown apart
        return f"<div class=\"formula\" id=\"eq-{escape(formula.id)}\"><code>{escape(text)}</code>{label}</div>"

    def _paragraph(self, paragraph: Span) -> str:
        pid = self.paragraph_ids.get((paragraph.start_char, paragraph.end_char), "")
        inlines = list(self._markers(paragraph))
        for n, contribution in enumerate(self.contributions):
            sentence = contribution["sentence"]
            links = [self.paragraph_ids.get((p.get("start_char"), p.get("end_char"))) for p in contribution.get("paragraphs") or []]
            links = [link for link in links if link]
            jump = (f"<a class=\"jump\" href=\"#{links[0]}\" aria-label=\"Paragraph that explains this "
                    f"contribution\">&rarr;&para;</a>") if links else ""
            inlines.append(Inline(sentence["start_char"], sentence["end_char"],
                                  f"<mark class=\"contribution\" id=\"c{n}\" tabindex=\"-1\">", "</mark>", jump))
        backs = "".join(f"<a class=\"back\" href=\"#c{n}\" aria-label=\"Back to contribution {n + 1}\">&larr;c{n + 1}</a>"
                        for n, contribution in enumerate(self.contributions)
                        if (contribution.get("paragraphs") or [{}])[0].get("start_char") == paragraph.start_char
                        and pid)
        text = mark_up(paragraph.text, paragraph.start_char, inlines)
        return f"<p id=\"{pid}\" tabindex=\"-1\">{text}{backs}</p>" if pid else f"<p>{text}</p>"

    def _markers(self, span: Span) -> Iterable[Inline]:
        """Citation markers (with their entries as tooltips) and figure mentions inside ``span``."""
        for marker in _inside(self.doc.spans.get("citations", []), span):
            bib_id = marker.kb_id_
            entry = self.bibliography.get(bib_id) if bib_id else None
            if entry is None:
                yield Inline(marker.start_char, marker.end_char, "<span class=\"cite unlinked\">", "</span>")
                continue
            yield Inline(marker.start_char, marker.end_char,
                         f"<a class=\"cite\" href=\"#ref-{escape(bib_id)}\">",
                         f"<span class=\"tip\" role=\"tooltip\">{escape(_entry_text(entry))}</span></a>")
        for group, prefix, css in (("figure_refs", "", "figref"), ("formula_refs", "eq-", "figref"),
                                   ("footnote_refs", "fn-", "fnref")):
            for mention in _inside(self.doc.spans.get(group, []), span):
                if mention.kb_id_:
                    yield Inline(mention.start_char, mention.end_char,
                                 f"<a class=\"{css}\" href=\"#{prefix}{escape(mention.kb_id_)}\">", "</a>")

    def _figures(self) -> str:
        figures = self.doc._.figures
        if not figures:
            return ""
        scored = {f.get("id"): f for f in self.record.get("figures") or [] if isinstance(f, dict)}
        central = self.record.get("central_figure")
        out = []
        for figure in figures:
            info = scored.get(figure.id, {})
            badges = "<span class=\"badge central\">central figure</span>" if figure.id == central else ""
            if info.get("score") is not None:
                badges += (f"<span class=\"score\">score {float(info['score']):.4g}"
                           f"{', rank ' + escape(info['rank']) if info.get('rank') is not None else ''}</span>")
            why = _signal_text(info.get("signals"))
            if why:
                badges += f"<span class=\"why\">{escape(why)}</span>"
            image = self._image(figure)
            css = " class=\"central\"" if figure.id == central else ""
            caption = figure.caption_text
            label = f"{figure.kind.title()} {figure.label}".strip()
            shown_label = "" if caption.lower().startswith(label.lower()) else f"<strong>{escape(label)}</strong> "
            out.append(f"<figure id=\"{escape(figure.id)}\"{css}>{image}<figcaption>{shown_label}"
                       f"{escape(caption)}<br>{badges}</figcaption></figure>")
        return f"<section id=\"figures\"><h2>Figures and tables</h2>{''.join(out)}</section>"

    def _image(self, figure) -> str:
        if not figure.image_path:
            return ""
        alt = figure.caption_text or f"{figure.kind} {figure.label}"
        src = relative_link(figure.image_path, self.image_base)
        return f"<img src=\"{escape(src)}\" alt=\"{escape(alt)}\" loading=\"lazy\">"

    def _contribution_list(self) -> str:
        if not self.contributions:
            return ""
        items = []
        for n, contribution in enumerate(self.contributions):
            links = []
            for paragraph in contribution.get("paragraphs") or []:
                pid = self.paragraph_ids.get((paragraph.get("start_char"), paragraph.get("end_char")))
                if pid:
                    score = paragraph.get("score")
                    shown = f" ({float(score):.2f})" if isinstance(score, (int, float)) else ""
                    links.append(f"<a href=\"#{pid}\">{escape((paragraph.get('text_start') or pid)[:60])}&hellip;{shown}</a>")
            items.append(f"<li><a href=\"#c{n}\">{escape(contribution['sentence'].get('text'))}</a>"
                         f"<br>{' &middot; '.join(links)}</li>")
        return f"<section id=\"contributions\"><h2>Contributions</h2><ol>{''.join(items)}</ol></section>"

    def _citances(self) -> str:
        citances = self.record.get("citances") or []
        if not citances:
            return ""
        items = []
        for citance in citances:
            badges = "".join(f"<span class=\"badge\">{escape(f)}</span>" for f in citance.get("facets") or [])
            refs = ", ".join(f"<a href=\"#ref-{escape(b)}\">{escape(b)}</a>" for b in citance.get("bib_ids") or [])
            items.append(f"<li>{badges}{escape(citance.get('text'))} {refs}</li>")
        return f"<section id=\"citances\"><h2>Citances</h2><ul>{''.join(items)}</ul></section>"

    def _similar(self) -> str:
        """The papers of a corpus most like this one, per aspect (``analyze --similar``)."""
        panel = self.record.get("similar")
        if not isinstance(panel, dict) or not panel:
            return ""
        out = []
        for aspect, hits in panel.items():
            items = []
            for hit in hits or []:
                scores = " ".join(f"<span class=\"badge\">{escape(name)} {float(value):.2f}</span>"
                                  for name, value in (hit.get("aspect_scores") or {}).items())
                match = hit.get("explanation") or {}
                why = ""
                if match.get("candidate_sentence"):
                    similarity = match.get("similarity")
                    cos = f" (cos {float(similarity):.2f})" if isinstance(similarity, (int, float)) else ""
                    why = (f"<blockquote><p><em>this paper:</em> {escape(match.get('query_sentence'))}</p>"
                           f"<p><em>that paper{escape(cos)}:</em> {escape(match.get('candidate_sentence'))}</p>"
                           "</blockquote>")
                items.append(f"<li><strong>{escape(hit.get('title') or hit.get('paper_id'))}</strong> "
                             f"<small>{escape(hit.get('paper_id'))}</small><br>{scores}{why}</li>")
            out.append(f"<h3>{escape(aspect.title())}</h3><ol>{''.join(items)}</ol>" if items else "")
        return f"<section id=\"similar\"><h2>Similar papers</h2>{''.join(out)}</section>"

    def _footnotes(self) -> str:
        notes = self.doc._.footnotes
        if not notes:
            return ""
        items = "".join(f"<li id=\"fn-{escape(n.id)}\">{escape(n.span.text)}</li>" for n in notes)
        return f"<section id=\"footnotes\"><h2>Footnotes</h2><ol class=\"notes\">{items}</ol></section>"

    def _back_matter(self) -> str:
        parts = self.doc._.back_matter
        if not parts:
            return ""
        out = "".join(f"<h3>{escape(part.title or part.type)}</h3>"
                      + "".join(f"<p>{escape(p.text)}</p>" for p in part.paragraphs) for part in parts)
        return f"<section id=\"back-matter\"><h2>Back matter</h2>{out}</section>"

    def _references(self) -> str:
        if not self.bibliography:
            return ""
        items = "".join(f"<li id=\"ref-{escape(bib_id)}\">{escape(_entry_text(entry))}</li>"
                        for bib_id, entry in self.bibliography.items())
        return f"<section id=\"references\"><h2>References</h2><ol class=\"refs\">{items}</ol></section>"


def relative_link(path: str, base: Optional[Path]) -> str:
    """``path`` as a link from a page in the folder ``base``: relative when it lies below
    ``base``, else as given."""
    target = Path(path)
    if base is not None:
        try:
            return target.resolve().relative_to(base.resolve()).as_posix()
        except ValueError:
            pass
    return target.as_posix()


def _inside(spans: Iterable[Span], outer: Span) -> list[Span]:
    return [s for s in spans if outer.start_char <= s.start_char and s.end_char <= outer.end_char]


def _entry_text(entry: dict) -> str:
    """A bibliography entry as one line: authors (year). Title. Venue."""
    authors = entry.get("authors") or []
    names = ", ".join(authors[:3]) + (" et al." if len(authors) > 3 else "")
    year = f" ({entry['year']})" if entry.get("year") else ""
    parts = [f"{names}{year}".strip(), entry.get("title") or "", entry.get("venue") or ""]
    return ". ".join(p.strip().rstrip(".") for p in parts if p and p.strip()) + "."


def _nested_list(items: list[tuple[str, str, int]]) -> str:
    """``(anchor, label, level)`` items as nested ordered lists of links."""
    out, depth = [], 0
    for anchor, label, level in items:
        level = max(1, min(level, depth + 1))
        if level > depth:
            out.append("<ol>" * (level - depth))
        else:
            out.append("</li>" + "</ol></li>" * (depth - level))
        depth = level
        out.append(f"<li><a href=\"#{escape(anchor)}\">{escape(label)}</a>")
    if depth:
        out.append("</li>" + "</ol></li>" * (depth - 1) + "</ol>")
    return "".join(out) if items else ""


def _signal_text(signals) -> str:
    """The signals behind a figure's score, in words ("caption match 2.31, referred to 3 times");
    "" when the record has none. Signals the page does not know are shown by name."""
    if not isinstance(signals, dict):
        return ""
    parts = []
    for name, value in signals.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        if name == "mentions":
            parts.append(f"referred to {value:.0f} time{'' if value == 1 else 's'}")
        elif name == "caption":
            parts.append(f"caption match {value:.2f}")
        elif name == "context":
            parts.append(f"referring text {value:.2f}")
        elif name == "caption_dense":
            parts.append(f"caption-abstract cosine {value:.2f}")
        else:
            parts.append(f"{name} {value:.2f}")
    return ", ".join(parts)
