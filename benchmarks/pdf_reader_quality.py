"""Measure the built-in PDF reader against GROBID's TEI, and its speed over real ACL PDFs.

Two parts:

* **vs GROBID** - for each PDF in ``tei/with-pdf/`` that has a TEI with the same stem:
  caption recall (TEI ``figDesc`` captions matched by token overlap), section-head recall
  (TEI ``body/div/head``), and body-text overlap (token-level precision, recall and F1 of
  the paragraph text against the TEI body ``<p>`` text); title and abstract agreement too.
* **corpus** - over every PDF in ``pdfs/acl/``: figures and tables found per paper
  (mean/median), share of papers with an abstract and with section heads, papers/second,
  and failures (with their error).

The TEI side is parsed here with lxml on purpose, so the measurement does not depend on
the project's TEI reader.

Usage::

    python benchmarks/pdf_reader_quality.py [--data ../shared/data] [--out results.json] [--images]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Optional

from lxml import etree

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scholarly_nlp import ScholarlyNLPError
from scholarly_nlp import Paper
from scholarly_nlp.readers import read_pdf

TEI_NS = {"t": "http://www.tei-c.org/ns/1.0"}
TOKEN_RE = re.compile(r"[^\W_]+")
#: A TEI caption counts as found when this share of its tokens is in one PDF caption.
CAPTION_MATCH = 0.7
#: A TEI section head counts as found when token F1 with a PDF section title reaches this.
HEAD_MATCH = 0.8


# --------------------------------------------------------------------------- text helpers


def tokens(text: str) -> list[str]:
    """Lower-cased alphanumeric tokens."""
    return TOKEN_RE.findall(text.lower())


def token_prf(predicted: list[str], gold: list[str]) -> tuple[float, float, float]:
    """Multiset token precision, recall and F1."""
    if not predicted or not gold:
        return 0.0, 0.0, 0.0
    common = sum((Counter(predicted) & Counter(gold)).values())
    p, r = common / len(predicted), common / len(gold)
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def containment(part: list[str], whole: list[str]) -> float:
    """Share of ``part``'s tokens (as a multiset) found in ``whole``."""
    if not part:
        return 0.0
    return sum((Counter(part) & Counter(whole)).values()) / len(part)


def text_of(element) -> str:
    return " ".join("".join(element.itertext()).split())


# --------------------------------------------------------------------------- TEI side


def tei_facts(path: Path) -> dict:
    """Title, abstract, body section heads, body paragraphs and captions from a GROBID TEI."""
    tree = etree.parse(str(path))
    title = tree.find(".//t:teiHeader//t:titleStmt/t:title", TEI_NS)
    abstract = tree.find(".//t:profileDesc/t:abstract", TEI_NS)
    body = tree.find(".//t:text/t:body", TEI_NS)
    heads, paragraphs, captions = [], [], []
    if body is not None:
        heads = [text_of(h) for h in body.findall(".//t:div/t:head", TEI_NS) if text_of(h)]
        paragraphs = [text_of(p) for p in body.findall(".//t:div/t:p", TEI_NS) if text_of(p)]
        captions = [text_of(d) for d in body.findall(".//t:figure/t:figDesc", TEI_NS) if text_of(d)]
    return {
        "title": text_of(title) if title is not None else "",
        "abstract": text_of(abstract) if abstract is not None else "",
        "heads": heads,
        "paragraphs": paragraphs,
        "captions": captions,
    }


# --------------------------------------------------------------------------- comparison


def best_head_f1(head: str, titles: list[str]) -> float:
    gold = tokens(head)
    return max((token_prf(tokens(t), gold)[2] for t in titles), default=0.0)


def compare(paper: Paper, tei: dict) -> dict:
    """Agreement of one parsed PDF with its TEI."""
    pdf_captions = [tokens(b.text) for b in paper.blocks_of("caption")]
    found_captions = [
        any(containment(tokens(c), pc) >= CAPTION_MATCH for pc in pdf_captions)
        for c in tei["captions"]
    ]
    titles = [s.title for s in paper.sections]
    found_heads = [best_head_f1(h, titles) >= HEAD_MATCH for h in tei["heads"]]
    body = [t for b in paper.blocks_of("paragraph") for t in tokens(b.text)]
    gold_body = [t for p in tei["paragraphs"] for t in tokens(p)]
    bp, br, bf = token_prf(body, gold_body)
    abstract = [t for b in paper.blocks_of("abstract") for t in tokens(b.text)]
    _, _, af = token_prf(abstract, tokens(tei["abstract"]))
    return {
        "title_match": tokens(paper.title) == tokens(tei["title"]),
        "abstract_f1": round(af, 3),
        "captions_tei": len(tei["captions"]),
        "captions_found": sum(found_captions),
        "captions_pdf": len(pdf_captions),
        "caption_recall": _ratio(sum(found_captions), len(found_captions)),
        "heads_tei": len(tei["heads"]),
        "heads_found": sum(found_heads),
        "heads_pdf": len(titles),
        "head_recall": _ratio(sum(found_heads), len(found_heads)),
        "body_precision": round(bp, 3),
        "body_recall": round(br, 3),
        "body_f1": round(bf, 3),
        "missed_heads": [h for h, ok in zip(tei["heads"], found_heads) if not ok],
        "missed_captions": [c[:80] for c, ok in zip(tei["captions"], found_captions) if not ok],
    }


