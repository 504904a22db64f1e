"""Evaluate a figure embedder on the papers of two folders: "Same" and "Citing" pairs, against TF-IDF.

The pairs come from the evaluation papers alone: the PDFs (``*.pdf``) of ``--eval-pdf-dir``,
read with the built-in reader so that their figures have image crops, and the GROBID TEI
files (``*.tei.xml``) of ``--eval-tei-dir``.

* ``same``: two figures of one paper (positive) vs figures of two different papers;
* ``citing``: figures of two papers of which one's bibliography cites the other (titles
  matched as :func:`scholarly_figure_embedder.relations.corpus_relations` does; positive)
  vs figures of two papers with no relation between them.

Both sets are balanced (chance 0.5), and the embedding cosine and the TF-IDF cosine score
exactly the same pairs. A pair is "related" when its score exceeds the method's threshold,
and thresholds never see the evaluation pairs: each is tuned on the pairs of the project's
dev split, with every evaluation paper (same paper id or same title) taken out first - the
dev split ``preprocess`` wrote (``--corpus``/dev.spacy) when there is one, else the papers of
the training folders (``--tune-pdf-dir``, ``--tune-tei-dir``) that preprocess's split puts
in dev. ROC AUC on the evaluation pairs is reported too, as the threshold-free measure.

Writes the metrics JSON and one JSON line per evaluation pair to
``<output-dir>/pair_predictions.jsonl``. A folder that does not exist is an error naming
it; an empty one holds zero papers. Files that cannot be read (or are neither a ``.pdf``
of the PDF folder nor a ``.tei.xml`` of the TEI folder) are reported by name and skipped.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import scholarly_nlp
from scholarly_figure_embedder.evaluation import (
    PairSet,
    build_pair_sets,
    compare_on_pairs,
    embedder_pool,
    pair_auc,
    pool_counts,
)
from scholarly_figure_embedder.papers import read_papers
from scholarly_figure_embedder.recommend import Candidate
from scholarly_figure_embedder.relations import (
    MIN_TITLE_WORDS,
    RelationTable,
    corpus_relations,
    doc_title,
    normalise_title,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from evaluate import embedder_config, load_embedder, pair_lines  # noqa: E402
from preprocess import DEV_PERCENT, TEST_PERCENT, split_of  # noqa: E402

SUFFIXES = {"pdf": ".pdf", "tei": ".tei.xml"}
PAIR_SETS = ("same", "citing")
# A Citing pair: one paper cites the other. Co-citing papers (both cite a third) are
# neither positives nor negatives.
CITING_KINDS = ["cites"]
PREDICTIONS_FILE = "pair_predictions.jsonl"


@dataclass
class PaperSet:
    """Papers read from files: the Docs, the file and reader of each paper id, and the files that gave none."""

    docs: list = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)
    readers: dict[str, str] = field(default_factory=dict)
    failed: list[dict] = field(default_factory=list)

    def fail(self, path, reason: str) -> None:
        """Record a file that gave no paper, by name."""
        self.failed.append({"file": Path(path).name, "reason": reason})


def folder_files(folder: Path, var: str) -> list[Path]:
    """The regular, non-hidden files directly in ``folder``; exits with an error naming it when it is no folder."""
    if not folder.is_dir():
        sys.exit(f"error: {var} {str(folder)!r} does not exist or is not a folder")
    return sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))


def sort_inputs(pdf_dir: Path, tei_dir: Path) -> tuple[dict[str, list[Path]], list[Path]]:
    """Reader name -> the files it reads (``*.pdf`` of ``pdf_dir``, ``*.tei.xml`` of ``tei_dir``),
    and every other file of the two folders (one folder may serve as both)."""
    listed = {"pdf": folder_files(pdf_dir, "eval_pdf_dir"), "tei": folder_files(tei_dir, "eval_tei_dir")}
    chosen = {reader: [p for p in files if p.name.lower().endswith(SUFFIXES[reader])]
              for reader, files in listed.items()}
    taken = {p.resolve() for files in chosen.values() for p in files}
    others = sorted({p.resolve(): p for files in listed.values() for p in files if p.resolve() not in taken}.values())
    return chosen, others


def read_files(files: list[Path], reader: str, nlp, image_dir: Path, papers: PaperSet) -> None:
    """Read ``files`` with the ``reader`` reader into ``papers``; a failure or a repeated paper id is recorded."""
    for result in read_papers(files, nlp, image_dir if reader == "pdf" else None, format=reader):
        if not result.ok:
            papers.fail(result.path, getattr(result.error, "reason", str(result.error)))
            continue
        paper_id = result.doc._.paper_id
        if paper_id in papers.files:
            papers.fail(result.path, f"paper {paper_id} was already read from {papers.files[paper_id]}")
            continue
        papers.docs.append(result.doc)
        papers.files[paper_id] = Path(result.path).name
        papers.readers[paper_id] = reader


def read_evaluation_papers(chosen: dict[str, list[Path]], others: list[Path], nlp, image_dir: Path) -> PaperSet:
    """The evaluation papers of the files :func:`sort_inputs` chose, with every file that gave none."""
    papers = PaperSet()
    for path in others:
        papers.fail(path, "neither a .pdf file of eval_pdf_dir nor a .tei.xml file of eval_tei_dir")
    for reader, files in chosen.items():
        read_files(files, reader, nlp, image_dir, papers)
    return papers


# --------------------------------------------------------------------------- tuning papers


def title_key(doc) -> Optional[str]:
    """The normalised title of a paper, or None when it is too short to identify the paper."""
    key = normalise_title(doc_title(doc))
    return key if len(key.split()) >= MIN_TITLE_WORDS else None


def without_papers(docs: list, excluded: list) -> list:
    """The ``docs`` that are none of the ``excluded`` papers (same paper id or same title)."""
    ids = {doc._.paper_id for doc in excluded}
    titles = {title_key(doc) for doc in excluded} - {None}
    return [doc for doc in docs if doc._.paper_id not in ids and title_key(doc) not in titles]


def in_dev_split(paper_id: str) -> bool:
    """True when preprocess's split puts the paper in dev."""
    return split_of(paper_id, DEV_PERCENT, TEST_PERCENT) == "dev"


