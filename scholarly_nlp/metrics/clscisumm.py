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
:func:`scholarly_nlp.readers.clscisumm_cells.official_task1_maps` (how the script reads a
CSV) with :func:`official_task1_counts` and :func:`clscisumm_task1_official` (how it counts);
:func:`scholarly_nlp.readers.clscisumm_cells.citance_task1_maps` with
:func:`clscisumm_task1_per_citance` key the same CSV rows by Citance Number instead, for
analysis.

These functions score parsed values only and read no file: annotation cells
(``"['17', '18']"``, ``"['Method_Citation','Result_Citation']"``) are parsed by
:mod:`scholarly_nlp.readers.clscisumm_cells` (:func:`~scholarly_nlp.readers.clscisumm_cells.
parse_reference_offsets`, :func:`~scholarly_nlp.readers.clscisumm_cells.parse_facets`).

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
from typing import Dict, Hashable, Iterable, List, Mapping, NamedTuple, Sequence, Set, Tuple, Union

FACET_LABELS: Tuple[str, ...] = ("Aim", "Hypothesis", "Implication", "Method", "Results")
"""The five CL-SciSumm discourse facets: the canonical labels of :func:`normalize_facet`."""

_FACET_ALIASES: Dict[str, str] = {
    "aim": "Aim",
    "hypothesis": "Hypothesis",
    "implication": "Implication",
    "method": "Method",
    "result": "Results",
    "results": "Results",
}

_QUOTES = "'\"`"

SentenceMap = Mapping[Hashable, Iterable[Union[str, int]]]
FacetMap = Mapping[Hashable, Iterable[str]]

__all__ = [
    "FACET_LABELS",
    "Counts",
    "Task1Pair",
    "canonical_sentence_id",
    "normalize_facet",
    "prf",
    "task1a_counts",
    "task1b_counts",
    "aggregate_counts",
    "clscisumm_task1a",
    "clscisumm_task1b",
    "OfficialKey",
    "OfficialMaps",
    "official_task1_counts",
    "clscisumm_task1_official",
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


# --------------------------------------------------------------------------- values


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


# --------------------------------------------------------------------------- counting


def prf(counts: Counts) -> Dict[str, float]:
    """Precision, recall and F1 of TP/FP/FN counts; each 0.0 when its denominator is 0."""
    tp, fp, fn = counts
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1}


def canonical_sentence_id(value: Union[str, int]) -> str:
    """One sentence id as a decimal string without leading zeros: ``17``, ``'17'``,
    ``' 017 '`` -> ``'17'``. Raises ValueError naming the value for anything that is not a
    non-negative integer (an annotation cell such as ``"['17']"`` is parsed first, by
    :func:`scholarly_nlp.readers.clscisumm_cells.parse_reference_offsets`)."""
    if isinstance(value, bool):
        raise ValueError(f"invalid sentence id {value!r}")
    text = str(value).strip()
    if not re.fullmatch(r"[0-9]+", text):
        raise ValueError(f"invalid sentence id {value!r}; parse annotation cells with "
                         "scholarly_nlp.readers.clscisumm_cells.parse_reference_offsets")
    return str(int(text))


def _as_items(value: Union[str, int, Iterable]) -> Iterable:
    """A single id or label as a one-item list, an iterable as it is."""
    return [value] if isinstance(value, (str, int)) else value


def _sentence_sets(sentences: SentenceMap) -> Dict[Hashable, Set[str]]:
    """Citance -> set of canonical sentence ids (:func:`canonical_sentence_id`); empty ones left out."""
    out = {}
    for cid, sids in sentences.items():
        ids = {canonical_sentence_id(sid) for sid in _as_items(sids)}
        if ids:
            out[cid] = ids
    return out


def _facet_set(facets: FacetMap, cid: Hashable) -> Set[str]:
    """Canonical facets of one citance (:func:`normalize_facet`; empty when the citance has none)."""
    return {normalize_facet(label) for label in _as_items(facets.get(cid, ()))}


