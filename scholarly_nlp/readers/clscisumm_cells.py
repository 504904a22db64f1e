"""CL-SciSumm Task 1 annotation cells: how the readers (and the scorers' callers) parse them.

The metrics (:mod:`scholarly_nlp.metrics.clscisumm`) score parsed values only; everything that
turns a cell or a CSV row into sentence ids and facets lives here:

* :func:`parse_reference_offsets`, :func:`parse_facets`: tolerant parsers of one
  ``Reference Offset`` / ``Discourse Facet`` cell (the spellings found in the corpus and in
  submissions), giving canonical ids (``'017'`` -> ``'17'``) and canonical facets
  (:data:`~scholarly_nlp.metrics.clscisumm.FACET_LABELS`).
* :func:`official_reference_offsets`, :func:`official_facets`,
  :func:`official_reference_text_ok`: the cells exactly as the official 2018 script
  (``task1_eval.py`` of WING-NUS/scisumm-corpus) reads them, quirks included.
* :func:`official_task1_maps`: one Task 1 CSV as the script sees it, keyed by (reference
  article, citing article, ``'0'``), for :func:`scholarly_nlp.metrics.clscisumm.official_task1_counts`;
  :func:`citance_task1_maps`: the same rows keyed by Citance Number, for
  :func:`scholarly_nlp.metrics.clscisumm.task1a_counts` / ``task1b_counts``.

The official script's CSV path: ``task1_eval.py`` (2018) reads a system file ``<RP>.csv``
and a gold file ``<RP>_<annotator>.csv`` with ``parse_csv`` (reproduced here) and scores them
with ``calculate`` (reproduced by the metrics). What it does:

* a row (``csv.reader``; rows whose cell count differs from the header's are skipped) whose
  Reference Text cell is exactly ``NA`` is skipped;
* every other row is keyed by (Reference Article without ``.xml``, Citing Article without
  ``.xml``, ``'0'``): the Citation Marker Offset is forced to ``'0'``, so **all citances of
  one citing paper share one key**. The first row of a key creates the entry; every row
  whose Reference Text parses (see :func:`official_reference_text_ok`) then sets the
  entry's Reference Offset and Discourse Facet, so the **last parsing row of a citing
  paper wins** and the earlier rows' answers are lost, in the system file and in gold;
* Reference Offset: one ``[`` and one ``]`` stripped, split on ``,``, each token stripped
  of spaces and of one leading and one trailing quote; compared as exact strings
  (``'017'`` is not ``'17'``), as lists (a repeated gold id counts twice);
* Discourse Facet: a cell starting with ``[`` loses its first and last character; split on
  ``,``, each token stripped, lower-cased, spaces turned into ``_`` and one leading and
  one trailing quote removed; ``''`` gives no facet. Compared as exact strings, so
  ``Method Citation`` equals ``Method_Citation`` but ``Result_Citation`` does not equal
  ``Results_Citation``;
* Task 1A/1B counting as in :mod:`scholarly_nlp.metrics.clscisumm`, on those entries; a system facet of a key
  whose gold entry exists but was never filled (no row parsed) is not counted at all.
"""

from __future__ import annotations

import re
from typing import Dict, Iterable, List, Mapping, Optional, Tuple, Union

from ..metrics.clscisumm import FACET_LABELS, OfficialKey, normalize_facet

__all__ = [
    "OFFICIAL_FACET_NAMES",
    "citance_key",
    "citance_task1_maps",
    "official_facet_name",
    "official_facets",
    "official_reference_offsets",
    "official_reference_text_ok",
    "official_task1_maps",
    "parse_facets",
    "parse_reference_offsets",
]

_EMPTY_CELLS = {"", "na", "none", "[]"}
_QUOTES = "'\"`"


# --------------------------------------------------------------------------- tolerant cell parsing


def _split_cell(cell: str) -> List[str]:
    """Tokens of a list-like cell: brackets removed, split on commas, quotes stripped."""
    text = cell.strip()
    if text.startswith("["):
        text = text[1:]
    if text.endswith("]"):
        text = text[:-1]
    tokens = (token.strip().strip(_QUOTES).strip() for token in text.split(","))
    return [token for token in tokens if token]


def _unique(items: Iterable[str]) -> Tuple[str, ...]:
    """Items without repeats, first-occurrence order."""
    return tuple(dict.fromkeys(items))