def file_stem(path: Path, reader: str) -> str:
    """The file name without its reader's suffix (the paper id of the shared ACL files)."""
    return path.name[: -len(SUFFIXES[reader])]


def dev_papers_of_folders(folders: dict[str, Optional[Path]], nlp, image_dir: Path) -> PaperSet:
    """The papers of the training folders (reader name -> folder) that preprocess's split puts in dev.

    Files are chosen by name before reading, so that only the dev fifth is read (the shared
    files are named by paper id); the paper id read is checked again.
    """
    papers = PaperSet()
    for reader, folder in folders.items():
        if folder is None or not folder.is_dir():
            continue
        files = [p for p in sorted(folder.glob(f"*{SUFFIXES[reader]}")) if in_dev_split(file_stem(p, reader))]
        read_files(files, reader, nlp, image_dir, papers)
    papers.docs = [doc for doc in papers.docs if in_dev_split(doc._.paper_id)]
    return papers


def load_text_cache(embedder, path: Path) -> None:
    """Use preprocess's text vectors when they exist and come from the embedder's encoder (they only save time)."""
    if not path.exists():
        return
    try:
        embedder.use_text_cache(path)
    except scholarly_nlp.ScholarlyNLPError as exc:
        print(f"note: text vectors not used ({exc})")


def tuning_papers(args, embedder, nlp, image_dir: Path, evaluation: list) -> tuple[list, RelationTable, dict]:
    """The dev papers the thresholds are tuned on (evaluation papers removed), their relations, and where they came from."""
    corpus = Path(args.corpus)
    if (corpus / "dev.spacy").exists():
        load_text_cache(embedder, corpus / "text_vectors.npz")
        docs = list(scholarly_nlp.load_docbin(corpus / "dev.spacy", embedder.vocab))
        relations = RelationTable.load(corpus / "relations.json")
        source = {"tuned_on": str(corpus / "dev.spacy"), "papers_failed": 0, "failed": []}
    else:
        folders = {"pdf": args.tune_pdf_dir, "tei": args.tune_tei_dir}
        read = dev_papers_of_folders(folders, nlp, image_dir)
        docs = read.docs
        relations = corpus_relations(docs, args.clscisumm_dir)
        source = {"tuned_on": "dev split of " + ", ".join(str(f) for f in folders.values() if f),
                  "papers_failed": len(read.failed), "failed": read.failed}
    kept = without_papers(docs, evaluation)
    return kept, relations, {**source, "excluded_evaluation_papers": len(docs) - len(kept)}


# --------------------------------------------------------------------------- scoring


def prediction_rows(name: str, pool: list[Candidate], pairs: PairSet, scores: dict, thresholds: dict,
                    readers: dict[str, str]) -> list[dict]:
    """One JSON-able row per pair: the two figures and their papers' formats, the label, each
    method's score and decision."""
    rows = []
    for p, (i, j) in enumerate(zip(pairs.left, pairs.right)):
        a, b = pool[i].paper_id, pool[j].paper_id
        row = {"pair_set": name, "paper_a": a, "figure_a": pool[i].fig_id, "format_a": readers.get(a),
               "paper_b": b, "figure_b": pool[j].fig_id, "format_b": readers.get(b), "label": int(pairs.labels[p])}
        for method, method_scores in scores.items():
            threshold = thresholds[method]
            row[f"{method}_score"] = float(method_scores[p])
            row[f"{method}_related"] = None if threshold is None else bool(method_scores[p] > threshold)
        rows.append(row)
    return rows


