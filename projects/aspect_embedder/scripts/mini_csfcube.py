"""A small CSFCube directory in the published layout, for smoke runs and tests.

Keeps the first ``--queries`` queries of each query aspect's pid2anns file (dev-fold queries
first), the first ``--pool`` candidates of each (all per-annotator relevance lists cut the
same way), the abstracts those papers need, an ``evaluation_splits.json`` whose
``fold1_dev`` lists the kept queries, and ``queries-release.csv``.

    python scripts/mini_csfcube.py CSFCUBE_DIR OUT_DIR [--queries 2] [--pool 30]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from scholarly_nlp import QUERY_ASPECTS


def main(argv=None) -> int:
    """Write the small copy; prints its size."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("csfcube_dir", type=Path)
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--queries", type=int, default=2)
    parser.add_argument("--pool", type=int, default=30)
    args = parser.parse_args(argv)
    src, out = args.csfcube_dir, args.out_dir
    out.mkdir(parents=True, exist_ok=True)
    splits = json.loads((src / "evaluation_splits.json").read_text())
    needed: set[str] = set()
    mini_splits: dict = {}
    for aspect in QUERY_ASPECTS:
        anns = json.loads((src / f"test-pid2anns-csfcube-{aspect}.json").read_text())
        dev = [q.rsplit("_", 1)[0] for q in splits.get(aspect, {}).get("fold1_dev", [])]
        order = [q for q in dev if q in anns] + [q for q in anns if q not in dev]
        kept = {}
        for qpid in order[: args.queries]:
            kept[qpid] = {key: value[: args.pool] if isinstance(value, list) else value
                          for key, value in anns[qpid].items()}
            needed.add(qpid)
            needed.update(kept[qpid]["cands"])
        (out / f"test-pid2anns-csfcube-{aspect}.json").write_text(json.dumps(kept))
        mini_splits[aspect] = {"fold1_dev": [f"{q}_{aspect}" for q in kept]}
    mini_splits["all"] = {"fold1_dev": [q for a in QUERY_ASPECTS for q in mini_splits[a]["fold1_dev"]]}
    (out / "evaluation_splits.json").write_text(json.dumps(mini_splits, indent=1))
    with open(src / "abstracts-csfcube-preds.jsonl", encoding="utf-8") as fh, \
            open(out / "abstracts-csfcube-preds.jsonl", "w", encoding="utf-8") as dst:
        for line in fh:
            if line.strip() and str(json.loads(line)["paper_id"]) in needed:
                dst.write(line)
    if (src / "queries-release.csv").exists():
        shutil.copy(src / "queries-release.csv", out / "queries-release.csv")
    print(f"{sum(len(v['fold1_dev']) for k, v in mini_splits.items() if k != 'all')} queries, "
          f"{len(needed)} papers written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
