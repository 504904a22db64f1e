"""GROBID TEI XML reader (GROBID 0.5.x to 0.8.x output).

Reads the header (title, abstract), the body's nested ``div``s with ``head@n`` section
numbers, paragraphs with their ``<s>`` sentences when GROBID gave them, inline
``ref@type=bibr|figure|table`` (with or without ``target``), ``figure`` floats
(``@type=table`` for tables) with ``head``/``label``/``figDesc``/``coords``, and the
``listBibl`` bibliography. The XML parser never resolves entities, never loads a DTD and
never touches the network, so TEI from an untrusted source is safe to read; a DTD that
declares entities is refused in any encoding (UTF-16 and UTF-32 included). Damaged but
harmless details do not cost the paper: a ``coords`` value that is not five sane numbers is
dropped, and an ``xml:id`` used twice is a warning.
"""

from __future__ import annotations

import codecs
import math
import re
import warnings
from collections import Counter
from pathlib import Path
from typing import Optional, Union

from lxml import etree

from ..errors import EmptyDocumentError, InputError, MalformedInputError, UnsafeInputError
from ..paper import BODY, BibEntry, Block, FigureInfo, InlineRef, Paper, Section
from ..text.drop_caps import word_counts
from ..text.mentions import MENTION_PATTERN, FigureLabels
from ..text.normalize import TextAccumulator, collapse_whitespace
from ..text.running_heads import (
    only_furniture_left, prints_doi, prints_title_foot, running_head_spans, running_title,
)
from .cuts import cut_block, cut_text
from .limits import ReadLimits, check_input_file
from .tei_authors import person_name, read_header_authors
from .tei_parts import (
    NOT_PARAGRAPH_TEXT,
    back_matter_kind,
    bib_year,
    formula_label,
    grobid_version,
    introduction_in_abstract,
    is_drop_cap,
    is_supplementary_mention,
    join_split_drop_cap,
    looks_like_venue,
    split_run_in_introduction,
    table_caption_from_cells,
)

TEI_NS = "http://www.tei-c.org/ns/1.0"
XML_ID = "{http://www.w3.org/XML/1998/namespace}id"
NS = {"t": TEI_NS}
_REF_KINDS = {"bibr": "bibr", "figure": "figure", "table": "table", "formula": "formula", "foot": "footnote"}
# <back> divs that are back matter by their type; "annex" divs are classified by their head.
_BACK_DIV_TYPES = {"acknowledgement", "funding", "availability"}
_ENTITY_DECL = re.compile(rb"<!ENTITY", re.IGNORECASE)
_DOCTYPE = re.compile(rb"<!DOCTYPE", re.IGNORECASE)
_ENTITY_DECL_TEXT = re.compile(r"<!ENTITY", re.IGNORECASE)
_DOCTYPE_TEXT = re.compile(r"<!DOCTYPE", re.IGNORECASE)
# Byte order marks, longest first (the UTF-32-LE mark starts with the UTF-16-LE one).
_BOMS = ((codecs.BOM_UTF32_BE, "utf-32-be"), (codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF8, "utf-8"),
         (codecs.BOM_UTF16_BE, "utf-16-be"), (codecs.BOM_UTF16_LE, "utf-16-le"))
# Without a mark, the first four bytes of "<?xm" tell a wide encoding (XML 1.0, appendix F).
_WIDE_STARTS = ((b"\x00\x00\x00<", "utf-32-be"), (b"<\x00\x00\x00", "utf-32-le"), (b"\x00<\x00?", "utf-16-be"),
                (b"<\x00?\x00", "utf-16-le"))
