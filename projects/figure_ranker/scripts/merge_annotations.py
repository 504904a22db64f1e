"""Merge annotators' central-figure rankings into one gold file by Borda count.

Each annotator file holds JSON lines ``{"paper_id", "ranking": [up to 3 figure ids, best
first]}``. Per paper, a figure gets 3 points for each annotator's first place, 2 for a second
and 1 for a third; the merged ranking is the top 3 by points, ties broken by how many
annotators put the figure first, then by the order of the paper's figures (``--packets``, the
annotation packets the annotators read). Every annotator must rank every paper of the packets.

    python scripts/merge_annotations.py A.jsonl B.jsonl C.jsonl --packets packets.json --out gold.jsonl

Each output line keeps the paper's ``source`` (its file, relative to the shared data folder),
``annotator_top1_agree`` (all annotators put the same figure first) and ``top1_votes``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from scholarly_figure_ranker.evaluation import read_gold

DEPTH = 3
POINTS = {0: 3, 1: 2, 2: 1}


def read_rankings(path: Path) -> dict[str, list[str]]:
    """Paper id -> ranking of one annotator file (the gold-file format: a repeated paper or a
    bad line raises MalformedInputError naming the line)."""
    return read_gold(path)


def borda(rankings: list[list[str]], figure_order: list[str]) -> tuple[list[str], dict[str, int]]:
    """The merged top figures (best first) of one paper and each figure's first-place votes."""
    points: dict[str, int] = {}
    firsts: dict[str, int] = {}
    for ranking in rankings:
        for place, figure in enumerate(list(dict.fromkeys(ranking))[:DEPTH]):
            points[figure] = points.get(figure, 0) + POINTS[place]
        if ranking:
            firsts[ranking[0]] = firsts.get(ranking[0], 0) + 1
    position = {figure: i for i, figure in enumerate(figure_order)}
    merged = sorted(points, key=lambda f: (-points[f], -firsts.get(f, 0), position.get(f, len(position))))
    return merged[:DEPTH], firsts


def merge(annotators: list[dict[str, list[str]]], packets: list[dict]) -> list[dict]:
    """One merged record per packet paper, in packet order."""
    records = []
    for packet in packets:
        paper_id = packet["paper_id"]
        figure_ids = [f["id"] for f in packet["figures"]]
        rankings = []
        for number, annotator in enumerate(annotators, start=1):
            ranking = annotator.get(paper_id)
            if not ranking or any(f not in figure_ids for f in ranking):
                raise ValueError(f"annotator {number}: paper {paper_id} has no ranking of its own figures")
            rankings.append(ranking)
        merged, firsts = borda(rankings, figure_ids)
        records.append({"paper_id": paper_id, "source": packet["source"], "ranking": merged,
                        "annotator_top1_agree": len({r[0] for r in rankings}) == 1,
                        "top1_votes": firsts})
    return records


def main() -> None:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("annotators", nargs="+", type=Path, help="one JSONL file per annotator")
    parser.add_argument("--packets", type=Path, required=True, help="the annotation packets (JSON)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    packets = json.loads(args.packets.read_text(encoding="utf-8"))
    records = merge([read_rankings(p) for p in args.annotators], packets)
    args.out.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    agree = sum(r["annotator_top1_agree"] for r in records)
    print(f"{len(records)} papers; all {len(args.annotators)} annotators agree on the first figure in {agree}")


if __name__ == "__main__":
    main()
