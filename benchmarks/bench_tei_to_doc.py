"""Throughput and peak memory of TEI -> Paper -> Doc (and PDF -> Doc) against bare parsers.

Variants, each measured in its own subprocess so that imports, caches and memory peaks do
not mix:

TEI (all files under ``--tei-root``, ~600)
  ``lxml``       bare baseline: ``etree.parse`` + ``"".join(root.itertext())``
  ``tei-paper``  ``scholarly_nlp.readers.tei.read_tei`` (TEI -> Paper)
  ``tei-doc``    ``scholarly_nlp.read`` (TEI -> Paper -> spaCy Doc), one shared blank pipeline
  ``tokenizer``  only ``nlp.make_doc`` on the finished Doc texts: the spaCy tokenizer's share
                 of ``tei-doc`` (a lower bound no Doc builder can beat)

PDF (the ``*.pdf`` under ``--pdf-root``; only when ``scholarly_nlp.readers.pdf`` imports)
  ``pdfium``     bare baseline: ``pdfium.PdfDocument`` + ``get_textpage().get_text_range()`` per page
  ``pdf-paper``  ``read_pdf`` (PDF -> Paper, no images)
  ``pdf-doc``    ``scholarly_nlp.read(..., format="pdf")`` (PDF -> Doc)

Each worker imports what its variant needs, runs one warm-up pass, then ``--repeat`` timed
passes (wall and process-CPU time; the best pass is reported, the CPU figure being the less
sensitive to other load on the machine), then one more pass under ``tracemalloc``. Memory is
reported as the tracemalloc peak (Python heap only: libxml2 and pdfium allocate outside it)
and as the growth of ``ru_maxrss`` from after the imports to the end (whole process, native
libraries included). Results are discarded paper by paper, as a streaming batch does.

Finally ``tei-doc`` (and ``pdf-doc``) run once more under cProfile and the top functions by
cumulative time are printed.

Usage::

    python benchmarks/bench_tei_to_doc.py [--limit N] [--repeat 3] [--no-pdf] [--out FILE]
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import os
import pstats
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Optional

from _common import (
    DEFAULT_PDF_ROOT,
    DEFAULT_TEI_ROOT,
    REPO_ROOT,
    RESULTS_DIR,
    ensure_repo_on_path,
    machine_info,
    markdown_table,
    pdf_files,
    ratio,
    tei_files_by_folder,
    write_json,
)

TEI_VARIANTS = ("lxml", "tei-paper", "tei-doc", "tokenizer")
PDF_VARIANTS = ("pdfium", "pdf-paper", "pdf-doc")
#: Printed before the worker's JSON line so the parent can find it among other output.
RESULT_MARKER = "@@RESULT@@ "

Processor = Callable[[str], object]


# --------------------------------------------------------------------------- variants (worker side)


def setup_lxml(files: list[str]) -> Processor:
    """Bare lxml: parse and join all text."""
    from lxml import etree

    def process(path: str) -> str:
        return "".join(etree.parse(path).getroot().itertext())

    return process


def setup_tei_paper(files: list[str]) -> Processor:
    """The project's TEI reader: TEI -> Paper."""
    ensure_repo_on_path()
    from scholarly_nlp.readers import read_tei

    return read_tei


def _shared_nlp():
    ensure_repo_on_path()
    import scholarly_nlp

    return scholarly_nlp, scholarly_nlp.blank()


def setup_tei_doc(files: list[str]) -> Processor:
    """The public API: TEI -> Doc with one blank pipeline shared by all files."""
    scholarly_nlp, nlp = _shared_nlp()
    return lambda path: scholarly_nlp.read(path, nlp=nlp, format="tei")


def setup_tokenizer(files: list[str]) -> Processor:
    """Only the spaCy tokenizer over each paper's final Doc text (texts prepared untimed)."""
    scholarly_nlp, nlp = _shared_nlp()
    texts = {}
    for path in files:
        try:
            texts[path] = scholarly_nlp.read(path, nlp=nlp, format="tei").text
        except scholarly_nlp.ScholarlyNLPError:
            texts[path] = ""
    return lambda path: nlp.make_doc(texts[path])