_DECLARED_ENCODING = re.compile(rb"<\?xml[^>]*?encoding\s*=\s*[\"']([A-Za-z0-9._:-]+)[\"']")
# "(3)" printed in a formula's text, between whitespace or at an end; its label as an index key.
_PRINTED_LABEL = re.compile(r"(?:^|\s)\(([^\s()]+)\)(?=\s|$)")
# Labels the index holds exactly: printable ASCII without parentheses (others are scanned for).
_PRINTED_LABEL_KEY = re.compile(r"[\x21-\x27\x2a-\x7e]+")
#: Largest page number and absolute coordinate (PDF points) taken from ``coords``.
_MAX_PAGE = 100_000
_MAX_COORD = 1e6
#: An abstract's head that only names it ("Abstract", "ABSTRACT:", "Abstract—").
_ABSTRACT_LABEL_RE = re.compile(r"^abstract\s*[.:—–-]?$", re.IGNORECASE)


def _parser() -> etree.XMLParser:
    # No entity resolution, no DTD, no network, libxml2's default size limits (huge_tree off):
    # external-entity and entity-expansion attacks have nothing to work with.
    # collect_ids=False: an xml:id used twice is then no parse error (it is reported as a warning).
    return etree.XMLParser(
        resolve_entities=False, load_dtd=False, no_network=True, huge_tree=False, remove_comments=True,
        collect_ids=False,
    )


