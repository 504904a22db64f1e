"""Readers turn files into :class:`scholarly_nlp.Paper` objects; see :mod:`.dispatch`.

The format readers behind :func:`scholarly_nlp.read` (PDF, GROBID TEI) are reached through
the top level. This package declares, in ``__all__``, the dataset readers a component or a
project may use: CSFCube/CSAbstruct abstracts (:mod:`.abstracts`), CSFCube's relevance and
split files (:mod:`.csfcube`, with the JSON helper :func:`read_json`), CL-SciSumm folders,
annotations and cells (:mod:`.clscisumm`, :mod:`.clscisumm_cells`, :mod:`.clscisumm_csv`),
NCG papers (:mod:`.ncg`), and the format readers themselves (:func:`read_pdf`,
:func:`read_tei`). The dataset readers are also spaCy corpus readers for training configs
(``scholarly_nlp.CSAbstructCorpus.v1``, ``CLSciSummCorpus.v1``, ``PaperFiles.v1``:
:mod:`.corpora`). Anything else under ``scholarly_nlp.readers`` is internal.

Names are loaded on first access, so ``import scholarly_nlp`` (which imports
:mod:`.dispatch`) loads no dataset reader.
"""

from __future__ import annotations

from ..lazy_exports import lazy_exports

_EXPORTS = {
    # CSFCube / CSAbstruct abstracts
    "AbstractRecord": "abstracts",
    "abstract_doc": "abstracts",
    "read_csabstruct": "abstracts",
    "read_csfcube_abstracts": "abstracts",
    # CSFCube relevance judgements and evaluation splits
    "load_csfcube_qrels": "csfcube",
    "read_csfcube_folds": "csfcube",
    "read_csfcube_qrels": "csfcube",
    "read_json": "csfcube",
    # CL-SciSumm
    "annotation_files": "clscisumm",
    "read_annotations": "clscisumm",
    "read_citing_sentences": "clscisumm",
    "read_folder_records": "clscisumm",
    "read_reference_xml": "clscisumm",
    "reference_doc": "clscisumm",
    "reference_folder_doc": "clscisumm",
    "citance_key": "clscisumm_cells",
    "citance_task1_maps": "clscisumm_cells",
    "official_task1_maps": "clscisumm_cells",
    "parse_facets": "clscisumm_cells",
    "parse_reference_offsets": "clscisumm_cells",
    "read_task1_rows": "clscisumm_csv",
    "reference_text_markup": "clscisumm_csv",
    "task1_row": "clscisumm_csv",
    "write_task1_csv": "clscisumm_csv",
    # NCG
    "NCGPaper": "ncg",
    "introduction_mask": "ncg",
    "iter_ncg_papers": "ncg",
    "ncg_folders": "ncg",
    # formats
    "read_pdf": "pdf",
    "read_tei": "tei",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
