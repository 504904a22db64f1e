"""The built-in PDF reader against GROBID's TEI of the same PDFs, per publisher group.

For every pair ``NAME.pdf`` + ``NAME.tei.xml`` under ``pdf-pairs/`` (58 papers of many
publishers) and ``tei/with-pdf/`` (3 papers) it measures:

* **title**: the PDF title's tokens equal the TEI title's;
* **abstract F1** and **body F1**: multiset token F1 against the TEI abstract and body ``<p>``;
* **caption recall**: TEI ``figDesc`` captions with 70% of their tokens in one PDF caption;
  also over the figures GROBID gave a ``label`` ("labelled"): a quarter of its ``figDesc``s
  have none and most of those are body paragraphs, table cells or LaTeX residue;
* **footnote recall**: TEI ``note[@place="foot"]`` with 70% of their tokens in one PDF footnote;
* **head recall**: TEI body heads with token F1 >= .8 against a PDF section title; also over
  the heads GROBID numbered (``head/@n``): its unnumbered ones include figure panel labels;
* **author recall** and **precision**: GROBID's header authors whose surname (folded) is
  the last word of one of the reader's author names, and the reader's authors found so;
* **bibliography recall**: GROBID entries (with a title) whose title has token F1 >= .8
  with the title of one of the reader's entries;
* **formula numbers**: recall of the numbers GROBID read for its display formulas (``formula/label``)
  among the numbers of the reader's formulas, and precision of the reader's numbers among
  GROBID's; **formula mentions linked**: "Eq. (3)" references with a formula target, the
  reader's and GROBID's (``ref[@type="formula"]``);
* **markers linked**: citation markers (``bibr`` refs) with a bibliography target, the
  reader's count and GROBID's, and the ratio of the two (the target is at least .8);
* **speed**: pages per second of ``read_pdf`` and of bare pypdfium2 text extraction
  (``get_text_range`` of every page) on the same files, and their ratio.

Rows are grouped by publisher (``MANIFEST.tsv``'s publisher field, see :func:`group_of`);
the pooled row is over all papers. The TEI side is parsed with lxml here, not with the
project's TEI reader, so the yardstick does not move with the code it measures.

Usage::

    python benchmarks/pdf_vs_grobid.py [--data ../shared/data] [--out results.json] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import statistics
import sys
import time
import unicodedata
from collections import Counter, defaultdict
from pathlib import Path
from typing import Optional

from lxml import etree

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scholarly_nlp import Paper, ScholarlyNLPError  # noqa: E402
from scholarly_nlp.readers import read_pdf  # noqa: E402

TEI_NS = {"t": "http://www.tei-c.org/ns/1.0"}
TOKEN_RE = re.compile(r"[^\W_]+")
#: A TEI caption counts as found when this share of its tokens is in one PDF caption.
CAPTION_MATCH = 0.7
#: A TEI head or bibliography title counts as found at this token F1 with one of the reader's.
TITLE_MATCH = 0.8

#: Publisher groups: the first pattern found in MANIFEST.tsv's publisher field names the group.
GROUPS = [
    ("arXiv / preprints", r"arxiv|preprint|iclr|latex|self-published"),
    ("IEEE / ACM", r"\bieee\b|\bacm\b"),
    ("Springer Nature / BMC", r"springer|\bbmc\b|nature|sci data"),
    ("Elsevier", r"elsevier"),
    ("open-access publishers", r"plos|peerj|mdpi|copernicus|ubiquity|royal society|dove|scielo|medknow|"
                               r"nammco|polar|resilience|int j digital"),
    ("ACL", r"^acl$"),
]
OTHER_GROUP = "other publishers (Wiley, SAGE, OUP, T&F, Word/OJS ...)"


# --------------------------------------------------------------------------- text helpers


def tokens(text: str) -> list[str]:
    """Lower-cased alphanumeric tokens."""
    return TOKEN_RE.findall(text.lower())


def token_f1(predicted: list[str], gold: list[str]) -> float:
    """Multiset token F1."""
    return token_prf(predicted, gold)[2]


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
    """An element's text with white space folded."""
    return " ".join("".join(element.itertext()).split())


