"""A longer fuzz campaign over mutated real TEI and PDF files (issue 15, item 7).

The same seeded mutator and guard as ``tests/test_fuzz_readers.py`` (``tests/fuzzing.py``),
for more inputs and any file size: ``--count`` inputs (``--pdf-share`` of them PDFs), each
read by ``scholarly_nlp.read`` in its own forked child under ``--seconds`` and
``--memory-mb``. Prints the count of each outcome (a Doc; a named error, by class; a wrong
answer where the mutation fixes it, ``fuzzing.EXPECTED``; a plain InputError a safety net
made out of another exception, by that exception; an unnamed error; an unexpected
exception; out of memory; a timeout; a crash), then every distinct failure
(outcome, class and where it was raised) with how often it happened and one input that
remakes it (``mutated_inputs(sources, 1, seed, start=index)``), and the outcomes per
mutation. ``--read-many`` also reads all inputs that did not hang or crash in one
``read_many`` batch and checks that it goes through. Results go to
``benchmarks/results/fuzz_campaign.json`` (or ``--out``).

Usage::

    python benchmarks/fuzz_campaign.py [--count 500] [--seed 15] [--pdf-share 0.3] [--jobs 2]
                                       [--seconds 30] [--memory-mb 3072] [--read-many]
                                       [--max-bytes 0] [--data ../shared/data] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

from _common import DEFAULT_DATA_ROOT, REPO_ROOT, RESULTS_DIR, ensure_repo_on_path, machine_info, markdown_table, \
    write_json

ensure_repo_on_path()
sys.path.insert(0, str(REPO_ROOT / "tests"))

import fuzzing  # noqa: E402  (tests/fuzzing.py)
from fuzzing import Limits, MutatedInput, Outcome  # noqa: E402

TEI_FOLDERS = ("tei/acl", "tei/biomed")
PDF_FOLDERS = ("pdfs/acl", "pdf-pairs")


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=500, help="mutated inputs in all")
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--pdf-share", type=float, default=0.3, help="share of the inputs that are PDFs")
    parser.add_argument("--jobs", type=int, default=2, help="inputs read at once")
    parser.add_argument("--seconds", type=float, default=30.0, help="time limit of one read")
    parser.add_argument("--memory-mb", type=int, default=3072, help="extra address space one read may take")
    parser.add_argument("--max-bytes", type=int, default=0, help="skip source files larger than this (0: no limit)")
    parser.add_argument("--read-many", action="store_true", help="also read the survivors in one read_many batch")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA_ROOT)
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "fuzz_campaign.json")
    return parser.parse_args(argv)


def campaign_inputs(args: argparse.Namespace) -> list[MutatedInput]:
    """TEI inputs numbered from 0, then PDF ones, as in the test."""
    max_bytes = args.max_bytes or None
    tei = fuzzing.source_files(args.data, TEI_FOLDERS, fuzzing.TEI_SUFFIX, max_bytes)
    pdf = fuzzing.source_files(args.data, PDF_FOLDERS, fuzzing.PDF_SUFFIX, max_bytes)
    n_pdf = round(args.count * args.pdf_share)
    n_tei = args.count - n_pdf
    return [*fuzzing.mutated_inputs(tei, n_tei, args.seed), *fuzzing.mutated_inputs(pdf, n_pdf, args.seed, start=n_tei)]


def outcome_label(outcome: Outcome) -> str:
    """The row an outcome counts in: its kind, and its class for errors."""
    return f"{outcome.kind} {outcome.error_class}".strip()


def distinct_failures(results: list[tuple[MutatedInput, Outcome]]) -> list[dict]:
    """Failures grouped by (outcome, class, raise site), most frequent first, with one example each."""
    groups: dict[tuple, list[tuple[MutatedInput, Outcome]]] = defaultdict(list)
    for item, outcome in results:
        if not outcome.accepted:
            groups[outcome.signature()].append((item, outcome))
    rows = []
    for (kind, error_class, site), members in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        item, outcome = members[0]
        rows.append({"outcome": kind, "class": error_class, "site": site, "count": len(members),
                     "mutations": sorted(Counter(m.mutation.split("(")[0] for m, _ in members).items()),
                     "example": {"index": item.index, "source": str(item.source), "mutation": item.mutation,
                                 "message": outcome.message[:300], "where": outcome.where}})
    return rows


def per_mutation(results: list[tuple[MutatedInput, Outcome]]) -> dict[str, Counter]:
    """Outcome kinds for each mutation family."""
    table: dict[str, Counter] = defaultdict(Counter)
    for item, outcome in results:
        table[item.mutation.split("(")[0]][outcome.kind] += 1
    return dict(sorted(table.items()))


def read_all(inputs: list[MutatedInput], folder: Path, args: argparse.Namespace) -> list[tuple[MutatedInput, Outcome]]:
    """Read every input alone in a guarded child."""
    import scholarly_nlp
    from scholarly_nlp.readers import read_pdf, read_tei  # noqa: F401 - imported before the children fork

    nlp = scholarly_nlp.blank()
    paths = {item.index: str(item.write(folder)) for item in inputs}
    by_index = {item.index: item for item in inputs}
    calls = [(item.index, (lambda p=paths[item.index]: fuzzing.read_outcome(lambda q: scholarly_nlp.read(q, nlp), p)))
             for item in inputs]
    results = []
    for done, (index, outcome) in enumerate(fuzzing.run_guarded(calls, Limits(args.seconds, args.memory_mb),
                                                                jobs=args.jobs, workdir=str(folder)), 1):
        outcome = fuzzing.judge(by_index[index], outcome)
        results.append((by_index[index], outcome))
        if not outcome.accepted:
            print(f"  {fuzzing.describe(by_index[index], outcome)}", flush=True)
        if done % 50 == 0:
            print(f"  {done}/{len(inputs)} read", flush=True)
    return sorted(results, key=lambda pair: pair[0].index)


def read_many_check(results: list[tuple[MutatedInput, Outcome]], folder: Path, args: argparse.Namespace) -> dict:
    """One read_many batch over the inputs that did not hang, crash or run out of memory."""
    import scholarly_nlp

    nlp = scholarly_nlp.blank()
    survivors = {str(folder / item.file_name()): item for item, outcome in results
                 if outcome.kind not in ("timeout", "crash", "memory")}
    paths = list(survivors)

    def batch() -> list[tuple[str, Outcome]]:
        return [(r.path, fuzzing.judge(survivors[r.path], Outcome("doc") if r.ok else
                                       fuzzing.classify_error(r.error, r.path)))
                for r in scholarly_nlp.read_many(paths, nlp)]

    budget = Limits(60 + 3 * sum(o.seconds for _, o in results), args.memory_mb)
    ((_, outcome),) = fuzzing.run_guarded([("batch", batch)], budget, workdir=str(folder))
    if not isinstance(outcome, list):
        return {"finished": False, "files": len(paths), "ended": outcome_label(outcome), "where": outcome.where}
    return {"finished": True, "files": len(paths), "results": len(outcome),
            "in_order": [path for path, _ in outcome] == paths,
            "outcomes": dict(Counter(outcome_label(o) for _, o in outcome))}


def print_report(args, results, failures, batch, seconds) -> None:
    """Markdown: counts by outcome, distinct failures, outcomes per mutation."""
    print(f"\n## Fuzz campaign: {len(results)} inputs, seed {args.seed}, {seconds:.0f} s\n")
    kinds = Counter(o.kind for _, o in results)
    print(markdown_table(["outcome", "inputs"], [(k, kinds.get(k, 0)) for k in fuzzing.OUTCOMES]))
    print()
    labels = Counter(outcome_label(o) for _, o in results)
    print(markdown_table(["outcome and class", "inputs"], sorted(labels.items(), key=lambda kv: (-kv[1], kv[0]))))
    print(f"\n### Distinct failures ({len(failures)})\n")
    for row in failures:
        example = row["example"]
        print(f"- {row['count']} x {row['outcome']} {row['class']} at {row['site'] or '?'}; e.g. input "
              f"{example['index']} {Path(example['source']).name} {example['mutation']}: {example['message'][:160]!r}")
    print("\n### Outcomes per mutation\n")
    table = per_mutation(results)
    print(markdown_table(["mutation", *fuzzing.OUTCOMES],
                         [(name, *(row.get(k, 0) for k in fuzzing.OUTCOMES)) for name, row in table.items()]))
    if batch is not None:
        print(f"\nread_many batch: {batch}")


def main(argv: list[str]) -> int:
    """Run the campaign; exit 1 when any input failed."""
    args = parse_args(argv)
    inputs = campaign_inputs(args)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="fuzz-campaign-") as tmp:
        folder = Path(tmp)
        results = read_all(inputs, folder, args)
        batch = read_many_check(results, folder, args) if args.read_many else None
    seconds = time.perf_counter() - started
    failures = distinct_failures(results)
    print_report(args, results, failures, batch, seconds)
    write_json(args.out, {
        "machine": machine_info(), "seed": args.seed, "inputs": len(results), "seconds": round(seconds, 1),
        "limits": {"seconds": args.seconds, "memory_mb": args.memory_mb},
        "outcomes": dict(Counter(o.kind for _, o in results)),
        "outcomes_by_class": dict(Counter(outcome_label(o) for _, o in results)),
        "distinct_failures": failures, "read_many": batch,
        "per_mutation": {name: dict(row) for name, row in per_mutation(results).items()},
    })
    print(f"\nwrote {os.path.relpath(args.out)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
