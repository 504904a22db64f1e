"""Readers for the CL-SciSumm shared-task data sets, as published.

* :func:`read_reference_xml` / :func:`reference_paper` / :func:`reference_doc`: the
  sentence-segmented ``Reference_XML/<RP>.xml`` (and ``Citance_XML/<CP>.xml``) papers:
  ``<PAPER>`` holding a title ``<S sid="0">``, an ``<ABSTRACT>`` and ``<SECTION title=..>``
  elements of ``<S sid=.. ssid=..>`` sentences, sometimes with ``<SUBSECTION>`` headings.
  Every ``<S>`` becomes exactly one sentence of the Paper and of its Doc; section titles
  are kept as :class:`~scholarly_nlp.paper.Section` (not as heading text, so the Doc's
  sentences are exactly the ``<S>`` elements).
* :func:`read_annotations`: the ``annotation/<RP>.ann.txt`` (or ``.annv3.txt``) records.
* :func:`read_citing_sentences`: ScisummNet ``citing_sentences.json``.
* :func:`read_task1_csv`: the 2018 test layout CSV (``<RP>.csv``, gold ``<RP>_<annotator>.csv``).
* :func:`reference_folder_doc`: a whole ``<RP>/`` folder (Reference_XML plus annotation) as
  one Doc whose ``doc._.incoming_citances`` are the citances citing it.

The published files are not all clean: some are cp1252 rather than UTF-8, some hold UTF-8
that an earlier tool misread as cp1252 ("â€™" for "’"; repaired silently), some have
mismatched tags. Those are recovered with a :func:`warnings.warn` naming the file and the
problem; only input that cannot be recovered at all raises
:class:`~scholarly_nlp.errors.MalformedInputError`. The XML parser never resolves
entities, loads a DTD or touches the network.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import re
import warnings
from pathlib import Path
from typing import Iterable, Optional, Union

from lxml import etree

from ..errors import EmptyDocumentError, InputError, MalformedInputError, UnsafeInputError
from .clscisumm_cells import parse_facets, parse_reference_offsets
from ..paper import Block, Paper, Section
from ..text.mojibake import repair_mojibake

PathLike = Union[str, Path]

__all__ = [
    "ANNOTATION_FIELDS",
    "read_reference_xml",
    "reference_paper",
    "reference_doc",
    "read_annotations",
    "read_citing_sentences",
    "read_task1_csv",
    "annotation_files",
    "read_folder_records",
    "incoming_citance",
    "reference_folder_doc",
]

#: Field names of an annotation record (``.ann.txt``) in the published order.
ANNOTATION_FIELDS = (
    "Citance Number",
    "Reference Article",
    "Citing Article",
    "Citation Marker Offset",
    "Citation Marker",
    "Citation Offset",
    "Citation Text",
    "Reference Offset",
    "Reference Text",
    "Discourse Facet",
    "Annotator",
)
#: Extra column of the 2018 Task 1 CSV layout.
_CSV_ONLY_FIELDS = ("Citation Text Clean",)
_REQUIRED_FIELDS = ("Citance Number", "Reference Article", "Citing Article", "Citation Text")

_FALLBACK_ERRORS = "scholarly_nlp.clscisumm.cp1252"
_ENTITY_DECL = re.compile(rb"<!ENTITY", re.IGNORECASE)
_XML_DECL = re.compile(r"^\s*<\?xml[^>]*\?>")
_S_TAG = re.compile(r"</?S\b[^>]*>")
_S_ELEMENT = re.compile(r"<S\b[^>]*>(.*?)</S>", re.DOTALL)
_WS = re.compile(r"\s+")
_TAG = re.compile(r"<(/?)(PAPER|ABSTRACT|SECTION|SUBSECTION|S)\b[^<>]*>")
_FIELD_SPLIT = re.compile(r"\s*\|\s*(?=(?:%s)\s*:)" % "|".join(re.escape(f) for f in ANNOTATION_FIELDS))


# --------------------------------------------------------------------------- decoding


def _cp1252_fallback(exc: UnicodeError):
    """Codec error handler: decode the bytes UTF-8 rejected as cp1252 (U+FFFD if undefined)."""
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    bad = exc.object[exc.start : exc.end]
    return bad.decode("cp1252", errors="replace"), exc.end


codecs.register_error(_FALLBACK_ERRORS, _cp1252_fallback)


def _decode(data: bytes, source: str) -> str:
    """UTF-8 text of ``data``; bytes that are not UTF-8 are read as cp1252, with a warning.

    UTF-8 that an earlier tool misread as cp1252 ("â€™" for "’", in 22 annotation and
    Citance_XML files of the release) is repaired (:func:`scholarly_nlp.text.mojibake.repair_mojibake`).
    """
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        warnings.warn(
            f"{source}: is not valid UTF-8 ({exc.reason} at byte {exc.start}); "
            "the invalid bytes were read as cp1252",
            stacklevel=3,
        )
        text = data.decode("utf-8-sig", errors=_FALLBACK_ERRORS)
    return repair_mojibake(text)


def _read_bytes(path: PathLike) -> bytes:
    """The file's bytes; InputError naming the file when it cannot be read."""
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise InputError(path, f"cannot be read ({exc.strerror or exc})") from exc


