"""CL-SciSumm 2018 Task 1 CSV files: reading raw rows and writing system or gold files.

The 2018 test layout gives each reference paper an ``annotation/<RP>.csv`` with the
columns of :data:`TASK1_CSV_HEADER` and empty answer columns (Reference Offset,
Reference Text, Discourse Facet); a system answers by filling them, and the official
script (``2018-evaluation-script/program/task1_eval.py``) scores the result against the
gold ``<RP>_<annotator>.csv`` files (see :func:`scholarly_nlp.readers.clscisumm_cells.
official_task1_maps` for how it reads them).

* :func:`read_task1_rows`: the rows exactly as the script's ``csv.reader`` sees them
  (raw cells, nothing normalised), for exact official scoring. For normalised records
  use :func:`scholarly_nlp.readers.clscisumm.read_task1_csv`.
* :func:`write_task1_csv`: write rows atomically, formatting answers the way the script
  reads them: Reference Offset ``['17', '18']``, Reference Text as ``<S sid ="17" ssid =
  "3">...</S>`` elements (:func:`reference_text_markup`), Discourse Facet
  ``Method_Citation`` or ``['Method_Citation', 'Results_Citation']``.
* :func:`task1_row`: the CSV row of an annotation record (``.ann.txt``), with or without
  its answers (building a test layout and its gold files).
"""

from __future__ import annotations

import csv
import io
import re
import warnings
from pathlib import Path
from typing import Iterable, Mapping, Optional, Sequence, Union

from ..doc.serialize import write_atomic
from ..errors import MalformedInputError
from .clscisumm_cells import official_facet_name, parse_reference_offsets
from .clscisumm import ANNOTATION_FIELDS, _decode, _read_bytes

PathLike = Union[str, Path]

__all__ = [
    "TASK1_CSV_HEADER",
    "ANSWER_COLUMNS",
    "format_reference_offset",
    "format_facets",
    "reference_text_markup",
    "read_task1_rows",
    "write_task1_csv",
    "task1_row",
]

#: Columns of a 2018 Task 1 CSV, in the published order.
TASK1_CSV_HEADER = ANNOTATION_FIELDS[:7] + ("Citation Text Clean",) + ANNOTATION_FIELDS[7:10]
#: The columns a system fills in.
ANSWER_COLUMNS = ("Reference Offset", "Reference Text", "Discourse Facet")

# Characters XML 1.0 does not allow (they would make the Reference Text unparsable).
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_WS = re.compile(r"\s+")


def format_reference_offset(sids: Union[str, int, Iterable[Union[str, int]]]) -> str:
    """A Reference Offset cell: ``['17', '18']`` (ids normalised and deduplicated, order kept).

    Accepts whatever :func:`~scholarly_nlp.readers.clscisumm_cells.parse_reference_offsets`
    accepts; no id gives ``''``.
    """
    ids = parse_reference_offsets(sids)
    return "[" + ", ".join(f"'{sid}'" for sid in ids) + "]" if ids else ""


def format_facets(facets: Union[str, Iterable[str]]) -> str:
    """A Discourse Facet cell: ``Method_Citation`` for one facet,
    ``['Method_Citation', 'Results_Citation']`` for several, ``''`` for none.

    Facets may be canonical labels (``Method``) or any spelling
    :func:`~scholarly_nlp.metrics.clscisumm.normalize_facet` accepts; repeats are dropped.
    ValueError for an unknown facet.
    """
    if isinstance(facets, str):
        facets = [facets] if facets.strip() else []
    names = list(dict.fromkeys(official_facet_name(f) for f in facets))
    if not names:
        return ""
    if len(names) == 1:
        return names[0]
    return "[" + ", ".join(f"'{name}'" for name in names) + "]"


def _xml_text(text: str) -> str:
    """Sentence text safe inside an XML element: whitespace collapsed, ``&<>`` escaped,
    characters XML forbids removed."""
    text = _XML_INVALID.sub(" ", _WS.sub(" ", text).strip())
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _xml_attr(value: object) -> str:
    """An attribute value without the characters that would break the quoting."""
    return _xml_text(str(value)).replace('"', "&quot;")


def reference_text_markup(sentences: Iterable[Sequence[object]]) -> str:
    """A Reference Text cell from ``(sid, text)`` or ``(sid, text, ssid)`` items.

    ``<S sid ="17" ssid = "3">sentence text</S><S sid ="18" ssid = "4">...</S>``, the
    spelling of the published files (``ssid`` left out when it is None or not given);
    ``&``, ``<`` and ``>`` are escaped, whitespace is collapsed. ValueError when a
    sentence's text is empty (the official script drops a row with an empty ``<S>``) or
    no sentence is given.
    """
    parts = []
    for item in sentences:
        sid, text = item[0], item[1]
        ssid = item[2] if len(item) > 2 else None
        body = _xml_text(str(text))
        if not body:
            raise ValueError(f"sentence {sid!r} has no text; the official script would drop the row")
        ssid_attr = f' ssid = "{_xml_attr(ssid)}"' if ssid not in (None, "") else ""
        parts.append(f'<S sid ="{_xml_attr(sid)}"{ssid_attr}>{body}</S>')
    if not parts:
        raise ValueError("no sentence to write as Reference Text")
    return "".join(parts)


