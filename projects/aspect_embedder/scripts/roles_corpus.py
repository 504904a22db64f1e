"""CSAbstruct split (``train.jsonl``/``dev.jsonl``) -> DocBin of paper Docs with gold ``roles``.

Usage::

    python scripts/roles_corpus.py ../../../shared/data/csabstruct/train.jsonl corpus/roles_train.spacy [--limit N]
        [--silver ../../../shared/data/csfcube/abstracts-csfcube-preds.jsonl --exclude ../../../shared/data/csabstruct/dev.jsonl]

Each abstract becomes the paper Doc of :func:`scholarly_nlp.readers.abstracts.abstract_doc`
(an ``abstract`` span group, one Doc sentence per given sentence) with its gold labels as
the ``roles`` span group, written with :func:`scholarly_nlp.save_docbin` (span groups and
``._`` values kept) for the ``scholarly_nlp.PaperCorpus.v1`` reader of ``configs/roles.cfg``.

``--silver`` adds the abstracts of a CSFCube-format file labelled by another model (CSFCube's
``pred_labels``, from a tagger trained on CSAbstruct): silver roles, a distillation signal. A
silver abstract that shares a sentence with an ``--exclude`` file (the dev set the tagger is
reported on) or with the gold input is left out, so the dev set stays unseen and gold labels
win where both exist.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Optional, Sequence


def _sentence_keys(records) -> set[str]:
    """Whitespace- and case-normalised sentences of ``records`` (to find shared abstracts)."""
    return {" ".join(s.lower().split()) for record in records for s in record.sentences if s.strip()}


def silver_records(silver_path: Path, known: set[str]) -> list:
    """The labelled records of CSFCube-format ``silver_path`` that share no sentence with ``known``."""
    from scholarly_nlp.readers import read_csfcube_abstracts

    return [record for record in read_csfcube_abstracts(silver_path)
            if record.roles is not None and not _sentence_keys([record]) & known]


def build_roles_corpus(input_path: Path, output_path: Path, limit: int = 0, silver: Optional[Path] = None,
                       exclude: Sequence[Path] = ()) -> int:
    """Write the DocBin of the labelled abstracts of ``input_path``; returns the number of Docs.

    Records without labels or without any non-blank sentence are skipped; ``limit`` > 0 keeps
    the first ``limit`` abstracts. ``silver`` (a CSFCube-format file with ``pred_labels``) adds
    its abstracts that share no sentence with ``input_path`` or any ``exclude`` file.
    """
    import scholarly_nlp
    from scholarly_nlp import abstract_sentences
    from scholarly_nlp.readers import abstract_doc, read_csabstruct

    nlp = scholarly_nlp.blank()
    records = read_csabstruct(input_path)
    if limit > 0:
        records = records[:limit]
    if silver is not None:
        known = _sentence_keys(records)
        for path in exclude:
            known |= _sentence_keys(read_csabstruct(path))
        records = records + silver_records(silver, known)
    docs = []
    for record in records:
        if record.roles is None:
            continue
        doc = abstract_doc(record, nlp)
        if abstract_sentences(doc):
            docs.append(doc)
    output_path.parent.mkdir(parents=True, exist_ok=True)
    return scholarly_nlp.save_docbin(docs, output_path)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Command line entry point (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input", type=Path, help="CSAbstruct train.jsonl or dev.jsonl")
    parser.add_argument("output", type=Path, help="the .spacy file to write")
    parser.add_argument("--limit", type=int, default=0, help="keep only the first N abstracts (0: all)")
    parser.add_argument("--silver", default="",
                        help="also the abstracts of this CSFCube-format file, labelled by its pred_labels ('': none)")
    parser.add_argument("--exclude", type=Path, action="append", default=[],
                        help="a CSAbstruct-format file whose abstracts no silver abstract may share a sentence with")
    args = parser.parse_args(argv)
    silver = Path(args.silver) if args.silver else None
    count = build_roles_corpus(args.input, args.output, args.limit, silver, args.exclude)
    print(f"{count} abstracts -> {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
