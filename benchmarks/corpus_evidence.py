"""Corpus evidence: how much of the paper structure the TEI -> Doc path recovers on real data.

Parses every GROBID TEI file under ``--tei-root`` with :func:`scholarly_nlp.read_many` and
reports, per top-level folder (``acl``, ``biomed``, ``with-pdf``) and overall:

* files, parsed ok, failures (with their reasons);
* the share of papers with a title, an abstract, >= 3 titled sections, a caption for every
  TEI ``<figure>`` (tables included), >= 1 figure mention resolved to its figure and >= 1
  citance linked to a bibliography entry;
* mean sentences, figures and tables per paper, the share of figure/table mentions
  resolved and the share of citation markers linked (pooled over all papers).

The "caption for every figure" check compares ``doc._.figures`` with a raw lxml count of
the TEI's ``<figure>`` elements, so a figure the reader dropped counts as uncaptioned.

Usage::

    python benchmarks/corpus_evidence.py [--tei-root ../shared/data/tei] [--out FILE] [--limit N]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Optional

from _common import (
    DEFAULT_TEI_ROOT,
    RESULTS_DIR,
    ensure_repo_on_path,
    machine_info,
    markdown_table,
    pct,
    ratio,
    skipped_non_tei,
    tei_files_by_folder,
    write_json,
)

ensure_repo_on_path()

from lxml import etree  # noqa: E402

import scholarly_nlp  # noqa: E402

TEI_NS = "http://www.tei-c.org/ns/1.0"
FIGURE_TAG = f"{{{TEI_NS}}}figure"
REF_TAG = f"{{{TEI_NS}}}ref"
BIBL_TAG = f"{{{TEI_NS}}}biblStruct"
XML_ID = "{http://www.w3.org/XML/1998/namespace}id"
RAW_KEYS = ("figures", "tables", "figure_refs", "table_refs", "bibr_refs", "figure_refs_targeted", "bibr_refs_targeted")
#: "Fig. 3", "Figures 2", "Table 1", "Tab. S2" (independent of the reader's own pattern).
MENTION_RE = re.compile(r"\b(?P<word>fig(?:ure)?s?\.?|tab(?:le)?s?\.?)\s*(?P<label>[a-z]?\d+(?:\.\d+)?)", re.IGNORECASE)
UNRESOLVED_REASONS = ("no_such_float", "supplementary", "no_label", "resolvable")
#: Boolean per-paper checks, in table order, with their row titles.
PAPER_CHECKS = {
    "has_title": "has a title",
    "has_abstract": "has an abstract",
    "has_3_sections": ">= 3 titled sections",
    "all_figures_captioned": "captions for ALL TEI figures",
    "has_resolved_figure_mention": ">= 1 figure mention resolved",
    "has_linked_citance": ">= 1 citance linked to bibliography",
}


# --------------------------------------------------------------------------- raw TEI counts


def _safe_parser() -> etree.XMLParser:
    """An lxml parser that resolves no entities and touches no network."""
    return etree.XMLParser(resolve_entities=False, load_dtd=False, no_network=True, remove_comments=True)


def raw_tei_counts(path: Path) -> dict:
    """Counts taken straight from the XML, independent of the project's reader.

    ``figures``/``tables``: top-level ``<figure>`` elements (not nested in another figure),
    split on ``@type='table'``; ``figure_refs``/``table_refs``/``bibr_refs``: ``<ref>`` by type;
    ``*_targeted``: those whose ``@target`` names an existing float / ``biblStruct``.
    """
    try:
        root = etree.parse(str(path), _safe_parser()).getroot()
    except (etree.XMLSyntaxError, OSError):
        return dict.fromkeys(RAW_KEYS, 0) | {"xml_ok": False}
    kinds: Counter = Counter()
    for fig in root.iter(FIGURE_TAG):
        parent = fig.getparent()
        if parent is not None and parent.tag == FIGURE_TAG:
            continue
        kinds["tables" if (fig.get("type") or "").lower() == "table" else "figures"] += 1
    refs: Counter = Counter()
    bib_ids = {b.get(XML_ID) for b in root.iter(BIBL_TAG)}
    float_ids = {f.get(XML_ID) for f in root.iter(FIGURE_TAG)}
    for ref in root.iter(REF_TAG):
        kind = ref.get("type") or ""
        refs[kind] += 1
        target = (ref.get("target") or "").lstrip("#")
        if target and target in (bib_ids if kind == "bibr" else float_ids):
            refs[f"{kind}_targeted"] += 1
    return {
        "figures": kinds["figures"],
        "tables": kinds["tables"],
        "figure_refs": refs["figure"],
        "table_refs": refs["table"],
        "bibr_refs": refs["bibr"],
        "figure_refs_targeted": refs["figure_targeted"] + refs["table_targeted"],
        "bibr_refs_targeted": refs["bibr_targeted"],
        "xml_ok": True,
    }


# --------------------------------------------------------------------------- per-paper evidence


def _nonempty(spans) -> bool:
    return any(span.text.strip() for span in spans)


def classify_unresolved(doc, span, labels: set[tuple[str, str]]) -> str:
    """Why a figure/table mention has no figure: ``no_label`` (no "Fig./Table N" in its text),
    ``supplementary`` (a supplementary figure, not in the paper), ``no_such_float`` (no TEI
    float of that kind carries that label) or ``resolvable`` (one does: a reader miss).
    """
    match = MENTION_RE.search(span.text)
    if not match:
        return "no_label"
    before = doc.text[max(0, span.start_char - 20) : span.start_char + match.start()].lower()
    label = match.group("label").lower()
    if "supplement" in before or label.startswith("s"):
        return "supplementary"
    kind = "table" if match.group("word").lower().startswith("tab") else "figure"
    return "resolvable" if (kind, label) in labels else "no_such_float"


def figure_evidence(doc, raw: dict) -> dict:
    """Figure, caption and figure-mention counts of one Doc (tables included as kind 'table')."""
    figures = doc._.figures
    ids = {f.id for f in figures}
    labels = {(f.kind, f.label.lower()) for f in figures if f.label}
    refs = list(doc.spans["figure_refs"])
    resolved = [span for span in refs if span.kb_id_ and span.kb_id_ in ids]
    why = Counter(classify_unresolved(doc, span, labels) for span in refs if not (span.kb_id_ and span.kb_id_ in ids))
    raw_total = raw["figures"] + raw["tables"]
    record = {
        "raw_figures": raw["figures"],
        "raw_tables": raw["tables"],
        "dropped_figures": max(0, raw_total - len(figures)),
        "figure_refs": len(refs),
        "figure_refs_resolved": len(resolved),
        "raw_figure_refs": raw["figure_refs"] + raw["table_refs"],
        "raw_figure_refs_targeted": raw["figure_refs_targeted"],
        "has_resolved_figure_mention": any(span.label_ == "figure" for span in resolved),
    }
    for kind in ("figure", "table"):
        of_kind = [f for f in figures if f.kind == kind]
        record[f"{kind}s"] = len(of_kind)
        record[f"{kind}s_captioned"] = sum(1 for f in of_kind if f.caption_text.strip())
    record["figures_total"] = len(figures)
    record["captioned"] = record["figures_captioned"] + record["tables_captioned"]
    record["all_figures_captioned"] = len(figures) >= raw_total and record["captioned"] == len(figures)
    for reason in UNRESOLVED_REASONS:
        record[f"unresolved_{reason}"] = why[reason]
    return record


def citation_evidence(doc, raw: dict) -> dict:
    """Citation markers, how many link to a bibliography entry, and linked citances."""
    bibliography = doc._.bibliography
    markers = list(doc.spans["citations"])
    linked = sum(1 for span in markers if span.kb_id_ and span.kb_id_ in bibliography)
    citances = doc._.citances
    linked_citances = sum(1 for c in citances if any(b in bibliography for b in c.bib_ids))
    return {
        "citation_markers": len(markers),
        "citation_markers_linked": linked,
        "raw_bibr_refs": raw["bibr_refs"],
        "raw_bibr_refs_targeted": raw["bibr_refs_targeted"],
        "citances": len(citances),
        "citances_linked": linked_citances,
        "bibliography_entries": len(bibliography),
        "has_linked_citance": linked_citances > 0,
    }


def paper_evidence(doc, raw: dict) -> dict:
    """Every per-paper measurement of one Doc (see the module docstring)."""
    sections = doc._.sections
    titled = sum(1 for s in sections if s.title.strip())
    record = {
        "has_title": _nonempty(doc.spans["title"]),
        "has_abstract": _nonempty(doc.spans["abstract"]),
        "sections": len(sections),
        "titled_sections": titled,
        "has_3_sections": titled >= 3,
        "sentences": sum(1 for _ in doc.sents),
        "tokens": len(doc),
    }
    record.update(figure_evidence(doc, raw))
    record.update(citation_evidence(doc, raw))
    return record


# --------------------------------------------------------------------------- aggregation


def _mean(records: list[dict], key: str) -> Optional[float]:
    return sum(r[key] for r in records) / len(records) if records else None


def _share(records: list[dict], key: str) -> Optional[float]:
    return sum(1 for r in records if r[key]) / len(records) if records else None


def _pooled(records: list[dict], part: str, whole: str) -> Optional[float]:
    return ratio(sum(r[part] for r in records), sum(r[whole] for r in records))


def summarize(files: int, records: list[dict], failures: list[dict]) -> dict:
    """Aggregate the per-paper records of one folder (or of all folders)."""
    summary = {"files": files, "parsed_ok": len(records), "failures": len(failures), "failure_details": failures}
    for key in PAPER_CHECKS:
        summary[f"share_{key}"] = _share(records, key)
    for key in ("sentences", "tokens", "figures", "tables", "titled_sections", "bibliography_entries"):
        summary[f"mean_{key}"] = _mean(records, key)
    with_figures = [r for r in records if r["figures"]]
    summary["share_has_resolved_figure_mention_if_figures"] = _share(with_figures, "has_resolved_figure_mention")
    summary["share_figure_refs_resolved"] = _pooled(records, "figure_refs_resolved", "figure_refs")
    summary["share_citation_markers_linked"] = _pooled(records, "citation_markers_linked", "citation_markers")
    summary["share_floats_captioned"] = _pooled(records, "captioned", "figures_total")
    summary["share_figures_captioned"] = _pooled(records, "figures_captioned", "figures")
    summary["share_tables_captioned"] = _pooled(records, "tables_captioned", "tables")
    for key in ("raw_figures", "raw_tables", "dropped_figures", "figure_refs", "figure_refs_resolved",
                "raw_figure_refs", "raw_figure_refs_targeted", "citation_markers", "citation_markers_linked",
                "raw_bibr_refs", "raw_bibr_refs_targeted", "citances", "citances_linked",
                *(f"unresolved_{reason}" for reason in UNRESOLVED_REASONS)):
        summary[f"total_{key}"] = sum(r[key] for r in records)
    summary["papers_with_figures"] = sum(1 for r in records if r["figures_total"])
    return summary


# --------------------------------------------------------------------------- running


def evaluate_folder(paths: list[Path], nlp) -> tuple[list[dict], list[dict]]:
    """Read the files with ``read_many``; returns (per-paper records, failures)."""
    records, failures = [], []
    for result in scholarly_nlp.read_many(paths, nlp=nlp, format="tei"):
        name = Path(result.path).name
        if not result.ok:
            failures.append({"file": name, "error": type(result.error).__name__, "reason": str(result.error)})
            continue
        raw = raw_tei_counts(Path(result.path))
        record = paper_evidence(result.doc, raw)
        record["file"] = name
        records.append(record)
    return records, failures


def evaluate(tei_root: Path, limit: Optional[int] = None) -> dict:
    """Evaluate every folder under ``tei_root``; returns the full JSON-able result."""
    nlp = scholarly_nlp.blank()
    folders, all_records, all_failures, total_files = {}, [], [], 0
    started = time.perf_counter()
    for folder, paths in tei_files_by_folder(tei_root).items():
        paths = paths[:limit] if limit else paths
        records, failures = evaluate_folder(paths, nlp)
        folders[folder] = {"summary": summarize(len(paths), records, failures), "papers": records}
        all_records += records
        all_failures += [{**f, "folder": folder} for f in failures]
        total_files += len(paths)
    return {
        "machine": machine_info(),
        "tei_root": str(tei_root),
        "skipped_non_tei": skipped_non_tei(tei_root),
        "seconds": round(time.perf_counter() - started, 2),
        "folders": folders,
        "overall": summarize(total_files, all_records, all_failures),
    }


# --------------------------------------------------------------------------- reporting


def _fmt_mean(value: Optional[float]) -> str:
    return "n/a" if value is None else f"{value:.1f}"


def table_rows(summaries: dict[str, dict]) -> Iterable[list[str]]:
    """Rows of the report table: one metric per row, one column per folder."""
    cols = list(summaries.values())
    yield ["files"] + [str(s["files"]) for s in cols]
    yield ["parsed ok"] + [str(s["parsed_ok"]) for s in cols]
    yield ["failures"] + [str(s["failures"]) for s in cols]
    for key, title in PAPER_CHECKS.items():
        yield [title] + [pct(s[f"share_{key}"]) for s in cols]
        if key == "has_resolved_figure_mention":
            yield ["... among papers with >= 1 figure (kind figure)"] + [
                pct(s["share_has_resolved_figure_mention_if_figures"]) for s in cols
            ]
    yield ["mean sentences / paper"] + [_fmt_mean(s["mean_sentences"]) for s in cols]
    yield ["mean figures / paper"] + [_fmt_mean(s["mean_figures"]) for s in cols]
    yield ["mean tables / paper"] + [_fmt_mean(s["mean_tables"]) for s in cols]
    yield ["TEI figures+tables (raw lxml) / in Doc"] + [
        f"{s['total_raw_figures'] + s['total_raw_tables']} / "
        f"{s['total_raw_figures'] + s['total_raw_tables'] - s['total_dropped_figures']}" for s in cols
    ]
    yield ["figures with a caption"] + [pct(s["share_figures_captioned"]) for s in cols]
    yield ["tables with a caption"] + [pct(s["share_tables_captioned"]) for s in cols]
    yield ["figure/table refs resolved (pooled)"] + [pct(s["share_figure_refs_resolved"]) for s in cols]
    yield ["unresolved refs: no such float / supplementary / no label / resolvable"] + [
        " / ".join(str(s[f"total_unresolved_{reason}"]) for reason in UNRESOLVED_REASONS) for s in cols
    ]
    yield ["figure/table refs: TEI raw / TEI with @target / Doc spans / resolved"] + [
        f"{s['total_raw_figure_refs']} / {s['total_raw_figure_refs_targeted']} / {s['total_figure_refs']} / "
        f"{s['total_figure_refs_resolved']}" for s in cols
    ]
    yield ["citation markers linked (pooled)"] + [pct(s["share_citation_markers_linked"]) for s in cols]
    yield ["citation markers: TEI raw / TEI with @target / Doc spans / linked"] + [
        f"{s['total_raw_bibr_refs']} / {s['total_raw_bibr_refs_targeted']} / {s['total_citation_markers']} / "
        f"{s['total_citation_markers_linked']}" for s in cols
    ]


def report(result: dict) -> str:
    """The markdown report: the table, then failures and skipped files."""
    summaries = {name: f["summary"] for name, f in result["folders"].items()}
    summaries["overall"] = result["overall"]
    lines = [f"Corpus evidence over {result['tei_root']} ({result['machine']['date']}, {result['seconds']} s)", ""]
    lines.append(markdown_table(["metric"] + list(summaries), table_rows(summaries)))
    lines.append("")
    failures = result["overall"]["failure_details"]
    lines.append(f"Failures: {len(failures)}")
    lines += [f"- {f['folder']}/{f['file']}: {f['error']}: {f['reason']}" for f in failures]
    if result["skipped_non_tei"]:
        lines.append("Skipped (XML but not TEI): " + ", ".join(result["skipped_non_tei"]))
    return "\n".join(lines)


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tei-root", type=Path, default=DEFAULT_TEI_ROOT, help="folder with acl/, biomed/, with-pdf/")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "corpus_evidence.json", help="JSON output file")
    parser.add_argument("--limit", type=int, default=None, help="at most N files per folder (quick runs)")
    return parser.parse_args(argv)


def main(argv: Optional[list[str]] = None) -> int:
    """Run the evaluation, print the report and write the JSON."""
    args = parse_args(argv)
    if not args.tei_root.is_dir():
        print(f"error: --tei-root {args.tei_root} is not a folder", file=sys.stderr)
        return 2
    result = evaluate(args.tei_root, args.limit)
    print(report(result))
    write_json(args.out, result)
    print(f"\nJSON written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
