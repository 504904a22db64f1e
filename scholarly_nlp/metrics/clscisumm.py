"""CL-SciSumm Task 1A (cited-text span) and Task 1B (discourse facet) evaluation.

Re-implements the counting of the official 2018 script, ``2018-evaluation-script/
program/task1_eval.py`` of WING-NUS/scisumm-corpus (functions ``calculate`` and
``main``):

* **Task 1A** compares, per citance, the reference-paper sentence ids the system chose
  with the gold ones: every gold id the system also chose is a true positive, every
  other gold id a false negative (all of them when the system has no entry for the
  citance), every system id not in gold a false positive (all of them when gold has no
  entry). P = TP/(TP+FP), R = TP/(TP+FN), F1 = 2PR/(P+R), each 0.0 when undefined.
* **Task 1B** is scored only where Task 1A found the citance: a gold citance is
  *comparable* when at least one of its gold sentence ids was matched. For a comparable
  citance each gold facet the system also gave is a TP, each other gold facet a FN and
  each system facet not in gold a FP. The gold facets of a non-comparable citance are
  all FN; system facets of a non-comparable gold citance are not counted; system facets
  of a citance absent from gold are all FP.
* **Aggregation** over several (system file, gold annotator file) pairs - the script
  scores the one system file of a paper against each annotator's gold file of that paper:
  *micro* sums TP/FP/FN over every pair, then computes P, R, F1; *macro* averages the
  per-pair P and the per-pair R, and the script's macro F1 is the harmonic mean of those
  two averages (``f1_macro``). The mean of the per-pair F1 values, which the script does
  not report, is given as ``f1_macro_per_file_mean``.

The official CSV path, quirks included, is reproduced exactly by
:func:`official_task1_maps`, :func:`official_task1_counts` and
:func:`clscisumm_task1_official` (see the section "The official script's CSV path"
below); :func:`citance_task1_maps` and :func:`clscisumm_task1_per_citance` key the same
CSV rows by Citance Number instead, for analysis.

Differences of :func:`task1a_counts` / :func:`task1b_counts` from the script, all
deliberate: citances are keyed by whatever id the caller uses (the script's CSV path
keys them by reference article, citing article and a citation marker offset that it
forces to ``'0'``, which merges citances of one citing paper); sentence ids and facets
are compared as sets (the script counts a duplicated gold id twice); facets are
normalised to five canonical labels before comparison, so ``Result_Citation`` and
``Results_Citation`` match (the script compares the lower-cased strings); a citance
with no sentence id on a side is absent from that side, like the script's skipping of
rows whose Reference Text is ``NA``.
"""

from __future__ import annotations

import re
from typing import Dict, Hashable, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Set, Tuple, Union

FACET_LABELS: Tuple[str, ...] = ("Aim", "Hypothesis", "Implication", "Method", "Results")
"""The five CL-SciSumm discourse facets, as returned by :func:`parse_facets`."""

_FACET_ALIASES: Dict[str, str] = {
    "aim": "Aim",
    "hypothesis": "Hypothesis",
    "implication": "Implication",
    "method": "Method",
    "result": "Results",
    "results": "Results",
}

_EMPTY_CELLS = {"", "na", "none", "[]"}
_QUOTES = "'\"`"

SentenceMap = Mapping[Hashable, Iterable[Union[str, int]]]
FacetMap = Mapping[Hashable, Iterable[str]]

__all__ = [
    "FACET_LABELS",
    "Counts",
    "Task1Pair",
    "parse_reference_offsets",
    "normalize_facet",
    "parse_facets",
    "prf",
    "task1a_counts",
    "task1b_counts",
    "aggregate_counts",
    "clscisumm_task1a",
    "clscisumm_task1b",
    "OFFICIAL_FACET_NAMES",
    "official_facet_name",
    "official_reference_offsets",
    "official_facets",
    "official_reference_text_ok",
    "official_task1_maps",
    "official_task1_counts",
    "clscisumm_task1_official",
    "citance_task1_maps",
    "clscisumm_task1_per_citance",
]


class Counts(NamedTuple):
    """True positive, false positive and false negative counts."""

    tp: int
    fp: int
    fn: int


class Task1Pair(NamedTuple):
    """One (system file, gold annotator file) pair: per-citance sentence ids and facets."""

    system_sentences: SentenceMap
    system_facets: FacetMap
    gold_sentences: SentenceMap
    gold_facets: FacetMap


# --------------------------------------------------------------------------- cell parsing


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


