"""Training corpora of the contribution project.

* ``detector_train.spacy`` / ``detector_dev.spacy``: NLPContributionGraph papers as Docs
  with the gold contribution flags of their sentences
  (``scholarly_contribution_detector.ncg_docs.ncg_doc``), split BY PAPER
  (``scholarly_contribution_detector.data.grouped_split``);
* ``ncg_dev/``: the dev papers' own folders, copied in the NLPContributionGraph layout
  (``<task>/<n>/``, so their paper ids stay), which ``evaluate-detector-dev`` scores the trained
  detector on: papers it never saw, through the same interface as any held-out NCG folder;
* ``silver_train.spacy`` / ``silver_dev.spacy``: TEI papers with silver (introduction
  sentence, paragraph) pairs mined from their own section pointers
  (``scholarly_contribution_linker.silver.silver_pairs``) in ``doc._.contribution_pairs``,
  for the optional fine-tuning of the linker. The papers named in the gold file are left
  out, so the evaluation papers are never trained on. Papers without a pair are dropped.
  With ``--pdf-dir``, the PDFs there (read by the built-in PDF reader) are mined the same way
  and their papers go to ``silver_train.spacy`` only: ``silver_dev.spacy``, on which
  ``spacy train`` picks its best model, stays the TEI papers' split, so runs with and without
  the PDFs are selected on the same pairs.

A folder, TEI file or PDF that cannot be read is reported and the rest goes on.

    python scripts/preprocess.py --ncg-dir DIR --tei-dir DIR --gold FILE --out corpus
        [--pdf-dir DIR] [--dev-fraction 0.2] [--seed 0] [--ncg-limit N] [--tei-limit N] [--pdf-limit N]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import warnings
from pathlib import Path
from typing import Optional

import scholarly_nlp
from scholarly_contribution_detector.data import grouped_split
from scholarly_contribution_linker.evaluation import read_contribution_gold
from scholarly_nlp.readers import iter_ncg_papers


def detector_corpora(ncg_dir: Path, out: Path, nlp, dev_fraction: float, seed: int, limit: int) -> dict:
    """NCG DocBins split by paper; returns counts."""
    from scholarly_contribution_detector.ncg_docs import ncg_doc

    papers = list(iter_ncg_papers(ncg_dir))
    if limit:
        papers = papers[:limit]
    train, dev = grouped_split(papers, dev_fraction=dev_fraction, seed=seed)
    for name, part in (("detector_train", train), ("detector_dev", dev)):
        scholarly_nlp.save_docbin([ncg_doc(p, nlp) for p in part], out / f"{name}.spacy")
    copy_ncg_folders(dev, out / "ncg_dev")
    return {"ncg_train_papers": len(train), "ncg_dev_papers": len(dev),
            "ncg_dev_ids": sorted(p.paper_id for p in dev)}


def copy_ncg_folders(papers: list, target: Path) -> None:
    """Copy each paper's folder to ``target/<task>/<n>/`` (its paper id), replacing what an
    earlier run left there, so ``target`` holds exactly these papers."""
    if target.exists():
        shutil.rmtree(target)
    for paper in papers:
        shutil.copytree(paper.folder, target / paper.paper_id)


def mine_silver(paths: list[Path], nlp, failed: list[str]) -> list:
    """The Docs of ``paths`` that have silver pairs (in ``doc._.contribution_pairs``); a file
    that cannot be read is appended to ``failed`` with the reason and the rest goes on."""
    from scholarly_contribution_linker.silver import silver_pairs

    docs = []
    for path in paths:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                doc = scholarly_nlp.read(path, nlp=nlp)
        except Exception as exc:  # reported; the others go on
            failed.append(f"{path.name}: {exc}")
            continue
        pairs = silver_pairs(doc)
        if pairs:
            doc._.contribution_pairs = pairs
            docs.append(doc)
    return docs


def silver_corpora(tei_dir: Path, gold: Path, out: Path, nlp, dev_fraction: float, seed: int, limit: int,
                   pdf_dir: Optional[Path] = None, pdf_limit: int = 0) -> dict:
    """TEI papers with silver pairs, gold papers excluded, split by paper (the PDFs of
    ``pdf_dir``, when given, go to the training split only); returns counts."""
    held_out = {item.paper_id for item in read_contribution_gold(gold)} if gold.exists() else set()
    paths = sorted(p for p in tei_dir.glob("*.tei.xml") if p.name[: -len(".tei.xml")] not in held_out)
    if limit:
        paths = paths[:limit]
    failed: list[str] = []
    docs = mine_silver(paths, nlp, failed)
    random.Random(seed).shuffle(docs)
    n_dev = max(1, round(dev_fraction * len(docs))) if len(docs) > 1 else 0
    pdf_paths = sorted(p for p in pdf_dir.glob("*.pdf") if p.stem not in held_out) if pdf_dir else []
    if pdf_limit:
        pdf_paths = pdf_paths[:pdf_limit]
    pdf_failed: list[str] = []
    pdf_docs = mine_silver(pdf_paths, nlp, pdf_failed)
    scholarly_nlp.save_docbin(docs[n_dev:] + pdf_docs, out / "silver_train.spacy")
    scholarly_nlp.save_docbin(docs[:n_dev], out / "silver_dev.spacy")
    for line in failed + pdf_failed:
        print(f"failed: {line}", file=sys.stderr)
    return {"tei_papers": len(paths), "silver_papers": len(docs),
            "silver_pairs": sum(len(d._.contribution_pairs) for d in docs), "tei_failed": failed,
            "pdf_papers": len(pdf_paths), "pdf_silver_papers": len(pdf_docs),
            "pdf_silver_pairs": sum(len(d._.contribution_pairs) for d in pdf_docs), "pdf_failed": pdf_failed,
            "held_out_gold_papers": sorted(held_out)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ncg-dir", type=Path, required=True)
    parser.add_argument("--tei-dir", type=Path, required=True)
    parser.add_argument("--gold", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=Path("corpus"))
    parser.add_argument("--dev-fraction", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ncg-limit", type=int, default=0)
    parser.add_argument("--tei-limit", type=int, default=0)
    parser.add_argument("--pdf-dir", default="", help="PDFs mined for training-only silver pairs ('' for none)")
    parser.add_argument("--pdf-limit", type=int, default=0)
    args = parser.parse_args()
    pdf_dir = Path(args.pdf_dir) if args.pdf_dir.strip() else None
    if pdf_dir is not None and not pdf_dir.is_dir():  # before any paper is read
        sys.exit(f"error: --pdf-dir {pdf_dir} is not a folder")

    import importlib

    for package in ("scholarly_contribution_detector", "scholarly_contribution_linker"):
        importlib.import_module(package)  # extensions and factories, also without entry points
    args.out.mkdir(parents=True, exist_ok=True)
    nlp = scholarly_nlp.blank()
    summary = detector_corpora(args.ncg_dir, args.out, nlp, args.dev_fraction, args.seed, args.ncg_limit)
    summary.update(silver_corpora(args.tei_dir, args.gold, args.out, nlp, args.dev_fraction, args.seed,
                                  args.tei_limit, pdf_dir, args.pdf_limit))
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2))
    print(json.dumps({k: v for k, v in summary.items() if not isinstance(v, list)}))


if __name__ == "__main__":
    main()