def best_f1(gold: str, candidates: list[list[str]], index: dict[str, list[int]]) -> float:
    """The best token F1 of ``gold`` with a candidate sharing one of its tokens."""
    gold_tokens = tokens(gold)
    seen = {i for t in set(gold_tokens) for i in index.get(t, ())}
    return max((token_f1(candidates[i], gold_tokens) for i in seen), default=0.0)


def token_index(candidates: list[list[str]]) -> dict[str, list[int]]:
    """Token -> indices of the candidates holding it."""
    index: dict[str, list[int]] = defaultdict(list)
    for i, candidate in enumerate(candidates):
        for t in set(candidate):
            index[t].append(i)
    return index


# --------------------------------------------------------------------------- TEI side


def tei_facts(path: Path) -> dict:
    """Title, abstract, body heads, paragraphs, captions, bibliography titles and citation
    markers of a GROBID TEI."""
    tree = etree.parse(str(path))
    title = tree.find(".//t:teiHeader//t:titleStmt/t:title", TEI_NS)
    abstract = tree.find(".//t:profileDesc/t:abstract", TEI_NS)
    body = tree.find(".//t:text/t:body", TEI_NS)
    heads, paragraphs, captions = [], [], []
    numbered_heads, labelled_captions = [], []
    if body is not None:
        for head in body.findall(".//t:div/t:head", TEI_NS):
            if text_of(head):
                heads.append(text_of(head))
                numbered_heads.append(bool(head.get("n")))
        paragraphs = [text_of(p) for p in body.findall(".//t:div/t:p", TEI_NS) if text_of(p)]
        for figure in body.findall(".//t:figure", TEI_NS):
            desc = figure.find("t:figDesc", TEI_NS)
            if desc is not None and text_of(desc):
                captions.append(text_of(desc))
                label = figure.find("t:label", TEI_NS)
                labelled_captions.append(label is not None and bool(text_of(label)))
    bib_titles = []
    for entry in tree.findall(".//t:text/t:back//t:listBibl/t:biblStruct", TEI_NS):
        entry_title = entry.find("t:analytic/t:title", TEI_NS)
        if entry_title is None or not text_of(entry_title):
            entry_title = entry.find("t:monogr/t:title", TEI_NS)
        if entry_title is not None and len(tokens(text_of(entry_title))) >= 2:
            bib_titles.append(text_of(entry_title))
    authors = [text_of(s) for s in tree.findall(
        ".//t:teiHeader/t:fileDesc/t:sourceDesc/t:biblStruct/t:analytic/t:author/t:persName/t:surname", TEI_NS)]
    markers = tree.findall(".//t:text/t:body//t:ref[@type='bibr']", TEI_NS)
    footnotes = [text_of(n) for n in tree.findall(".//t:text//t:note[@place='foot']", TEI_NS) if text_of(n)]
    formula_labels = [text_of(label).strip("()[] .").lower()
                      for label in tree.findall(".//t:text/t:body//t:formula/t:label", TEI_NS) if text_of(label)]
    formula_refs = tree.findall(".//t:text/t:body//t:ref[@type='formula']", TEI_NS)
    return {
        "formula_labels": formula_labels,
        "formula_refs_linked": sum(1 for r in formula_refs if r.get("target")),
        "footnotes": footnotes,
        "authors": authors,
        "title": text_of(title) if title is not None else "",
        "abstract": text_of(abstract) if abstract is not None else "",
        "heads": heads,
        "numbered_heads": numbered_heads,
        "paragraphs": paragraphs,
        "captions": captions,
        "labelled_captions": labelled_captions,
        "bib_titles": bib_titles,
        "markers": len(markers),
        "markers_linked": sum(1 for m in markers if m.get("target")),
    }


# --------------------------------------------------------------------------- comparison


