"""Turn annotated CL-SciSumm reference-paper folders into the 2018 test layout plus gold files.

For each reference paper ``<RP>`` (a training folder with ``Reference_XML/``,
``Citance_XML/`` and ``annotation/<RP>.ann.txt``) this writes:

* ``<out>/<RP>/Reference_XML/``, ``<out>/<RP>/Citance_XML/``: copies;
* ``<out>/<RP>/annotation/<RP>.csv``: the 2018 Task 1 CSV given to systems: one row per
  citance (Citation Marker Offset and Citation Offset ``0``, Citation Text and Citation
  Text Clean the plain citance text) with the answer columns (Reference Offset,
  Reference Text, Discourse Facet) empty;
* ``<gold>/<RP>_1.csv``: the same rows with the annotated answers (``NA`` where a
  citance has no reference sentence), as the official script's gold files.

Citance records with empty text are left out (as :func:`reference_folder_doc` does).
Papers come from ``--papers`` (comma-separated ids) or from the ``dev_papers`` list of a
``split.json`` written by ``preprocess.py`` (``--split``).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import warnings
from pathlib import Path

from scholarly_nlp.readers import read_folder_records
from scholarly_nlp.readers import task1_row, write_task1_csv

sys.path.insert(0, str(Path(__file__).resolve().parent))
from preprocess import MANUAL_DIRS, data_folder  # noqa: E402


def copy_folder(src: Path, dst: Path) -> int:
    """Copy the files of ``src`` into ``dst`` (contents only, permissions not copied); returns the count."""
    if not src.is_dir():
        return 0
    dst.mkdir(parents=True, exist_ok=True)
    count = 0
    for item in sorted(src.iterdir()):
        if item.is_file():
            shutil.copyfile(item, dst / item.name)
            count += 1
    return count


def convert(rp_dir: Path, out: Path, gold: Path, annotator: str = "1") -> dict:
    """Write the test-layout folder and the gold CSV of one reference paper; returns counts."""
    rp = rp_dir.name
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        records = [r for r in read_folder_records(rp_dir) if str(r.get("citation_text") or "").strip()]
    if not records:
        raise SystemExit(f"error: {rp_dir} has no annotated citance")
    copy_folder(rp_dir / "Reference_XML", out / rp / "Reference_XML")
    copy_folder(rp_dir / "Citance_XML", out / rp / "Citance_XML")
    write_task1_csv(out / rp / "annotation" / f"{rp}.csv", [task1_row(r, answers=False) for r in records])
    write_task1_csv(gold / f"{rp}_{annotator}.csv", [task1_row(r, answers=True) for r in records])
    answered = sum(1 for r in records if r.get("reference_offsets"))
    return {"paper": rp, "citances": len(records), "answered": answered, "warnings": len(caught)}


def main() -> None:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", required=True,
                        help="folder of annotated RP folders (.../clscisumm/train-manual), or the CL-SciSumm folder "
                             "that holds it (train-manual/ or Task1/From-Training-Set-2018/ is then used)")
    parser.add_argument("--papers", default="", help="comma-separated RP ids")
    parser.add_argument("--split", default="", help="split.json of preprocess.py: its dev_papers are converted")
    parser.add_argument("--out", required=True, help="test-layout folder to write (one <RP>/ per paper)")
    parser.add_argument("--gold", required=True, help="folder for the gold <RP>_1.csv files")
    args = parser.parse_args()

    papers = [p.strip() for p in args.papers.split(",") if p.strip()]
    if args.split:
        if not Path(args.split).exists():
            raise SystemExit(f"error: no split file at {args.split}; run 'weasel run preprocess' first")
        papers += json.loads(Path(args.split).read_text())["dev_papers"]
    if not papers:
        raise SystemExit("error: name the papers with --papers or --split")
    source = Path(args.source)
    if not any((source / p).is_dir() for p in papers):
        source = data_folder(source, MANUAL_DIRS)
    missing = [p for p in papers if not (source / p).is_dir()]
    if missing:
        raise SystemExit(f"error: no folder for {', '.join(missing)} in {source}")
    out, gold = Path(args.out), Path(args.gold)
    for paper in dict.fromkeys(papers):
        info = convert(source / paper, out, gold)
        print(f"{info['paper']}: {info['citances']} citances ({info['answered']} with reference sentences)"
              + (f", {info['warnings']} reader warning(s)" if info["warnings"] else ""))
    print(f"test layout in {out}, gold in {gold}")


if __name__ == "__main__":
    main()