def parse_reference_offsets(cell: Union[str, int, Iterable[Union[str, int]]]) -> Tuple[str, ...]:
    """Sentence ids of an annotation's ``Reference Offset`` cell, as decimal strings.

    Accepts the spellings found in the corpus and in submissions: ``['17']``, ``17'``,
    ``"17,18"``, ``['17', '18']``, ``['17','18']``, a bare ``17``, an int, or a list of
    those. Surrounding brackets, quotes and spaces are removed, leading zeros dropped
    (``'017'`` -> ``'17'``) and repeats dropped.
    ``''``, ``'NA'``, ``'None'`` and ``'[]'`` give ``()``. Raises ValueError naming the
    cell when a token is not a non-negative integer.
    """
    if isinstance(cell, bool):
        raise ValueError(f"invalid Reference Offset {cell!r}")
    if isinstance(cell, int):
        cell = str(cell)
    if not isinstance(cell, str):
        return _unique(sid for item in cell for sid in parse_reference_offsets(item))
    if cell.strip().strip(_QUOTES).lower() in _EMPTY_CELLS:
        return ()
    tokens = _split_cell(cell)
    bad = [token for token in tokens if not re.fullmatch(r"[0-9]+", token)]
    if bad:
        raise ValueError(f"invalid sentence id {bad[0]!r} in Reference Offset {cell!r}")
    return _unique(str(int(token)) for token in tokens)


def parse_facets(cell: Union[str, Iterable[str]]) -> Tuple[str, ...]:
    """Canonical facets of a ``Discourse Facet`` cell, repeats dropped, order kept.

    Accepts ``Method Citation``, ``Method_Citation``, ``['Method_Citation',
    'Result_Citation']``, comma-separated strings, or a list of labels. ``''``, ``'NA'``
    (the automatically annotated ScisummNet files), ``'None'`` and ``'[]'`` give ``()``.
    Raises ValueError naming the unknown value (see :func:`normalize_facet`).
    """
    if not isinstance(cell, str):
        return _unique(facet for item in cell for facet in parse_facets(item))
    if cell.strip().strip(_QUOTES).lower() in _EMPTY_CELLS:
        return ()
    return _unique(normalize_facet(token) for token in _split_cell(cell))


# --------------------------------------------------------------------------- the official script's reading

OFFICIAL_FACET_NAMES: Dict[str, str] = {label: f"{label}_Citation" for label in FACET_LABELS}
"""Canonical facet -> its spelling in Task 1 CSVs: ``Method`` -> ``Method_Citation``,
``Results`` -> ``Results_Citation`` (the majority spelling in the published gold)."""

_RAW_TEXT = "Reference Text"
_RECORD_TEXT = "reference_text_raw"
_QUOTE_CHARS = ("'", '"')
_ROW_ERROR = "a Task 1 row needs a 'Reference Text' cell (raw CSV row) or 'reference_text_raw' (record)"


def official_facet_name(label: str) -> str:
    """The CSV spelling of a facet: any spelling :func:`normalize_facet` accepts ->
    ``Method_Citation`` etc. (:data:`OFFICIAL_FACET_NAMES`); ValueError for unknown labels."""
    return OFFICIAL_FACET_NAMES[normalize_facet(label)]


def _strip_one_quote(token: str) -> str:
    """``token`` without one leading and one trailing ``'`` or ``"`` (the script's rule)."""
    if token.startswith(_QUOTE_CHARS):
        token = token[1:]
    if token.endswith(_QUOTE_CHARS):
        token = token[:-1]
    return token


def official_reference_offsets(cell: str) -> List[str]:
    """Sentence ids of a Reference Offset cell exactly as the 2018 script reads them.

    One ``[`` / ``]`` stripped, split on ``,``, each token stripped of spaces and of one
    leading and one trailing quote. No other normalisation: ``"['17', '18']"`` gives
    ``['17', '18']``, ``" '11'"`` gives ``['11']``, ``''`` and ``'[]'`` give ``['']``
    (an id nobody can match), repeats are kept.
    """
    text = cell or ""
    if text.startswith("["):
        text = text[1:]
    if text.endswith("]"):
        text = text[:-1]
    return [_strip_one_quote(token.strip()) for token in text.split(",")]