def setup_pdfium(files: list[str]) -> Processor:
    """Bare pypdfium2: every page's full text."""
    import pypdfium2 as pdfium

    def process(path: str) -> int:
        pdf = pdfium.PdfDocument(path)
        try:
            total = 0
            for index in range(len(pdf)):
                page = pdf[index]
                textpage = page.get_textpage()
                total += len(textpage.get_text_range())
                textpage.close()
                page.close()
            return total
        finally:
            pdf.close()

    return process


def setup_pdf_paper(files: list[str]) -> Processor:
    """The project's PDF reader: PDF -> Paper (no figure images)."""
    ensure_repo_on_path()
    from scholarly_nlp.readers import read_pdf

    return read_pdf


def setup_pdf_doc(files: list[str]) -> Processor:
    """The public API: PDF -> Doc with one blank pipeline shared by all files."""
    scholarly_nlp, nlp = _shared_nlp()
    return lambda path: scholarly_nlp.read(path, nlp=nlp, format="pdf")


SETUPS: dict[str, Callable[[list[str]], Processor]] = {
    "lxml": setup_lxml,
    "tei-paper": setup_tei_paper,
    "tei-doc": setup_tei_doc,
    "tokenizer": setup_tokenizer,
    "pdfium": setup_pdfium,
    "pdf-paper": setup_pdf_paper,
    "pdf-doc": setup_pdf_doc,
}


# --------------------------------------------------------------------------- measuring (worker side)


def maxrss_mib() -> float:
    """This process's peak resident set size so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def run_pass(process: Processor, files: list[str]) -> tuple[float, float, list[dict]]:
    """One pass over the files; returns (wall seconds, CPU seconds, failures)."""
    failures = []
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    for path in files:
        try:
            process(path)
        except Exception as exc:  # noqa: BLE001 - a benchmark reports, it does not stop
            failures.append({"file": os.path.basename(path), "error": f"{type(exc).__name__}: {exc}"[:300]})
    return time.perf_counter() - wall, time.process_time() - cpu, failures


def traced_peak_mib(process: Processor, files: list[str]) -> float:
    """Peak Python-heap allocation (tracemalloc) over one pass, in MiB."""
    gc.collect()
    tracemalloc.start()
    try:
        for path in files:
            try:
                process(path)
            except Exception:  # noqa: BLE001, S110 - failures are reported by the timed passes
                pass
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def measure(variant: str, files: list[str], repeat: int) -> dict:
    """Warm up, time ``repeat`` passes, then trace memory; returns the variant's numbers."""
    process = SETUPS[variant](files)
    rss_start = maxrss_mib()
    _, _, failures = run_pass(process, files)  # warm-up
    passes = [run_pass(process, files)[:2] for _ in range(repeat)]
    rss_end = maxrss_mib()
    traced = traced_peak_mib(process, files)
    best_wall = min(w for w, _ in passes)
    best_cpu = min(c for _, c in passes)
    n_ok = len(files) - len(failures)
    return {
        "variant": variant,
        "files": len(files),
        "ok": n_ok,
        "failures": failures,
        "wall_s": [round(w, 4) for w, _ in passes],
        "cpu_s": [round(c, 4) for _, c in passes],
        "best_wall_s": best_wall,
        "best_cpu_s": best_cpu,
        "papers_per_s_wall": len(files) / best_wall if best_wall else None,
        "papers_per_s_cpu": len(files) / best_cpu if best_cpu else None,
        "ms_per_paper_cpu": 1000.0 * best_cpu / len(files) if files else None,
        "rss_after_setup_mib": rss_start,
        "rss_peak_mib": rss_end,
        "rss_growth_mib": rss_end - rss_start,
        "tracemalloc_peak_mib": traced,
    }


