"""Seeded mutations of real TEI and PDF files, and a guarded way to read them.

Used by ``tests/test_fuzz_readers.py`` (a bounded run in CI) and
``benchmarks/fuzz_campaign.py`` (a longer one). Nothing here needs more than the standard
library and lxml.

* :func:`mutated_inputs` turns real files into a reproducible stream of :class:`MutatedInput`:
  each is one seeded mutation of one file: generic byte damage (flips, truncation, chunk
  duplication or deletion, junk), XML-aware damage for TEI (elements dropped, duplicated or
  moved, hostile ``coords``/``xml:id``/``target`` values, a DOCTYPE with entities, another
  namespace or encoding, deep nesting, many elements) and PDF-aware damage (a broken xref,
  truncated or inflating streams, hostile ``/MediaBox``, ``/Length``, ``/Count``, filters, a
  page tree with no pages or with itself as a kid).
* :func:`run_guarded` runs a function in a forked child process under a time limit
  (faulthandler dumps where it hung) and an address-space cap, and returns an
  :class:`Outcome`: ``doc``, ``named`` (a ScholarlyNLPError naming the file), ``wrapped`` (a
  plain InputError made by a safety net around an unexpected exception), ``unnamed`` (a
  library error that does not name the file), ``unexpected``, ``memory``, ``timeout``, ``crash``;
  :func:`judge` makes it ``wrong_answer`` where the mutation fixes the answer (a file that
  declares XML entities must be refused as unsafe, one duplicate ``xml:id`` must still read).
"""

from __future__ import annotations

import copy
import faulthandler
import functools
import multiprocessing
import os
import random
import re
import signal
import tempfile
import time
import traceback
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence

from lxml import etree

TEI_SUFFIX = ".tei.xml"
PDF_SUFFIX = ".pdf"
#: Outcomes the fuzz test accepts: a Doc, or a library error that names the file.
ACCEPTED = ("doc", "named")
#: Every outcome, in report order.
OUTCOMES = ("doc", "named", "wrong_answer", "wrapped", "unnamed", "unexpected", "memory", "timeout", "crash")

#: How a safety net words an exception it turned into a plain InputError: "... (ValueError: ...)".
SAFETY_NET_MESSAGE = re.compile(r"\((\w+(?:Error|Exception|Interrupt))(?::|\))")
#: Mutations whose file must end one way whatever else happens: files that declare XML
#: entities are refused as unsafe (in any encoding); one duplicate ``xml:id`` is only a warning.
EXPECTED = (
    (re.compile(r"xml_doctype\((billion_laughs|external_entity|parameter_entity)\)$"), "UnsafeInputError"),
    (re.compile(r"xml_encoding\(utf-(16|32)-dtd\)$"), "UnsafeInputError"),
    (re.compile(r"xml_corrupt_id\([^,]*,x1,'dup:"), "doc"),
)

XML_NS = "http://www.w3.org/XML/1998/namespace"
TEI_NS = "http://www.tei-c.org/ns/1.0"


@dataclass(frozen=True)
class MutatedInput:
    """One mutated file: where it came from, what was done to it, and its bytes."""

    index: int
    source: Path
    mutation: str
    data: bytes
    suffix: str

    def file_name(self) -> str:
        """A safe, unique file name that keeps the format's extension."""
        stem = re.sub(r"[^A-Za-z0-9._-]+", "_", self.source.name.split(".")[0])[:40]
        kind = re.sub(r"[^A-Za-z0-9]+", "_", self.mutation.split("(")[0])[:30]
        return f"{self.index:04d}-{stem}-{kind}{self.suffix}"

    def write(self, folder: Path) -> Path:
        """Write the bytes under ``folder`` and return the path."""
        path = Path(folder) / self.file_name()
        path.write_bytes(self.data)
        return path


# --------------------------------------------------------------------------- generic byte damage