def official_facets(cell: str) -> List[str]:
    """Facet strings of a Discourse Facet cell exactly as the 2018 script reads them.

    ``'Method_Citation'`` -> ``['method_citation']``, ``"Method Citation"`` ->
    ``['method_citation']``, ``"['Aim_Citation', 'Results_Citation']"`` ->
    ``['aim_citation', 'results_citation']``, ``''`` -> ``[]``, ``'NA'`` -> ``['na']``.
    """
    if not cell:
        return []
    inner = cell[1:-1] if cell[0] == "[" else cell
    return [_strip_one_quote(token.strip().lower().replace(" ", "_")) for token in inner.split(",")]


def official_reference_text_ok(cell: str) -> bool:
    """Whether the script keeps a row's answer, judging by its Reference Text cell.

    False for exactly ``NA`` (the row is skipped). Otherwise the script wraps the cell in
    ``<root>...</root>``, turns every ``&`` into ``&amp;`` (after undoing ``&amp;``), parses
    it leniently (BeautifulSoup's lxml XML parser, which recovers from errors) and reads
    the text of every ``<S>`` child of the root; a cell with no ``<S>`` child, or with an
    ``<S>`` whose text before any child element is empty, raises there and the row's
    answer is dropped. This uses lxml's recovering parser, as BeautifulSoup does.
    """
    if cell == "NA":
        return False
    from lxml import etree

    line = ("<root>" + (cell or "") + "</root>").replace("&amp;", "&").replace("&", "&amp;")
    parser = etree.XMLParser(recover=True, resolve_entities=False, load_dtd=False, no_network=True)
    try:
        root = etree.fromstring(line.encode("utf-8"), parser=parser)
    except etree.XMLSyntaxError:
        return False
    if root is None:
        return False
    sentences = [child for child in root if child.tag == "S"]
    return bool(sentences) and all(child.text for child in sentences)


def _official_row(row: Mapping[str, object]) -> Tuple[Optional[OfficialKey], Optional[Tuple[List[str], List[str]]]]:
    """(key, (offsets, facets)) of one row as the script reads it.

    The key is None for a row the script skips (Reference Text ``NA``); the answer is None
    when the row creates its key's entry but does not fill it (Reference Text unparsable).
    ``row`` holds either the raw CSV cells (keys are the column names, as
    :func:`scholarly_nlp.readers.clscisumm_csv.read_task1_rows` gives them) or a record of
    :func:`scholarly_nlp.readers.clscisumm.read_task1_csv` (see
    :func:`official_task1_maps` for what is lost then).
    """
    if _RAW_TEXT in row:
        text = str(row.get(_RAW_TEXT) or "")
        article = str(row.get("Reference Article") or "").replace(".xml", "")
        citing = str(row.get("Citing Article") or "").replace(".xml", "")
        offsets = official_reference_offsets(str(row.get("Reference Offset") or ""))
        facets = official_facets(str(row.get("Discourse Facet") or ""))
    elif _RECORD_TEXT in row:
        text = str(row.get(_RECORD_TEXT) or "")
        article = str(row.get("reference_article") or "")
        citing = str(row.get("citing_article") or "")
        offsets = [str(sid) for sid in row.get("reference_offsets") or ()]  # type: ignore[union-attr]
        facets = [official_facet_name(f).lower() for f in row.get("facets") or ()]  # type: ignore[union-attr]
    else:
        raise ValueError(_ROW_ERROR)
    if text == "NA":
        return None, None
    key = (article, citing, "0")
    if not official_reference_text_ok(text):
        return key, None
    return key, (offsets, facets)