def _short_name(filename: str) -> str:
    """Shorten a profiled file path to what matters (``scholarly_nlp/doc/builder.py``, ``spacy/...``)."""
    for anchor in ("scholarly_nlp/", "site-packages/", "lib/python"):
        if anchor in filename:
            return filename.split(anchor, 1)[1]
    return filename


def _profiled_pass(process: Processor, files: list[str]) -> cProfile.Profile:
    """One pass under cProfile; the profiler sees only the processing calls."""
    gc.collect()
    profiler = cProfile.Profile()
    for path in files:
        try:
            profiler.runcall(process, path)
        except Exception:  # noqa: BLE001, S110 - failures are reported by the timed passes
            pass
    return profiler


def profile(variant: str, files: list[str], top: int) -> dict:
    """cProfile one pass (after a warm-up); returns the top functions by cumulative and own time."""
    process = SETUPS[variant](files)
    run_pass(process, files)
    stats = pstats.Stats(_profiled_pass(process, files))
    this_file = str(Path(__file__).resolve())
    rows = []
    for (filename, line, func), (_cc, nc, tt, ct, _callers) in stats.stats.items():
        if filename == this_file or func == "<method 'disable' of '_lsprof.Profiler' objects>":
            continue
        rows.append({"function": f"{_short_name(filename)}:{line}({func})", "ncalls": nc,
                     "tottime": tt, "cumtime": ct})
    rows.sort(key=lambda r: r["cumtime"], reverse=True)
    by_tottime = sorted(rows, key=lambda r: r["tottime"], reverse=True)[:top]
    return {"variant": variant, "total_s": stats.total_tt, "top_cumulative": rows[:top], "top_tottime": by_tottime}


def worker_main(args: argparse.Namespace) -> int:
    """Entry point of a measurement subprocess: prints one JSON result line."""
    files = Path(args.files_from).read_text(encoding="utf-8").splitlines()
    if args.profile:
        result = profile(args.worker, files, args.top)
    else:
        result = measure(args.worker, files, args.repeat)
    print(RESULT_MARKER + json.dumps(result), flush=True)
    return 0


# --------------------------------------------------------------------------- orchestration (parent side)


