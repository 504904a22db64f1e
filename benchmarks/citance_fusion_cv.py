"""CL-SciSumm Task 1A: a learned fusion of the citance linker's candidate features, grouped CV.

For every citance with gold sids of the 40 ``train-manual`` reference papers, the BM25 +
position prior stage proposes 30 sentences (as the shipped ``citance_linker``); each candidate
gets features: the zero-shot bi-encoder cosine (all-MiniLM-L6-v2, as the shipped scorer) and
its gap to the list's best, the BM25 score scaled by the list's maximum and its log, both
ranks, the relative position in the paper and the prior's region flag, the log length, a
title flag and the section kind (abstract, introduction, conclusion, related work, results).

Three ways to choose the answer are compared over 5 folds of papers, for 3 seeds of the fold
assignment (and of the model): the fixed fusion of the shipped pipeline (cosine + BM25 / max,
k = 3), the same fusion with (k, BM25 weight) chosen on the other folds (nested), and a linear
(or one-hidden-layer) listwise model trained on the other folds' citances, whose k and relative
cut-off are chosen on those folds too. Micro P/R/F1 keyed per citance, as
``benchmarks/citance_linker_cv.py``.

    python benchmarks/citance_fusion_cv.py [--data DIR] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
import warnings
from pathlib import Path

import numpy

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DEFAULT_DATA_ROOT, RESULTS_DIR, ensure_repo_on_path, machine_info, write_json  # noqa: E402
from citance_linker_cv import fold_of  # noqa: E402

ensure_repo_on_path()

CANDIDATES = 30
KS = (1, 2, 3, 4, 5)
WEIGHTS = (0.0, 0.5, 1.0, 2.0, 4.0)
CUTOFFS = (None, 0.1, 0.2, 0.3, 0.5)  # keep a candidate whose probability is at least this share of the best's
SECTION_KINDS = (("abstract",), ("introduction",), ("conclusion", "discussion", "summary"),
                 ("related", "previous", "background"), ("result", "experiment", "evaluation"))


def sentence_sections(doc, sentences) -> list[str]:
    """The lower-cased title of the section holding each sentence ("abstract" inside the abstract)."""
    sections, abstract = list(doc.spans["sections"]), list(doc.spans["abstract"])
    out = []
    for sentence in sentences:
        title = next((s.label_ for s in reversed(sections) if s.start <= sentence.start < s.end), "")
        if any(a.start <= sentence.start < a.end for a in abstract):
            title = "abstract"
        out.append((title or "").lower())
    return out


def candidate_rows(data: Path, encoder_name: str = "") -> list[dict]:
    """Per citance with gold sids: its candidates with the raw values the features are made of;
    the cosines are those of ``encoder_name`` (a backbone name or folder), the shipped scorer's
    encoder by default."""
    import scholarly_nlp
    from scholarly_citance_linker.candidates import bm25_candidates, encoder_query, sentence_sids, sentence_texts
    from scholarly_nlp.ml import SentenceEncoder
    from scholarly_nlp.readers import reference_folder_doc
    from scholarly_nlp.retrieval import SentenceIndex

    nlp = scholarly_nlp.blank()
    encoder = SentenceEncoder(encoder_name, batch_size=64) if encoder_name else SentenceEncoder(batch_size=64)
    rows = []
    for folder in sorted(p for p in data.iterdir() if p.is_dir()):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            doc = reference_folder_doc(folder, nlp)
        citances = [c for c in doc._.incoming_citances if c.get("sids")]
        if not citances:
            continue
        sentences = SentenceIndex.for_doc(doc).sentences
        texts, sids, sections = sentence_texts(doc), sentence_sids(doc), sentence_sections(doc, sentences)
        vectors = encoder.encode(texts)
        queries = encoder.encode([encoder_query(c["text"]) for c in citances])
        for citance, query in zip(citances, queries):
            cands = bm25_candidates(doc, citance["text"], CANDIDATES, position_boost=1.5, prior_fraction=0.3)
            rows.append({"rp": folder.name, "gold": citance["sids"], "n": len(texts),
                         "cand": [sids[i] for i, _ in cands], "idx": [i for i, _ in cands],
                         "bm25": [b for _, b in cands], "cos": [float(vectors[i] @ query) for i, _ in cands],
                         "len": [len(sentences[i]) for i, _ in cands], "sec": [sections[i] for i, _ in cands]})
    return rows


def features(row: dict) -> numpy.ndarray:
    """The candidate feature matrix of one citance (see the module docstring)."""
    cos, bm25, idx = numpy.array(row["cos"]), numpy.array(row["bm25"]), numpy.array(row["idx"])
    n = len(cos)
    cos_rank = numpy.argsort(numpy.argsort(-cos))
    columns = [cos, cos - cos.max(), bm25 / max(bm25.max(), 1e-9), numpy.log1p(bm25), 1.0 / (numpy.arange(n) + 1),
               1.0 / (cos_rank + 1), idx / row["n"], (idx < 0.3 * row["n"]).astype(float),
               numpy.log([max(length, 1) for length in row["len"]]), (idx == 0).astype(float)]
    columns += [numpy.array([float(any(k in s for k in keys)) for s in row["sec"]]) for keys in SECTION_KINDS]
    return numpy.stack(columns, 1).astype("float32")


def counts(rows, scores, k: int, cutoff=None) -> tuple[int, int, int]:
    """(tp, fp, fn) of the best ``k`` per citance; with ``cutoff``, a candidate after the first is
    kept only when its log-probability is within log(cutoff) of the best's."""
    tp = fp = fn = 0
    for row, s in zip(rows, scores):
        order = numpy.argsort(-numpy.asarray(s), kind="stable")
        chosen = [order[0]] + [j for j in order[1:k] if cutoff is None or s[j] >= s[order[0]] + math.log(cutoff)]
        answer, gold = {row["cand"][j] for j in chosen}, set(row["gold"])
        tp, fp, fn = tp + len(answer & gold), fp + len(answer - gold), fn + len(gold - answer)
    return tp, fp, fn