def normalize_facet(label: str) -> str:
    """Map one facet spelling to its canonical label in :data:`FACET_LABELS`.

    Case-insensitive; spaces, hyphens and underscores are equivalent; a trailing
    ``Citation`` is dropped; ``Result`` and ``Results`` both give ``Results``. So
    ``Method Citation``, ``Method_Citation``, ``method`` give ``Method``. Raises
    ValueError naming the value for anything else.
    """
    key = re.sub(r"[\s_\-]+", "_", label.strip().strip(_QUOTES).strip().lower())
    key = re.sub(r"_?citation$", "", key)
    try:
        return _FACET_ALIASES[key]
    except KeyError:
        raise ValueError(f"unknown discourse facet {label!r}; expected one of {', '.join(FACET_LABELS)}") from None


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


# --------------------------------------------------------------------------- counting


def prf(counts: Counts) -> Dict[str, float]:
    """Precision, recall and F1 of TP/FP/FN counts; each 0.0 when its denominator is 0."""
    tp, fp, fn = counts
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1}


def _sentence_sets(sentences: SentenceMap) -> Dict[Hashable, Set[str]]:
    """Citance -> set of sentence ids (via parse_reference_offsets); empty ones left out."""
    out = {}
    for cid, sids in sentences.items():
        ids = set(parse_reference_offsets(sids))
        if ids:
            out[cid] = ids
    return out


def _facet_set(facets: FacetMap, cid: Hashable) -> Set[str]:
    """Canonical facets of one citance (empty when the citance has none)."""
    return set(parse_facets(facets.get(cid, ())))


def task1a_counts(system: SentenceMap, gold: SentenceMap) -> Counts:
    """TP/FP/FN of Task 1A for one (system file, gold file) pair.

    ``system`` and ``gold`` map a citance id to the reference sentence ids chosen for it:
    an iterable of ids or a raw Reference Offset cell, read by
    :func:`parse_reference_offsets` (so ``17``, ``'17'`` and ``"['17']"`` are equal).
    """
    sys_sets, gold_sets = _sentence_sets(system), _sentence_sets(gold)
    tp = fn = fp = 0
    for cid, gold_ids in gold_sets.items():
        found = sys_sets.get(cid, set())
        tp += len(gold_ids & found)
        fn += len(gold_ids - found)
    for cid, sys_ids in sys_sets.items():
        fp += len(sys_ids - gold_sets.get(cid, set()))
    return Counts(tp, fp, fn)


def task1b_counts(
    system_sentences: SentenceMap, system_facets: FacetMap, gold_sentences: SentenceMap, gold_facets: FacetMap
) -> Counts:
    """TP/FP/FN of Task 1B for one (system file, gold file) pair (rules in the module doc).

    Facet values may be any spelling :func:`parse_facets` accepts.
    """
    sys_sets, gold_sets = _sentence_sets(system_sentences), _sentence_sets(gold_sentences)
    comparable = {cid for cid, ids in gold_sets.items() if ids & sys_sets.get(cid, set())}
    tp = fn = fp = 0
    for cid in gold_sets:
        gold_f = _facet_set(gold_facets, cid)
        if cid in comparable:
            sys_f = _facet_set(system_facets, cid)
            tp += len(gold_f & sys_f)
            fn += len(gold_f - sys_f)
        else:
            fn += len(gold_f)
    for cid in sys_sets:
        sys_f = _facet_set(system_facets, cid)
        if cid not in gold_sets:
            fp += len(sys_f)
        elif cid in comparable:
            fp += len(sys_f - _facet_set(gold_facets, cid))
    return Counts(tp, fp, fn)


def aggregate_counts(per_file: Sequence[Counts]) -> Dict[str, float]:
    """Micro and macro P/R/F1 over (system file, gold file) pairs, as the 2018 script.

    Keys: ``precision_micro``, ``recall_micro``, ``f1_micro`` (from summed counts),
    ``precision_macro``, ``recall_macro`` (means of per-pair values), ``f1_macro``
    (harmonic mean of the two macro averages, the script's definition),
    ``f1_macro_per_file_mean`` (mean of per-pair F1), ``tp``, ``fp``, ``fn`` and
    ``num_files``. Raises ValueError for no pairs.
    """
    if not per_file:
        raise ValueError("no (system file, gold file) pairs to aggregate")
    total = Counts(*(sum(c[i] for c in per_file) for i in range(3)))
    micro = prf(total)
    scores = [prf(c) for c in per_file]
    p_macro = sum(s["precision"] for s in scores) / len(scores)
    r_macro = sum(s["recall"] for s in scores) / len(scores)
    return {
        "precision_micro": micro["precision"],
        "recall_micro": micro["recall"],
        "f1_micro": micro["f1"],
        "precision_macro": p_macro,
        "recall_macro": r_macro,
        "f1_macro": 2 * p_macro * r_macro / (p_macro + r_macro) if p_macro + r_macro else 0.0,
        "f1_macro_per_file_mean": sum(s["f1"] for s in scores) / len(scores),
        "tp": total.tp,
        "fp": total.fp,
        "fn": total.fn,
        "num_files": len(per_file),
    }