def _ratio(num: int, den: int) -> Optional[float]:
    return round(num / den, 3) if den else None


def versus_grobid(data: Path) -> dict:
    """Per-paper and pooled agreement on the PDF/TEI pairs."""
    per_paper = {}
    for pdf in sorted((data / "tei" / "with-pdf").glob("*.pdf")):
        tei_path = pdf.with_suffix(".tei.xml")
        if tei_path.exists():
            per_paper[pdf.stem] = compare(read_pdf(pdf), tei_facts(tei_path))
    rows = list(per_paper.values())
    pooled = {
        "caption_recall": _ratio(
            sum(r["captions_found"] for r in rows), sum(r["captions_tei"] for r in rows)
        ),
        "head_recall": _ratio(
            sum(r["heads_found"] for r in rows), sum(r["heads_tei"] for r in rows)
        ),
        "body_f1_mean": round(statistics.mean(r["body_f1"] for r in rows), 3) if rows else None,
        "body_recall_mean": round(statistics.mean(r["body_recall"] for r in rows), 3)
        if rows
        else None,
        "title_matches": sum(r["title_match"] for r in rows),
        "papers": len(rows),
    }
    return {"papers": per_paper, "pooled": pooled}


# --------------------------------------------------------------------------- corpus


def corpus(data: Path, images: bool) -> dict:
    """Counts, speed and failures over pdfs/acl."""
    files = sorted((data / "pdfs" / "acl").glob("*.pdf"))
    figures, tables, failures = [], [], []
    with_abstract = with_heads = 0
    image_dir = tempfile.TemporaryDirectory() if images else None
    start, cpu_start = time.perf_counter(), time.process_time()
    for path in files:
        try:
            paper = read_pdf(path, image_dir=image_dir.name if image_dir else None)
        except ScholarlyNLPError as exc:
            failures.append({"file": path.name, "error": type(exc).__name__, "message": str(exc)})
            continue
        figures.append(sum(f.kind == "figure" for f in paper.figures))
        tables.append(sum(f.kind == "table" for f in paper.figures))
        with_abstract += bool(paper.blocks_of("abstract"))
        with_heads += bool(paper.sections)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    if image_dir:
        image_dir.cleanup()
    read = len(files) - len(failures)
    return {
        "papers": len(files),
        "read": read,
        "failures": failures,
        "figures_mean": round(statistics.mean(figures), 2) if figures else None,
        "figures_median": statistics.median(figures) if figures else None,
        "tables_mean": round(statistics.mean(tables), 2) if tables else None,
        "papers_with_figures": sum(1 for n in figures if n),
        "abstract_share": _ratio(with_abstract, read),
        "sections_share": _ratio(with_heads, read),
        "seconds": round(elapsed, 2),
        "papers_per_second": round(len(files) / elapsed, 2) if elapsed else None,
        # CPU time is steadier than wall time on a shared machine
        "cpu_seconds": round(cpu, 2),
        "papers_per_cpu_second": round(len(files) / cpu, 2) if cpu else None,
        "images_rendered": images,
    }


# --------------------------------------------------------------------------- report


def print_report(result: dict) -> None:
    """A plain-text table of the numbers."""
    print("PDF reader vs GROBID TEI (tei/with-pdf)")
    print(
        f"{'paper':28s} {'title':>5s} {'abs F1':>6s} {'captions':>9s} {'heads':>9s} {'body P':>6s} {'body R':>6s} {'body F1':>7s}"
    )
    for name, r in result["vs_grobid"]["papers"].items():
        print(
            f"{name[:28]:28s} {('yes' if r['title_match'] else 'no'):>5s} {r['abstract_f1']:6.3f} "
            f"{r['captions_found']:>4d}/{r['captions_tei']:<4d} {r['heads_found']:>4d}/{r['heads_tei']:<4d} "
            f"{r['body_precision']:6.3f} {r['body_recall']:6.3f} {r['body_f1']:7.3f}"
        )
    pooled = result["vs_grobid"]["pooled"]
    print(
        f"pooled: caption recall {pooled['caption_recall']}, head recall {pooled['head_recall']}, "
        f"mean body F1 {pooled['body_f1_mean']}, mean body recall {pooled['body_recall_mean']}"
    )
    c = result["corpus"]
    print(
        f"\nCorpus pdfs/acl: {c['read']}/{c['papers']} read in {c['seconds']} s wall, "
        f"{c['cpu_seconds']} s CPU ({c['papers_per_second']} papers/s wall, "
        f"{c['papers_per_cpu_second']} papers per CPU second; images {'on' if c['images_rendered'] else 'off'})"
    )
    print(
        f"figures/paper mean {c['figures_mean']} median {c['figures_median']}, tables/paper mean {c['tables_mean']}, "
        f"papers with figures {c['papers_with_figures']}, abstract share {c['abstract_share']}, "
        f"sections share {c['sections_share']}"
    )
    for failure in c["failures"]:
        print(f"  failed: {failure['file']}: {failure['error']}: {failure['message']}")


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--out", type=Path, help="write the numbers as JSON here")
    parser.add_argument(
        "--images", action="store_true", help="also render figure PNGs in the corpus run"
    )
    args = parser.parse_args(argv)
    result = {"vs_grobid": versus_grobid(args.data), "corpus": corpus(args.data, args.images)}
    print_report(result)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