def compare(paper: Paper, tei: dict) -> dict:
    """Agreement of one PDF's Paper with its TEI."""
    pdf_captions = [tokens(b.text) for b in paper.blocks_of("caption")]
    found_captions = [any(containment(tokens(c), pc) >= CAPTION_MATCH for pc in pdf_captions)
                      for c in tei["captions"]]
    # a head counts with or without its number: GROBID keeps "II. OVERVIEW" whole when it
    # does not read Roman numbering, the reader splits it into number and title
    titles = [tokens(s.title) for s in paper.sections] + [
        tokens(f"{s.number} {s.title}") for s in paper.sections if s.number]
    head_index = token_index(titles)
    found_heads = [best_f1(h, titles, head_index) >= TITLE_MATCH for h in tei["heads"]]
    body = [t for b in paper.blocks_of("paragraph") for t in tokens(b.text)]
    gold_body = [t for p in tei["paragraphs"] for t in tokens(p)]
    bp, br, bf = token_prf(body, gold_body)
    abstract = [t for b in paper.blocks_of("abstract") for t in tokens(b.text)]
    bib = [tokens(e.title) for e in paper.bibliography.values()]
    bib_index = token_index(bib)
    found_bib = [best_f1(t, bib, bib_index) >= TITLE_MATCH for t in tei["bib_titles"]]
    markers = [r for b in paper.blocks_of("paragraph") for r in b.refs if r.kind == "bibr"]
    notes = [tokens(b.text) for b in paper.blocks_of("footnote")]
    found_notes = [any(containment(tokens(n), ours) >= CAPTION_MATCH for ours in notes) for n in tei["footnotes"]]
    our_labels = [b.label.lower() for b in paper.blocks_of("formula") if b.label]
    formula_mentions = [r for b in paper.blocks_of("paragraph") for r in b.refs if r.kind == "formula"]
    gold_surnames = {_fold(a) for a in tei["authors"] if _fold(a)}
    our_surnames = [_fold(a.name.split()[-1]) for a in paper.authors if a.name.split()]
    return {
        "authors_tei": len(gold_surnames),
        "authors_found": len(gold_surnames & set(our_surnames)),
        "authors_pdf": len(our_surnames),
        "authors_right": sum(1 for s in our_surnames if s in gold_surnames),
        "footnotes_tei": len(found_notes),
        "footnotes_found": sum(found_notes),
        "footnotes_pdf": len(notes),
        "formula_labels_tei": len(tei["formula_labels"]),
        "formula_labels_found": sum(1 for label in tei["formula_labels"] if label in our_labels),
        "formula_labels_pdf": len(our_labels),
        "formula_labels_right": sum(1 for label in our_labels if label in tei["formula_labels"]),
        "formula_refs_linked_tei": tei["formula_refs_linked"],
        "formula_refs_linked_pdf": sum(1 for r in formula_mentions if r.target),
        "pages": None,
        "title_match": bool(tokens(paper.title)) and tokens(paper.title) == tokens(tei["title"]),
        "abstract_f1": round(token_f1(abstract, tokens(tei["abstract"])), 3),
        "body_precision": round(bp, 3),
        "body_recall": round(br, 3),
        "body_f1": round(bf, 3),
        "captions_tei": len(found_captions),
        "captions_found": sum(found_captions),
        "labelled_captions_tei": sum(tei["labelled_captions"]),
        "labelled_captions_found": sum(f for f, l in zip(found_captions, tei["labelled_captions"]) if l),
        "heads_tei": len(found_heads),
        "heads_found": sum(found_heads),
        "numbered_heads_tei": sum(tei["numbered_heads"]),
        "numbered_heads_found": sum(f for f, n in zip(found_heads, tei["numbered_heads"]) if n),
        "bib_tei": len(found_bib),
        "bib_found": sum(found_bib),
        "bib_pdf": len(paper.bibliography),
        "markers_tei": tei["markers"],
        "markers_linked_tei": tei["markers_linked"],
        "markers_pdf": len(markers),
        "markers_linked_pdf": sum(1 for r in markers if r.target),
        "missed_heads": [h for h, ok in zip(tei["heads"], found_heads) if not ok][:10],
        "missed_bib": [t[:80] for t, ok in zip(tei["bib_titles"], found_bib) if not ok][:10],
    }


def _fold(name: str) -> str:
    """A surname for matching: lower case, accents and punctuation removed."""
    text = unicodedata.normalize("NFKD", name)
    return re.sub(r"[^a-z]", "", "".join(c for c in text if not unicodedata.combining(c)).lower())


