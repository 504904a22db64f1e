"""Encoding throughput of the aspect pipeline on CPU, as a ratio to a bare forward pass.

The pipeline is ``transformer`` (title+abstract windows) -> ``sentence_role_tagger`` ->
``aspect_embedder``, run with ``nlp.pipe`` over CSFCube abstracts from their text (Doc
building included). The baseline is a bare ``transformers`` forward pass (no gradients)
over exactly the same windows' texts, in batches of the same size, tokenisation included.
Their ratio (papers/s of the pipeline over papers/s of the bare pass) is the framework's
overhead; the target is >= 0.8.

    python benchmarks/bench_aspect_pipeline.py [--model DIR] [--papers 200] [--batch-size 32]

Without ``--model`` a zero-shot pipeline is assembled (packaged MiniLM, untrained role
tagger and aspect head: the same computation as a trained one).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DEFAULT_DATA_ROOT, RESULTS_DIR, ensure_repo_on_path, machine_info, write_json

ensure_repo_on_path()


def zero_shot_pipeline(records):
    """transformer + sentence_role_tagger + aspect_embedder over the packaged MiniLM."""
    import torch
    from spacy.training import Example

    import scholarly_nlp
    from scholarly_nlp.ml import shared_transformer_config
    from scholarly_nlp.readers import abstract_doc

    torch.manual_seed(0)
    nlp = scholarly_nlp.blank()
    nlp.add_pipe("transformer", config=shared_transformer_config())
    nlp.add_pipe("sentence_role_tagger", config={"overwrite": True})
    nlp.add_pipe("aspect_embedder")
    docs = [abstract_doc(r, nlp) for r in records[:8]]
    nlp.initialize(lambda: [Example(d.copy(), d) for d in docs])
    return nlp


def bare_forward(texts, backbone: str, batch_size: int) -> float:
    """Seconds for tokenising and encoding ``texts`` with AutoModel, no gradients."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(backbone)
    model = AutoModel.from_pretrained(backbone).eval()
    start = time.perf_counter()
    with torch.no_grad():
        for i in range(0, len(texts), batch_size):
            batch = tokenizer(texts[i : i + batch_size], padding=True, truncation=True, return_tensors="pt")
            model(**batch)
    return time.perf_counter() - start


def main(argv=None) -> int:
    """Measure both, print and write ``benchmarks/results/aspect_pipeline.json``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", type=Path, default=None)
    parser.add_argument("--papers", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_ROOT / "csfcube")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "aspect_pipeline.json")
    args = parser.parse_args(argv)
    import spacy
    import torch

    from scholarly_nlp.ml import title_abstract_windows
    from scholarly_nlp.ml import resolve_backbone
    from scholarly_nlp.readers import abstract_doc, read_csfcube_abstracts

    torch.set_num_threads(torch.get_num_threads())
    records = read_csfcube_abstracts(args.data_dir / "abstracts-csfcube-preds.jsonl")[: args.papers]
    nlp = spacy.load(args.model) if args.model else zero_shot_pipeline(records)
    # Warm-up (first-call allocations), then the measured pass from records to aspect vectors.
    list(nlp.pipe((abstract_doc(r, nlp) for r in records[:16]), batch_size=args.batch_size))
    start = time.perf_counter()
    docs = list(nlp.pipe((abstract_doc(r, nlp) for r in records), batch_size=args.batch_size))
    pipeline_s = time.perf_counter() - start
    assert all(d._.aspect_vectors is not None for d in docs)
    texts = [w.text for d in docs for w in title_abstract_windows(d)]
    backbone = resolve_backbone(None)
    bare_forward(texts[:16], backbone, args.batch_size)
    bare_s = bare_forward(texts, backbone, args.batch_size)
    result = {
        "machine": machine_info(),
        "papers": len(records),
        "windows": len(texts),
        "batch_size": args.batch_size,
        "pipeline_seconds": round(pipeline_s, 2),
        "pipeline_papers_per_s": round(len(records) / pipeline_s, 2),
        "bare_forward_seconds": round(bare_s, 2),
        "bare_papers_per_s": round(len(records) / bare_s, 2),
        "ratio": round(bare_s / pipeline_s, 3),
        "model": str(args.model) if args.model else "zero-shot (packaged MiniLM)",
    }
    write_json(args.out, result)
    print(f"pipeline {result['pipeline_papers_per_s']} papers/s, bare forward {result['bare_papers_per_s']} "
          f"papers/s: ratio {result['ratio']} (target >= 0.8); {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
