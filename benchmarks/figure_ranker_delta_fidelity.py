"""Central-figure ranker: how faithful is the shipped low-rank weight difference to the model trained?

A fully fine-tuned cross-encoder ships as the installed MiniLM plus, for every matrix the
training changed, a rank-``r`` truncated SVD of the change (``CrossEncoder.v1``'s
``delta_rank``; ``scholarly_nlp.ml.weight_delta``). The truncation is an approximation, so the
shipped ranker is not exactly the ranker trained. This benchmark chooses ``r`` without labels:
it saves the whole trained pipeline at each rank exactly as ``to_disk`` ships it, loads it back
and compares its rankings with the whole model's on papers that were neither trained on nor
gold (the ACL papers the figure_ranker project holds out of training, and biomedical TEI):

* ``caption_top1``: the share of papers whose caption-score first figure is the whole model's;
* ``fused_top1``: the same for the fused ranking (caption score, mentions, referring text);
* ``caption_spearman``: the median Spearman correlation of the caption rankings;
* ``megabytes``: the size of the saved ``figure_ranker`` folder.

The rule fixed before measuring: ship the smallest rank whose caption first figure agrees with
the whole model's in at least ``--agreement`` (99%) of the papers.

    python benchmarks/figure_ranker_delta_fidelity.py --model projects/figure_ranker/training/model-best \
        [--ranks 32,64,96] [--biomed 80] [--out benchmarks/results/figure_ranker_delta_fidelity.json]

``--model`` must hold the ranker's encoder whole (trained with
``--components.figure_ranker.model.delta_rank 0``).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DEFAULT_DATA_ROOT, RESULTS_DIR, ensure_repo_on_path, machine_info, markdown_table, write_json  # noqa: E402
from figure_ranker_aggregation import held_out_by_project, readable_papers  # noqa: E402

ensure_repo_on_path()


def folder_megabytes(path: Path) -> float:
    """The size of the files under ``path`` in MB (10^6 bytes)."""
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6


def rankings(nlp, docs: list) -> list[dict[str, list[str]]]:
    """Per paper, the caption-score and the fused rankings of the pipeline's figure_ranker."""
    from scholarly_figure_ranker.factory import rank_figures

    ranker = nlp.get_pipe("figure_ranker")
    result = []
    for doc in nlp.pipe(docs):
        ids = [f.id for f in ranker.candidates(doc)]
        signals = doc._.figure_signals or {}
        caption = {fid: values["caption"] for fid, values in signals.items() if "caption" in values}
        result.append({"caption": rank_figures(ids, caption), "fused": rank_figures(ids, doc._.figure_scores or {}),
                       "caption_scores": [caption.get(fid, float("nan")) for fid in ids]})
    return result


def spearman(first: list[str], second: list[str]) -> float:
    """Spearman correlation of two rankings of the same ids (1.0 for fewer than 3 ids)."""
    if len(first) < 3:
        return 1.0
    position = {fid: k for k, fid in enumerate(second)}
    a = numpy.arange(len(first), dtype=float)
    b = numpy.array([position[fid] for fid in first], dtype=float)
    return float(numpy.corrcoef(a, b)[0, 1])


def unseen_papers(data: Path, biomed: int) -> list[Path]:
    """Papers neither in the ranker's training set nor in the dev gold."""
    from scholarly_figure_ranker.evaluation import read_gold

    gold = read_gold(data / "gold" / "central_figures_dev.jsonl")
    acl = [p for p in sorted((data / "tei" / "acl").glob("*.tei.xml"))
           if p.name[:-len(".tei.xml")] not in gold and held_out_by_project(p.name[:-len(".tei.xml")])]
    return acl + sorted((data / "tei" / "biomed").glob("*.tei.xml"))[:biomed]


def main(argv=None) -> dict:
    """Command line (see the module docstring)."""
    import scholarly_nlp

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True, help="pipeline folder whose figure_ranker encoder is whole")
    parser.add_argument("--ranks", default="32,64,96")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA_ROOT)
    parser.add_argument("--biomed", type=int, default=80, help="biomedical TEI papers added to the unseen ACL ones")
    parser.add_argument("--agreement", type=float, default=0.99)
    parser.add_argument("--keep", type=Path, default=None, help="keep each rank's saved pipeline under this folder")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "figure_ranker_delta_fidelity.json")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    nlp = scholarly_nlp.load(args.model, components=["figure_ranker"], require=["figure_ranker"])
    if nlp.get_pipe("figure_ranker").model.attrs.get("delta_rank"):
        sys.exit(f"error: {args.model}: its figure_ranker is already a weight difference; train with delta_rank 0")
    docs = [doc for _, doc in readable_papers(unseen_papers(args.data, args.biomed), nlp)
            if len(nlp.get_pipe("figure_ranker").candidates(doc)) >= 2]
    whole = rankings(nlp, docs)
    report = {"model": str(args.model), "papers": len(docs), "agreement_rule": args.agreement, "ranks": {}}
    rows = []
    workdir = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="delta_fidelity_"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        for rank in [int(r) for r in args.ranks.split(",")]:
            folder = workdir / f"rank{rank}"
            nlp.get_pipe("figure_ranker").model.attrs["delta_rank"] = rank
            nlp.to_disk(folder)
            truncated = rankings(scholarly_nlp.load(folder, components=["figure_ranker"]), docs)
            caption_top1 = numpy.mean([w["caption"][0] == t["caption"][0] for w, t in zip(whole, truncated)])
            fused_top1 = numpy.mean([w["fused"][0] == t["fused"][0] for w, t in zip(whole, truncated)])
            rho = numpy.median([spearman(w["caption"], t["caption"]) for w, t in zip(whole, truncated)])
            score_error = numpy.nanmedian([numpy.nanmax(numpy.abs(numpy.subtract(w["caption_scores"], t["caption_scores"])))
                                           for w, t in zip(whole, truncated)])
            megabytes = folder_megabytes(folder / "figure_ranker")
            report["ranks"][str(rank)] = {"caption_top1": float(caption_top1), "fused_top1": float(fused_top1),
                                          "caption_spearman": float(rho), "median_max_score_error": float(score_error),
                                          "megabytes": round(megabytes, 2)}
            rows.append([rank, f"{caption_top1:.3f}", f"{fused_top1:.3f}", f"{rho:.3f}", f"{score_error:.3f}", f"{megabytes:.1f}"])
            print(rows[-1], flush=True)
    finally:
        nlp.get_pipe("figure_ranker").model.attrs["delta_rank"] = 0
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    passing = [int(r) for r, entry in report["ranks"].items() if entry["caption_top1"] >= args.agreement]
    report["chosen_rank"] = min(passing) if passing else None
    report["seconds"] = round(time.perf_counter() - started, 1)
    report["machine"] = machine_info()
    write_json(args.out, report)
    print(f"{len(docs)} unseen papers with 2 or more candidate figures")
    print(markdown_table(["rank", "caption top-1 agreement", "fused top-1 agreement", "caption Spearman (median)",
                          "caption score error (median of max)", "MB"], rows))
    print(f"smallest rank with caption top-1 agreement >= {args.agreement}: {report['chosen_rank']}")
    return report


if __name__ == "__main__":
    main()