def ratio(num: float, den: float) -> Optional[float]:
    """num / den to three places, or None when den is 0."""
    return round(num / den, 3) if den else None


def summarise(rows: list[dict]) -> dict:
    """Pooled and mean numbers over some compared papers."""
    def total(key: str) -> int:
        return sum(r[key] for r in rows)

    def mean(key: str) -> Optional[float]:
        return round(statistics.mean(r[key] for r in rows), 3) if rows else None

    return {
        "papers": len(rows),
        "title_right": ratio(sum(r["title_match"] for r in rows), len(rows)),
        "abstract_f1": mean("abstract_f1"),
        "body_f1": mean("body_f1"),
        "caption_recall": ratio(total("captions_found"), total("captions_tei")),
        "labelled_caption_recall": ratio(total("labelled_captions_found"), total("labelled_captions_tei")),
        "head_recall": ratio(total("heads_found"), total("heads_tei")),
        "numbered_head_recall": ratio(total("numbered_heads_found"), total("numbered_heads_tei")),
        "author_recall": ratio(total("authors_found"), total("authors_tei")),
        "author_precision": ratio(total("authors_right"), total("authors_pdf")),
        "bib_recall": ratio(total("bib_found"), total("bib_tei")),
        "footnote_recall": ratio(total("footnotes_found"), total("footnotes_tei")),
        "formula_label_recall": ratio(total("formula_labels_found"), total("formula_labels_tei")),
        "formula_label_precision": ratio(total("formula_labels_right"), total("formula_labels_pdf")),
        "formula_refs_linked_pdf": total("formula_refs_linked_pdf"),
        "formula_refs_linked_tei": total("formula_refs_linked_tei"),
        "bib_entries_pdf": total("bib_pdf"),
        "bib_entries_tei": total("bib_tei"),
        "markers_linked_pdf": total("markers_linked_pdf"),
        "markers_linked_tei": total("markers_linked_tei"),
        "markers_linked_vs_grobid": ratio(total("markers_linked_pdf"), total("markers_linked_tei")),
    }


# --------------------------------------------------------------------------- pairs and speed


def group_of(publisher: str) -> str:
    """The publisher group a MANIFEST.tsv publisher field belongs to."""
    for name, pattern in GROUPS:
        if re.search(pattern, publisher, flags=re.IGNORECASE):
            return name
    return OTHER_GROUP


def pairs(data: Path) -> list[tuple[str, Path, Path, str]]:
    """(name, pdf, tei, group) for every pair in pdf-pairs/ and tei/with-pdf/."""
    publishers = {}
    manifest = data / "pdf-pairs" / "MANIFEST.tsv"
    if manifest.exists():
        with manifest.open(encoding="utf-8") as handle:
            publishers = {row["name"]: row["publisher"] for row in csv.DictReader(handle, delimiter="\t")}
    found = []
    for folder in (data / "pdf-pairs", data / "tei" / "with-pdf"):
        for pdf in sorted(folder.glob("*.pdf")):
            tei = pdf.with_suffix(".tei.xml")
            if tei.exists():
                publisher = publishers.get(pdf.stem, "PLOS" if pdf.stem.startswith("journal.pone") else "ACL")
                found.append((pdf.stem, pdf, tei, group_of(publisher)))
    return found


def bare_text_seconds(pdf: Path) -> tuple[float, int]:
    """Seconds pypdfium2 takes to open the file and extract every page's text; the page count."""
    import pypdfium2 as pdfium

    start = time.process_time()
    document = pdfium.PdfDocument(str(pdf))
    try:
        count = len(document)
        for index in range(count):
            page = document[index]
            textpage = page.get_textpage()
            textpage.get_text_range()
            textpage.close()
            page.close()
    finally:
        document.close()
    return time.process_time() - start, count