def official_task1_maps(
    rows: Iterable[Mapping[str, object]]
) -> Tuple[Dict[OfficialKey, List[str]], Dict[OfficialKey, List[str]]]:
    """The official script's view of one Task 1 CSV: ``(sentences, facets)`` keyed by
    (reference article, citing article, ``'0'``).

    **The official quirk**: the script keys rows by citing paper, not by citance (it forces
    the Citation Marker Offset to ``'0'``), so when a citing paper cites the reference
    paper several times only its *last* row with a parsable Reference Text counts; rows
    whose Reference Text is exactly ``NA`` are skipped (module section "The official
    script's CSV path" lists every rule). ``sentences`` maps a key to the ids of that last
    row, as a list of exact strings (:func:`official_reference_offsets`); ``facets`` maps a
    key to its facet strings (:func:`official_facets`, lower-cased such as
    ``method_citation``) and also holds, with no facet, the keys whose entry was created
    but never filled (their first row's Reference Text did not parse): a system facet for
    such a key is not a false positive in the script.

    ``rows`` are raw CSV rows (column name -> cell, e.g. from
    :func:`scholarly_nlp.readers.clscisumm_csv.read_task1_rows`): exact. Records of
    :func:`scholarly_nlp.readers.clscisumm.read_task1_csv` are accepted too, with three
    small differences, since they keep only normalised values: article ids are stripped
    and lose ``.txt`` as well; offsets are the normalised ids (``'017'`` -> ``'17'``,
    repeats dropped, an empty cell gives no id where the script would read ``['']``);
    facets are the canonical labels written back as ``method_citation`` etc., so a gold
    ``Result_Citation`` matches a system ``Results_Citation`` (the script would not match
    them). For the CSVs this project writes (canonical ``Method_Citation`` ... spellings,
    offsets ``['17', '18']``) the two inputs give the same maps.
    """
    sentences: Dict[OfficialKey, List[str]] = {}
    facets: Dict[OfficialKey, List[str]] = {}
    for row in rows:
        key, answer = _official_row(row)
        if key is None:
            continue
        facets.setdefault(key, [])
        if answer is not None:
            sentences[key], facets[key] = answer
    return sentences, facets


# --------------------------------------------------------------------------- keyed by citance


def citance_key(value: object) -> str:
    """A Citance Number cell as a key (the id ``reference_folder_doc`` gives the citance):
    ``' 3 '``, ``3``, ``'3.0'`` -> ``'3'``."""
    text = str(value).strip()
    try:
        number = float(text)
    except ValueError:
        return text
    return str(int(number)) if number.is_integer() else text


def _tolerant_ids(cell: Union[str, Iterable[str]]) -> Tuple[str, ...]:
    """Sentence ids of a cell; invalid tokens dropped instead of raising."""
    try:
        return parse_reference_offsets(cell)
    except ValueError:
        tokens = _split_cell(cell) if isinstance(cell, str) else [str(t) for t in cell]
        return _unique(str(int(t)) for t in tokens if re.fullmatch(r"[0-9]+", t.strip()))


def _tolerant_facets(cell: Union[str, Iterable[str]]) -> Tuple[str, ...]:
    """Canonical facets of a cell; unknown labels dropped instead of raising."""
    if isinstance(cell, str):
        tokens = [] if cell.strip().strip(_QUOTES).lower() in _EMPTY_CELLS else _split_cell(cell)
    else:
        tokens = list(cell)
    out = []
    for token in tokens:
        try:
            out.append(normalize_facet(token))
        except ValueError:
            continue
    return _unique(out)


def citance_task1_maps(rows: Iterable[Mapping[str, object]]) -> Tuple[Dict[str, List[str]], Dict[str, List[str]]]:
    """``(sentences, facets)`` of one Task 1 CSV keyed by Citance Number (our own analysis).

    Unlike the official script (:func:`official_task1_maps`), every citance counts: the
    key is the Citance Number (``'3'``), sentence ids are normalised
    (:func:`parse_reference_offsets`) and facets canonical (:func:`parse_facets`), unknown
    values dropped. Rows whose Reference Text is ``NA`` or that have no sentence id are
    left out; rows repeating a Citance Number add to it. ``rows`` are raw CSV rows or
    :func:`~scholarly_nlp.readers.clscisumm.read_task1_csv` records. Feed the maps to
    :func:`task1a_counts` / :func:`task1b_counts`.
    """
    sentences: Dict[str, List[str]] = {}
    facets: Dict[str, List[str]] = {}
    for row in rows:
        if _RAW_TEXT in row:
            text, number = str(row.get(_RAW_TEXT) or ""), row.get("Citance Number", "")
            ids = _tolerant_ids(str(row.get("Reference Offset") or ""))
            labels = _tolerant_facets(str(row.get("Discourse Facet") or ""))
        elif _RECORD_TEXT in row:
            text, number = str(row.get(_RECORD_TEXT) or ""), row.get("citance_number", "")
            ids = _tolerant_ids([str(s) for s in row.get("reference_offsets") or ()])  # type: ignore[union-attr]
            labels = _tolerant_facets([str(f) for f in row.get("facets") or ()])  # type: ignore[union-attr]
        else:
            raise ValueError(_ROW_ERROR)
        if text.strip() == "NA" or not ids:
            continue
        key = citance_key(number)
        sentences[key] = list(_unique([*sentences.get(key, []), *ids]))
        facets[key] = list(_unique([*facets.get(key, []), *labels]))
    return sentences, facets