def _clean(text: str) -> str:
    """Whitespace runs collapsed to one space, ends stripped."""
    return _WS.sub(" ", text).strip()


# --------------------------------------------------------------------------- Reference_XML


def _xml_parser(recover: bool) -> etree.XMLParser:
    """A parser that resolves no entity, loads no DTD and never uses the network."""
    return etree.XMLParser(
        resolve_entities=False, load_dtd=False, no_network=True, huge_tree=False,
        remove_comments=True, recover=recover,
    )


def _balance_tags(text: str) -> str:
    """Repair the tag errors found in the corpus: drop end tags that close nothing open,
    close elements left open (before an enclosing end tag, or at the end of the file).

    libxml2's own recovery treats a stray ``</SECTION>`` as the end of ``<PAPER>`` and
    loses every later sentence; this keeps them.
    """
    out, stack, pos = [], [], 0
    for match in _TAG.finditer(text):
        closing, name = match.group(1) == "/", match.group(2)
        out.append(text[pos : match.start()])
        pos = match.end()
        if match.group(0).endswith("/>"):
            out.append(match.group(0))
        elif not closing:
            stack.append(name)
            out.append(match.group(0))
        elif name in stack:
            while stack:
                top = stack.pop()
                out.append(f"</{top}>")
                if top == name:
                    break
    out.append(text[pos:])
    out.extend(f"</{name}>" for name in reversed(stack))
    return "".join(out)


def _parse_xml(data: bytes, source: str) -> etree._Element:
    """Root element of a CL-SciSumm XML file, recovering encoding and tag errors with a warning."""
    if not data.strip():
        raise EmptyDocumentError(source, "is empty")
    if _ENTITY_DECL.search(data):
        raise UnsafeInputError(source, "declares XML entities in a DTD, which are refused")
    text = _XML_DECL.sub("", _decode(data, source), count=1)
    utf8 = text.encode("utf-8")
    try:
        return etree.fromstring(utf8, parser=_xml_parser(recover=False))
    except etree.XMLSyntaxError as exc:
        problem = str(exc)
    root = None
    try:
        root = etree.fromstring(_balance_tags(text).encode("utf-8"), parser=_xml_parser(recover=False))
    except etree.XMLSyntaxError:
        try:
            root = etree.fromstring(utf8, parser=_xml_parser(recover=True))
        except etree.XMLSyntaxError:
            pass
    if root is None or next(root.iter("S"), None) is None:
        raise MalformedInputError(source, f"is not well-formed XML and nothing could be recovered ({problem})")
    warnings.warn(f"{source}: is not well-formed XML ({problem}); recovered what the parser could", stacklevel=3)
    return root