def f1(c) -> float:
    """F1 of (tp, fp, fn)."""
    from scholarly_nlp.metrics import prf

    return prf(c)["f1"]


def fixed_fusion(row: dict, weight: float = 1.0) -> numpy.ndarray:
    """The shipped pipeline's score: cosine + weight x BM25 scaled by its maximum."""
    bm25 = numpy.array(row["bm25"])
    return numpy.array(row["cos"]) + weight * bm25 / max(bm25.max(), 1e-9)


def train_listwise(X, Y, train: list[int], seed: int, hidden: int, epochs: int = 60):
    """A linear (hidden = 0) or one-hidden-layer scorer trained with the listwise softmax loss on
    the ``train`` citances; returns a function citance index -> candidate log-probabilities."""
    import torch

    torch.manual_seed(seed)
    stacked = numpy.concatenate([X[i] for i in train])
    mean, std = stacked.mean(0), stacked.std(0) + 1e-6
    width = stacked.shape[1]
    net = (torch.nn.Linear(width, 1) if hidden == 0 else
           torch.nn.Sequential(torch.nn.Linear(width, hidden), torch.nn.Tanh(), torch.nn.Linear(hidden, 1)))
    optimizer = torch.optim.Adam(net.parameters(), lr=0.01, weight_decay=1e-3)
    data = [(torch.tensor((X[i] - mean) / std), torch.tensor(Y[i])) for i in train if Y[i].sum() > 0]
    rng = random.Random(seed)
    for _ in range(epochs):
        rng.shuffle(data)
        for b in range(0, len(data), 32):
            loss = sum(-(torch.log_softmax(net(x).squeeze(-1), 0) * y / y.sum()).sum() for x, y in data[b : b + 32])
            optimizer.zero_grad()
            (loss / 32).backward()
            optimizer.step()

    def score(i: int) -> numpy.ndarray:
        with torch.no_grad():
            return torch.log_softmax(net(torch.tensor((X[i] - mean) / std)).squeeze(-1), 0).numpy()

    return score


def cross_validate(rows: list[dict], seeds=(0, 1, 2), folds: int = 5) -> dict:
    """Per system, the pooled micro F1 of each seed's grouped CV, their mean and spread."""
    X = [features(r) for r in rows]
    Y = [numpy.array([c in set(r["gold"]) for c in r["cand"]], dtype="float32") for r in rows]
    papers = sorted({r["rp"] for r in rows})
    results: dict[str, list[float]] = {}
    for seed in seeds:
        fold = fold_of(papers, folds, seed)
        pooled: dict[str, numpy.ndarray] = {}
        for f in range(folds):
            train = [i for i, r in enumerate(rows) if fold[r["rp"]] != f]
            test = [i for i, r in enumerate(rows) if fold[r["rp"]] == f]
            tr_rows, te_rows = [rows[i] for i in train], [rows[i] for i in test]
            systems = {"fixed_fusion_k3": ([fixed_fusion(rows[i]) for i in test], 3, None)}
            k, w = max(((k, w) for k in KS for w in WEIGHTS),
                       key=lambda g: f1(counts(tr_rows, [fixed_fusion(rows[i], g[1]) for i in train], g[0])))
            systems["nested_fusion"] = ([fixed_fusion(rows[i], w) for i in test], k, None)
            for hidden in (0, 16):
                score = train_listwise(X, Y, train, seed, hidden)
                train_scores = [score(i) for i in train]
                k, cutoff = max(((k, c) for k in KS for c in CUTOFFS),
                                key=lambda g: f1(counts(tr_rows, train_scores, g[0], g[1])))
                systems[f"learned_hidden{hidden}"] = ([score(i) for i in test], k, cutoff)
            for name, (scores, k, cutoff) in systems.items():
                pooled[name] = pooled.get(name, numpy.zeros(3)) + numpy.array(counts(te_rows, scores, k, cutoff))
        for name, c in pooled.items():
            results.setdefault(name, []).append(f1(tuple(int(v) for v in c)))
    return {name: {"f1_per_seed": values, "mean": float(numpy.mean(values)), "std": float(numpy.std(values))}
            for name, values in results.items()}


def main() -> int:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA_ROOT / "clscisumm" / "train-manual")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "citance_fusion_cv.json")
    parser.add_argument("--encoder", default="", help="the bi-encoder (backbone name or folder); default the shipped one")
    parser.add_argument("--rows-out", type=Path, help="also write the candidate rows (for paired comparisons)")
    args = parser.parse_args()
    start = time.time()
    rows = candidate_rows(args.data, args.encoder)
    if args.rows_out:
        write_json(args.rows_out, rows)
    summary = {"n_citances": len(rows), "n_papers": len({r["rp"] for r in rows}), "encoder": args.encoder or "default",
               "systems": cross_validate(rows),
               "seconds": round(time.time() - start), "machine": machine_info()}
    write_json(args.out, summary)
    for name, result in summary["systems"].items():
        print(f"{name}: F1 {result['mean']:.4f} +- {result['std']:.4f} (seeds {result['f1_per_seed']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