def clscisumm_task1a(pairs: Iterable[Tuple[SentenceMap, SentenceMap]]) -> Dict[str, float]:
    """Task 1A scores over ``(system, gold)`` pairs, one per (system file, annotator file).

    Each element maps citance id -> sentence ids. Returns :func:`aggregate_counts`.
    """
    return aggregate_counts([task1a_counts(system, gold) for system, gold in pairs])


def clscisumm_task1b(pairs: Iterable[Task1Pair]) -> Dict[str, float]:
    """Task 1B (facet) scores over :class:`Task1Pair` items (or 4-tuples in that order).

    Returns :func:`aggregate_counts`.
    """
    return aggregate_counts([task1b_counts(*pair) for pair in pairs])


# --------------------------------------------------------------------------- the official script's CSV path
#
# ``task1_eval.py`` (2018) reads a system file ``<RP>.csv`` and a gold file
# ``<RP>_<annotator>.csv`` with ``parse_csv`` and scores them with ``calculate``. What it does,
# reproduced here:
#
# * a row (``csv.reader``; rows whose cell count differs from the header's are skipped) whose
#   Reference Text cell is exactly ``NA`` is skipped;
# * every other row is keyed by (Reference Article without ``.xml``, Citing Article without
#   ``.xml``, ``'0'``): the Citation Marker Offset is forced to ``'0'``, so **all citances of
#   one citing paper share one key**. The first row of a key creates the entry; every row
#   whose Reference Text parses (see :func:`official_reference_text_ok`) then sets the
#   entry's Reference Offset and Discourse Facet, so the **last parsing row of a citing
#   paper wins** and the earlier rows' answers are lost, in the system file and in gold;
# * Reference Offset: one ``[`` and one ``]`` stripped, split on ``,``, each token stripped
#   of spaces and of one leading and one trailing quote; compared as exact strings
#   (``'017'`` is not ``'17'``), as lists (a repeated gold id counts twice);
# * Discourse Facet: a cell starting with ``[`` loses its first and last character; split on
#   ``,``, each token stripped, lower-cased, spaces turned into ``_`` and one leading and
#   one trailing quote removed; ``''`` gives no facet. Compared as exact strings, so
#   ``Method Citation`` equals ``Method_Citation`` but ``Result_Citation`` does not equal
#   ``Results_Citation``;
# * Task 1A/1B counting as in the module doc, on those entries; a system facet of a key
#   whose gold entry exists but was never filled (no row parsed) is not counted at all.

OFFICIAL_FACET_NAMES: Dict[str, str] = {label: f"{label}_Citation" for label in FACET_LABELS}
"""Canonical facet -> its spelling in Task 1 CSVs: ``Method`` -> ``Method_Citation``,
``Results`` -> ``Results_Citation`` (the majority spelling in the published gold)."""

OfficialKey = Tuple[str, str, str]
"""(reference article, citing article, ``'0'``): how the official script keys a CSV row."""

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


def _official_counts(
    sys_sentences: Mapping[OfficialKey, List[str]], sys_facets: Mapping[OfficialKey, List[str]],
    gold_sentences: Mapping[OfficialKey, List[str]], gold_facets: Mapping[OfficialKey, List[str]],
) -> Tuple[Counts, Counts]:
    """Task 1A and 1B counts of the script's ``calculate`` on official maps (lists, repeats counted)."""
    tp = fp = fn = 0
    comparable = set()
    for key, gold_ids in gold_sentences.items():
        found = sys_sentences.get(key)
        for sid in gold_ids:
            if found is not None and sid in found:
                tp += 1
                comparable.add(key)
            else:
                fn += 1
    for key, sys_ids in sys_sentences.items():
        gold_ids = gold_sentences.get(key)
        fp += sum(1 for sid in sys_ids if gold_ids is None or sid not in gold_ids)
    ftp = ffp = ffn = 0
    for key in gold_sentences:
        for facet in gold_facets.get(key, []):
            if key in comparable and facet in sys_facets.get(key, []):
                ftp += 1
            else:
                ffn += 1
    for key in sys_sentences:
        for facet in sys_facets.get(key, []):
            if key not in gold_facets:
                ffp += 1
            elif key in comparable and facet not in gold_facets[key]:
                ffp += 1
    return Counts(tp, fp, fn), Counts(ftp, ffp, ffn)


