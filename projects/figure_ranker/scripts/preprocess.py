"""Parse papers into train/dev DocBin corpora for self-supervised figure ranking.

Papers listed in the gold file are left out of both splits: they are the evaluation set.
The dev split (held-out papers, by a stable hash of the paper id) is for the self-supervised
proxy that ``spacy train`` reports.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

import scholarly_nlp


def gold_ids(*paths: str) -> set[str]:
    """Paper ids of central-figure gold JSONL files (a file not given or not there adds none)."""
    ids: set[str] = set()
    for path in paths:
        if path and Path(path).exists():
            ids |= {json.loads(line)["paper_id"] for line in Path(path).read_text().splitlines() if line.strip()}
    return ids


def is_dev(paper_id: str, dev_percent: int) -> bool:
    """A stable split by paper: the same paper lands in the same split on every machine."""
    return int(hashlib.sha1(paper_id.encode()).hexdigest(), 16) % 100 < dev_percent


def main() -> None:
    """Command line: input folders/files, output folder, options."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("inputs", nargs="+", help="TEI/PDF files, folders or globs")
    parser.add_argument("--out", required=True, help="output folder for train.spacy and dev.spacy")
    parser.add_argument("--exclude-gold", nargs="*", default=[],
                        help="gold or selection JSONL files whose papers are held out")
    parser.add_argument("--dev-percent", type=int, default=10)
    parser.add_argument("--limit", type=int, default=0, help="use at most this many papers (smoke runs)")
    args = parser.parse_args()

    held_out = gold_ids(*args.exclude_gold)
    nlp = scholarly_nlp.blank()
    train, dev, failed, skipped = [], [], [], 0
    for result in scholarly_nlp.read_many(args.inputs, nlp=nlp):
        if not result.ok:
            failed.append(str(result.error))
            continue
        paper_id = result.doc._.paper_id
        if paper_id in held_out:
            skipped += 1
            continue
        (dev if is_dev(paper_id, args.dev_percent) else train).append(result.doc)
        if args.limit and len(train) + len(dev) >= args.limit:
            break
    if args.limit and not dev and len(train) > 1:
        dev.append(train.pop())
    out = Path(args.out)
    scholarly_nlp.save_docbin(train, out / "train.spacy")
    scholarly_nlp.save_docbin(dev, out / "dev.spacy")
    queries = sum(len(f.mentions) for d in train for f in d._.figures if f.kind == "figure" and f.caption is not None)
    print(f"train: {len(train)} papers ({queries} figure mentions), dev: {len(dev)} papers, "
          f"held out as gold: {skipped}, failed: {len(failed)}")
    for reason in failed:
        print(f"failed: {reason}")


if __name__ == "__main__":
    main()
