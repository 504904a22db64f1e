"""Parse papers into train/dev/test DocBins, the citation-relation table and the text-vector cache.

* PDFs are read with the built-in reader, which renders each figure to
  ``<out>/images/<paper>_<fig>.png`` (the image side of the embedder); TEI papers have no
  images and exercise the model's missing-image vector.
* Papers are split by a stable hash of their id into train / dev (validation: the spaCy
  dev score and the evaluation's thresholds) / test (held out for the reported numbers).
* ``relations.json``: citation relations between all the parsed papers, from the CL-SciSumm
  folders and from bibliography titles (see ``scholarly_figure_embedder.relations``).
* ``text_vectors.npz``: the frozen sentence encoder's vectors of every caption and context
  sentence, computed once here so that training and evaluation never re-encode them.
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

import scholarly_nlp
from scholarly_figure_embedder.features import Featurizer
from scholarly_figure_embedder.papers import read_papers
from scholarly_figure_embedder.relations import corpus_relations
from scholarly_figure_embedder.text_vectors import TextVectorCache

SPLITS = ("train", "dev", "test")
DEV_PERCENT = 20
TEST_PERCENT = 20


def split_of(paper_id: str, dev_percent: int, test_percent: int) -> str:
    """A stable split by paper: the same paper lands in the same split on every machine."""
    bucket = int(hashlib.sha1(paper_id.encode()).hexdigest(), 16) % 100
    if bucket < test_percent:
        return "test"
    if bucket < test_percent + dev_percent:
        return "dev"
    return "train"


def read_limited(inputs: list[str], limit: int, nlp, image_dir: Path, failed: list[str]) -> list:
    """Up to ``limit`` (0: all) readable papers of ``inputs``; failures are appended to ``failed``."""
    docs = []
    for result in read_papers(inputs, nlp, image_dir):
        if not result.ok:
            failed.append(str(result.error))
            continue
        docs.append(result.doc)
        if limit and len(docs) >= limit:
            break
    return docs


def fill_small_splits(splits: dict[str, list], minimum: int = 2) -> None:
    """With few papers (smoke runs), move training papers into a dev or test split smaller than ``minimum``.

    Two papers at least are needed for pairs of figures of different papers.
    """
    for name in ("dev", "test"):
        while len(splits[name]) < minimum and len(splits["train"]) > 2 * minimum:
            splits[name].append(splits["train"].pop())


def main() -> None:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pdf-dir", required=True, help="folder of PDFs (figure images are rendered)")
    parser.add_argument("--tei-dir", default="", help="folder of GROBID TEI files (no images)")
    parser.add_argument("--clscisumm-dir", default="", help="CL-SciSumm data folder (citation relations)")
    parser.add_argument("--out", required=True)
    parser.add_argument("--pdf-limit", type=int, default=0, help="at most this many PDFs (0: all)")
    parser.add_argument("--tei-limit", type=int, default=0, help="at most this many TEI papers (0: all)")
    parser.add_argument("--dev-percent", type=int, default=DEV_PERCENT)
    parser.add_argument("--test-percent", type=int, default=TEST_PERCENT)
    parser.add_argument("--encoder", default="all-MiniLM-L6-v2", help="frozen sentence encoder for the text cache")
    parser.add_argument("--window", type=int, default=1, help="context sentences on each side of a mention")
    parser.add_argument("--max-mentions", type=int, default=3)
    args = parser.parse_args()

    out = Path(args.out)
    nlp = scholarly_nlp.blank()
    failed: list[str] = []
    docs = read_limited([args.pdf_dir], args.pdf_limit, nlp, out / "images", failed)
    n_pdf = len(docs)
    if args.tei_dir:
        docs += read_limited([args.tei_dir], args.tei_limit, nlp, out / "images", failed)

    relations = corpus_relations(docs, args.clscisumm_dir or None)
    relations.save(out / "relations.json")

    splits: dict[str, list] = {name: [] for name in SPLITS}
    for doc in docs:
        splits[split_of(doc._.paper_id, args.dev_percent, args.test_percent)].append(doc)
    fill_small_splits(splits)
    for name, split_docs in splits.items():
        scholarly_nlp.save_docbin(split_docs, out / f"{name}.spacy")

    cache = TextVectorCache(args.encoder)
    featurizer = Featurizer(cache, window=args.window, max_mentions=args.max_mentions)
    sentences = featurizer.sentences(docs)
    cache.vectors(sentences)
    cache.save(out / "text_vectors.npz")

    figures = {name: sum(len(featurizer.figure_texts(d)) for d in split_docs) for name, split_docs in splits.items()}
    print(f"papers: {n_pdf} PDF + {len(docs) - n_pdf} TEI; " +
          ", ".join(f"{name}: {len(splits[name])} papers / {figures[name]} figures" for name in SPLITS))
    print(f"relations: {relations.counts()}; text vectors: {len(cache)} ({cache.dim}-d, {args.encoder})")
    print(f"failed: {len(failed)}")
    for reason in failed:
        print(f"failed: {reason}")


if __name__ == "__main__":
    main()