def task1a_counts(system: SentenceMap, gold: SentenceMap) -> Counts:
    """TP/FP/FN of Task 1A for one (system file, gold file) pair.

    ``system`` and ``gold`` map a citance id to the reference sentence ids chosen for it:
    an iterable of ids (or one id), compared by :func:`canonical_sentence_id` (so ``17``,
    ``'17'`` and ``'017'`` are equal).
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

    Facet values are iterables of labels (or one label) in any spelling
    :func:`normalize_facet` accepts.
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


# --------------------------------------------------------------------------- the official script's counting
#
# ``task1_eval.py`` (2018) reads a system file ``<RP>.csv`` and a gold file
# ``<RP>_<annotator>.csv`` with ``parse_csv`` (reproduced, quirks included, by
# scholarly_nlp.readers.clscisumm_cells.official_task1_maps, whose docstring lists every rule)
# and scores them with ``calculate`` (reproduced here): Task 1A/1B counting as in the module
# doc, on lists of exact strings (a repeated gold id counts twice); a system facet of a key
# whose gold entry exists but was never filled (no row parsed) is not counted at all.

OfficialKey = Tuple[str, str, str]
"""(reference article, citing article, ``'0'``): how the official script keys a CSV row."""

OfficialMaps = Tuple[Mapping[OfficialKey, List[str]], Mapping[OfficialKey, List[str]]]
"""``(sentences, facets)`` of one CSV as the script reads it
(:func:`scholarly_nlp.readers.clscisumm_cells.official_task1_maps`)."""


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


def official_task1_counts(system: OfficialMaps, gold: OfficialMaps) -> Tuple[Counts, Counts]:
    """(Task 1A counts, Task 1B counts) of one system CSV against one gold CSV, exactly as
    the 2018 script's CSV path counts them. ``system`` and ``gold`` are each the
    ``(sentences, facets)`` maps of
    :func:`scholarly_nlp.readers.clscisumm_cells.official_task1_maps`."""
    sys_sentences, sys_facets = system
    gold_sentences, gold_facets = gold
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


def clscisumm_task1_official(pairs: Iterable[Tuple[OfficialMaps, OfficialMaps]]) -> Dict[str, float]:
    """CL-SciSumm Task 1A/1B scores exactly as the 2018 script's CSV path computes them.

    ``pairs``: one ``(system maps, gold maps)`` per gold annotator file (the script scores
    the system's ``<RP>.csv`` against every ``<RP>_<annotator>.csv``), each the
    ``(sentences, facets)`` of :func:`scholarly_nlp.readers.clscisumm_cells.official_task1_maps`
    for that CSV's rows. Returns ``task1a_precision``, ``task1a_recall``,
    ``task1a_f1``, ``task1b_precision``, ``task1b_recall``, ``task1b_f1`` (micro: summed
    TP/FP/FN over all pairs, the script's ``*_micro_avg``), the same with ``_macro``
    (means of per-pair P and R, F1 their harmonic mean, the script's ``*_macro_avg``),
    ``task1a_tp``/``_fp``/``_fn``, ``task1b_tp``/``_fp``/``_fn`` and ``num_files``.
    Raises ValueError for no pairs.
    """
    task1a, task1b = [], []
    for system, gold in pairs:
        a, b = official_task1_counts(system, gold)
        task1a.append(a)
        task1b.append(b)
    return _task1_report(task1a, task1b)


# --------------------------------------------------------------------------- keyed by citance


def clscisumm_task1_per_citance(
    pairs: Iterable[Tuple[Tuple[SentenceMap, FacetMap], Tuple[SentenceMap, FacetMap]]]
) -> Dict[str, float]:
    """Task 1A/1B scores with every citance keyed by its Citance Number (not the official rule).

    ``pairs``: one ``(system maps, gold maps)`` per gold annotator file, each the
    ``(sentences, facets)`` of :func:`scholarly_nlp.readers.clscisumm_cells.citance_task1_maps`;
    the same result keys as :func:`clscisumm_task1_official`. Counting by
    :func:`task1a_counts` and :func:`task1b_counts`, so each citance's answer is scored, not
    only the last one of each citing paper.
    """
    task1a, task1b = [], []
    for (sys_s, sys_f), (gold_s, gold_f) in pairs:
        task1a.append(task1a_counts(sys_s, gold_s))
        task1b.append(task1b_counts(sys_s, sys_f, gold_s, gold_f))
    return _task1_report(task1a, task1b)
