"""CSAbstruct split (``train.jsonl``/``dev.jsonl``) -> DocBin of paper Docs with gold ``roles``.

Usage::

    python scripts/roles_corpus.py ../../../shared/data/csabstruct/train.jsonl corpus/roles_train.spacy [--limit N]

Each abstract becomes the paper Doc of :func:`scholarly_nlp.readers.abstracts.abstract_doc`
(an ``abstract`` span group, one Doc sentence per given sentence) with its gold labels as
the ``roles`` span group, written with :func:`scholarly_nlp.save_docbin` (span groups and
``._`` values kept) for the ``scholarly_nlp.PaperCorpus.v1`` reader of ``configs/roles.cfg``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Optional, Sequence


def build_roles_corpus(input_path: Path, output_path: Path, limit: int = 0) -> int:
    """Write the DocBin of the labelled abstracts of ``input_path``; returns the number of Docs.

    Records without labels or without any non-blank sentence are skipped; ``limit`` > 0 keeps
    the first ``limit`` abstracts.
    """
    import scholarly_nlp
    from scholarly_nlp import abstract_sentences
    from scholarly_nlp.readers import abstract_doc, read_csabstruct

    nlp = scholarly_nlp.blank()
    records = read_csabstruct(input_path)
    if limit > 0:
        records = records[:limit]
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
    args = parser.parse_args(argv)
    count = build_roles_corpus(args.input, args.output, args.limit)
    print(f"{count} abstracts -> {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