def read_task1_rows(path: PathLike) -> list[dict[str, str]]:
    """The rows of a Task 1 CSV exactly as the official script reads them.

    Each row is a dict column name -> raw cell (nothing stripped or normalised). As in
    the script, the first row is the header and a row whose number of cells differs from
    the header's (a blank line, a broken row) is skipped; skipped rows are counted in
    one warning naming the file. Non-UTF-8 bytes are read as cp1252 with a warning.
    MalformedInputError when the file has no header row.
    """
    source = str(path)
    text = _decode(_read_bytes(path), source)
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader, None)
    if not header:
        raise MalformedInputError(source, "is empty (no CSV header row)")
    rows, skipped = [], []
    for row in reader:
        if len(row) != len(header):
            if any(cell.strip() for cell in row):
                skipped.append(str(reader.line_num))
            continue
        rows.append(dict(zip(header, row)))
    if skipped:
        shown = ", ".join(skipped[:5]) + (f" and {len(skipped) - 5} more" if len(skipped) > 5 else "")
        warnings.warn(f"{source}: {len(skipped)} row(s) with {len(header)} cells expected skipped "
                      f"(lines {shown})", stacklevel=2)
    return rows


def _cell(column: str, value: object) -> str:
    """One cell of :func:`write_task1_csv`: answers formatted, None as ``''``."""
    if value is None:
        return ""
    if column == "Reference Offset" and not isinstance(value, str):
        return format_reference_offset(value)  # type: ignore[arg-type]
    if column == "Discourse Facet" and not isinstance(value, str):
        return format_facets(value)  # type: ignore[arg-type]
    return str(value)


def write_task1_csv(path: PathLike, rows: Iterable[Mapping[str, object]]) -> int:
    """Write a Task 1 CSV atomically (temporary file + rename); returns the row count.

    The header is :data:`TASK1_CSV_HEADER`, exactly. Each row maps column names to
    values; missing columns and None are written empty, other keys are ignored. String
    values are written as given; a non-string Reference Offset (ids) is formatted by
    :func:`format_reference_offset` and a non-string Discourse Facet (labels) by
    :func:`format_facets`. Build Reference Text with :func:`reference_text_markup`.
    Lines end with ``\\n`` like the published files.
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(TASK1_CSV_HEADER)
    count = 0
    for row in rows:
        writer.writerow([_cell(column, row.get(column)) for column in TASK1_CSV_HEADER])
        count += 1
    write_atomic(path, buffer.getvalue())
    return count


def task1_row(record: Mapping[str, object], *, answers: bool = True,
              citation_text_clean: Optional[str] = None) -> dict[str, object]:
    """The 2018-layout CSV row of one annotation record (``read_annotations`` / ``read_task1_csv``).

    Citation Marker Offset and Citation Offset are ``0`` as in the published 2018 test
    layout; Citation Text is the plain citance text and Citation Text Clean the record's
    clean text (or ``citation_text_clean``, or the plain text). With ``answers``, the
    Reference Offset (ids), Reference Text (the record's original markup) and Discourse
    Facet (canonical labels, written as ``Method_Citation``...) are kept; a record with no
    reference sentence gets ``NA`` in all three, as the published gold files do. Without
    ``answers`` the three cells are empty (the test layout given to systems).
    """
    text = str(record.get("citation_text") or "")
    clean = citation_text_clean or str(record.get("citation_text_clean") or "") or text
    row: dict[str, object] = {
        "Citance Number": record.get("citance_number", ""),
        "Reference Article": record.get("reference_article", ""),
        "Citing Article": record.get("citing_article", ""),
        "Citation Marker Offset": "0",
        "Citation Marker": record.get("citation_marker", ""),
        "Citation Offset": "0",
        "Citation Text": text,
        "Citation Text Clean": clean,
        "Reference Offset": "",
        "Reference Text": "",
        "Discourse Facet": "",
    }
    if answers:
        sids = list(record.get("reference_offsets") or [])  # type: ignore[call-overload]
        reference_text = str(record.get("reference_text_raw") or "").strip()
        if sids and reference_text:
            row["Reference Offset"] = sids
            row["Reference Text"] = reference_text
            row["Discourse Facet"] = list(record.get("facets") or [])  # type: ignore[call-overload]
        else:
            row["Reference Offset"] = row["Reference Text"] = row["Discourse Facet"] = "NA"
    return row
