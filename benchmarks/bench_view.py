"""Speed and size of the HTML view (issue 17, item 5: a 70-page paper in under 2 s and 5 MB).

For each paper (by default the longest PDF of ``pdf-pairs``, 76 pages, and the longest ACL
TEI), the paper is read once with the built-in readers, its core analysis record built, and
``scholarly_nlp.render`` timed over several runs (median and worst); the page's size is the
UTF-8 bytes of the HTML (figure crops are separate files, linked). The pipeline's own findings
add a few fields to the record and do not change the order of the numbers.

    python benchmarks/bench_view.py [--paper FILE ...] [--repeats 5] [--json FILE]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DEFAULT_DATA_ROOT, RESULTS_DIR, ensure_repo_on_path, machine_info, markdown_table, write_json

ensure_repo_on_path()

import scholarly_nlp  # noqa: E402

TARGET_SECONDS = 2.0
TARGET_BYTES = 5 * 1024 * 1024
DEFAULT_PAPERS = (DEFAULT_DATA_ROOT / "pdf-pairs" / "grozescu_2502.12102v1.pdf",
                  DEFAULT_DATA_ROOT / "pdf-pairs" / "srgarcia_prodadmin__joh-6-28.pdf",
                  DEFAULT_DATA_ROOT / "tei" / "acl" / "P17-1001.tei.xml")


def measure(path: Path, repeats: int) -> dict:
    """Read ``path``, then time ``render`` ``repeats`` times; its size and counts."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        doc = scholarly_nlp.read(path)
    record = scholarly_nlp.analysis_record(doc)
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        page = scholarly_nlp.render(doc, record=record)
        seconds.append(time.perf_counter() - start)
    return {"paper": path.name, "pages": _pages(path), "characters": len(doc.text),
            "paragraphs": len(doc.spans.get("paragraphs", [])), "references": len(doc._.bibliography),
            "median_s": statistics.median(seconds), "worst_s": max(seconds),
            "bytes": len(page.encode("utf-8"))}


def _pages(path: Path):
    """A PDF's page count (None for TEI)."""
    if path.suffix.lower() != ".pdf":
        return None
    import pypdfium2

    document = pypdfium2.PdfDocument(str(path))
    try:
        return len(document)
    finally:
        document.close()


def main() -> None:
    """Command line: papers, repeats, where to write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--paper", type=Path, nargs="*", default=list(DEFAULT_PAPERS))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path, default=RESULTS_DIR / "view.json")
    args = parser.parse_args()
    rows = [measure(path, args.repeats) for path in args.paper]
    print(markdown_table(
        ["paper", "pages", "characters", "paragraphs", "references", "render s (median)", "worst s", "MB",
         f"< {TARGET_SECONDS:.0f} s and < 5 MB"],
        [[r["paper"], r["pages"], r["characters"], r["paragraphs"], r["references"], f"{r['median_s']:.3f}",
          f"{r['worst_s']:.3f}", f"{r['bytes'] / 1e6:.2f}",
          "met" if r["worst_s"] < TARGET_SECONDS and r["bytes"] < TARGET_BYTES else "NOT met"] for r in rows]))
    write_json(args.json, {"machine": machine_info(), "repeats": args.repeats, "papers": rows})
    print(f"written: {args.json}")


if __name__ == "__main__":
    main()