def run_worker(variant: str, files: list[str], args: argparse.Namespace, profile_run: bool = False) -> dict:
    """Run one variant in a fresh Python process and return its parsed JSON result."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, encoding="utf-8") as handle:
        handle.write("\n".join(files))
        list_path = handle.name
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", variant, "--files-from", list_path,
           "--repeat", str(args.repeat), "--top", str(args.top)]
    if profile_run:
        cmd.append("--profile")
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, cwd=str(REPO_ROOT), check=False)
    finally:
        os.unlink(list_path)
    for line in done.stdout.splitlines():
        if line.startswith(RESULT_MARKER):
            return json.loads(line[len(RESULT_MARKER):])
    return {"variant": variant, "error": f"worker exited {done.returncode}: {done.stderr.strip()[-2000:]}"}


def pdf_reader_available() -> tuple[bool, str]:
    """Whether ``scholarly_nlp.readers.pdf`` imports (checked in a subprocess, not here)."""
    done = subprocess.run([sys.executable, "-c", "import scholarly_nlp.readers.pdf"], capture_output=True,
                          text=True, cwd=str(REPO_ROOT), check=False)
    return done.returncode == 0, done.stderr.strip().splitlines()[-1] if done.returncode else ""


def comparison(results: dict[str, dict], baseline: str, target: str, time_only: bool = False) -> dict:
    """Time and memory ratios of ``target`` over ``baseline`` (higher = target costs more).

    ``time_only`` leaves the memory ratios out (the ``tokenizer`` variant builds its inputs
    during setup, so its memory growth means nothing).
    """
    base, tgt = results.get(baseline, {}), results.get(target, {})
    if "best_cpu_s" not in base or "best_cpu_s" not in tgt:
        return {}
    out = {
        "baseline": baseline,
        "target": target,
        "time_ratio_wall": ratio(tgt["best_wall_s"], base["best_wall_s"]),
        "time_ratio_cpu": ratio(tgt["best_cpu_s"], base["best_cpu_s"]),
        "rss_growth_ratio": None,
        "rss_peak_ratio": None,
        "tracemalloc_peak_ratio": None,
    }
    if not time_only:
        out["rss_growth_ratio"] = ratio(tgt["rss_growth_mib"], base["rss_growth_mib"])
        out["rss_peak_ratio"] = ratio(tgt["rss_peak_mib"], base["rss_peak_mib"])
        out["tracemalloc_peak_ratio"] = ratio(tgt["tracemalloc_peak_mib"], base["tracemalloc_peak_mib"])
    return out


# --------------------------------------------------------------------------- reporting


def _f(value: Optional[float], digits: int = 1) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _x(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.2f}x"


def variant_table(results: dict[str, dict]) -> str:
    """One row per variant: throughput, per-paper time and memory."""
    header = ["variant", "files", "ok", "papers/s (CPU)", "papers/s (wall)", "ms/paper (CPU)",
              "RSS after setup MiB", "RSS growth MiB", "RSS peak MiB", "tracemalloc peak MiB"]
    rows = []
    for name, r in results.items():
        if "error" in r:
            rows.append([name, "-", "-", f"error: {r['error'][:80]}"] + ["-"] * 6)
            continue
        rows.append([name, r["files"], r["ok"], _f(r["papers_per_s_cpu"]), _f(r["papers_per_s_wall"]),
                     _f(r["ms_per_paper_cpu"], 2), _f(r["rss_after_setup_mib"]), _f(r["rss_growth_mib"]),
                     _f(r["rss_peak_mib"]), _f(r["tracemalloc_peak_mib"])])
    return markdown_table(header, rows)


def ratio_table(comparisons: list[dict]) -> str:
    """One row per target/baseline comparison."""
    header = ["target / baseline", "time (CPU)", "time (wall)", "RSS growth", "RSS peak", "tracemalloc peak"]
    keys = ("time_ratio_cpu", "time_ratio_wall", "rss_growth_ratio", "rss_peak_ratio", "tracemalloc_peak_ratio")
    rows = [[f"{c['target']} / {c['baseline']}"] + [_x(c[k]) for k in keys] for c in comparisons if c]
    return markdown_table(header, rows)


def profile_table(prof: dict, key: str = "top_cumulative") -> str:
    """The profile's top functions as a markdown table."""
    rows = [[r["function"], r["ncalls"], _f(r["tottime"], 3), _f(r["cumtime"], 3)] for r in prof.get(key, [])]
    return markdown_table(["function", "ncalls", "tottime s", "cumtime s"], rows)


def print_failures(results: dict[str, dict]) -> None:
    """List the files each variant failed on (at most 10 per variant)."""
    for name, r in results.items():
        for failure in r.get("failures", [])[:10]:
            print(f"- {name}: {failure['file']}: {failure['error']}")
        if len(r.get("failures", [])) > 10:
            print(f"- {name}: ... {len(r['failures']) - 10} more")