class _PaperBuilder:
    """Walks a ``<PAPER>`` tree, collecting blocks, sections and the sid of every sentence."""

    def __init__(self, source: str):
        self.source = source
        self.title: list[tuple[str, str]] = []
        self.abstract: list[tuple[str, str]] = []
        self.body: list[tuple[Optional[int], list[tuple[str, str]]]] = []
        self.sections: list[Section] = []
        self.empty = 0

    def sentence(self, element: etree._Element) -> Optional[tuple[str, str]]:
        """(sid, text) of an ``<S>``; None (counted) when its text is empty."""
        text = _clean("".join(element.itertext()))
        if not text:
            self.empty += 1
            return None
        return (element.get("sid", "").strip(), text)

    def add_body(self, section: Optional[int], element: etree._Element) -> None:
        """Append a sentence to the current paragraph of ``section`` (new one if it changed)."""
        item = self.sentence(element)
        if item is None:
            return
        if not self.body or self.body[-1][0] != section:
            self.body.append((section, []))
        self.body[-1][1].append(item)

    def walk_section(self, element: etree._Element, parent: Optional[int], level: int) -> None:
        """A ``<SECTION>``: a Section, its ``<S>`` in paragraphs, ``<SUBSECTION>`` as child Sections."""
        number = (element.get("number") or "").strip() or None
        self.sections.append(Section(_clean(element.get("title") or ""), number, level, parent))
        index = current = len(self.sections) - 1
        for child in element:
            if child.tag == "S":
                self.add_body(current, child)
            elif child.tag == "SUBSECTION":
                self.sections.append(Section(_clean("".join(child.itertext())), None, level + 1, index))
                current = len(self.sections) - 1
            elif child.tag == "SECTION":
                self.walk_section(child, index, level + 1)
                current = index

    def walk(self, root: etree._Element) -> None:
        """The whole ``<PAPER>``: title ``<S>``, ``<ABSTRACT>``, ``<SECTION>``s.

        ``<S>`` directly under ``<PAPER>`` is the title before the abstract and sections,
        body text (a paragraph of no section) after them, so reading order is kept.
        """
        for child in root:
            if child.tag == "S" and (self.abstract or self.sections):
                self.add_body(None, child)  # stray sentence after the front matter: body text
            elif child.tag == "S":
                item = self.sentence(child)
                if item:
                    self.title.append(item)
            elif child.tag == "ABSTRACT":
                for sub in child:
                    if sub.tag == "S":
                        item = self.sentence(sub)
                        if item:
                            self.abstract.append(item)
                    elif sub.tag == "SECTION":
                        self.walk_section(sub, None, 1)
            elif child.tag == "SECTION":
                self.walk_section(child, None, 1)


def _block(kind: str, sentences: list[tuple[str, str]], section: Optional[int] = None) -> Block:
    """A block whose text is the sentences joined by one space, with their offsets."""
    offsets, pos = [], 0
    for _, text in sentences:
        offsets.append((pos, pos + len(text)))
        pos += len(text) + 1
    return Block(kind, " ".join(t for _, t in sentences), sentences=offsets, section=section)


def reference_paper(path: PathLike, *, paper_id: Optional[str] = None) -> tuple[Paper, list[str]]:
    """Read a CL-SciSumm XML paper; return the Paper and the sid of each sentence.

    ``sids[i]`` is the ``sid`` attribute of the i-th sentence in the Doc's reading order
    (title, abstract, body), so ``list(doc.sents)[i]`` is the ``<S>`` with that sid. Empty
    ``<S>`` elements (none in the published data) are left out with a warning. Sids are
    not always unique (``J96-3004`` numbers two runs of sentences from 1).
    """
    source = str(path)
    root = _parse_xml(_read_bytes(path), source)
    walker = _PaperBuilder(source)
    walker.walk(root)
    if walker.empty:
        warnings.warn(f"{source}: {walker.empty} empty <S> element(s) left out", stacklevel=2)
    paper = Paper(paper_id or Path(path).stem, source=source, reader="clscisumm", sections=walker.sections)
    sids: list[str] = []
    parts = [("title", walker.title, None), ("abstract", walker.abstract, None)]
    parts += [("paragraph", sentences, section) for section, sentences in walker.body]
    for kind, sentences, section in parts:
        if sentences:
            paper.blocks.append(_block(kind, sentences, section))
            sids.extend(sid for sid, _ in sentences)
    if not sids:
        raise EmptyDocumentError(source, "has no <S> sentence with text")
    paper.meta["sids"] = sids
    paper.check()
    return paper, sids


def read_reference_xml(path: PathLike, *, paper_id: Optional[str] = None) -> Paper:
    """Read a CL-SciSumm ``Reference_XML`` (or ``Citance_XML``) file into a Paper (sids in ``paper.meta["sids"]``)."""
    return reference_paper(path, paper_id=paper_id)[0]


