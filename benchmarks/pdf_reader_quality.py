"""The built-in PDF reader over real ACL PDFs: what it finds and how fast, plus its agreement
with GROBID.

Two parts:

* **vs GROBID** - :mod:`pdf_vs_grobid` on every PDF + GROBID TEI pair (``pdf-pairs/`` and
  ``tei/with-pdf/``): title, abstract and body token F1, caption, head and bibliography
  recall, citation markers linked, per publisher group;
* **corpus** - over every PDF in ``pdfs/acl/``: figures and tables found per paper
  (mean/median), share of papers with an abstract and with section heads, papers/second,
  and failures (with their error).

Usage::

    python benchmarks/pdf_reader_quality.py [--data ../shared/data] [--out results.json] [--images]
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import pdf_vs_grobid  # noqa: E402
from scholarly_nlp import ScholarlyNLPError  # noqa: E402
from scholarly_nlp.readers import read_pdf  # noqa: E402

ratio = pdf_vs_grobid.ratio


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
        "abstract_share": ratio(with_abstract, read),
        "sections_share": ratio(with_heads, read),
        "seconds": round(elapsed, 2),
        "papers_per_second": round(len(files) / elapsed, 2) if elapsed else None,
        # CPU time is steadier than wall time on a shared machine
        "cpu_seconds": round(cpu, 2),
        "papers_per_cpu_second": round(len(files) / cpu, 2) if cpu else None,
        "images_rendered": images,
    }


# --------------------------------------------------------------------------- report


def print_report(result: dict) -> None:
    """The GROBID tables, then the corpus numbers."""
    pdf_vs_grobid.print_report(result["vs_grobid"])
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
    """Measure both parts, print them, and write the JSON when asked."""
    parser = pdf_vs_grobid.base_parser(__doc__.split("\n")[0])
    parser.add_argument("--images", action="store_true", help="also render figure PNGs in the corpus run")
    args = parser.parse_args(argv)
    result = {"vs_grobid": pdf_vs_grobid.measure(args.data), "corpus": corpus(args.data, args.images)}
    print_report(result)
    pdf_vs_grobid.write_result(args.out, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
