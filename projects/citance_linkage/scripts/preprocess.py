"""Build the citance-linkage training corpora (DocBins of reference papers) from CL-SciSumm.

Every Doc is one reference paper (``reference_folder_doc``): its sentences are the
``<S>`` elements of ``Reference_XML/<RP>.xml`` (sids in ``doc._.paper_meta["sids"]``)
and ``doc._.incoming_citances`` holds the citances that cite it, with their gold
sentence ids and facets. Written to ``--out``:

* ``linker_train.spacy``: the train-manual papers that are not held out, each repeated
  ``--manual-repeat`` times (3 by default, as ``benchmarks/citance_linker_cv.py``), and with
  ``--linker-weak`` the ScisummNet papers before them (``train-scisummnet``, weak supervision:
  their sentence ids were chosen automatically, often the title plus one sentence; optionally
  capped by ``--scisummnet-limit``). The weak papers are off by default: a cross-encoder
  trained on them together with the manual papers learned nothing measurable;
* ``facets_train.spacy``: the train-manual papers that are not held out (only they have
  discourse facets);
* ``dev.spacy``: the held-out train-manual papers (8 of the 40 by default, drawn by
  ``--dev-seed``, or named with ``--dev-papers``); the split is by reference paper;
* ``split.json``: which papers went where, with counts; ``warnings.txt``: every reader
  warning (the console shows a summary).

Papers that cannot be read (broken beyond recovery, no Reference_XML) are listed and
skipped; papers with no usable citance are left out of the training files.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import warnings
from collections import Counter
from pathlib import Path

import scholarly_nlp
from scholarly_nlp.readers import reference_folder_doc

#: Summary categories of reader warnings: (label, pattern in the message).
WARNING_KINDS = (
    ("citance records with empty text skipped", "empty citation text"),
    ("citance records with a repeated Citance Number skipped", "repeated Citance Number"),
    ("citance records citing sids not in the reference paper (those ids dropped)",
     "do not exist in the reference paper"),
    ("files not valid UTF-8 (read as cp1252)", "not valid UTF-8"),
    ("XML files recovered from errors", "not well-formed XML"),
    ("annotation records skipped as malformed", "record skipped"),
    ("empty <S> elements left out", "empty <S>"),
)
_COUNT = re.compile(r": (\d+) (?:record\(s\)|empty <S>)")


#: Where the two training sets sit under --clscisumm-dir: the local copy's names first, then
#: the published repository's (``data/Training-Set-2019`` of WING-NUS/scisumm-corpus).
MANUAL_DIRS = ("train-manual", "Task1/From-Training-Set-2018")
SCISUMMNET_DIRS = ("train-scisummnet", "Task1/From-ScisummNet-2019")


def data_folder(root: Path, names: tuple[str, ...]) -> Path:
    """The first of ``root/name`` that exists (the first name when none does)."""
    for name in names:
        if (root / name).is_dir():
            return root / name
    return root / names[0]


def rp_folders(root: Path) -> list[Path]:
    """Reference-paper folders under ``root`` (those with a Reference_XML folder or an annotation folder), sorted."""
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and ((p / "Reference_XML").is_dir() or (p / "annotation").is_dir()))


def choose_dev(papers: list[str], n_dev: int, seed: int, named: str = "") -> list[str]:
    """The held-out papers: those ``named`` (comma-separated) or ``n_dev`` drawn with ``seed``, sorted."""
    if named.strip():
        chosen = [p.strip() for p in named.split(",") if p.strip()]
        unknown = [p for p in chosen if p not in papers]
        if unknown:
            raise SystemExit(f"error: --dev-papers names unknown reference papers: {', '.join(unknown)}")
        return sorted(chosen)
    if n_dev >= len(papers):
        raise SystemExit(f"error: cannot hold out {n_dev} of {len(papers)} papers")
    return sorted(random.Random(seed).sample(sorted(papers), n_dev))


def warning_kind(message: str) -> str:
    """The summary category of one reader warning."""
    for label, needle in WARNING_KINDS:
        if needle in message:
            return label
    return "other warnings"


def read_papers(folders: list[Path], nlp, log: list[str], kinds: Counter, failed: list[str]) -> list:
    """Docs of the reference-paper folders; warnings logged and counted by kind (a warning
    about N records or elements counts N), failures listed."""
    docs = []
    for folder in folders:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                doc = reference_folder_doc(folder, nlp)
            except scholarly_nlp.ScholarlyNLPError as exc:
                failed.append(f"{folder.name}: {exc}")
                continue
        for item in caught:
            message = str(item.message)
            log.append(message)
            number = _COUNT.search(message)
            kinds[warning_kind(message)] += int(number.group(1)) if number else 1
        docs.append(doc)
    return docs


def with_linkage(docs: list) -> list:
    """Docs that have at least one citance with gold sentence ids."""
    return [d for d in docs if any(c["sids"] for c in d._.incoming_citances or [])]


def with_facets(docs: list) -> list:
    """Docs that have at least one citance with gold sentence ids and facets."""
    return [d for d in docs if any(c["sids"] and c["facets"] for c in d._.incoming_citances or [])]


def citances(docs: list, key: str = "sids") -> int:
    """Number of citances with a non-empty ``key`` over ``docs``."""
    return sum(1 for d in docs for c in d._.incoming_citances or [] if c[key])


def main() -> None:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clscisumm-dir", required=True,
                        help="folder with train-manual/ and train-scisummnet/ (or Task1/From-Training-Set-2018/ "
                             "and Task1/From-ScisummNet-2019/, the published Training-Set-2019)")
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--n-dev", type=int, default=8, help="train-manual papers held out as dev")
    parser.add_argument("--dev-seed", type=int, default=0)
    parser.add_argument("--dev-papers", default="", help="comma-separated RP ids to hold out (overrides --n-dev)")
    parser.add_argument("--scisummnet-limit", type=int, default=0, help="use at most this many ScisummNet papers (0: all)")
    parser.add_argument("--manual-limit", type=int, default=0, help="use at most this many train-manual training papers (0: all)")
    parser.add_argument("--manual-repeat", type=int, default=3, help="copies of each train-manual paper in linker_train")
    parser.add_argument("--linker-weak", action="store_true",
                        help="also put the ScisummNet papers (automatic sids) into linker_train")
    args = parser.parse_args()

    root = Path(args.clscisumm_dir)
    manual = rp_folders(data_folder(root, MANUAL_DIRS))
    if not manual:
        raise SystemExit(f"error: no reference-paper folders in {data_folder(root, MANUAL_DIRS)}")
    scisummnet = rp_folders(data_folder(root, SCISUMMNET_DIRS))
    dev_ids = choose_dev([p.name for p in manual], args.n_dev, args.dev_seed, args.dev_papers)
    train_manual = [p for p in manual if p.name not in dev_ids]
    if args.manual_limit:
        train_manual = train_manual[: args.manual_limit]
    if args.scisummnet_limit:
        scisummnet = scisummnet[: args.scisummnet_limit]
    dev_folders = [p for p in manual if p.name in dev_ids]

    nlp = scholarly_nlp.blank()
    log: list[str] = []
    kinds: Counter = Counter()
    failed: list[str] = []
    manual_docs = read_papers(train_manual, nlp, log, kinds, failed)
    dev_docs = read_papers(dev_folders, nlp, log, kinds, failed)
    net_docs = read_papers(scisummnet, nlp, log, kinds, failed) if args.linker_weak else []

    weak_docs = with_linkage(net_docs)
    linker_train = weak_docs + with_linkage(manual_docs) * max(1, args.manual_repeat)
    facets_train = with_facets(manual_docs)
    dev = with_linkage(dev_docs)
    out = Path(args.out)
    scholarly_nlp.save_docbin(linker_train, out / "linker_train.spacy")
    scholarly_nlp.save_docbin(facets_train, out / "facets_train.spacy")
    scholarly_nlp.save_docbin(dev, out / "dev.spacy")
    split = {
        "dev_papers": [d._.paper_id for d in dev],
        "dev_seed": args.dev_seed,
        "train_manual_papers": [d._.paper_id for d in manual_docs],
        "scisummnet_papers": len(net_docs),
        "manual_repeat": max(1, args.manual_repeat),
        "linker_train": {"papers": len(linker_train), "citances": citances(linker_train)},
        "facets_train": {"papers": len(facets_train), "citances": citances(facets_train, "facets")},
        "dev": {"papers": len(dev), "citances": citances(dev)},
        "failed": failed,
        "warnings": dict(kinds),
    }
    scholarly_nlp.write_atomic(out / "split.json", json.dumps(split, indent=2))
    scholarly_nlp.write_atomic(out / "warnings.txt", "\n".join(log) + ("\n" if log else ""))

    print(f"linker_train: {len(linker_train)} papers ({len(weak_docs)} ScisummNet + "
          f"{len(with_linkage(manual_docs))} train-manual x {max(1, args.manual_repeat)}), "
          f"{citances(linker_train)} citances")
    print(f"facets_train: {len(facets_train)} papers, {citances(facets_train, 'facets')} citances with facets")
    print(f"dev: {len(dev)} papers ({', '.join(split['dev_papers'])}), {citances(dev)} citances")
    if kinds:
        summary = "; ".join(f"{count} {label}" for label, count in kinds.most_common())
        print(f"reader warnings ({len(log)}, all in {out / 'warnings.txt'}): {summary}")
    for reason in failed:
        print("failed: " + re.sub(r"\s+", " ", reason))


if __name__ == "__main__":
    main()
