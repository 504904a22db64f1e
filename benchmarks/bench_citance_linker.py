"""Latency of the citance linker on CPU: one citance against a ~250-sentence reference paper.

Reports, for the train-manual paper whose sentence count is closest to 250:

* building the BM25 index of the paper (once per Doc; later citances reuse the cache);
* the BM25 + position-prior stage per citance (the index already built);
* the rerank stage per citance (``candidates`` pairs) for the zero-shot bi-encoder scorer
  (the default pipeline) and the cross-encoder, next to a bare ``transformers`` forward pass
  over the same texts, so the framework overhead shows as a ratio;
* the whole ``link`` call per citance.

    python benchmarks/bench_citance_linker.py [--citances 20] [--candidates 30] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DEFAULT_DATA_ROOT, RESULTS_DIR, ensure_repo_on_path, machine_info, write_json

ensure_repo_on_path()


def closest_paper(root: Path, nlp, target: int = 250):
    """The train-manual reference Doc whose sentence count is closest to ``target``."""
    from scholarly_nlp.readers import reference_folder_doc

    best = None
    for rp in sorted(root.iterdir()):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            doc = reference_folder_doc(rp, nlp)
        n = len(list(doc.sents))
        if best is None or abs(n - target) < abs(best[0] - target):
            best = (n, doc)
    return best[1]


def timed(function, repeats: int) -> float:
    """Median seconds of ``repeats`` calls."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bare_forward(path: str, pairs, cross: bool) -> float:
    """Seconds of one bare transformers forward pass over the pairs (cross) or their unique texts (bi)."""
    import torch
    from transformers import AutoModel, AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path)
    model = (AutoModelForSequenceClassification.from_pretrained(path, num_labels=1) if cross
             else AutoModel.from_pretrained(path)).eval()
    if cross:
        inputs = tokenizer([a for a, _ in pairs], [b for _, b in pairs], truncation="longest_first",
                           max_length=256, padding=True, return_tensors="pt")
    else:
        texts = list(dict.fromkeys([t for pair in pairs for t in pair]))
        inputs = tokenizer(texts, truncation=True, max_length=256, padding=True, return_tensors="pt")
    with torch.no_grad():
        return timed(lambda: model(**inputs), 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA_ROOT / "clscisumm" / "train-manual")
    parser.add_argument("--citances", type=int, default=20)
    parser.add_argument("--candidates", type=int, default=30)
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "citance_linker_latency.json")
    args = parser.parse_args()

    import torch
    import scholarly_nlp
    from scholarly_citance_linker.candidates import bm25_candidates, encoder_query, sentence_texts
    from scholarly_nlp.retrieval import SentenceIndex
    from scholarly_nlp.ml import resolve_backbone
    from scholarly_nlp.ml import score_pairs

    torch.set_num_threads(max(1, torch.get_num_threads()))
    nlp = scholarly_nlp.blank()
    doc = closest_paper(args.data, nlp)
    citances = [c["text"] for c in doc._.incoming_citances][: args.citances]
    SentenceIndex.clear_cache()
    index_seconds = timed(lambda: SentenceIndex(doc), 3)
    SentenceIndex.for_doc(doc)
    bm25 = statistics.median(timed(lambda c=c: bm25_candidates(doc, c, args.candidates, position_boost=1.5,
                                                                prior_fraction=0.3), 5) for c in citances)
    texts = sentence_texts(doc)
    result = {"machine": machine_info(), "paper": doc._.paper_id, "sentences": len(texts),
              "citances_timed": len(citances), "candidates": args.candidates,
              "index_build_ms": index_seconds * 1000, "bm25_stage_ms_per_citance": bm25 * 1000, "rerank": {}}
    backbone = resolve_backbone("all-MiniLM-L6-v2")
    for arch, cross in (("scholarly_nlp.BiEncoderScorer.v1", False), ("scholarly_nlp.CrossEncoder.v1", True)):
        pipe_nlp = scholarly_nlp.blank()
        pipe = pipe_nlp.add_pipe("citance_linker", config={"model": {"@architectures": arch, "name": backbone},
                                                          "candidates": args.candidates, "batch_size": 256})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pipe_nlp.initialize()
        per_citance, bare, whole = [], [], []
        for text in citances[:5]:
            pairs = [(encoder_query(text), texts[i]) for i, _ in bm25_candidates(
                doc, text, args.candidates, position_boost=1.5, prior_fraction=0.3)]
            with torch.no_grad():
                per_citance.append(timed(lambda: score_pairs(pipe.model, pairs, 256), 3))
            bare.append(bare_forward(backbone, pairs, cross))
            whole.append(timed(lambda: pipe.link(text, doc), 3))
        rerank = statistics.median(per_citance)
        result["rerank"][arch] = {"rerank_ms_per_citance": rerank * 1000,
                                  "bare_forward_ms": statistics.median(bare) * 1000,
                                  "ratio_to_bare_forward": rerank / statistics.median(bare),
                                  "link_ms_per_citance": statistics.median(whole) * 1000}
    write_json(args.out, result)
    print(f"{doc._.paper_id}: {len(texts)} sentences; index {result['index_build_ms']:.1f} ms (once per paper); "
          f"BM25 stage {result['bm25_stage_ms_per_citance']:.2f} ms/citance")
    for arch, r in result["rerank"].items():
        print(f"{arch}: rerank {r['rerank_ms_per_citance']:.0f} ms/citance ({args.candidates} candidates), "
              f"bare forward {r['bare_forward_ms']:.0f} ms, ratio {r['ratio_to_bare_forward']:.2f}; "
              f"link() {r['link_ms_per_citance']:.0f} ms")


if __name__ == "__main__":
    main()