def reference_doc(path: PathLike, nlp, *, paper_id: Optional[str] = None):
    """The spaCy Doc of a CL-SciSumm XML paper; ``doc._.paper_meta["sids"]`` lists the sids.

    One Doc sentence per ``<S>``, in the order of the sid list.
    """
    from ..doc.builder import paper_to_doc

    return paper_to_doc(read_reference_xml(path, paper_id=paper_id), nlp)


# --------------------------------------------------------------------------- records


def _key(field: str) -> str:
    """``Citation Marker Offset`` -> ``citation_marker_offset``."""
    return _WS.sub("_", field.strip().lower())


def _strip_sentences(value: str) -> str:
    """Citation/Reference Text without its ``<S ...>`` markup: the sentences joined by a space."""
    found = _S_ELEMENT.findall(value)
    parts = found if found else [_S_TAG.sub(" ", value)]
    return _clean(" ".join(_clean(p) for p in parts if _clean(p)))


def _article_id(value: str) -> str:
    """Paper id of a Reference/Citing Article cell: ``C00-2123.xml`` -> ``C00-2123``."""
    value = value.strip()
    return re.sub(r"\.(xml|txt)$", "", value, flags=re.IGNORECASE)


def _na(value: str) -> bool:
    """Whether a cell holds no value (``''`` or ``NA``)."""
    return value.strip().lower() in ("", "na", "none")


def _normalise_record(fields: dict[str, str]) -> dict:
    """The dict of one record's raw ``Field: value`` pairs; ValueError for a bad record.

    Keys: ``citance_number`` (int), ``reference_article``, ``citing_article`` (ids without
    extension), ``citation_marker_offsets``, ``citation_offsets``, ``reference_offsets``
    (lists of sid strings), ``citation_marker``, ``citation_text``, ``reference_text``
    (plain text, ``<S>`` markup removed), ``citation_text_raw``, ``reference_text_raw``,
    ``citation_text_clean`` (CSV only, else None), ``facets`` (canonical labels),
    ``annotator`` (None when absent).
    """
    missing = [f for f in _REQUIRED_FIELDS if f not in fields]
    if missing:
        raise ValueError(f"missing field(s) {', '.join(missing)}")
    number = fields["Citance Number"].strip()
    if not re.fullmatch(r"[0-9]+", number):
        raise ValueError(f"Citance Number {number!r} is not an integer")

    def get(name: str) -> str:
        return fields.get(name, "").strip()

    return {
        "citance_number": int(number),
        "reference_article": _article_id(get("Reference Article")),
        "citing_article": _article_id(get("Citing Article")),
        "citation_marker_offsets": list(parse_reference_offsets(get("Citation Marker Offset"))),
        "citation_marker": "" if _na(get("Citation Marker")) else get("Citation Marker"),
        "citation_offsets": list(parse_reference_offsets(get("Citation Offset"))),
        "citation_text": _strip_sentences(get("Citation Text")),
        "citation_text_raw": get("Citation Text"),
        "citation_text_clean": get("Citation Text Clean") if "Citation Text Clean" in fields else None,
        "reference_offsets": list(parse_reference_offsets(get("Reference Offset"))),
        "reference_text": _strip_sentences(get("Reference Text")),
        "reference_text_raw": get("Reference Text"),
        "facets": list(parse_facets(get("Discourse Facet"))),
        "annotator": get("Annotator") or None,
    }


def _split_record(line: str) -> dict[str, str]:
    """Raw ``Field: value`` pairs of one ``.ann.txt`` line; ValueError for unknown or clashing fields."""
    fields: dict[str, str] = {}
    for part in _FIELD_SPLIT.split(line.strip().rstrip("|").strip()):
        name, sep, value = part.partition(":")
        name, value = name.strip(), value.strip().rstrip("|").strip()
        if not sep or name not in ANNOTATION_FIELDS:
            raise ValueError(f"unexpected field {part[:40]!r}")
        if name in fields and fields[name] != value:
            raise ValueError(f"field {name!r} given twice with different values")
        fields[name] = value
    return fields


