"""Assembly (last pass): units and captions to the :class:`Paper`.

Consumes the classification's units, sections and reference-list blocks and the captions;
produces the Paper's blocks (dehyphenated text; paragraphs with their figure mentions and
citation markers linked to the bibliography), its bibliography, and one :class:`FigureInfo`
per caption.
"""

from __future__ import annotations

import re
import warnings

from ...paper import BibEntry, Block, FigureInfo, InlineRef, Paper, Section
from .bibliography import numbered_labels, read_bibliography
from .citations import CitationLinker, Marker
from .dehyphenation import Dehyphenator
from .figure_mentions import bare_formula_refs, figure_refs, formula_refs
from .model import SUPERSCRIPT_TRAIL, Caption, Page, Unit, VBlock
from .patterns import FOOTNOTE_MARK
from .reference_parser import ParsedReference


def assemble_paper(
    paper_id: str,
    source: str,
    pages: list[Page],
    units: list[Unit],
    sections: list[Section],
    reference_blocks: list[VBlock],
    captions: list[Caption],
    list_printed: bool = False,
) -> Paper:
    """The Paper: text blocks from the units (empty ones dropped), then one caption block
    and one FigureInfo per caption; the bibliography from the reference list; paragraphs
    carry their inline references, citation markers linked to the bibliography."""
    dehyphenator = Dehyphenator(pages)
    paper = Paper(paper_id=paper_id, source=source, reader="pdf", sections=sections)
    targets = _add_figures(paper, captions)
    entries = read_bibliography(reference_blocks, dehyphenator)
    paper.bibliography = {f"b{i}": _bib_entry(f"b{i}", e) for i, e in enumerate(entries)}
    texts = [_clean_text(dehyphenator.join(u.lines)) for u in units]
    raised = [_superscripts(u, t) if u.kind == "paragraph" else [] for u, t in zip(units, texts)]
    paragraphs = [(t, r) for t, r, u in zip(texts, raised, units) if u.kind == "paragraph"]
    linker = CitationLinker(entries, numbered_labels(entries), paragraphs)
    footnotes = _footnote_blocks(units, texts)
    formula_ids = {i: f"formula_{k}" for k, i in enumerate(i for i, u in enumerate(units) if u.kind == "formula")}
    for index, formula_id in formula_ids.items():
        if units[index].label:  # the first formula printing a number is the one it names
            targets.setdefault(("formula", units[index].label.lower()), formula_id)
    # a footnote is printed on the page that marks it: (mark, page) -> footnote id
    notes: dict[tuple[str, int], str] = {}
    for index, note in footnotes.items():
        notes.setdefault((note.label, units[index].lines[0].page), note.id)
    text_blocks = [footnotes[i] if i in footnotes else _unit_block(u, t, r, targets, linker, notes)
                   for i, (u, t, r) in enumerate(zip(units, texts, raised))]
    for index, formula_id in formula_ids.items():
        text_blocks[index].id, text_blocks[index].label = formula_id, units[index].label
    caption_blocks = [
        Block("caption", _clean_text(dehyphenator.join(c.block.lines)), figure_id=f.id)
        for c, f in zip(captions, paper.figures)
    ]
    paper.blocks = [b for b in text_blocks if b.text] + caption_blocks
    _warn_about_links(paper, bool(reference_blocks) or list_printed, linker)
    return paper


def _warn_about_links(paper: Paper, list_printed: bool, linker: CitationLinker) -> None:
    """One warning naming the file when its citations cannot be linked as printed: a
    reference list with no readable entry (an image, or a layout not understood), most
    markers matching no entry, or an entry number printed twice (the first one is linked)."""
    markers = [r for b in paper.blocks for r in b.refs if r.kind == "bibr"]
    unlinked = sum(1 for r in markers if r.target is None)
    problems = []
    if list_printed and not paper.bibliography:
        problems.append("its reference list has no entry that could be read (an image, or a layout not understood)")
    elif paper.bibliography and markers and unlinked > len(markers) / 2:
        problems.append(f"{unlinked} of its {len(markers)} citation markers match no bibliography entry")
    if linker.duplicate_labels:
        numbers = ", ".join(sorted(set(linker.duplicate_labels), key=int)[:5])
        problems.append(f"reference number(s) {numbers} are printed twice; markers link to the first")
    if problems:
        warnings.warn(f"{paper.source}: " + "; ".join(problems) + "; unlinked citation markers keep no target",
                      stacklevel=2)