def score_pair_sets(tune_pool: list[Candidate], tune_sets: dict, eval_pool: list[Candidate], eval_sets: dict,
                    readers: dict[str, str], seed: int) -> tuple[dict, list[dict]]:
    """Per pair set, the report (thresholds from the tuning pairs; accuracy and AUC on the evaluation
    pairs) and the prediction rows of every evaluation pair."""
    report, rows = {}, []
    for name in PAIR_SETS:
        pairs = eval_sets[name]
        result, scores = compare_on_pairs(tune_pool, tune_sets[name], eval_pool, pairs, seed)
        n_positive = int(pairs.labels.sum())
        result.update(n_positive=n_positive, n_negative=len(pairs) - n_positive)
        for method, method_scores in scores.items():
            result[method].update(n_pairs=len(method_scores), auc=pair_auc(method_scores, pairs.labels))
        report[name] = result
        rows += prediction_rows(name, eval_pool, pairs, scores, {m: result[m]["threshold"] for m in scores}, readers)
    return report, rows


def paper_counts(papers: PaperSet, pool: list[Candidate], relations: RelationTable, pairs: dict) -> dict:
    """What was read and paired: papers (per reader, failed with reasons), figures, relations, pairs per set."""
    counts = pool_counts(papers.docs, pool, relations)
    readers = Counter(papers.readers.values())
    return {"papers_read": len(papers.docs), "pdf_papers": readers["pdf"], "tei_papers": readers["tei"],
            "papers_failed": len(papers.failed), "failed": papers.failed, "papers": papers.files,
            "figures": counts["figures"], "figures_with_image": counts["figures_with_image"],
            "relations": relations.counts(), "pairs": {name: len(pairs[name]) for name in PAIR_SETS}}


def write_jsonl(path: Path, rows: list[dict]) -> None:
    """One JSON object per line (atomically)."""
    scholarly_nlp.write_atomic(path, "".join(json.dumps(row) + "\n" for row in rows))


def main() -> None:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True,
                        help="installed pipeline package (scholarly_core) or pipeline folder (training/model-best)")
    parser.add_argument("--eval-pdf-dir", type=Path, required=True, help="folder of the evaluation PDFs (*.pdf)")
    parser.add_argument("--eval-tei-dir", type=Path, required=True, help="folder of the evaluation TEI files (*.tei.xml)")
    parser.add_argument("--output-dir", type=Path, required=True, help="pair predictions and figure crops go here")
    parser.add_argument("--metrics", required=True, help="output JSON file")
    parser.add_argument("--corpus", default="corpus", help="preprocess output: its dev.spacy tunes the thresholds")
    parser.add_argument("--tune-pdf-dir", type=Path, help="without --corpus/dev.spacy: training PDFs (dev split tunes)")
    parser.add_argument("--tune-tei-dir", type=Path, help="without --corpus/dev.spacy: training TEI files (dev split)")
    parser.add_argument("--clscisumm-dir", default=None, help="CL-SciSumm folder: relations of the tuning papers")
    parser.add_argument("--max-pairs", type=int, default=2000, help="positive pairs per set at most")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    chosen, others = sort_inputs(args.eval_pdf_dir, args.eval_tei_dir)  # before the model loads
    embedder = load_embedder(args.model)
    nlp = scholarly_nlp.blank()
    papers = read_evaluation_papers(chosen, others, nlp, args.output_dir / "images")
    eval_relations = corpus_relations(papers.docs)
    tune_docs, tune_relations, tuning = tuning_papers(args, embedder, nlp, args.output_dir / "tuning_images",
                                                      papers.docs)

    eval_pool, tune_pool = embedder_pool(embedder, papers.docs), embedder_pool(embedder, tune_docs)
    eval_sets = build_pair_sets(eval_pool, eval_relations, CITING_KINDS, args.max_pairs, args.seed + 1)
    tune_sets = build_pair_sets(tune_pool, tune_relations, CITING_KINDS, args.max_pairs, args.seed)
    pairs, rows = score_pair_sets(tune_pool, tune_sets, eval_pool, eval_sets, papers.readers, args.seed)

    predictions = args.output_dir / PREDICTIONS_FILE
    write_jsonl(predictions, rows)
    report = {
        "evaluation": "evaluate-papers",
        "model": str(args.model),
        "config": embedder_config(embedder),
        "inputs": {"eval_pdf_dir": str(args.eval_pdf_dir), "eval_tei_dir": str(args.eval_tei_dir)},
        "counts": paper_counts(papers, eval_pool, eval_relations, eval_sets),
        "thresholds": {**tuning, "papers": len(tune_docs), "figures": len(tune_pool),
                       "pairs": {name: len(tune_sets[name]) for name in PAIR_SETS}},
        "pairs": pairs,
        "predictions": str(predictions),
    }
    scholarly_nlp.write_atomic(args.metrics, json.dumps(report, indent=2))
    counts = report["counts"]
    print(f"papers: {counts['papers_read']} read ({counts['pdf_papers']} PDF, {counts['tei_papers']} TEI), "
          f"{counts['papers_failed']} failed; figures: {counts['figures']}; pairs: {counts['pairs']}")
    for failure in counts["failed"]:
        print(f"failed: {failure['file']}: {failure['reason']}")
    print(f"thresholds tuned on {tuning['tuned_on']}: {report['thresholds']['papers']} papers "
          f"({tuning['excluded_evaluation_papers']} evaluation papers left out)")
    for line in pair_lines(pairs):
        print(line)


if __name__ == "__main__":
    main()
