"""GROBID TEI XML reader (GROBID 0.5.x to 0.8.x output).

Reads the header (title, abstract), the body's nested ``div``s with ``head@n`` section
numbers, paragraphs with their ``<s>`` sentences when GROBID gave them, inline
``ref@type=bibr|figure|table`` (with or without ``target``), ``figure`` floats
(``@type=table`` for tables) with ``head``/``label``/``figDesc``/``coords``, and the
``listBibl`` bibliography. The XML parser never resolves entities, never loads a DTD and
never touches the network, so TEI from an untrusted source is safe to read.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Optional, Union

from lxml import etree

from ..errors import EmptyDocumentError, InputError, MalformedInputError, UnsafeInputError
from ..paper import BibEntry, Block, FigureInfo, InlineRef, Paper, Section
from ..text.mentions import MENTION_PATTERN, resolve_mention
from ..text.normalize import TextAccumulator, collapse_whitespace

TEI_NS = "http://www.tei-c.org/ns/1.0"
XML_ID = "{http://www.w3.org/XML/1998/namespace}id"
NS = {"t": TEI_NS}
_REF_KINDS = {"bibr": "bibr", "figure": "figure", "table": "table", "formula": "formula"}
# Elements whose text is not part of the running prose of a paragraph.
_SKIP_INLINE = {"note", "figure", "table"}
_ENTITY_DECL = re.compile(rb"<!ENTITY", re.IGNORECASE)
_DOCTYPE = re.compile(rb"<!DOCTYPE", re.IGNORECASE)


def _parser() -> etree.XMLParser:
    # No entity resolution, no DTD, no network, libxml2's default size limits (huge_tree off):
    # external-entity and entity-expansion attacks have nothing to work with.
    return etree.XMLParser(
        resolve_entities=False, load_dtd=False, no_network=True, huge_tree=False, remove_comments=True
    )


def read_tei(path: Union[str, Path], *, paper_id: Optional[str] = None) -> Paper:
    """Read a GROBID TEI file into a :class:`Paper`; errors name the file and the reason."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(path, f"cannot be read ({exc.strerror or exc})") from exc
    return parse_tei(data, source=str(path), paper_id=paper_id or tei_stem(path))


def tei_stem(path: Union[str, Path]) -> str:
    """The paper id of a TEI file name: ``D14-1003.tei.xml`` -> ``D14-1003``."""
    name = Path(path).name
    for suffix in (".tei.xml", ".grobid.tei.xml", ".xml", ".tei"):
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return Path(path).stem


def parse_tei(data: Union[bytes, str], source: Optional[str] = None, paper_id: Optional[str] = None) -> Paper:
    """Parse GROBID TEI from bytes or text.

    Raises EmptyDocumentError for empty input or a TEI without title, abstract and body
    text, UnsafeInputError for DTD entity declarations, MalformedInputError for XML that
    is not well-formed or not TEI.
    """
    if isinstance(data, str):
        data = data.encode("utf-8")
    if not data.strip():
        raise EmptyDocumentError(source, "is empty")
    if _DOCTYPE.search(data) and _ENTITY_DECL.search(data):
        raise UnsafeInputError(source, "declares XML entities in a DTD, which are refused (entity expansion / external entities)")
    try:
        root = etree.fromstring(data, parser=_parser())
    except etree.XMLSyntaxError as exc:
        raise MalformedInputError(source, f"is not well-formed XML ({exc})") from exc
    if etree.QName(root).localname != "TEI":
        raise MalformedInputError(source, f"is XML but not TEI (root element <{etree.QName(root).localname}>)")
    paper = _TeiBuilder(root, source, paper_id or (tei_stem(source) if source else "paper")).build()
    if not any(b.kind in ("abstract", "paragraph") for b in paper.blocks) and not paper.title:
        raise EmptyDocumentError(source, "has no title, abstract or body text")
    paper.check()
    return paper