# --------------------------------------------------------------------------- main


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    """Command-line options (the ``--worker`` ones are internal)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tei-root", type=Path, default=DEFAULT_TEI_ROOT, help="folder searched for TEI files")
    parser.add_argument("--pdf-root", type=Path, default=DEFAULT_PDF_ROOT, help="folder with the PDFs")
    parser.add_argument("--limit", type=int, default=None, help="use only the first N TEI files and N PDFs")
    parser.add_argument("--repeat", type=int, default=3, help="timed passes per variant (best is reported)")
    parser.add_argument("--top", type=int, default=15, help="profile rows to print")
    parser.add_argument("--no-pdf", action="store_true", help="skip the PDF variants")
    parser.add_argument("--no-profile", action="store_true", help="skip the cProfile runs")
    parser.add_argument("--variants", nargs="*", default=None, help="run only these variants")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "bench_tei_to_doc.json", help="JSON output file")
    parser.add_argument("--worker", choices=sorted(SETUPS), help=argparse.SUPPRESS)
    parser.add_argument("--files-from", help=argparse.SUPPRESS)
    parser.add_argument("--profile", action="store_true", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def _selected(names: tuple[str, ...], wanted: Optional[list[str]]) -> list[str]:
    return [n for n in names if wanted is None or n in wanted]


def run_suite(files: list[str], variants: list[str], args: argparse.Namespace) -> dict[str, dict]:
    """Measure each variant in its own subprocess, printing progress to stderr."""
    results = {}
    for variant in variants:
        print(f"[bench] {variant}: {len(files)} files ...", file=sys.stderr, flush=True)
        results[variant] = run_worker(variant, files, args)
    return results


def main(argv: Optional[list[str]] = None) -> int:
    """Run every selected variant, print the tables and profiles, write the JSON."""
    args = parse_args(argv)
    if args.worker:
        return worker_main(args)
    tei = [str(p) for paths in tei_files_by_folder(args.tei_root).values() for p in paths][: args.limit]
    out: dict = {"machine": machine_info(), "tei_files": len(tei), "repeat": args.repeat}
    out["tei"] = run_suite(tei, _selected(TEI_VARIANTS, args.variants), args)
    comparisons = [comparison(out["tei"], "lxml", t) for t in ("tei-paper", "tei-doc")]
    comparisons.append(comparison(out["tei"], "lxml", "tokenizer", time_only=True))
    comparisons.append(comparison(out["tei"], "tei-paper", "tei-doc"))
    profiles = []
    if not args.no_profile and "tei-doc" in out["tei"]:
        print("[bench] profiling tei-doc ...", file=sys.stderr, flush=True)
        profiles.append(run_worker("tei-doc", tei, args, profile_run=True))
    available, why = pdf_reader_available()
    out["pdf_reader_available"], out["pdf_reader_import_error"] = available, why
    if not args.no_pdf and available:
        pdfs = [str(p) for p in pdf_files(args.pdf_root)][: args.limit]
        out["pdf_files"] = len(pdfs)
        out["pdf"] = run_suite(pdfs, _selected(PDF_VARIANTS, args.variants), args)
        comparisons += [comparison(out["pdf"], "pdfium", t) for t in ("pdf-paper", "pdf-doc")]
        if not args.no_profile and "pdf-doc" in out["pdf"]:
            print("[bench] profiling pdf-doc ...", file=sys.stderr, flush=True)
            profiles.append(run_worker("pdf-doc", pdfs, args, profile_run=True))
    out["comparisons"] = [c for c in comparisons if c]
    out["profiles"] = profiles
    print_report(out, args.top)
    write_json(args.out, out)
    print(f"\nJSON written to {args.out}")
    return 0


def print_report(out: dict, top: int) -> None:
    """Print every table of the run."""
    m = out["machine"]
    print(f"Benchmark {m['date']}, Python {m['python']}, {m['cpu_count']} CPUs, best of {out['repeat']} passes\n")
    print(f"TEI: {out['tei_files']} files\n")
    print(variant_table(out["tei"]))
    if "pdf" in out:
        print(f"\nPDF: {out['pdf_files']} files\n")
        print(variant_table(out["pdf"]))
    elif not out["pdf_reader_available"]:
        print(f"\nPDF reader not importable, PDF variants skipped ({out['pdf_reader_import_error']})")
    print("\nRatios (target cost / baseline cost)\n")
    print(ratio_table(out["comparisons"]))
    print_failures({**out["tei"], **out.get("pdf", {})})
    for prof in out["profiles"]:
        if "error" in prof:
            print(f"\nProfile of {prof['variant']} failed: {prof['error']}")
            continue
        print(f"\ncProfile of {prof['variant']} (one pass, {prof['total_s']:.1f} s under the profiler), "
              f"top {top} by cumulative time\n")
        print(profile_table(prof, "top_cumulative"))
        print(f"\ntop {top} by own time (tottime)\n")
        print(profile_table(prof, "top_tottime"))


if __name__ == "__main__":
    sys.exit(main())