def _collect(rows: Iterable[tuple[int, dict[str, str]]], source: str) -> list[dict]:
    """Normalised records of (line number, raw fields) rows; bad ones skipped with a warning."""
    records = []
    for line_no, fields in rows:
        try:
            record = _normalise_record(fields)
        except ValueError as exc:
            warnings.warn(f"{source}, line {line_no}: record skipped ({exc})", stacklevel=3)
            continue
        record["line"] = line_no
        records.append(record)
    return records


def read_annotations(path: PathLike) -> list[dict]:
    """Records of a CL-SciSumm ``annotation/<RP>.ann.txt`` file, one dict per citance record.

    Records are lines of ``|``-separated ``Field: value`` pairs (:data:`ANNOTATION_FIELDS`);
    the dict keys are described in :func:`_normalise_record`, plus ``line`` (1-based).
    A malformed record or an unknown discourse facet is skipped with a warning naming the
    file and the line; the rest is read.
    """
    source = str(path)
    text = _decode(_read_bytes(path), source)
    rows = []
    for line_no, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append((line_no, _split_record(line)))
        except ValueError as exc:
            warnings.warn(f"{source}, line {line_no}: record skipped ({exc})", stacklevel=2)
    return _collect(rows, source)


def read_task1_csv(path: PathLike) -> list[dict]:
    """Records of a 2018 Task 1 CSV (``<RP>.csv``, gold ``<RP>_<annotator>.csv``).

    Same dict keys as :func:`read_annotations` (``citation_text_clean`` filled, ``line`` is
    the CSV row's line); answer columns (Reference Offset, Reference Text, Discourse
    Facet) may be empty. MalformedInputError when the header lacks a required column.
    """
    source = str(path)
    text = _decode(_read_bytes(path), source)
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = [h.strip() for h in (reader.fieldnames or [])]
    missing = [f for f in _REQUIRED_FIELDS if f not in header]
    if missing:
        raise MalformedInputError(source, f"is not a CL-SciSumm Task 1 CSV (missing column(s) {', '.join(missing)})")
    known = set(ANNOTATION_FIELDS) | set(_CSV_ONLY_FIELDS)
    rows = []
    for row in reader:
        fields = {k.strip(): (v or "") for k, v in row.items() if k and k.strip() in known}
        if not any(v.strip() for v in fields.values()):
            continue
        rows.append((reader.line_num, fields))
    return _collect(rows, source)


# --------------------------------------------------------------------------- ScisummNet


def read_citing_sentences(path: PathLike) -> list[dict]:
    """Citing sentences of a ScisummNet ``citing_sentences.json``.

    Each dict: ``citance_number`` (int), ``citing_paper_id``, ``citing_paper_authority``
    (int), ``citing_paper_authors`` (list, split on ``|``), ``raw_text``, ``clean_text``,
    ``keep_for_gold`` (bool). MalformedInputError when the file is not a JSON list of
    objects; an entry lacking ``citance_No`` or ``citing_paper_id`` is skipped with a warning.
    """
    source = str(path)
    try:
        data = json.loads(_decode(_read_bytes(path), source))
    except json.JSONDecodeError as exc:
        raise MalformedInputError(source, f"is not valid JSON ({exc})") from exc
    if not isinstance(data, list):
        raise MalformedInputError(source, "is not a JSON list of citing sentences")
    out = []
    for index, entry in enumerate(data):
        if not isinstance(entry, dict) or "citance_No" not in entry or "citing_paper_id" not in entry:
            warnings.warn(f"{source}, entry {index}: skipped (no citance_No or citing_paper_id)", stacklevel=2)
            continue
        authors = entry.get("citing_paper_authors") or ""
        out.append({
            "citance_number": int(entry["citance_No"]),
            "citing_paper_id": str(entry["citing_paper_id"]),
            "citing_paper_authority": int(entry.get("citing_paper_authority") or 0),
            "citing_paper_authors": [a.strip() for a in str(authors).split("|") if a.strip()],
            "raw_text": entry.get("raw_text") or "",
            "clean_text": entry.get("clean_text") or "",
            "keep_for_gold": bool(entry.get("keep_for_gold")),
        })
    return out


# --------------------------------------------------------------------------- RP folders