class _TeiBuilder:
    """Walks one TEI tree and fills a Paper."""

    def __init__(self, root: etree._Element, source: Optional[str], paper_id: str):
        self.root = root
        self.paper = Paper(paper_id=paper_id, source=source, reader="tei")
        self._figure_labels: list[tuple[str, str, str]] = []

    def build(self) -> Paper:
        """Fill the paper: figures first (to resolve untargeted refs), then text in reading order."""
        self._read_figures()
        self._read_bibliography()
        self._read_title()
        self._read_abstract()
        body = self.root.find("t:text/t:body", NS)
        if body is not None:
            self._read_container(body, level=1, parent=None)
        for annex in self.root.iterfind("t:text/t:back/t:div[@type='annex']", NS):
            self._read_container(annex, level=1, parent=None)
        self._read_captions()
        return self.paper

    # -- header -----------------------------------------------------------------------
    def _read_title(self) -> None:
        title_el = self.root.find("t:teiHeader/t:fileDesc/t:titleStmt/t:title[@type='main']", NS)
        if title_el is None:
            title_el = self.root.find("t:teiHeader/t:fileDesc/t:titleStmt/t:title", NS)
        if title_el is None:
            title_el = self.root.find("t:teiHeader/t:fileDesc/t:sourceDesc//t:analytic/t:title", NS)
        title = collapse_whitespace("".join(title_el.itertext())) if title_el is not None else ""
        if title:
            self.paper.blocks.append(Block(kind="title", text=title))

    def _read_abstract(self) -> None:
        abstract = self.root.find("t:teiHeader/t:profileDesc/t:abstract", NS)
        if abstract is None:
            return
        paragraphs = abstract.findall(".//t:p", NS)
        if not paragraphs and collapse_whitespace("".join(abstract.itertext())):
            paragraphs = [abstract]
        for p in paragraphs:
            block = self._paragraph_block(p, kind="abstract", section=None)
            if block is not None:
                self.paper.blocks.append(block)

    # -- body -------------------------------------------------------------------------
    def _read_container(self, container: etree._Element, level: int, parent: Optional[int]) -> None:
        """Read paragraphs and divs of ``body`` or a ``div``, recursing into nested divs."""
        current = parent
        for child in container:
            if not isinstance(child.tag, str):
                continue
            name = etree.QName(child).localname
            if name == "div":
                current = self._read_div(child, level, parent, current)
            elif name == "p":
                self._append_paragraph(child, current)

    def _read_div(self, div: etree._Element, level: int, parent: Optional[int], current: Optional[int]) -> Optional[int]:
        """Read one div; returns the section index later headless siblings continue."""
        head = div.find("t:head", NS)
        title = collapse_whitespace("".join(head.itertext())) if head is not None else ""
        if title:
            number = (head.get("n") or "").strip().rstrip(".") or None
            depth = level if number is None else max(level, number.count(".") + 1)
            self.paper.sections.append(Section(title=title, number=number, level=depth, parent=parent))
            index = len(self.paper.sections) - 1
            self.paper.blocks.append(Block(kind="heading", text=title, section=index))
            self._read_container(div, level=depth + 1, parent=index)
            return index
        # GROBID splits a section at page breaks and floats into headless divs: continue it.
        if current is None:
            self.paper.sections.append(Section(title="", number=None, level=level, parent=parent))
            current = len(self.paper.sections) - 1
        self._read_container(div, level=level + 1, parent=current)
        return current

    def _append_paragraph(self, p: etree._Element, section: Optional[int]) -> None:
        if section is None:
            self.paper.sections.append(Section(title="", number=None, level=1))
            section = len(self.paper.sections) - 1
        block = self._paragraph_block(p, kind="paragraph", section=section)
        if block is not None:
            self.paper.blocks.append(block)

    def _paragraph_block(self, p: etree._Element, kind: str, section: Optional[int]) -> Optional[Block]:
        """Flatten a ``p`` into text, inline refs and (when present) ``<s>`` sentence offsets."""
        acc = TextAccumulator()
        refs: list[InlineRef] = []
        sentences: list[tuple[int, int]] = []
        self._walk_inline(p, acc, refs, sentences)
        text = acc.text()
        if not text:
            return None
        return Block(kind=kind, text=text, refs=refs, sentences=sentences or None, section=section)

    def _walk_inline(self, el: etree._Element, acc: TextAccumulator, refs: list[InlineRef], sentences: list) -> None:
        acc.add(el.text or "")
        for child in el:
            if isinstance(child.tag, str):
                name = etree.QName(child).localname
                if name in _SKIP_INLINE:
                    pass
                elif name == "s":
                    acc.mark_break()
                    start = acc.position
                    self._walk_inline(child, acc, refs, sentences=[])
                    if acc.end > start:
                        sentences.append((start, acc.end))
                    acc.mark_break()
                elif name == "ref":
                    self._add_ref(child, acc, refs)
                else:
                    self._walk_inline(child, acc, refs, sentences)
            acc.add(child.tail or "")

    def _add_ref(self, ref: etree._Element, acc: TextAccumulator, refs: list[InlineRef]) -> None:
        start = acc.position
        acc.add("".join(ref.itertext()))
        end = acc.end
        if end <= start:
            return
        kind = _REF_KINDS.get(ref.get("type") or "", "other")
        target = (ref.get("target") or "").lstrip("#") or None
        if kind in ("figure", "table"):
            target = self._resolve_figure_ref(target, acc.text()[start:end], kind)
        elif kind == "bibr" and target is not None and target not in self.paper.bibliography:
            target = None
        refs.append(InlineRef(start=start, end=end, kind=kind, target=target))

    def _resolve_figure_ref(self, target: Optional[str], text: str, kind: str) -> Optional[str]:
        known = {fig_id for fig_id, _, _ in self._figure_labels}
        if target in known:
            return target
        return resolve_mention(text, self._figure_labels, kind_hint=kind)

    # -- floats -----------------------------------------------------------------------
    def _read_figures(self) -> None:
        text = self.root.find("t:text", NS)
        if text is None:
            return
        for n, fig in enumerate(text.iter(f"{{{TEI_NS}}}figure")):
            if fig.getparent() is not None and etree.QName(fig.getparent()).localname == "figure":
                continue
            kind = "table" if (fig.get("type") or "").lower() == "table" else "figure"
            fig_id = fig.get(XML_ID) or f"{'tab' if kind == 'table' else 'fig'}_auto{n}"
            head = collapse_whitespace("".join(fig.find("t:head", NS).itertext())) if fig.find("t:head", NS) is not None else ""
            label_el = fig.find("t:label", NS)
            label = collapse_whitespace(label_el.text or "") if label_el is not None and label_el.text else ""
            label = label or _label_from_caption_start(head) or _label_from_caption_start(_caption_text(fig))
            info = FigureInfo(id=fig_id, kind=kind, label=label, head=head)
            info.page, info.bbox = _coords(fig.get("coords") or _graphic_coords(fig))
            self.paper.figures.append(info)
            self._figure_labels.append((fig_id, kind, label))

    def _read_captions(self) -> None:
        text = self.root.find("t:text", NS)
        if text is None:
            return
        by_id = {f.id: f for f in self.paper.figures}
        seen = set()
        for n, fig in enumerate(text.iter(f"{{{TEI_NS}}}figure")):
            if fig.getparent() is not None and etree.QName(fig.getparent()).localname == "figure":
                continue
            kind = "table" if (fig.get("type") or "").lower() == "table" else "figure"
            fig_id = fig.get(XML_ID) or f"{'tab' if kind == 'table' else 'fig'}_auto{n}"
            if fig_id in seen or fig_id not in by_id:
                continue
            seen.add(fig_id)
            caption = _caption_text(fig)
            if caption:
                self.paper.blocks.append(Block(kind="caption", text=caption, figure_id=fig_id))

    # -- bibliography -----------------------------------------------------------------
    def _read_bibliography(self) -> None:
        for n, bibl in enumerate(self.root.iterfind("t:text/t:back//t:listBibl/t:biblStruct", NS)):
            bib_id = bibl.get(XML_ID) or f"b{n}"
            self.paper.bibliography[bib_id] = _bib_entry(bibl, bib_id)


