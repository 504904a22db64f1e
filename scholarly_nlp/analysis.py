"""What ``scholarly-nlp analyze`` writes per paper: one JSON-able record of a processed Doc.

The core fills in what the document model knows (paper id, title, the abstract's sentences
with their roles when a role tagger set them, citances with their bibliography ids, section
and figure counts). Each pipe of the pipeline may add its own fields by defining
``analysis(doc) -> dict`` (the figure ranker adds ``central_figure`` and scored
``figures``, the contribution linker ``contributions``, ...): the core never needs to know
a component's outputs, and a third-party component joins the record the same way. A pipe
may add fields to each item of a list the record already has (``{"citances": [{"facets":
[...]}, ...]}``, one dict per citance); two pipes that write the same field are an error.
The CLI writes a record as strict JSON (a NaN or infinite score becomes ``null``), and a
pipe whose ``analysis`` raises fails that paper only.
"""

from __future__ import annotations

from typing import Any, Optional

from spacy.language import Language
from spacy.tokens import Doc

from .doc.roles import ROLE_GROUP, abstract_sentences

FORMAT_VERSION = 1


def _abstract_roles(doc: Doc) -> list[dict]:
    roles = {(span.start, span.end): span.label_ for span in doc.spans.get(ROLE_GROUP, [])}
    scores = doc._.role_scores if Doc.has_extension("role_scores") else None
    out = []
    for i, sentence in enumerate(abstract_sentences(doc)):
        row: dict[str, Any] = {"text": sentence.text, "role": roles.get((sentence.start, sentence.end))}
        if scores and i < len(scores):
            row["scores"] = {role: round(float(p), 4) for role, p in scores[i].items()}
        out.append(row)
    return out


def _citances(doc: Doc) -> list[dict]:
    return [{"text": c.text, "start_char": c.sentence.start_char, "end_char": c.sentence.end_char,
             "markers": [m.text for m in c.markers], "bib_ids": list(c.bib_ids)} for c in doc._.citances]


def analysis_record(doc: Doc, nlp: Optional[Language] = None) -> dict:
    """The record of one processed paper: the core fields plus every pipe's ``analysis(doc)``."""
    meta = doc._.paper_meta or {}
    record: dict[str, Any] = {
        "format_version": FORMAT_VERSION,
        "paper_id": meta.get("paper_id"),
        "source": meta.get("source"),
        "title": doc.spans["title"][0].text if doc.spans.get("title") else "",
        "abstract_roles": _abstract_roles(doc),
        "citances": _citances(doc),
        "counts": {"sentences": sum(1 for _ in doc.sents) if doc.has_annotation("SENT_START") else 0,
                   "sections": len(doc._.sections), "figures": len(doc._.figures),
                   "citances": len(doc._.citances), "references": len(doc._.bibliography)},
    }
    owners: dict[str, str] = {}
    for name, pipe in (nlp.pipeline if nlp is not None else []):
        describe = getattr(pipe, "analysis", None)
        if not callable(describe):
            continue
        for key, value in describe(doc).items():
            if _is_item_fields(record.get(key), value):
                _merge_items(record[key], value, key, name, owners)
                continue
            if key in owners or key in record:
                raise ValueError(f"pipes {owners.get(key, 'core')!r} and {name!r} both write {key!r} in the analysis")
            owners[key] = name
            record[key] = value
    return record


def _is_item_fields(current: Any, value: Any) -> bool:
    """True when ``value`` adds fields to each dict of the record's list ``current``."""
    return (isinstance(current, list) and isinstance(value, list) and len(current) == len(value)
            and all(isinstance(item, dict) for item in current + value))


def _merge_items(items: list[dict], fields: list[dict], key: str, pipe: str, owners: dict) -> None:
    for item, extra in zip(items, fields):
        for field, value in extra.items():
            where = f"{key}[].{field}"
            if field in item:
                raise ValueError(f"pipes {owners.get(where, 'core')!r} and {pipe!r} both write {where!r} in the analysis")
            owners[where] = pipe
            item[field] = value


def summary_lines(record: dict) -> list[str]:
    """A short readable summary of one record (what the CLI prints per paper)."""
    title = (record.get("title") or "(no title)")[:80]
    counts = record["counts"]
    lines = [f"{record.get('paper_id')}: {title}",
             f"  {counts['sections']} sections, {counts['figures']} figures/tables, {counts['citances']} citances, "
             f"{counts['references']} references"]
    if record.get("central_figure"):
        lines.append(f"  central figure: {record['central_figure']}{_caption_start(record)}")
    roles = [r["role"] for r in record.get("abstract_roles", []) if r.get("role")]
    if roles:
        lines.append(f"  abstract roles: {' '.join(roles)}")
    contributions = record.get("contributions") or []
    if contributions:
        lines.append(f"  {len(contributions)} contribution sentence(s); first: "
                     f"{contributions[0]['sentence']['text'][:70]}")
    facets = [f for c in record.get("citances", []) for f in c.get("facets", [])]
    if facets:
        lines.append(f"  citance facets: {', '.join(sorted(set(facets)))}")
    if record.get("aspect_fallbacks"):
        lines.append(f"  aspects by fallback: {', '.join(sorted(record['aspect_fallbacks']))}")
    return lines


def _caption_start(record: dict) -> str:
    """' ("Figure 2: Overview of ...")': the start of the central figure's caption, when the
    record lists it; "" otherwise."""
    central = record.get("central_figure")
    caption = next((f.get("caption") for f in record.get("figures") or []
                    if isinstance(f, dict) and f.get("id") == central), None)
    if not isinstance(caption, str) or not caption.strip():
        return ""
    caption = " ".join(caption.split())
    return f' ("{caption[:60].rstrip()}{"..." if len(caption) > 60 else ""}")'