def flip_bytes(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """XOR a few random bytes with a random non-zero value."""
    if not data:
        return "flip_bytes(empty)", data
    out = bytearray(data)
    count = rng.choice((1, 2, 5, 20, 100))
    for _ in range(count):
        out[rng.randrange(len(out))] ^= rng.randrange(1, 256)
    return f"flip_bytes(n={count})", bytes(out)


def truncate(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """Cut the file at a random point (sometimes to nothing, sometimes just before the end)."""
    cut = rng.choice((0, rng.randrange(max(1, len(data))), max(0, len(data) - rng.randrange(1, 64))))
    return f"truncate(at={cut})", data[:cut]


def _span(data: bytes, rng: random.Random, longest: int = 4096) -> tuple[int, int]:
    start = rng.randrange(max(1, len(data)))
    return start, min(len(data), start + rng.randrange(1, longest + 1))


def duplicate_chunk(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """Copy a random chunk and insert it at another random position."""
    start, end = _span(data, rng)
    at = rng.randrange(len(data) + 1)
    return f"duplicate_chunk({start}:{end}->{at})", data[:at] + data[start:end] + data[at:]


def delete_chunk(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """Delete a random chunk."""
    start, end = _span(data, rng)
    return f"delete_chunk({start}:{end})", data[:start] + data[end:]


def insert_junk(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """Insert random bytes (NULs, invalid UTF-8, control characters) at a random position."""
    junk = rng.choice((b"\x00" * 16, b"\xff\xfe\xfd", b"\x1b[31m\x07\x08", bytes(rng.randrange(256) for _ in range(64)),
                       b"\xed\xa0\x80", "\u202e\ufeff".encode("utf-8")))
    at = rng.randrange(len(data) + 1)
    return f"insert_junk(at={at},len={len(junk)})", data[:at] + junk + data[at:]


BYTE_MUTATIONS: tuple[Callable[[bytes, random.Random], tuple[str, bytes]], ...] = (
    flip_bytes, truncate, duplicate_chunk, delete_chunk, insert_junk)


# --------------------------------------------------------------------------- XML-aware damage (TEI)

HOSTILE_VALUES = {
    "coords": ("inf,0,0,1,1", "nan,nan,nan,nan,nan", "1,-1e308,1e308,0,0", "1,1e400,2,3,4", "0,0,0,0", "",
               "1;2;3", "x,y,z,w,v", "1,2,3,4,5;" * 2000, "99999999999999999999999,1,1,1,1", "-1,-5,-5,-5,-5",
               "1,2,3", "2147483648,0,0,10,10"),
    "id": ("", "#", "   ", "b0", "fig_0", "x" * 10000, "\u00e9\u4e2d", "dup"),
    "target": ("#missing", "", "#", "#b0 #b1 #b2", "#fig_0 #tab_0", "http://example.invalid/x", "#b0 " * 5000,
               "#" + "x" * 10000, "file:///etc/passwd"),
    "n": ("-1", "1e308", "", "99999999999999999999", "NaN", "\u0661"),
    "when": ("-1", "99999-99-99", "", "2020-13-45"),
    "type": ("", "figure table", "bibr" * 1000, "\x7f"),
}

#: How often each attribute is corrupted: the ones the readers resolve most, most often.
ATTRIBUTE_WEIGHTS = {"coords": 3, "id": 3, "target": 3, "n": 1, "when": 1, "type": 1}
#: Where GROBID puts each attribute, for files that carry none (most TEI here has no coords).
ATTRIBUTE_HOMES = {
    "coords": ("figure", "graphic", "ref", "s", "head", "formula", "biblStruct", "persName"),
    "id": ("figure", "biblStruct", "formula", "div", "note", "table"),
    "target": ("ref", "ptr"),
    "n": ("head", "formula", "div", "biblScope"),
    "when": ("date",),
    "type": ("ref", "figure", "note", "biblScope"),
}

DOCTYPES = {
    "billion_laughs": (b'<!DOCTYPE TEI [<!ENTITY a "lol"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
                       b'<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">]>',
                       b"&d;"),
    "external_entity": (b'<!DOCTYPE TEI [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>', b"&xxe;"),
    "external_dtd": (b'<!DOCTYPE TEI SYSTEM "http://127.0.0.1:9/tei.dtd">', b""),
    "parameter_entity": (b'<!DOCTYPE TEI [<!ENTITY % p SYSTEM "file:///etc/hostname"> %p;]>', b""),
    "plain_doctype": (b"<!DOCTYPE TEI>", b""),
}


def _parse(data: bytes) -> Optional[etree._ElementTree]:
    try:
        return etree.ElementTree(etree.fromstring(data, etree.XMLParser(resolve_entities=False, no_network=True,
                                                                        load_dtd=False)))
    except etree.XMLSyntaxError:
        return None


def _serialize(tree: etree._ElementTree) -> bytes:
    return etree.tostring(tree, xml_declaration=True, encoding="UTF-8")


def _elements(tree: etree._ElementTree) -> list:
    return [e for e in tree.getroot().iter() if isinstance(e.tag, str)]


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def drop_element(tree, rng) -> str:
    """Remove a random element (not the root) with its subtree, keeping its tail text."""
    element = rng.choice(_elements(tree)[1:])
    parent = element.getparent()
    if element.tail:
        previous = element.getprevious()
        if previous is not None:
            previous.tail = (previous.tail or "") + element.tail
        else:
            parent.text = (parent.text or "") + element.tail
    parent.remove(element)
    return f"xml_drop_element({_local(element.tag)})"


def duplicate_element(tree, rng) -> str:
    """Insert a deep copy of a random element (its ids included) right after it, 1 to 50 times."""
    element = rng.choice(_elements(tree)[1:])
    times = rng.choice((1, 2, 50))
    for _ in range(times):
        element.addnext(copy.deepcopy(element))
    return f"xml_duplicate_element({_local(element.tag)},x{times})"


def move_element(tree, rng) -> str:
    """Move a random element into another random element that is not inside it."""
    elements = _elements(tree)
    element = rng.choice(elements[1:])
    inside = set(element.iter())
    targets = [e for e in elements if e not in inside]
    target = rng.choice(targets)
    target.insert(rng.randrange(len(target) + 1), element)
    return f"xml_move_element({_local(element.tag)}->{_local(target.tag)})"


def corrupt_attribute(tree, rng) -> str:
    """Give one element (or up to 20) a hostile coords, xml:id, target, n, when or type value:
    elements that carry the attribute, else elements where GROBID would put it."""
    names = sorted(ATTRIBUTE_WEIGHTS)
    name = rng.choices(names, weights=[ATTRIBUTE_WEIGHTS[n] for n in names])[0]
    key = f"{{{XML_NS}}}id" if name == "id" else name
    elements = _elements(tree)
    carriers = ([e for e in elements if key in e.attrib]
                or [e for e in elements if _local(e.tag) in ATTRIBUTE_HOMES[name]] or elements)
    value = rng.choice(HOSTILE_VALUES[name])
    label = value
    if name == "id" and value == "dup":  # another element's id: the file then has one duplicate
        ids = [e.get(key) for e in elements if e.get(key)]
        value = rng.choice(ids) if ids else "b0"
        label = f"dup:{value}"
    chosen = rng.sample(carriers, min(len(carriers), rng.choice((1, 1, 20))))
    for element in chosen:
        element.set(key, value)
    return f"xml_corrupt_{name}({_local(chosen[0].tag)},x{len(chosen)},{label[:24]!r})"


def add_attribute(tree, rng) -> str:
    """Put a hostile coords or target on an element that had none."""
    element = rng.choice(_elements(tree))
    name = rng.choice(("coords", "target"))
    value = rng.choice(HOSTILE_VALUES[name])
    element.set(name, value)
    return f"xml_add_{name}({_local(element.tag)},{value[:24]!r})"


def many_elements(tree, rng) -> str:
    """Append thousands of figures and untargeted refs to a paragraph (a quadratic-path probe)."""
    paragraphs = [e for e in _elements(tree) if _local(e.tag) == "p"] or _elements(tree)[1:] or [tree.getroot()]
    paragraph = rng.choice(paragraphs)
    count = rng.choice((500, 2000, 5000))
    ns = TEI_NS if paragraph.tag.startswith("{") else None
    tag = (lambda name: f"{{{ns}}}{name}") if ns else (lambda name: name)
    for i in range(count):
        ref = etree.SubElement(paragraph, tag("ref"), type=rng.choice(("figure", "bibr", "table")))
        ref.text = f"Figure {i}"
        ref.tail = " and "
    body = next((e for e in _elements(tree) if _local(e.tag) == "body"), tree.getroot())
    for i in range(count // 5):
        figure = etree.SubElement(body, tag("figure"), {f"{{{XML_NS}}}id": f"fuzzfig_{i}"})
        etree.SubElement(figure, tag("head")).text = f"Figure {i}"
    return f"xml_many_elements(n={count})"


def deep_nesting(tree, rng) -> str:
    """Nest a paragraph's content inside thousands of ``<hi>`` elements."""
    depth = rng.choice((200, 1000, 5000))
    root_ns = TEI_NS if tree.getroot().tag.startswith("{") else None
    tag = f"{{{root_ns}}}hi" if root_ns else "hi"
    paragraphs = [e for e in _elements(tree) if _local(e.tag) == "p"] or [tree.getroot()]
    current = rng.choice(paragraphs)
    for _ in range(depth):
        current = etree.SubElement(current, tag)
    current.text = "deep"
    return f"xml_deep_nesting(depth={depth})"


def huge_text(tree, rng) -> str:
    """Put a long text node (up to ~1.2M characters) into a paragraph."""
    length = rng.choice((10_000, 200_000, 1_200_000))
    paragraphs = [e for e in _elements(tree) if _local(e.tag) == "p"] or [tree.getroot()]
    element = rng.choice(paragraphs)
    element.text = (element.text or "") + ("word " * (length // 5))
    return f"xml_huge_text(chars={length})"


def empty_body(tree, rng) -> str:
    """Remove every element inside ``<body>`` (or every text, when there is no body)."""
    body = next((e for e in _elements(tree) if _local(e.tag) == "body"), None)
    if body is None:
        for element in _elements(tree):
            element.text = None
        return "xml_empty_text"
    for child in list(body):
        body.remove(child)
    body.text = None
    return "xml_empty_body"


TREE_MUTATIONS = (drop_element, duplicate_element, move_element, corrupt_attribute, corrupt_attribute,
                  corrupt_attribute, add_attribute, many_elements, deep_nesting, huge_text, empty_body)


def insert_doctype(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """Insert a DOCTYPE (entity bombs, external entities, an external DTD) after the declaration,
    and use the entity in the first paragraph."""
    name = rng.choice(sorted(DOCTYPES))
    doctype, use = DOCTYPES[name]
    declaration = re.match(rb"\s*<\?xml[^>]*\?>", data)
    at = declaration.end() if declaration else 0
    data = data[:at] + b"\n" + doctype + data[at:]
    if use:
        data = re.sub(rb"(<p[\s>][^>]*>|<p>)", lambda m: m.group(1) + use, data, count=1)
    return f"xml_doctype({name})", data


def change_namespace(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """Drop the TEI namespace, or replace it with another one."""
    replacement = rng.choice((b"", b' xmlns="http://example.invalid/not-tei"', b' xmlns="http://www.tei-c.org/ns/2.0"'))
    out = re.sub(rb'\s+xmlns="http://www\.tei-c\.org/ns/1\.0"', replacement, data, count=1)
    return f"xml_namespace({replacement.decode().strip() or 'none'})", out


def change_encoding(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """Re-encode as UTF-16/32 (with or without a DOCTYPE), or declare an encoding the bytes do not have."""
    text = data.decode("utf-8", errors="replace")
    body = re.sub(r"^\s*<\?xml[^>]*\?>", "", text)
    choice = rng.choice(("utf-16", "utf-16-dtd", "utf-32-dtd", "utf-16-le-nobom", "declared-latin1", "declared-bogus",
                         "declared-utf16"))
    if choice.endswith("-dtd"):
        codec = choice[:-4]
        doctype = '<!DOCTYPE TEI [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>\n'
        return f"xml_encoding({choice})", (f'<?xml version="1.0" encoding="{codec.upper()}"?>\n' + doctype + body
                                         ).encode(codec)
    if choice == "utf-16":
        return "xml_encoding(utf-16)", ('<?xml version="1.0" encoding="UTF-16"?>\n' + body).encode("utf-16")
    if choice == "utf-16-le-nobom":
        return "xml_encoding(utf-16-le-nobom)", ('<?xml version="1.0" encoding="UTF-16"?>\n' + body).encode("utf-16-le")
    declared = {"declared-latin1": "ISO-8859-1", "declared-bogus": "X-NO-SUCH", "declared-utf16": "UTF-16"}[choice]
    return f"xml_encoding({choice})", (f'<?xml version="1.0" encoding="{declared}"?>\n' + body).encode("utf-8")


def insert_markup(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """Insert a processing instruction, XInclude, CDATA, comment or stray closing tag after the first ``<p>``."""
    snippet = rng.choice((b"<?php system('id'); ?>", b'<xi:include xmlns:xi="http://www.w3.org/2001/XInclude" '
                          b'href="file:///etc/passwd" parse="text"/>', b"<![CDATA[<ref target='#b0'>x</ref>]]>",
                          b"<!-- -- -->", b"</p></div>", b"<ref target=\"#b0\">[1]", b"&#0;", b"&#x110000;",
                          b"&undefined;"))
    out = re.sub(rb"(<p[\s>][^>]*>|<p>)", lambda m: m.group(1) + snippet, data, count=1)
    return f"xml_markup({snippet[:20]!r})", out


TEXT_MUTATIONS = (insert_doctype, change_namespace, change_encoding, insert_markup)


def mutate_tei(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """One seeded mutation of a TEI file: XML-aware most of the time, bytes otherwise."""
    roll = rng.random()
    if roll < 0.3:
        return rng.choice(BYTE_MUTATIONS)(data, rng)
    if roll < 0.55:
        return rng.choice(TEXT_MUTATIONS)(data, rng)
    tree = _parse(data)
    if tree is None:
        return rng.choice(BYTE_MUTATIONS)(data, rng)
    name = rng.choice(TREE_MUTATIONS)(tree, rng)
    return name, _serialize(tree)


# --------------------------------------------------------------------------- PDF-aware damage

MEDIABOXES = (b"0 0 3e7 3e7", b"0 0 30000000 30000000", b"0 0 -612 -792", b"0 0 0 0", b"0 0 1e300 1e300",
              b"0 0 nan nan", b"0 0 612", b"a b c d", b"0 0 14400 14400", b"-1e9 -1e9 1e9 1e9", b"0 0 612 792 5 6",
              b"0 0 99999999999999999999 1")


def _replace_match(data: bytes, pattern: bytes, rng: random.Random, make: Callable[[re.Match], bytes]) -> Optional[bytes]:
    matches = list(re.finditer(pattern, data))
    if not matches:
        return None
    match = rng.choice(matches)
    return data[:match.start()] + make(match) + data[match.end():]


def corrupt_xref(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """Break the cross-reference: a wrong startxref, wrong offsets in the table, or no table keyword."""
    choice = rng.choice(("startxref", "offsets", "keyword"))
    if choice == "startxref":
        value = rng.choice((b"0", b"1", b"-5", b"99999999999", str(rng.randrange(len(data) + 1)).encode()))
        out = _replace_match(data, rb"startxref\s+\d+", rng, lambda m: b"startxref\n" + value)
        if out is not None:
            return f"pdf_xref(startxref={value.decode()})", out
    if choice == "offsets":
        entries = list(re.finditer(rb"\d{10} \d{5} n", data))
        if entries:
            out = bytearray(data)
            for match in rng.sample(entries, min(len(entries), rng.choice((1, 3, len(entries))))):
                out[match.start():match.start() + 10] = b"%010d" % rng.randrange(10 ** 10)
            return "pdf_xref(offsets)", bytes(out)
    out = data.replace(b"xref", b"xrfe", 1) if b"xref" in data else data
    return "pdf_xref(keyword)", out


def truncate_stream(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """Cut a stream's bytes short (its /Length now lies), or replace them with junk."""
    streams = list(re.finditer(rb"stream\r?\n(.*?)endstream", data, re.S))
    if not streams:
        return truncate(data, rng)
    match = rng.choice(streams)
    start, end = match.span(1)
    if rng.random() < 0.5:
        keep = rng.randrange(max(1, end - start))
        return f"pdf_truncate_stream(kept={keep}/{end - start})", data[:start + keep] + data[end:]
    junk = bytes(rng.randrange(256) for _ in range(min(end - start, 512)))
    return "pdf_stream_junk", data[:start] + junk + data[start + len(junk):]


def mangle_mediabox(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """Give a page a hostile /MediaBox (3e7 pt, negative, empty, NaN, too few numbers)."""
    box = rng.choice(MEDIABOXES)
    out = _replace_match(data, rb"/MediaBox\s*\[[^\]]*\]", rng, lambda m: b"/MediaBox [" + box + b"]")
    if out is None:  # boxes inside compressed object streams: add one to a page dictionary
        out = _replace_match(data, rb"/Type\s*/Page(?!s)", rng, lambda m: m.group(0) + b" /MediaBox [" + box + b"]")
    return f"pdf_mediabox({box.decode()})", out if out is not None else data


def mangle_numbers(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """A hostile /Length, /Count, /Rotate or /W (object-stream widths)."""
    key = rng.choice((b"Length", b"Count", b"Rotate", b"N", b"Size"))
    value = rng.choice((b"0", b"-1", b"999999999", b"1e308", b"2147483648", b"7"))
    out = _replace_match(data, rb"/" + key + rb"\s+-?\d+(?!\s+\d+\s+R)", rng, lambda m: b"/" + key + b" " + value)
    if out is None:
        return flip_bytes(data, rng)
    return f"pdf_number({key.decode()}={value.decode()})", out


def change_filter(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """Name another (or an unknown) filter for a stream."""
    new = rng.choice((b"/LZWDecode", b"/JBIG2Decode", b"/Crypt", b"/NoSuchDecode", b"[/FlateDecode /FlateDecode]",
                      b"/DCTDecode"))
    out = _replace_match(data, rb"/FlateDecode", rng, lambda m: new)
    if out is None:
        return flip_bytes(data, rng)
    return f"pdf_filter({new.decode()})", out


@functools.lru_cache(maxsize=None)
def _deflated_zeros(megabytes: int) -> bytes:
    """``megabytes`` MiB of zeros, deflated a MiB at a time (never all in memory)."""
    compressor = zlib.compressobj(9)
    zeros = bytes(1 << 20)
    return b"".join(compressor.compress(zeros) for _ in range(megabytes)) + compressor.flush()


def inflation_bomb(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """Replace a stream with deflated zeros that inflate to tens or hundreds of MB."""
    megabytes = rng.choice((20, 100, 400))
    payload = _deflated_zeros(megabytes)
    streams = list(re.finditer(rb"<<([^<>]|<<[^<>]*>>)*?/Length\s+\d+([^<>]|<<[^<>]*>>)*?>>\s*stream\r?\n(.*?)endstream",
                               data, re.S))
    if not streams:
        return truncate(data, rng)
    match = rng.choice(streams)
    header = re.sub(rb"/Length\s+\d+(\s+\d+\s+R)?", b"/Length %d" % len(payload), data[match.start():match.start(3)])
    if b"/FlateDecode" not in header:
        header = header.replace(b"/Length", b"/Filter /FlateDecode /Length", 1)
    return f"pdf_inflation_bomb({megabytes}MB)", data[:match.start()] + header + payload + b"\nendstream" + data[match.end():]


def add_encrypt(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """Claim the file is encrypted (an /Encrypt entry in the trailer)."""
    out = _replace_match(data, rb"trailer\s*<<", rng,
                         lambda m: m.group(0) + b" /Encrypt << /Filter /Standard /V 1 /R 2 /O (x) /U (y) /P -4 >>")
    if out is None:
        return corrupt_xref(data, rng)
    return "pdf_encrypt", out


def drop_eof(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """Remove the %%EOF marker and the trailer after it, or double the trailer."""
    at = data.rfind(b"trailer")
    if at < 0 or rng.random() < 0.5:
        return "pdf_drop_eof", data.replace(b"%%EOF", b"", 1)
    return "pdf_double_trailer", data + data[at:]


def empty_page_tree(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """Leave the page tree without pages (``/Kids []``, ``/Count 0``), or make it its own kid."""
    cyclic = rng.random() < 0.3
    pattern = rb"(\d+) (\d+) obj\s*<<([^<>]|<<[^<>]*>>)*?/Type\s*/Pages(?![a-zA-Z])([^<>]|<<[^<>]*>>)*?>>"

    def rewrite(match: re.Match) -> bytes:
        kids = b"/Kids [%s %s R]" % (match.group(1), match.group(2)) if cyclic else b"/Kids []"
        body = re.sub(rb"/Kids\s*\[[^\]]*\]", kids, match.group(0))
        return body if cyclic else re.sub(rb"/Count\s+\d+", b"/Count 0", body)

    out = _replace_match(data, pattern, rng, rewrite)
    if out is None:
        return corrupt_xref(data, rng)
    return f"pdf_page_tree({'cycle' if cyclic else 'empty'})", out


PDF_MUTATIONS = (corrupt_xref, truncate_stream, mangle_mediabox, mangle_mediabox, mangle_numbers, change_filter,
                 inflation_bomb, add_encrypt, drop_eof, empty_page_tree)


def mutate_pdf(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """One seeded mutation of a PDF file: PDF-aware most of the time, bytes otherwise."""
    if rng.random() < 0.3:
        return rng.choice(BYTE_MUTATIONS)(data, rng)
    return rng.choice(PDF_MUTATIONS)(data, rng)


# --------------------------------------------------------------------------- input streams


def mutated_inputs(sources: Sequence[Path], count: int, seed: int, start: int = 0) -> Iterator[MutatedInput]:
    """``count`` mutated inputs from ``sources`` (TEI or PDF by suffix), reproducible from ``seed``.

    Input ``i`` depends only on ``(seed, i)`` and the sources, so one input can be remade
    alone (``start=i, count=1``).
    """
    sources = sorted(Path(s) for s in sources)
    for index in range(start, start + count):
        rng = random.Random(f"{seed}:{index}")
        source = rng.choice(sources)
        data = source.read_bytes()
        is_pdf = source.name.lower().endswith(PDF_SUFFIX)
        mutation, mutated = (mutate_pdf if is_pdf else mutate_tei)(data, rng)
        yield MutatedInput(index=index, source=source, mutation=mutation, data=mutated,
                           suffix=PDF_SUFFIX if is_pdf else TEI_SUFFIX)


def source_files(root: Path, folders: Iterable[str], suffix: str, max_bytes: Optional[int] = None) -> list[Path]:
    """Files ending in ``suffix`` directly in ``root/folder`` for each folder, at most ``max_bytes`` each."""
    found = []
    for folder in folders:
        for path in sorted((Path(root) / folder).glob(f"*{suffix}")):
            if max_bytes is None or path.stat().st_size <= max_bytes:
                found.append(path)
    return found


# --------------------------------------------------------------------------- outcomes


@dataclass
class Outcome:
    """How one guarded call ended."""

    kind: str
    error_class: str = ""
    message: str = ""
    where: str = ""
    seconds: float = 0.0

    @property
    def accepted(self) -> bool:
        """A Doc, or a library error naming the file."""
        return self.kind in ACCEPTED

    def signature(self) -> tuple[str, str, str]:
        """What makes two failures the same: the outcome, the class, and where it was raised."""
        return self.kind, self.error_class, self.where.strip().splitlines()[-1] if self.where.strip() else ""


def classify_error(exc: BaseException, path: str) -> Outcome:
    """The outcome of a call that raised ``exc`` while reading ``path``."""
    from scholarly_nlp.errors import InputError, ScholarlyNLPError

    message = str(exc)[:600]
    where = _raise_site(exc)
    if isinstance(exc, MemoryError):
        return Outcome("memory", type(exc).__name__, message, where)
    if not isinstance(exc, ScholarlyNLPError):
        return Outcome("unexpected", type(exc).__name__, message, where)
    cause = exc.__cause__
    if type(exc) is InputError and isinstance(cause, Exception) and not isinstance(cause, ScholarlyNLPError):
        return Outcome("wrapped", f"InputError<-{type(cause).__name__}", message, _raise_site(cause))
    named_cause = SAFETY_NET_MESSAGE.search(message) if type(exc) is InputError else None
    if named_cause:  # a safety net that kept the exception's name but not the exception
        return Outcome("wrapped", f"InputError<-{named_cause.group(1)}", message, where)
    if str(path) not in str(exc):
        return Outcome("unnamed", type(exc).__name__, message, where)
    return Outcome("named", type(exc).__name__, message, where)


def _raise_site(exc: BaseException) -> str:
    """The innermost frames of an exception's traceback, as ``file:line function`` lines."""
    frames = traceback.extract_tb(exc.__traceback__)[-3:]
    return "\n".join(f"{Path(f.filename).name}:{f.lineno} {f.name}" for f in frames)


def read_outcome(read: Callable[[str], Any], path: str) -> Outcome:
    """Call ``read(path)`` and classify what it gives: a spaCy Doc, or the error it raised."""
    from spacy.tokens import Doc

    started = time.perf_counter()
    try:
        result = read(path)
    except Exception as exc:  # classifying every failure is the point
        outcome = classify_error(exc, path)
    else:
        outcome = Outcome("doc") if isinstance(result, Doc) else Outcome("unexpected", type(result).__name__,
                                                                          "returned something other than a Doc")
    outcome.seconds = time.perf_counter() - started
    return outcome


# --------------------------------------------------------------------------- the guard


@dataclass
class Limits:
    """What one guarded call may take: wall-clock seconds and extra address space (MiB)."""

    seconds: float = 20.0
    memory_mb: int = 3072


def _address_space_now() -> Optional[int]:
    """This process's virtual size in bytes (Linux), or None where /proc is missing."""
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _child(send: Any, call: Callable[[], Any], limits: Limits, log_path: str) -> None:
    """In the forked child: cap memory, arm the hang dump, run, send the result, exit at once."""
    import resource

    log = open(log_path, "w")
    os.dup2(log.fileno(), 2)
    faulthandler.enable(file=log)  # a crash dump goes to the log, not to a test runner's stderr
    now = _address_space_now()
    if now is not None:
        cap = now + limits.memory_mb * (1 << 20)
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    faulthandler.dump_traceback_later(limits.seconds, exit=True, file=log)
    try:
        result = call()
    except BaseException as exc:  # noqa: BLE001 - report anything, the child exits right after
        result = Outcome("unexpected", type(exc).__name__, str(exc)[:600], _raise_site(exc))
    faulthandler.cancel_dump_traceback_later()
    try:
        send.send(result)
    finally:
        os._exit(0)  # no atexit handlers, no inherited pytest teardown


@dataclass
class _Running:
    item: Any
    process: Any
    receive: Any
    log_path: str
    started: float = field(default_factory=time.perf_counter)


def run_guarded(calls: Sequence[tuple[Any, Callable[[], Any]]], limits: Limits, jobs: int = 1,
                workdir: Optional[str] = None) -> Iterator[tuple[Any, Any]]:
    """Run each ``(item, call)`` in its own forked child, ``jobs`` at a time, under ``limits``.

    Yields ``(item, result)`` as they finish. ``result`` is what ``call`` returned, or an
    :class:`Outcome` of kind ``timeout`` (with where it hung), ``crash`` (the signal or exit
    code, and the end of its stderr) or ``unexpected`` (the call itself raised).
    """
    context = multiprocessing.get_context("fork")
    pending = list(calls)
    running: list[_Running] = []
    workdir = workdir or tempfile.mkdtemp(prefix="fuzz-guard-")
    counter = 0
    while pending or running:
        while pending and len(running) < jobs:
            item, call = pending.pop(0)
            receive, send = context.Pipe(duplex=False)
            counter += 1
            log_path = os.path.join(workdir, f"child-{counter}.log")
            # Not a daemon: a reader may start worker processes of its own.
            process = context.Process(target=_child, args=(send, call, limits, log_path))
            process.start()
            send.close()
            running.append(_Running(item, process, receive, log_path))
        done = _wait_any(running, limits)
        for job in done:
            running.remove(job)
            yield job.item, _finish(job, limits)


def _wait_any(running: list[_Running], limits: Limits) -> list[_Running]:
    """Block until at least one job has a result, died or ran out of time."""
    from multiprocessing.connection import wait

    while True:
        now = time.perf_counter()
        finished = [job for job in running if job.receive.poll() or not job.process.is_alive()
                    or now - job.started > limits.seconds + 10]
        if finished:
            return finished
        wait([job.receive for job in running] + [job.process.sentinel for job in running], timeout=0.5)


def _finish(job: _Running, limits: Limits) -> Any:
    seconds = time.perf_counter() - job.started
    result = None
    try:
        if job.receive.poll():
            result = job.receive.recv()
    except (EOFError, OSError):
        result = None
    if job.process.is_alive() and result is None:
        job.process.kill()
    job.process.join(5)
    if job.process.is_alive():
        job.process.kill()
        job.process.join()
    log = _read_log(job.log_path)
    if result is not None:
        return result
    if "Timeout (" in log or seconds > limits.seconds:
        return Outcome("timeout", "", f"over {limits.seconds:.0f} s", _hang_site(log), seconds)
    code = job.process.exitcode
    name = signal.Signals(-code).name if code is not None and code < 0 else f"exit code {code}"
    return Outcome("crash", name, log.strip()[-600:], "", seconds)


def _read_log(path: str) -> str:
    try:
        return Path(path).read_text(errors="replace")
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass


def _hang_site(log: str) -> str:
    """The innermost frames of the main thread from a faulthandler dump."""
    frames = [line.strip() for line in log.splitlines() if line.strip().startswith("File ")]
    site = []
    for line in frames[:3]:  # faulthandler lists the innermost frame first
        match = re.match(r'File "(.*)", line (\d+) in (.*)', line)
        if match:
            site.append(f"{Path(match.group(1)).name}:{match.group(2)} {match.group(3)}")
    return "\n".join(reversed(site))


def expected_ending(mutation: str) -> Optional[str]:
    """How an input with this mutation must end (``doc`` or an error class), if fixed (``EXPECTED``)."""
    return next((ending for pattern, ending in EXPECTED if pattern.match(mutation)), None)


def judge(item: MutatedInput, outcome: Outcome) -> Outcome:
    """``outcome``, or ``wrong_answer`` when the mutation fixes how it must end and it ended otherwise."""
    required = expected_ending(item.mutation)
    got = "doc" if outcome.kind == "doc" else outcome.error_class
    if required is None or outcome.kind not in ACCEPTED or got == required:
        return outcome
    return Outcome("wrong_answer", outcome.error_class, f"gave {got}, not {required}: {outcome.message}"[:600],
                   outcome.where, outcome.seconds)


def describe(item: MutatedInput, outcome: Outcome) -> str:
    """One line for a report: the input, its mutation, and how it ended."""
    where = outcome.where.strip().splitlines()[-1] if outcome.where.strip() else ""
    return (f"[{item.index}] {item.source.name} {item.mutation}: {outcome.kind} {outcome.error_class} "
            f"{outcome.message[:200]!r} at {where}")


def counts(outcomes: Iterable[Outcome]) -> dict[str, int]:
    """How many outcomes of each kind, in report order (zero counts included)."""
    tally = {kind: 0 for kind in OUTCOMES}
    for outcome in outcomes:
        tally[outcome.kind] = tally.get(outcome.kind, 0) + 1
    return tally
