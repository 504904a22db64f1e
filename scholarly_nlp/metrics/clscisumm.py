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

Differences from the script, all deliberate: citances are keyed by whatever id the
caller uses (the script's CSV path keys them by reference article, citing article and a
citation marker offset that it forces to ``'0'``, which merges citances of one citing
paper); sentence ids and facets are compared as sets (the script counts a duplicated
gold id twice); facets are normalised to five canonical labels before comparison, so
``Result_Citation`` and ``Results_Citation`` match (the script compares the lower-cased
strings); a citance with no sentence id on a side is absent from that side, like the
script's skipping of rows whose Reference Text is ``NA``.
"""

from __future__ import annotations

import re
from typing import Dict, Hashable, Iterable, List, Mapping, NamedTuple, Sequence, Set, Tuple, Union

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