def official_task1_counts(
    system_rows: Iterable[Mapping[str, object]], gold_rows: Iterable[Mapping[str, object]]
) -> Tuple[Counts, Counts]:
    """(Task 1A counts, Task 1B counts) of one system CSV against one gold CSV, exactly as
    the 2018 script's CSV path counts them (see :func:`official_task1_maps`)."""
    sys_sentences, sys_facets = official_task1_maps(system_rows)
    gold_sentences, gold_facets = official_task1_maps(gold_rows)
    return _official_counts(sys_sentences, sys_facets, gold_sentences, gold_facets)


def _task1_report(task1a: Sequence[Counts], task1b: Sequence[Counts]) -> Dict[str, float]:
    """Flat score dict of per-file Task 1A/1B counts (micro, macro as the script, counts)."""
    out: Dict[str, float] = {}
    for task, counts in (("task1a", task1a), ("task1b", task1b)):
        agg = aggregate_counts(counts)
        for metric in ("precision", "recall", "f1"):
            out[f"{task}_{metric}"] = agg[f"{metric}_micro"]
        for metric in ("precision", "recall", "f1"):
            out[f"{task}_{metric}_macro"] = agg[f"{metric}_macro"]
        for count in ("tp", "fp", "fn"):
            out[f"{task}_{count}"] = agg[count]
    out["num_files"] = len(task1a)
    return out


def clscisumm_task1_official(
    pairs: Iterable[Tuple[Iterable[Mapping[str, object]], Iterable[Mapping[str, object]]]]
) -> Dict[str, float]:
    """CL-SciSumm Task 1A/1B scores exactly as the 2018 script's CSV path computes them.

    ``pairs``: one ``(system rows, gold rows)`` per gold annotator file (the script scores
    the system's ``<RP>.csv`` against every ``<RP>_<annotator>.csv``); rows as for
    :func:`official_task1_maps`. Returns ``task1a_precision``, ``task1a_recall``,
    ``task1a_f1``, ``task1b_precision``, ``task1b_recall``, ``task1b_f1`` (micro: summed
    TP/FP/FN over all pairs, the script's ``*_micro_avg``), the same with ``_macro``
    (means of per-pair P and R, F1 their harmonic mean, the script's ``*_macro_avg``),
    ``task1a_tp``/``_fp``/``_fn``, ``task1b_tp``/``_fp``/``_fn`` and ``num_files``.
    Raises ValueError for no pairs.
    """
    task1a, task1b = [], []
    for system_rows, gold_rows in pairs:
        a, b = official_task1_counts(system_rows, gold_rows)
        task1a.append(a)
        task1b.append(b)
    return _task1_report(task1a, task1b)


# --------------------------------------------------------------------------- keyed by citance


def _citance_id(value: object) -> str:
    """A Citance Number cell as a key: ``' 3 '``, ``3``, ``'3.0'`` -> ``'3'``."""
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
        key = _citance_id(number)
        sentences[key] = list(_unique([*sentences.get(key, []), *ids]))
        facets[key] = list(_unique([*facets.get(key, []), *labels]))
    return sentences, facets


def clscisumm_task1_per_citance(
    pairs: Iterable[Tuple[Iterable[Mapping[str, object]], Iterable[Mapping[str, object]]]]
) -> Dict[str, float]:
    """Task 1A/1B scores with every citance keyed by its Citance Number (not the official rule).

    Same pairs and the same result keys as :func:`clscisumm_task1_official`; counting by
    :func:`task1a_counts` and :func:`task1b_counts` on :func:`citance_task1_maps`, so each
    citance's answer is scored, not only the last one of each citing paper.
    """
    task1a, task1b = [], []
    for system_rows, gold_rows in pairs:
        sys_s, sys_f = citance_task1_maps(system_rows)
        gold_s, gold_f = citance_task1_maps(gold_rows)
        task1a.append(task1a_counts(sys_s, gold_s))
        task1b.append(task1b_counts(sys_s, sys_f, gold_s, gold_f))
    return _task1_report(task1a, task1b)