def measure(data: Path, only: Optional[set[str]] = None) -> dict:
    """Per paper, per group and pooled numbers, and the speed of both readers."""
    per_paper, failures = {}, []
    reader_cpu = bare_cpu = 0.0
    pages = 0
    for name, pdf, tei, group in pairs(data):
        if only and name not in only:
            continue
        try:
            start = time.process_time()
            paper = read_pdf(pdf)
            elapsed = time.process_time() - start
        except ScholarlyNLPError as exc:
            failures.append({"paper": name, "error": f"{type(exc).__name__}: {exc}"})
            continue
        bare, count = bare_text_seconds(pdf)
        reader_cpu, bare_cpu, pages = reader_cpu + elapsed, bare_cpu + bare, pages + count
        row = compare(paper, tei_facts(tei))
        row.update(group=group, pages=count, reader_seconds=round(elapsed, 3))
        per_paper[name] = row
    groups = defaultdict(list)
    for row in per_paper.values():
        groups[row["group"]].append(row)
    return {
        "papers": per_paper,
        "groups": {name: summarise(rows) for name, rows in sorted(groups.items())},
        "pooled": summarise(list(per_paper.values())),
        "speed": {
            "pages": pages,
            "reader_cpu_seconds": round(reader_cpu, 2),
            "bare_pdfium_cpu_seconds": round(bare_cpu, 2),
            "reader_pages_per_second": ratio(pages, reader_cpu),
            "bare_pages_per_second": ratio(pages, bare_cpu),
            "reader_vs_bare_ratio": ratio(bare_cpu, reader_cpu),
        },
        "failures": failures,
    }


# --------------------------------------------------------------------------- report

_COLUMNS = [("title", "title_right"), ("authors R", "author_recall"), ("authors P", "author_precision"),
            ("abs F1", "abstract_f1"), ("body F1", "body_f1"),
            ("capt R", "caption_recall"), ("labelled capt R", "labelled_caption_recall"),
            ("head R", "head_recall"), ("numbered head R", "numbered_head_recall"), ("foot R", "footnote_recall"),
            ("bib R", "bib_recall"), ("formula no. R", "formula_label_recall"),
            ("formula no. P", "formula_label_precision"),
            ("linked/GROBID", "markers_linked_vs_grobid")]


def print_report(result: dict) -> None:
    """A Markdown table per group and pooled, then the speed."""
    print("| group | papers | " + " | ".join(label for label, _ in _COLUMNS) + " |")
    print("| :--- | ---: | " + " | ".join("---:" for _ in _COLUMNS) + " |")
    rows = list(result["groups"].items()) + [("**all**", result["pooled"])]
    for name, summary in rows:
        cells = ["-" if summary[key] is None else f"{summary[key]:.3f}" for _, key in _COLUMNS]
        print(f"| {name} | {summary['papers']} | " + " | ".join(cells) + " |")
    pooled = result["pooled"]
    print(f"\nbibliography entries: reader {pooled['bib_entries_pdf']}, GROBID (with a title) {pooled['bib_entries_tei']}; "
          f"markers linked: reader {pooled['markers_linked_pdf']}, GROBID {pooled['markers_linked_tei']}; "
          f"formula mentions linked: reader {pooled['formula_refs_linked_pdf']}, GROBID {pooled['formula_refs_linked_tei']}")
    speed = result["speed"]
    print(f"speed: {speed['pages']} pages, read_pdf {speed['reader_pages_per_second']} pages/CPU s, bare pypdfium2 "
          f"{speed['bare_pages_per_second']} pages/CPU s, ratio {speed['reader_vs_bare_ratio']}")
    for failure in result["failures"]:
        print(f"failed: {failure['paper']}: {failure['error']}")


def base_parser(description: str) -> argparse.ArgumentParser:
    """The options every PDF-reader benchmark takes: ``--data`` and ``--out``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--out", type=Path, help="write the numbers as JSON here")
    return parser


def write_result(out: Optional[Path], result: dict) -> None:
    """Write ``result`` as JSON to ``out`` when one is given."""
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=2, ensure_ascii=False))


def main(argv: Optional[list[str]] = None) -> int:
    """Measure, print the tables, and write the JSON when asked."""
    parser = base_parser(__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="*", help="measure only these pair names")
    args = parser.parse_args(argv)
    result = measure(args.data, set(args.only) if args.only else None)
    print_report(result)
    write_result(args.out, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
