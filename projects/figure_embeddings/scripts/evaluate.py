"""Evaluate a trained figure embedder on the held-out papers; write the metrics JSON.

Pair classification ("Same", "Citing") with thresholds tuned on the dev split and accuracy
on the test split, against TF-IDF; figure recommendation P@3/P@5 of TF-IDF retrieval alone
and with the embedding rerank (see ``scholarly_figure_embedder.evaluation``).

``--model`` is an installed pipeline package (the project's default: the shipped
``scholarly_core``) or a pipeline folder (``training/model-best``); only its
``figure_embedder`` is loaded.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import scholarly_nlp
from scholarly_figure_embedder.evaluation import evaluate_embedder
from scholarly_figure_embedder.relations import RelationTable

PIPES = ["figure_embedder"]
CONFIG_KEYS = ("loss", "encoder", "rerank_weight", "n_candidates", "related_kinds")


def load_embedder(model: str):
    """The ``figure_embedder`` pipe of ``model`` (only that pipe is loaded); exits with the error otherwise."""
    try:
        nlp = scholarly_nlp.load(model, components=PIPES, require=["figure_embedder"])
    except scholarly_nlp.ScholarlyNLPError as exc:
        sys.exit(f"error: {exc}")
    return nlp.get_pipe("figure_embedder")


def embedder_config(embedder) -> dict:
    """The settings of the embedder that the metrics record."""
    return {k: embedder.cfg[k] for k in CONFIG_KEYS}


def pair_lines(pairs: dict) -> list[str]:
    """One human-readable line per pair set of a report's ``pairs``."""
    lines = []
    for name, result in pairs.items():
        emb, tfidf = result["embedding"]["accuracy"], result["tfidf"]["accuracy"]
        lines.append(f"{name}: accuracy embedding {_fmt(emb)} vs tfidf {_fmt(tfidf)} "
                     f"({result['n_test_pairs']} test / {result['n_dev_pairs']} dev pairs){_test(result['embedding_vs_tfidf'])}")
        hybrid = result.get("hybrid")
        if hybrid:
            lines.append(f"  hybrid (weight {hybrid.get('weight')}): accuracy {_fmt(hybrid['accuracy'])} vs tfidf"
                         f"{_test(result.get('hybrid_vs_tfidf'))}")
    return lines


def summary(report: dict) -> list[str]:
    """Human-readable lines of the headline numbers."""
    lines = pair_lines(report["pairs"])
    for relevance, result in report["recommendation"].items():
        parts = [f"{method} " + "/".join(_fmt(result[method][f"p@{k}"]) for k in (3, 5))
                 for method in ("tfidf", "tfidf_rerank", "tfidf_rerank_dev_tuned", "embedding_rerank_only", "oracle")
                 if method in result]
        lines.append(f"recommendation ({relevance}, {result['n_queries']} queries) p@3/p@5: " + "; ".join(parts))
        for k, test in (result.get("rerank_vs_tfidf") or {}).items():
            lines.append(f"  rerank vs tfidf {k}:{_test(test)}")
    return lines


def _test(result) -> str:
    """A bootstrap result as " delta +0.012 [95% CI -0.01, 0.03], p=0.21" ("" when there is none)."""
    if not result:
        return ""
    return (f" delta {result['delta']:+.3f} [95% CI {result['ci_low']:+.3f}, {result['ci_high']:+.3f}], "
            f"p={result['p_value']:.3f}")


def _fmt(value) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def main() -> None:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True,
                        help="installed pipeline package (scholarly_core) or pipeline folder (training/model-best)")
    parser.add_argument("--corpus", required=True, help="preprocess output: dev.spacy, test.spacy, relations.json")
    parser.add_argument("--metrics", required=True, help="output JSON file")
    parser.add_argument("--max-pairs", type=int, default=2000, help="positive pairs per set at most")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    corpus = Path(args.corpus)
    embedder = load_embedder(args.model)
    if (corpus / "text_vectors.npz").exists():
        embedder.use_text_cache(corpus / "text_vectors.npz")
    relations = RelationTable.load(corpus / "relations.json")
    dev = list(scholarly_nlp.load_docbin(corpus / "dev.spacy", embedder.vocab))
    test = list(scholarly_nlp.load_docbin(corpus / "test.spacy", embedder.vocab))
    report = evaluate_embedder(embedder, dev, test, relations, max_pairs=args.max_pairs, seed=args.seed)
    report["model"] = str(args.model)
    report["config"] = embedder_config(embedder)
    scholarly_nlp.write_atomic(args.metrics, json.dumps(report, indent=2))
    for line in summary(report):
        print(line)


if __name__ == "__main__":
    main()
