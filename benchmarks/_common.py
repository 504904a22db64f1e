"""Helpers shared by the benchmark scripts: data locations, file discovery, output.

Only the standard library is imported here, so a benchmark worker that measures a bare
lxml or pypdfium2 baseline does not pay for (or count the memory of) spaCy.
"""

from __future__ import annotations

import json
import os
import platform
import sys
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path

#: The repository root (the parent of ``benchmarks/``).
REPO_ROOT = Path(__file__).resolve().parents[1]
#: The shared data folder as the data README places it: ``../shared/data`` from the repo.
DEFAULT_DATA_ROOT = REPO_ROOT.parent / "shared" / "data"
DEFAULT_TEI_ROOT = DEFAULT_DATA_ROOT / "tei"
DEFAULT_PDF_ROOT = DEFAULT_DATA_ROOT / "pdfs" / "acl"
RESULTS_DIR = REPO_ROOT / "benchmarks" / "results"

#: How many bytes of a file are read to decide whether it is GROBID TEI.
_SNIFF_BYTES = 4096


def is_tei_file(path: Path) -> bool:
    """True for an XML file whose root element is ``<TEI`` (so JATS or other XML is skipped)."""
    if not path.name.lower().endswith((".xml", ".tei")):
        return False
    with open(path, "rb") as handle:
        head = handle.read(_SNIFF_BYTES)
    return b"<TEI" in head


def tei_files_by_folder(tei_root: Path) -> dict[str, list[Path]]:
    """TEI files under ``tei_root`` grouped by their top-level sub-folder (``acl``, ``biomed``...).

    Files directly in ``tei_root`` go to the group ``"."``. Files and groups are sorted.
    """
    groups: dict[str, list[Path]] = {}
    for dirpath, _dirs, names in os.walk(tei_root):
        for name in names:
            path = Path(dirpath) / name
            if is_tei_file(path):
                rel = path.relative_to(tei_root)
                folder = rel.parts[0] if len(rel.parts) > 1 else "."
                groups.setdefault(folder, []).append(path)
    return {folder: sorted(paths) for folder, paths in sorted(groups.items())}


def skipped_non_tei(tei_root: Path) -> list[str]:
    """XML files under ``tei_root`` that are not TEI (e.g. the publisher's JATS), relative paths."""
    skipped = []
    for dirpath, _dirs, names in os.walk(tei_root):
        for name in names:
            path = Path(dirpath) / name
            if name.lower().endswith(".xml") and not is_tei_file(path):
                skipped.append(str(path.relative_to(tei_root)))
    return sorted(skipped)


def pdf_files(pdf_root: Path) -> list[Path]:
    """The ``*.pdf`` files directly under ``pdf_root``, sorted."""
    return sorted(p for p in pdf_root.glob("*.pdf") if p.is_file())


def machine_info() -> dict:
    """Where and when a measurement was taken (for the results JSON)."""
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
    }


def write_json(path: Path, data: dict) -> None:
    """Write ``data`` as indented JSON, creating the parent folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2, ensure_ascii=False)
        handle.write("\n")


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A GitHub markdown table; the first column is left-aligned, the others right-aligned."""
    lines = ["| " + " | ".join(str(h) for h in header) + " |"]
    lines.append("| " + " | ".join([":---"] + ["---:"] * (len(header) - 1)) + " |")
    for row in rows:
        lines.append("| " + " | ".join(str(cell) for cell in row) + " |")
    return "\n".join(lines)


def pct(value: float | None) -> str:
    """A share as a percentage with one decimal ("n/a" for None)."""
    return "n/a" if value is None else f"{100.0 * value:.1f}%"


def ratio(numerator: float, denominator: float) -> float | None:
    """numerator / denominator, or None when the denominator is 0."""
    return numerator / denominator if denominator else None


def ensure_repo_on_path() -> None:
    """Make ``import scholarly_nlp`` work when the package is not installed."""
    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