def read_tei(path: Union[str, Path], *, paper_id: Optional[str] = None) -> Paper:
    """Read a GROBID TEI file into a :class:`Paper`; errors name the file and the reason."""
    path = Path(path)
    # a FIFO would block, /dev/zero never end; the size cap is the caller's (read_paper checks it)
    check_input_file(str(path), ReadLimits(max_input_mib=None))
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
    text, UnsafeInputError for DTD entity declarations (in any encoding), MalformedInputError
    for XML that is not well-formed or not TEI (a ``<TEI>`` root without the TEI namespace
    included). An ``xml:id`` used more than once is a warning naming the file and the id.
    """
    if isinstance(data, str):
        data = data.encode("utf-8")
    if not data.strip():
        raise EmptyDocumentError(source, "is empty")
    if _declares_entities(data):
        raise UnsafeInputError(source, _ENTITIES_REFUSED)
    try:
        root = etree.fromstring(data, parser=_parser())
    except etree.XMLSyntaxError as exc:
        raise MalformedInputError(source, f"is not well-formed XML ({exc})") from exc
    _check_no_entities(root, source)
    _check_tei_root(root, source)
    _warn_duplicate_ids(root, source)
    paper = _TeiBuilder(root, source, paper_id or (tei_stem(source) if source else "paper")).build()
    if not any(b.kind in ("abstract", "paragraph") for b in paper.blocks) and not paper.title:
        raise EmptyDocumentError(source, "has no title, abstract or body text")
    paper.check()
    return paper


_ENTITIES_REFUSED = "declares XML entities in a DTD, which are refused (entity expansion / external entities)"


def _declares_entities(data: bytes) -> bool:
    """True when the document has a DOCTYPE and an entity declaration, in whatever encoding."""
    if _DOCTYPE.search(data) and _ENTITY_DECL.search(data):
        return True
    encoding = _xml_encoding(data)
    if encoding is None:
        return False
    text = data.decode(encoding, errors="replace")
    return bool(_DOCTYPE_TEXT.search(text) and _ENTITY_DECL_TEXT.search(text))


def _xml_encoding(data: bytes) -> Optional[str]:
    """The codec of an XML document that is not ASCII-compatible (UTF-16, UTF-32...), from its
    byte order mark, its first bytes or its declaration; None when the bytes can be searched
    as they are (UTF-8, Latin-1 and the like) or the encoding is unknown."""
    encoding = next((name for bom, name in _BOMS if data.startswith(bom)), None)
    encoding = encoding or next((name for start, name in _WIDE_STARTS if data.startswith(start)), None)
    if encoding is None:
        declared = _DECLARED_ENCODING.match(data[:400].lstrip())
        encoding = declared.group(1).decode("ascii") if declared else None
    if encoding is None:
        return None
    try:
        ascii_compatible = "<!DOCTYPE".encode(encoding) == b"<!DOCTYPE"
    except (LookupError, UnicodeError):
        return None
    return None if ascii_compatible else encoding


def _check_tei_root(root: etree._Element, source: Optional[str]) -> None:
    """Refuse a root that is not ``<TEI>`` in the TEI namespace, saying which it is."""
    name = etree.QName(root)
    if name.localname != "TEI":
        raise MalformedInputError(source, f"is XML but not TEI (root element <{name.localname}>)")
    if name.namespace != TEI_NS:
        found = f"the namespace {name.namespace!r}" if name.namespace else "no namespace"
        raise MalformedInputError(source, f"has no TEI namespace: its <TEI> root has {found}, not "
                                          f'xmlns="{TEI_NS}" (GROBID writes it; the elements are not TEI without it)')


def _check_no_entities(root: etree._Element, source: Optional[str]) -> None:
    """Refuse a parsed DTD that declares entities (in an encoding the byte-level check cannot read)."""
    dtd = root.getroottree().docinfo.internalDTD
    if dtd is not None and any(True for _ in dtd.iterentities()):
        raise UnsafeInputError(source, _ENTITIES_REFUSED)


def _warn_duplicate_ids(root: etree._Element, source: Optional[str]) -> None:
    """One warning naming the file and the ``xml:id`` values that more than one element carries."""
    counts = Counter(el.get(XML_ID) for el in root.iter() if isinstance(el.tag, str) and el.get(XML_ID) is not None)
    repeated = [value for value, count in counts.items() if count > 1]
    if not repeated:
        return
    shown = ", ".join(repr(value) for value in repeated[:5])
    if len(repeated) > 5:
        shown += f" and {len(repeated) - 5} more"
    warnings.warn(f"{source or 'TEI'}: duplicate xml:id {shown}; read anyway, but a reference to a repeated id "
                  "may point at either element", stacklevel=3)


class _TeiBuilder:
    """Walks one TEI tree and fills a Paper."""

    def __init__(self, root: etree._Element, source: Optional[str], paper_id: str):
        self.root = root
        self.paper = Paper(paper_id=paper_id, source=source, reader="tei")
        self._figure_labels = FigureLabels()
        self._figure_ids: set[str] = set()
        self._formula_labels: dict[str, str] = {}
        self._formula_texts: dict[str, str] = {}
        # Built once the formulas are indexed: printed label and "(label)" in a formula's text -> id.
        self._formula_by_label: dict[str, str] = {}
        self._formula_by_printed: dict[str, str] = {}
        self._formula_scans: dict[str, Optional[str]] = {}
        self._footnote_numbers: dict[str, str] = {}
        # GROBID before 0.6 keeps words broken at line ends as "struc- ture".
        version = grobid_version(root)
        self._join_broken_words = version is None or version < (0, 6)
        self._drop_cap = ""
        self._body_started = False
        doi = root.find("t:teiHeader/t:fileDesc/t:sourceDesc/t:biblStruct//t:idno[@type='DOI']", NS)
        self._doi = collapse_whitespace(doi.text) if doi is not None and doi.text else None
        self._running_title = _running_title(root)

    def build(self) -> Paper:
        """Fill the paper: floats, formulas and footnotes first (to resolve refs), then text in reading order."""
        self._read_figures()
        self._index_formulas_and_footnotes()
        self._read_bibliography()
        self._read_title()
        self.paper.authors = read_header_authors(self.root)
        body = self.root.find("t:text/t:body", NS)
        introduction = self._read_abstract(body)
        if body is not None:
            self._read_container(body, level=1, parent=None, kind=BODY, current=introduction)
        self._read_back()
        self._read_footnotes()
        self._read_captions()
        self._unlink_dropped_footnotes()
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

    def _read_abstract(self, body: Optional[etree._Element]) -> Optional[int]:
        """Read the abstract; returns the body section that its introduction paragraphs open, if any.

        Paragraphs GROBID took into the abstract from an unheaded introduction
        (:func:`introduction_in_abstract`) open the body instead, in an untitled section that a
        headless first body div continues.
        """
        abstract = self.root.find("t:teiHeader/t:profileDesc/t:abstract", NS)
        if abstract is None:
            return None
        paragraphs = abstract.findall(".//t:p", NS)
        if not paragraphs and collapse_whitespace("".join(abstract.itertext())):
            paragraphs = [abstract]
        cut = introduction_in_abstract(abstract, body)
        if cut is None:
            cut = len(paragraphs)
        self._read_abstract_paragraphs(abstract, paragraphs[:cut])
        introduction = None
        for p in paragraphs[cut:]:
            introduction = self._append_paragraph(p, introduction, BODY)
        return introduction

    def _read_abstract_paragraphs(self, abstract: etree._Element, paragraphs: list) -> None:
        for p in paragraphs:
            # A structured abstract's heads ("Background", "Methods") lead their paragraph; GROBID
            # also puts misread opening sentences there. Either way they are abstract text.
            lead = ""
            parent = p.getparent()
            if parent is not None and parent is not abstract and p is parent.find("t:p", NS):
                head = parent.find("t:head", NS)
                lead = collapse_whitespace("".join(head.itertext())) if head is not None else ""
                if _ABSTRACT_LABEL_RE.match(lead):
                    lead = ""  # the label itself (most PLOS abstracts in GROBID's TEI) is no sentence
            block = self._paragraph_block(p, kind="abstract", section=None, lead=lead)
            if block is not None:
                self.paper.blocks.append(block)

    # -- body and back ------------------------------------------------------------------
    def _read_container(self, container: etree._Element, level: int, parent: Optional[int], kind: str,
                        current: Optional[int] = None) -> None:
        """Read paragraphs, formulas and divs of ``body`` or a ``div``, recursing into nested divs.

        ``current`` is the section that headless leading content continues (default ``parent``).
        """
        current = parent if current is None else current
        for child in container:
            if not isinstance(child.tag, str):
                continue
            name = etree.QName(child).localname
            if name == "div":
                current = self._read_div(child, level, parent, current, kind)
            elif name == "p":
                current = self._append_paragraph(child, current, kind)
            elif name == "formula":
                current = self._append_formula(child, current, kind)
            elif name in ("ref", "s"):
                # A stray inline element directly in a div (re-serialised TEI): a paragraph of its own.
                current = self._append_paragraph(_wrapped(child), current, kind)

    def _read_div(self, div: etree._Element, level: int, parent: Optional[int], current: Optional[int],
                  kind: str) -> Optional[int]:
        """Read one div; returns the section index later headless siblings continue."""
        head = div.find("t:head", NS)
        title = collapse_whitespace("".join(head.itertext())) if head is not None else ""
        number = (head.get("n") or "").strip().rstrip(".") or None if head is not None else None
        if title and number is None and is_drop_cap(title, _first_paragraph_text(div)):
            # A drop cap ("D" / "ue to the rapid ...") is the first letter of the paragraph.
            self._drop_cap, title = title, ""
        if title and number is None and not any(ch.isalnum() for ch in title):
            # "." or "•" (17 of 654 GROBID files): no section starts, the div continues the current one.
            title = ""
        if title:
            if number is None and (parent is None or kind != BODY):
                # "Competing interests" in the body or an annex, "Publisher's Note" inside GROBID's
                # acknowledgement div: the head says what the section is.
                kind = back_matter_kind(title) or kind
            depth = level if number is None else max(level, number.count(".") + 1)
            self.paper.sections.append(Section(title=title, number=number, level=depth, parent=parent, kind=kind))
            index = len(self.paper.sections) - 1
            self.paper.blocks.append(Block(kind="heading", text=title, section=index))
            self._read_container(div, level=depth + 1, parent=index, kind=kind)
            return index
        # GROBID splits a section at page breaks and floats into headless divs: continue it.
        if current is None or self.paper.sections[current].kind != kind:
            current = self._new_section(level, parent, kind)
        self._read_container(div, level=level + 1, parent=current, kind=kind)
        return current

    def _new_section(self, level: int, parent: Optional[int], kind: str) -> int:
        self.paper.sections.append(Section(title="", number=None, level=level, parent=parent, kind=kind))
        return len(self.paper.sections) - 1

    def _read_back(self) -> None:
        """Appendices (``annex``) as body sections, acknowledgements, funding and statements as back matter."""
        back = self.root.find("t:text/t:back", NS)
        if back is None:
            return
        for div in back.iterfind("t:div", NS):
            div_type = (div.get("type") or "").lower()
            if div_type in _BACK_DIV_TYPES:
                self._read_container(div, level=1, parent=None, kind=div_type)
            elif div_type == "annex":
                self._read_container(div, level=1, parent=None, kind=BODY)

    def _append_paragraph(self, p: etree._Element, section: Optional[int], kind: str) -> int:
        if section is None:
            section = self._new_section(1, None, kind)
        if kind == BODY and not self._body_started:
            self._body_started = True
            join_split_drop_cap(p, lambda: word_counts(" ".join(self.root.itertext())))
            if not self.paper.sections[section].title:
                head = split_run_in_introduction(p)
                if head:
                    self.paper.sections[section].title = head
                    first = next((i for i, b in enumerate(self.paper.blocks) if b.section == section),
                                 len(self.paper.blocks))
                    self.paper.blocks.insert(first, Block(kind="heading", text=head, section=section))
        block = self._paragraph_block(p, kind="paragraph", section=section)
        if block is not None:
            self.paper.blocks.append(block)
        return section

    def _append_formula(self, formula: etree._Element, section: Optional[int], kind: str) -> int:
        """A display formula: its text (label included) as a block of its own, kept in the section."""
        if section is None:
            section = self._new_section(1, None, kind)
        text = self._without_running_heads(_formula_text(formula))
        if text:
            formula_id = formula.get(XML_ID) or f"formula_auto{len(self._formula_labels)}"
            label = self._formula_labels.get(formula_id) or formula_label(formula)
            self.paper.blocks.append(Block(kind="formula", text=text, section=section, id=formula_id, label=label))
        return section

    def _paragraph_block(self, p: etree._Element, kind: str, section: Optional[int], lead: str = "") -> Optional[Block]:
        """Flatten a ``p`` into text, inline refs and (when present) ``<s>`` sentence offsets.

        ``lead`` is text put before the paragraph as a sentence of its own (an abstract's head).
        Running heads are cut out of the text (:func:`running_head_spans`). A footnote gives no
        block when it was a running head with at most a short title line left
        (:func:`only_furniture_left`), or when it prints the paper's own DOI outside a running
        foot (a notice about the paper itself).
        """
        acc = TextAccumulator(join_broken_words=self._join_broken_words)
        if lead:
            acc.add(lead)
            acc.mark_break()
        refs: list[InlineRef] = []
        sentences: list[tuple[int, int]] = []
        self._walk_inline(p, acc, refs, sentences)
        text = acc.text()
        if not text:
            return None
        block = Block(kind=kind, text=text, refs=refs, sentences=sentences or None, section=section)
        spans = running_head_spans(text, self._doi, self._running_title)
        if spans:
            block = cut_block(block, spans)
            if block is None or not any(c.isalnum() for c in block.text):
                return None
        if kind == "footnote" and (spans and only_furniture_left(block.text) or self._notice_of_the_paper(text)):
            return None
        return block

    def _notice_of_the_paper(self, text: str) -> bool:
        """Whether a footnote prints the paper's own DOI other than in a journal's running foot:
        a proceedings line, a preprint's publication note, a download stamp."""
        if not prints_doi(text, self._doi):
            return False
        return prints_doi(cut_text(text, running_head_spans(text, None, self._running_title)), self._doi)

    def _without_running_heads(self, text: str) -> str:
        """``text`` with its running heads cut out; "" when they were all it had to say."""
        spans = running_head_spans(text, self._doi, self._running_title)
        if not spans:
            return text
        text = cut_text(text, spans)
        return text if any(c.isalnum() for c in text) else ""

    def _add_text(self, acc: TextAccumulator, text: str) -> None:
        if self._drop_cap and text.strip():
            text, self._drop_cap = self._drop_cap + text.lstrip(), ""
        acc.add(text)

    def _walk_inline(self, el: etree._Element, acc: TextAccumulator, refs: list[InlineRef], sentences: list) -> None:
        self._add_text(acc, el.text or "")
        for child in el:
            if isinstance(child.tag, str):
                name = etree.QName(child).localname
                if name in NOT_PARAGRAPH_TEXT:
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
            self._add_text(acc, child.tail or "")

    def _add_ref(self, ref: etree._Element, acc: TextAccumulator, refs: list[InlineRef]) -> None:
        kind = _REF_KINDS.get(ref.get("type") or "", "other")
        target = (ref.get("target") or "").lstrip("#") or None
        text = "".join(ref.itertext())
        if kind == "footnote" and target in self._footnote_numbers and collapse_whitespace(text) == target:
            text = self._footnote_numbers[target] or text  # GROBID prints the anchor as its id ("foot_1")
        before = acc.tail(40)
        offsets = acc.add_marker(text)
        if offsets is None:
            return
        start, end = offsets
        marker = acc.tail(end - start)
        if kind in ("figure", "table"):
            target = None if is_supplementary_mention(before, marker) else self._resolve_figure_ref(target, marker, kind)
        elif kind == "bibr" and target is not None and target not in self.paper.bibliography:
            target = None
        elif kind == "formula":
            target = self._resolve_formula_ref(target, marker)
        elif kind == "footnote" and target not in self._footnote_numbers:
            target = None
        refs.append(InlineRef(start=start, end=end, kind=kind, target=target))

    def _resolve_figure_ref(self, target: Optional[str], text: str, kind: str) -> Optional[str]:
        if target in self._figure_ids:
            return target
        return self._figure_labels.resolve(text, kind_hint=kind)

    def _resolve_formula_ref(self, target: Optional[str], text: str) -> Optional[str]:
        """A formula ref's target, else the formula whose printed label the text names ("(3)")."""
        if target in self._formula_labels:
            return target
        wanted = text.strip("()[] .,;").lower()
        if not wanted:
            return None
        found = self._formula_by_label.get(wanted)
        if found is None:
            # GROBID 0.5 merges consecutive equations into one formula with one label: the
            # others' numbers "(1)" are left in its text.
            found = self._formula_printing(wanted)
        return found

    def _formula_printing(self, wanted: str) -> Optional[str]:
        """The first formula whose text prints "(wanted)" on its own (between spaces or at an end)."""
        if _PRINTED_LABEL_KEY.fullmatch(wanted):
            return self._formula_by_printed.get(wanted)
        if wanted not in self._formula_scans:  # a label the index cannot hold: scan once per label
            printed = re.compile(rf"(?:^|\s)\({re.escape(wanted)}\)(?=\s|$)", re.IGNORECASE)
            self._formula_scans[wanted] = next(
                (fid for fid, body in self._formula_texts.items() if printed.search(body)), None)
        return self._formula_scans[wanted]

    def _index_formula_labels(self) -> None:
        """Printed labels and the "(n)" printed in formula texts -> the first formula id, once."""
        for formula_id, label in self._formula_labels.items():
            if label:
                self._formula_by_label.setdefault(label.lower(), formula_id)
        for formula_id, body in self._formula_texts.items():
            for match in _PRINTED_LABEL.finditer(body):
                self._formula_by_printed.setdefault(match.group(1).lower(), formula_id)

    # -- footnotes and formulas -----------------------------------------------------------
    def _index_formulas_and_footnotes(self) -> None:
        text = self.root.find("t:text", NS)
        if text is None:
            return
        for n, formula in enumerate(text.iter(f"{{{TEI_NS}}}formula")):
            formula_id = formula.get(XML_ID) or f"formula_auto{n}"
            self._formula_labels[formula_id] = formula_label(formula)
            self._formula_texts[formula_id] = _formula_text(formula)
        self._index_formula_labels()
        for n, note in enumerate(self._footnote_elements()):
            self._footnote_numbers[note.get(XML_ID) or f"foot_auto{n}"] = (note.get("n") or "").strip()

    def _footnote_elements(self) -> list[etree._Element]:
        text = self.root.find("t:text", NS)
        return [] if text is None else list(text.iterfind(".//t:note[@place='foot']", NS))

    def _read_footnotes(self) -> None:
        """Footnotes (``note@place=foot``) after the body, each with its id and printed number."""
        for n, note in enumerate(self._footnote_elements()):
            note_id = note.get(XML_ID) or f"foot_auto{n}"
            block = self._paragraph_block(note, kind="footnote", section=None)
            if block is not None:
                block.id, block.label = note_id, self._footnote_numbers.get(note_id, "")
                self.paper.blocks.append(block)

    def _unlink_dropped_footnotes(self) -> None:
        """A footnote anchor whose note was page furniture (no block) points nowhere."""
        kept = {b.id for b in self.paper.blocks if b.kind == "footnote"}
        for block in self.paper.blocks:
            for ref in block.refs:
                if ref.kind == "footnote" and ref.target is not None and ref.target not in kept:
                    ref.target = None

    # -- floats -----------------------------------------------------------------------
    def _floats(self) -> list[tuple[etree._Element, str, str]]:
        """(element, kind, id) of every top-level ``figure`` in the text, in document order."""
        text = self.root.find("t:text", NS)
        if text is None:
            return []
        floats = []
        for n, fig in enumerate(text.iter(f"{{{TEI_NS}}}figure")):
            if fig.getparent() is not None and etree.QName(fig.getparent()).localname == "figure":
                continue
            kind = "table" if (fig.get("type") or "").lower() == "table" else "figure"
            floats.append((fig, kind, fig.get(XML_ID) or f"{'tab' if kind == 'table' else 'fig'}_auto{n}"))
        return floats

    def _read_figures(self) -> None:
        for fig, kind, fig_id in self._floats():
            head_el = fig.find("t:head", NS)
            head = collapse_whitespace("".join(head_el.itertext())) if head_el is not None else ""
            label_el = fig.find("t:label", NS)
            label = collapse_whitespace(label_el.text or "") if label_el is not None and label_el.text else ""
            label = label or _label_from_caption_start(head) or _label_from_caption_start(_caption_text(fig))
            info = FigureInfo(id=fig_id, kind=kind, label=label, head=head)
            info.page, info.bbox = _coords(fig.get("coords") or _graphic_coords(fig))
            self.paper.figures.append(info)
            self._figure_labels.add(fig_id, kind, label)
            self._figure_ids.add(fig_id)

    def _read_captions(self) -> None:
        by_id = {f.id: f for f in self.paper.figures}
        seen = set()
        for fig, kind, fig_id in self._floats():
            if fig_id in seen or fig_id not in by_id:
                continue
            seen.add(fig_id)
            caption = self._without_running_heads(_caption_text(fig)) or _caption_from_head(by_id[fig_id].head)
            if not caption and kind == "table":
                caption = table_caption_from_cells(by_id[fig_id].head, _table_text(fig))
            if caption:
                self.paper.blocks.append(Block(kind="caption", text=caption, figure_id=fig_id))

    # -- bibliography -----------------------------------------------------------------
    def _read_bibliography(self) -> None:
        for n, bibl in enumerate(self.root.iterfind("t:text/t:back//t:listBibl/t:biblStruct", NS)):
            bib_id = bibl.get(XML_ID) or f"b{n}"
            self.paper.bibliography[bib_id] = _bib_entry(bibl, bib_id)


def _running_title(root: etree._Element) -> Optional[str]:
    """The short title printed on every page (PLOS), from the texts of paragraphs, notes and floats."""
    text = root.find("t:text", NS)
    if text is None or not prints_title_foot("".join(text.itertext())):
        return None
    tags = {f"{{{TEI_NS}}}{name}" for name in ("p", "note", "figDesc", "formula")}
    # Outermost units only: a note's paragraphs are part of the note's text, not texts of their own.
    units = (unit for unit in text.iter(*tags) if not any(a.tag in tags for a in unit.iterancestors()))
    return running_title(collapse_whitespace("".join(unit.itertext())) for unit in units)


def _formula_text(formula: etree._Element) -> str:
    """The formula's text with its label set apart by a space ("... + b (3)")."""
    label = formula.find("t:label", NS)
    body = "".join(formula.itertext()) if label is None else "".join(
        (formula.text or "", *("".join(c.itertext()) + (c.tail or "") for c in formula if c is not label),
         label.tail or ""))
    printed = collapse_whitespace("".join(label.itertext())) if label is not None else ""
    return collapse_whitespace(f"{body} {printed}")


def _wrapped(inline: etree._Element) -> etree._Element:
    """A ``p`` holding a copy of one inline element (its tail left out)."""
    p = etree.Element(f"{{{TEI_NS}}}p")
    copy = etree.fromstring(etree.tostring(inline, with_tail=False))
    p.append(copy)
    return p


def _first_paragraph_text(div: etree._Element) -> str:
    p = div.find("t:p", NS)
    return collapse_whitespace("".join(p.itertext()))[:40] if p is not None else ""


def _table_text(fig: etree._Element) -> str:
    table = fig.find("t:table", NS)
    return "".join(table.itertext()) if table is not None else ""


def _caption_from_head(head: str) -> str:
    """A head that carries the caption itself ("Table 2 : Category counts ..."), else ""."""
    match = MENTION_PATTERN.match(head or "")
    if not match:
        return ""
    separator = re.match(r"\s*[:.]\s*", head[match.end():])
    rest = head[match.end() + separator.end():] if separator else ""
    return f"{head[:match.end()].strip()}: {rest}" if rest else ""


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
    """GROBID ``coords="page,x,y,w,h;..."`` -> (page, (x0, y0, x1, y1)) of the first box.

    A box that is not five numbers, or has a value that is not finite or beyond _MAX_COORD
    points, a page that is not a whole number from 1 to _MAX_PAGE, or a negative width or
    height is dropped: (None, None), and the paper is read without it.
    """
    if not coords:
        return None, None
    try:
        page, x, y, w, h = (float(v) for v in coords.split(";")[0].split(",")[:5])
    except ValueError:  # not a number, or fewer than five
        return None, None
    if not all(math.isfinite(v) and abs(v) <= _MAX_COORD for v in (page, x, y, w, h)):
        return None, None
    if not (page.is_integer() and 1 <= page <= _MAX_PAGE) or w < 0 or h < 0:
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
        monogr_title_el = monogr.find("t:title", NS)
        monogr_title = text_of(monogr_title_el)
        # A book's title is its monogr title; a journal or proceedings name never is, even
        # when GROBID lost the article title.
        is_container = looks_like_venue(monogr_title) or (
            monogr_title_el is not None and monogr_title_el.get("level") in ("j", "s")
        )
        if title or is_container:
            venue = monogr_title
        else:
            title = monogr_title
        if not venue:
            venue = text_of(monogr.find("t:meeting", NS))
    authors_root = analytic if analytic is not None and analytic.find("t:author", NS) is not None else monogr
    authors = []
    if authors_root is not None:
        for pers in authors_root.iterfind("t:author/t:persName", NS):
            full = person_name(pers)
            if full:
                authors.append(full)
    date = bibl.find(".//t:imprint/t:date", NS)
    year = bib_year(date.get("when"), text_of(date)) if date is not None else None
    doi_el = bibl.find(".//t:idno[@type='DOI']", NS)
    doi = collapse_whitespace(doi_el.text or "") if doi_el is not None and doi_el.text else None
    return BibEntry(id=bib_id, title=title, authors=authors, year=year, venue=venue, doi=doi)
