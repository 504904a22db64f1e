"""Split a JSONL file (one record per line) into a training part and a seeded held-out part.

Issue 19 chooses training recipes on data that is not the reported dev set. For the role tagger
that data is a held-out share of CSAbstruct *train*: recipes are trained on the rest, compared on
the held-out share, and only the chosen one is reported on dev.

    python scripts/holdout_split.py ../../../shared/data/csabstruct/train.jsonl corpus/roles_select \\
        --fraction 0.15 --seed 19

writes ``corpus/roles_select/train.jsonl`` and ``corpus/roles_select/heldout.jsonl`` (blank lines
dropped, each part in the input's order). The same input, fraction and seed give the same split.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path
from typing import List, Optional, Sequence, Tuple


def holdout_split(lines: Sequence[str], fraction: float, seed: int) -> Tuple[List[str], List[str]]:
    """``(train, heldout)``: ``round(fraction * n)`` of the non-blank ``lines`` drawn with ``seed``."""
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"fraction must be between 0 and 1 (exclusive), got {fraction}")
    records = [line for line in lines if line.strip()]
    n_heldout = round(fraction * len(records))
    if n_heldout == 0 or n_heldout == len(records):
        raise ValueError(f"{len(records)} records cannot be split with fraction {fraction}")
    order = list(range(len(records)))
    random.Random(seed).shuffle(order)
    heldout = set(order[:n_heldout])
    return ([r for i, r in enumerate(records) if i not in heldout],
            [r for i, r in enumerate(records) if i in heldout])


def read_lines(path: Path) -> List[str]:
    """The file's lines split on newlines only: ``str.splitlines`` would also cut a JSON string
    that holds a raw U+2028 or U+2029, which JSON allows."""
    return [line.rstrip("\r") for line in path.read_text(encoding="utf8").split("\n")]


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Command line: INPUT OUTPUT_DIR [--fraction F] [--seed S]."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("input", type=Path, help="a JSONL file, e.g. CSAbstruct train.jsonl")
    parser.add_argument("output", type=Path, help="folder for train.jsonl and heldout.jsonl")
    parser.add_argument("--fraction", type=float, default=0.15, help="share of the records held out")
    parser.add_argument("--seed", type=int, default=19)
    args = parser.parse_args(argv)
    try:
        train, heldout = holdout_split(read_lines(args.input), args.fraction, args.seed)
    except (OSError, UnicodeDecodeError, ValueError) as error:
        print(f"{args.input}: {error}", file=sys.stderr)
        return 1
    args.output.mkdir(parents=True, exist_ok=True)
    for name, part in (("train", train), ("heldout", heldout)):
        (args.output / f"{name}.jsonl").write_text("".join(line + "\n" for line in part), encoding="utf8")
    print(f"{len(train)} records -> {args.output / 'train.jsonl'}, {len(heldout)} -> {args.output / 'heldout.jsonl'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
