"""Write central-figure annotation packets: each paper's abstract and figure captions.

The papers are those the shipped ranker never trained on and that are not dev gold, each with
at least 3 captioned figures and an abstract: the ACL TEI papers that ``preprocess.py`` holds
out (its stable 10% split) and the ACL PDFs (read with the built-in PDF reader), or with
``--group biomed`` the biomedical TEI papers. Annotators
read ``packets.txt`` (what the dev gold's annotators read: abstract and captions, no images);
``packets.json`` keeps the same content with each paper's file, for merging and scoring.

    python scripts/annotation_packets.py --data ../../../shared/data --out selection
    python scripts/annotation_packets.py --data ../../../shared/data --group biomed --limit 100 --out selection/biomed
    python scripts/annotation_packets.py --data ../../../shared/data --group biomed \
        --exclude selection/biomed/central_figures_selection.jsonl --out selection/round3

``--exclude`` leaves out papers an earlier round labelled (round 3: the biomedical papers after
round 2's 100).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

import scholarly_nlp
from scholarly_figure_ranker.texts import abstract_sentences, caption_text


def _load_preprocess():
    """This project's ``preprocess.py`` (its gold filter and train/dev split), loaded from its
    file under its own name: importing it as ``preprocess`` would leave that name in
    ``sys.modules`` for another project's script of the same name."""
    spec = importlib.util.spec_from_file_location("figure_ranker_preprocess",
                                                  Path(__file__).resolve().parent / "preprocess.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_PREPROCESS = _load_preprocess()
gold_ids, is_dev = _PREPROCESS.gold_ids, _PREPROCESS.is_dev

MIN_FIGURES = 3
DEV_PERCENT = 10

GROUPS = ("acl", "biomed", "pdf-pairs")
"""``acl``: the held-out ACL TEI files, then the ACL PDFs; ``biomed``: the biomedical TEI files
(CC BY articles; never read by the ranker's training); ``pdf-pairs``: the GROBID TEI files of
``pdf-pairs`` (many publishers and fields; their licences allow local use only, so their packets
stay out of git)."""


def candidate_files(data: Path, group: str = "acl") -> list[Path]:
    """The files of one group (:data:`GROUPS`), sorted."""
    if group == "biomed":
        return sorted((data / "tei" / "biomed").glob("*.tei.xml"))
    if group == "pdf-pairs":
        return sorted((data / "pdf-pairs").glob("*.tei.xml"))
    tei = [p for p in sorted((data / "tei" / "acl").glob("*.tei.xml")) if is_dev(p.name.split(".")[0], DEV_PERCENT)]
    return tei + sorted((data / "pdfs" / "acl").glob("*.pdf"))


def packets(data: Path, gold_file: Path, group: str = "acl", limit: int = 0,
            exclude: tuple[Path, ...] = ()) -> list[dict]:
    """One packet per usable paper of ``group`` (the first ``limit`` usable ones when > 0):
    paper id, source file, abstract and captioned figures. Papers of the dev gold and of the
    label files ``exclude`` are left out; a FileNotFoundError names any ``exclude`` file that is
    not there."""
    missing = [str(path) for path in exclude if not path.exists()]
    if missing:
        raise FileNotFoundError(f"label files to exclude not found: {', '.join(missing)}")
    gold = gold_ids(str(gold_file), *map(str, exclude))
    nlp = scholarly_nlp.blank()
    result = []
    for read in scholarly_nlp.read_many([str(p) for p in candidate_files(data, group)], nlp=nlp):
        if limit and len(result) >= limit:
            break
        if not read.ok:
            print(f"skipped: {read.error}", file=sys.stderr)
            continue
        doc = read.doc
        figures = [f for f in doc._.figures if f.kind == "figure" and caption_text(f)]
        abstract = abstract_sentences(doc)
        if doc._.paper_id in gold or len(figures) < MIN_FIGURES or not abstract:
            continue
        result.append({"paper_id": doc._.paper_id, "source": str(Path(read.path).relative_to(data)),
                       "abstract": " ".join(abstract),
                       "figures": [{"id": f.id, "label": f.label, "caption": caption_text(f)} for f in figures]})
    return result


def packet_text(papers: list[dict]) -> str:
    """The packets as the annotators read them."""
    lines = []
    for number, paper in enumerate(papers, start=1):
        lines.append(f"=== Paper {number} of {len(papers)}  paper_id: {paper['paper_id']}")
        lines.append(f"ABSTRACT: {paper['abstract']}")
        lines.append("FIGURES:")
        lines.extend(f"  [{f['id']}] Figure {f['label'] or '?'}: {f['caption']}" for f in paper["figures"])
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="the shared data folder")
    parser.add_argument("--gold", type=Path, default=None, help="dev gold to leave out (default: DATA/gold/central_figures_dev.jsonl)")
    parser.add_argument("--group", choices=GROUPS, default="acl")
    parser.add_argument("--limit", type=int, default=0, help="at most this many papers (0: all)")
    parser.add_argument("--exclude", type=Path, nargs="*", default=[],
                        help="label files (JSONL with paper_id) of papers to leave out")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    papers = packets(args.data, args.gold or args.data / "gold" / "central_figures_dev.jsonl", args.group,
                     args.limit, tuple(args.exclude))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "packets.json").write_text(json.dumps(papers, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    (args.out / "packets.txt").write_text(packet_text(papers), encoding="utf-8")
    print(f"{len(papers)} papers, {sum(len(p['figures']) for p in papers)} figures")


if __name__ == "__main__":
    main()
