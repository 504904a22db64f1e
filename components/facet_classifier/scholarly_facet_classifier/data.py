"""CL-SciSumm reference papers as Docs carrying their incoming citances, for training and evaluation.

A reference-paper Doc holds ``doc._.incoming_citances``: one dict per citance that cites
the paper, ``{"id", "text", "citing_article", "marker", "sids", "facets"}`` (see
:func:`scholarly_nlp.readers.clscisumm.incoming_citance`). This module reads a whole
CL-SciSumm split (one folder per reference paper) with
:func:`scholarly_nlp.readers.clscisumm.reference_folder_doc` and flattens the citances.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Iterable, Optional, Union

from spacy.language import Language
from spacy.tokens import Doc

__all__ = ["labelled_citances", "load_reference_docs", "reference_folders"]


def reference_folders(root: Union[str, Path], papers: Optional[Iterable[str]] = None) -> list[Path]:
    """The reference-paper folders under ``root`` (those with a Reference_XML folder), sorted by name.

    ``papers`` restricts them to those ids (in sorted order); an id without a folder raises
    FileNotFoundError.
    """
    root = Path(root)
    folders = sorted(p for p in root.iterdir() if (p / "Reference_XML").is_dir())
    if papers is None:
        return folders
    wanted = set(papers)
    missing = wanted - {p.name for p in folders}
    if missing:
        raise FileNotFoundError(f"{root}: no reference-paper folder for {', '.join(sorted(missing))}")
    return [p for p in folders if p.name in wanted]


def load_reference_docs(root: Union[str, Path], nlp: Language, papers: Optional[Iterable[str]] = None,
                        quiet: bool = True) -> list[Doc]:
    """One Doc per reference paper under ``root``, with ``doc._.incoming_citances`` set.

    ``quiet`` silences the reader's warnings about recovered input (cp1252 bytes, dropped
    sids), which the published CL-SciSumm files trigger by the dozen.
    """
    from scholarly_nlp.readers import reference_folder_doc

    docs = []
    for folder in reference_folders(root, papers):
        with warnings.catch_warnings():
            if quiet:
                warnings.simplefilter("ignore")
            docs.append(reference_folder_doc(folder, nlp))
    return docs


def labelled_citances(docs: Iterable[Doc]) -> list[tuple[str, dict]]:
    """(reference paper id, citance) for every incoming citance with gold facets, in order."""
    out = []
    for doc in docs:
        paper = doc._.paper_id or ""
        for citance in doc._.incoming_citances or []:
            if citance.get("facets"):
                out.append((paper, citance))
    return out
