"""Latency of ranking one paper's figures, and cross-encoder pairs/second vs a bare forward pass.

The issue's setting: one paper with 6 figures and 8 abstract sentences (48 pairs), CPU.
The baseline is the same Hugging Face model called directly on the same 48 pairs
(tokenizer + ``model(**inputs)`` under ``torch.no_grad``), so the ratio shows what the
spaCy/thinc component adds on top of the model itself.

    python benchmarks/bench_figure_ranker.py [--model training/model-best] [--repeats 10]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import torch

import scholarly_nlp
from scholarly_nlp import Block, FigureInfo, Paper, PaperSection, paper_to_doc

ABSTRACT = [
    "We study how a paper's own figure mentions can supervise a central-figure ranker.",
    "A cross-encoder scores each pair of an abstract sentence and a figure caption.",
    "Training pairs come from sentences that mention a figure and that figure's caption.",
    "Negatives are the other captions of the same paper.",
    "We train on 300 ACL papers without any manual label.",
    "On 20 annotated papers the ranker is compared with pick-first and TF-IDF baselines.",
    "The learned scores complement the strong prior of figure order.",
    "Code and data are released with the scholarly_nlp framework.",
]
CAPTIONS = [
    "Figure 1: Overview of the ranking pipeline from parsed paper to central figure.",
    "Figure 2: Distribution of figure mentions per paper in the training corpus.",
    "Figure 3: Accuracy at one as a function of the number of training papers.",
    "Figure 4: Example of a paper whose central figure is its architecture diagram.",
    "Figure 5: Learning curves of the margin ranking loss on train and held-out papers.",
    "Figure 6: Confusion between figure types (plots, diagrams, examples, tables).",
]


def benchmark_paper() -> Paper:
    """A paper with 8 abstract sentences and 6 captioned figures."""
    blocks = [Block(kind="title", text="Central figures from figure mentions"),
              Block(kind="abstract", text=" ".join(ABSTRACT))]
    blocks += [Block(kind="caption", text=c, figure_id=f"fig_{i}") for i, c in enumerate(CAPTIONS)]
    figures = [FigureInfo(id=f"fig_{i}", label=str(i + 1)) for i in range(len(CAPTIONS))]
    return Paper(paper_id="bench", blocks=blocks, sections=[PaperSection(title="")], figures=figures)


def time_it(fn, repeats: int) -> list[float]:
    """Wall-clock seconds of ``repeats`` calls after one warm-up call."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    """Run both measurements and print JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="a trained pipeline; default: untrained MiniLM cross-encoder")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch default)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    if args.model:
        import spacy

        nlp = spacy.load(args.model)
    else:
        nlp = scholarly_nlp.blank()
        nlp.add_pipe("figure_ranker")
        nlp.initialize()
    ranker = nlp.get_pipe("figure_ranker")
    doc = paper_to_doc(benchmark_paper(), nlp)
    assert len(list(doc.spans["abstract"][0].sents)) == 8, "benchmark abstract must have 8 sentences"
    component = time_it(lambda: ranker(doc.copy()), args.repeats)

    model = ranker.model.shims[0]._model
    tokenizer = ranker.model.attrs["tokenizer"]
    pairs = [(s, c) for c in CAPTIONS for s in ABSTRACT]
    max_length = ranker.model.attrs["max_length"]

    def bare() -> None:
        with torch.no_grad():
            inputs = tokenizer([a for a, _ in pairs], [b for _, b in pairs], truncation="longest_first",
                               max_length=max_length, padding=True, return_tensors="pt")
            model.eval()
            model(**inputs)

    bare_times = time_it(bare, args.repeats)
    result = {
        "pairs": len(pairs),
        "component_latency_s_median": statistics.median(component),
        "bare_forward_s_median": statistics.median(bare_times),
        "component_pairs_per_s": len(pairs) / statistics.median(component),
        "bare_pairs_per_s": len(pairs) / statistics.median(bare_times),
        "throughput_ratio_component_to_bare": statistics.median(bare_times) / statistics.median(component),
        "torch_threads": torch.get_num_threads(),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