def _bib_entry(bib_id: str, entry: ParsedReference) -> BibEntry:
    return BibEntry(id=bib_id, title=entry.title, authors=entry.authors, year=entry.year,
                    venue=entry.venue, doi=entry.doi)


def _add_figures(paper: Paper, captions: list[Caption]) -> dict[tuple[str, str], str]:
    """One FigureInfo per caption (fig_N / tab_N in caption order); returns (kind, label) -> id."""
    counters = {"figure": 0, "table": 0}
    targets: dict[tuple[str, str], str] = {}
    for caption in captions:
        prefix = "fig" if caption.kind == "figure" else "tab"
        fig_id = f"{prefix}_{counters[caption.kind]}"
        counters[caption.kind] += 1
        head = f"{'Figure' if caption.kind == 'figure' else 'Table'} {caption.label}"
        paper.figures.append(
            FigureInfo(
                id=fig_id,
                kind=caption.kind,
                label=caption.label,
                head=head,
                page=caption.block.page + 1,
                bbox=caption.bbox,
            )
        )
        targets.setdefault((caption.kind, caption.label.lower()), fig_id)
    return targets


def _superscripts(unit: Unit, text: str) -> list[tuple[int, int]]:
    """(start, end) in ``text`` of each run of raised digits the unit's words carry."""
    spans = []
    cursor = 0
    for line in unit.lines:
        for word in line.words:
            if word.sup < 0:
                continue
            at = text.find(word.text, cursor)
            if at < 0:
                continue  # the word was joined across a line break; its run is not placed
            spans.append((at + word.sup, at + len(word.text.rstrip(SUPERSCRIPT_TRAIL))))
            cursor = at + len(word.text)
    return spans


def _footnote_blocks(units: list[Unit], texts: list[str]) -> dict[int, Block]:
    """Unit index -> footnote Block (``foot_0``, ``foot_1``, ...; the mark is its label)."""
    blocks = {}
    for index, (unit, text) in enumerate(zip(units, texts)):
        if unit.kind != "footnote":
            continue
        mark = _FOOTNOTE_MARK.match(text)
        label, body = (mark.group("mark"), text[mark.end():]) if mark else ("", text)
        blocks[index] = Block("footnote", body, section=unit.section, id=f"foot_{len(blocks)}", label=label)
    return blocks


def _unit_block(unit: Unit, text: str, raised: list[tuple[int, int]], targets: dict,
                linker: CitationLinker, notes: dict[tuple[str, int], str]) -> Block:
    """A Block from a unit; paragraphs get their figure, citation and footnote references
    (a raised number that cites no entry and names a footnote on a page of the paragraph
    points to it)."""
    block = Block(unit.kind, text, section=unit.section)
    if unit.kind == "paragraph":
        figure_markers = [Marker(r.start, r.end, [r]) for r in figure_refs(text, targets) + formula_refs(text, targets)]
        pages = sorted({line.page for line in unit.lines})
        note_markers = []
        for s, e in raised:
            note = next((notes[text[s:e], page] for page in pages if (text[s:e], page) in notes), None)
            if note is not None:
                note_markers.append(Marker(s, e, [InlineRef(s, e, "footnote", note)]))
        # citations first: where both read a raised number, it is a citation
        markers = _without_overlaps(figure_markers + linker.markers(text, raised))
        markers = _without_overlaps(markers + [m for m in note_markers
                                               if not any(k.start < m.end and m.start < k.end for k in markers)])
        formula_markers = [Marker(r.start, r.end, [r]) for r in bare_formula_refs(text, targets)]
        markers = _without_overlaps(markers + [m for m in formula_markers
                                               if not any(k.start < m.end and m.start < k.end for k in markers)])
        block.refs = [ref for marker in markers for ref in marker.refs]
    return block


def _without_overlaps(markers: list[Marker]) -> list[Marker]:
    """Markers sorted by position; of overlapping ones the earlier (then longer) is kept."""
    kept: list[Marker] = []
    for marker in sorted(markers, key=lambda m: (m.start, -(m.end - m.start))):
        if not kept or marker.start >= kept[-1].end:
            kept.append(marker)
    return kept


_FOOTNOTE_MARK = re.compile(rf"^(?P<mark>{FOOTNOTE_MARK})\s*")


def _clean_text(text: str) -> str:
    """Runs of white space folded to one space, ends stripped."""
    return re.sub(r"\s+", " ", text).strip()