def _label_from_caption_start(text: str) -> str:
    """The label when a caption or head opens with "Figure 3" / "Table 2", else ""."""
    match = MENTION_PATTERN.match(text or "")
    return match.group("label") if match else ""


def _caption_text(fig: etree._Element) -> str:
    """figDesc, else the table note (GROBID 0.6+ puts some table captions there).

    A bare head ("Table 2 :") is not a caption: GROBID leaves figDesc empty when it lost it.
    """
    for tag in ("t:figDesc", "t:note"):
        el = fig.find(tag, NS)
        if el is not None:
            text = collapse_whitespace("".join(el.itertext()))
            if text:
                return text
    return ""


def _graphic_coords(fig: etree._Element) -> str:
    graphic = fig.find("t:graphic", NS)
    return graphic.get("coords", "") if graphic is not None else ""


def _coords(coords: str) -> tuple[Optional[int], Optional[tuple[float, float, float, float]]]:
    """GROBID ``coords="page,x,y,w,h;..."`` -> (page, (x0, y0, x1, y1)) of the first box."""
    if not coords:
        return None, None
    try:
        page, x, y, w, h = (float(v) for v in coords.split(";")[0].split(",")[:5])
    except ValueError:
        return None, None
    return int(page), (x, y, x + w, y + h)


def _bib_entry(bibl: etree._Element, bib_id: str) -> BibEntry:
    analytic = bibl.find("t:analytic", NS)
    monogr = bibl.find("t:monogr", NS)

    def text_of(el: Optional[etree._Element]) -> str:
        return collapse_whitespace("".join(el.itertext())) if el is not None else ""

    title = text_of(analytic.find("t:title", NS)) if analytic is not None else ""
    venue = ""
    if monogr is not None:
        monogr_title = text_of(monogr.find("t:title", NS))
        if title:
            venue = monogr_title
        else:
            title = monogr_title
        if not venue:
            venue = text_of(monogr.find("t:meeting", NS))
    authors_root = analytic if analytic is not None and analytic.find("t:author", NS) is not None else monogr
    authors = []
    if authors_root is not None:
        for pers in authors_root.iterfind("t:author/t:persName", NS):
            names = [collapse_whitespace(f.text or "") for f in pers.iterfind("t:forename", NS)]
            surname = text_of(pers.find("t:surname", NS))
            full = " ".join(n for n in names + [surname] if n)
            if full:
                authors.append(full)
    year = None
    date = bibl.find(".//t:imprint/t:date", NS)
    if date is not None:
        match = re.search(r"\d{4}", date.get("when") or date.text or "")
        year = match.group(0) if match else None
    doi_el = bibl.find(".//t:idno[@type='DOI']", NS)
    doi = collapse_whitespace(doi_el.text or "") if doi_el is not None and doi_el.text else None
    return BibEntry(id=bib_id, title=title, authors=authors, year=year, venue=venue, doi=doi)