def annotation_files(rp_dir: PathLike) -> list[Path]:
    """The annotation files of a reference-paper folder, in name order.

    ``annotation/*.ann.txt`` / ``*.annv3.txt`` (training layouts) or, when there is none,
    ``annotation/*.csv`` (the 2018 test layout).
    """
    folder = Path(rp_dir) / "annotation"
    if not folder.is_dir():
        return []
    found = sorted(p for p in folder.iterdir() if p.name.endswith((".ann.txt", ".annv3.txt")))
    return found or sorted(folder.glob("*.csv"))


def read_folder_records(rp_dir: PathLike) -> list[dict]:
    """Citance records of every annotation file of a reference-paper folder (see :func:`annotation_files`)."""
    records = []
    for path in annotation_files(rp_dir):
        reader = read_task1_csv if path.suffix == ".csv" else read_annotations
        for record in reader(path):
            record["source"] = str(path)
            records.append(record)
    return records


def incoming_citance(record: dict) -> dict:
    """The ``doc._.incoming_citances`` entry of one annotation record.

    Keys: ``id`` (the Citance Number as a string), ``text`` (Citation Text Clean when the
    CSV has it, else the Citation Text without markup), ``citing_article``, ``marker``
    (the Citation Marker), ``sids`` (gold reference sentence ids, may be empty) and
    ``facets`` (gold canonical facets, may be empty).
    """
    text = (record.get("citation_text_clean") or "").strip() or record.get("citation_text", "")
    return {
        "id": str(record["citance_number"]),
        "text": _clean(text),
        "citing_article": record.get("citing_article", ""),
        "marker": record.get("citation_marker", ""),
        "sids": list(record.get("reference_offsets") or []),
        "facets": list(record.get("facets") or []),
    }


def _attachable(citances: list[dict], records: list[dict], known_sids: set[str], source: str) -> list[dict]:
    """Citances with unusable parts dropped, each problem warned once per file."""
    kept, empty, duplicate, unknown = [], [], [], []
    seen: set[str] = set()
    for citance, record in zip(citances, records):
        where = f"{Path(record.get('source', source)).name}:{record.get('line', '?')}"
        if not citance["text"]:
            empty.append(where)
            continue
        if citance["id"] in seen:
            duplicate.append(where)
            continue
        seen.add(citance["id"])
        missing = [sid for sid in citance["sids"] if sid not in known_sids]
        if missing:
            unknown.append(f"{where} ({', '.join(missing)})")
            citance["sids"] = [sid for sid in citance["sids"] if sid in known_sids]
        kept.append(citance)
    for problem, places in (("with empty citation text skipped", empty),
                            ("with a repeated Citance Number skipped", duplicate),
                            ("citing sentence ids that do not exist in the reference paper (ids dropped)", unknown)):
        if places:
            shown = ", ".join(places[:5]) + (f" and {len(places) - 5} more" if len(places) > 5 else "")
            warnings.warn(f"{source}: {len(places)} record(s) {problem}: {shown}", stacklevel=3)
    return kept


def reference_folder_doc(rp_dir: PathLike, nlp, *, with_citances: bool = True):
    """The Doc of a CL-SciSumm reference-paper folder, with the citances that cite it.

    Reads ``<RP>/Reference_XML/<RP>.xml`` (see :func:`reference_doc`; sids in
    ``doc._.paper_meta["sids"]``) and, with ``with_citances``, the folder's annotation
    file(s) (:func:`annotation_files`) into ``doc._.incoming_citances`` (see
    :func:`incoming_citance`). Records with empty citation text or a repeated Citance
    Number are skipped, and sids that are not in the reference paper dropped, each with
    a warning naming the file and line. Raises InputError when the folder has no
    Reference_XML file.
    """
    rp_dir = Path(rp_dir)
    xml_dir = rp_dir / "Reference_XML"
    candidates = sorted(xml_dir.glob("*.xml")) if xml_dir.is_dir() else []
    preferred = [p for p in candidates if p.stem == rp_dir.name]
    if not candidates:
        raise InputError(str(rp_dir), "has no Reference_XML/<RP>.xml")
    doc = reference_doc((preferred or candidates)[0], nlp, paper_id=rp_dir.name)
    citances: list[dict] = []
    if with_citances:
        records = read_folder_records(rp_dir)
        known = set(doc._.paper_meta["sids"])
        citances = _attachable([incoming_citance(r) for r in records], records, known, str(rp_dir))
    doc._.incoming_citances = citances
    return doc
