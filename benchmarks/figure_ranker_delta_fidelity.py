"""Central-figure ranker: how faithful is the shipped low-rank weight difference to the model trained?

A fully fine-tuned cross-encoder ships as the installed MiniLM plus, for every matrix the
training changed, a rank-``r`` truncated SVD of the change (``CrossEncoder.v1``'s
``delta_rank``; ``scholarly_nlp.ml.weight_delta``). The truncation is an approximation, so the
shipped ranker is not exactly the ranker trained. This benchmark measures it without labels:
it saves the whole trained pipeline at each rank as shipping does (the pipeline loaded with
``delta_rank = r``, then ``to_disk``), loads it back and compares its rankings with the whole
model's, per group of papers:

* ``acl``: the ACL papers the figure_ranker project holds out of training (its dev split, where
  the proxy that selects model-best reads the first 12);
* ``biomed``: biomedical TEI papers, never seen by the project;
* ``gold`` (``--gold-texts``): the 20 dev gold papers, their texts only (no label is read):
  it shows which gold papers a rank changes, but a rank is never chosen on them.

Per rank and group: ``caption_top1`` (the share of papers whose caption-score first figure is
the whole model's), ``fused_top1`` (the same for the fused ranking, with the signals the pipeline's config
names: caption score, mentions and referring text when the results were taken; caption score
and mentions since 2026-11-29), ``caption_spearman`` (median Spearman of the caption rankings of the scored
figures), ``median_max_score_error`` and the papers whose first figure changed. ``megabytes``
is the size of the saved ``figure_ranker`` folder.

A format is a rank with float16 factors (``32``) or with int8 factors (``64:8``,
``delta_bits = 8``: twice the rank in the same bytes).

The rules fixed before measuring, both over the ``acl`` and ``biomed`` papers only:

* ``chosen_rank``: the smallest float16 rank whose caption first figure agrees with the whole
  model's in at least ``--agreement`` (99%) of the papers;
* ``most_faithful_within_budget`` (with ``--max-mb``): among the formats that pass the same
  agreement and whose folder is at most ``--max-mb``, the one whose largest change of a
  figure's caption score, median over the papers, is smallest.

    python benchmarks/figure_ranker_delta_fidelity.py --model projects/figure_ranker/training/model-best \
        [--ranks 32,64,96,64:8] [--max-mb 4.99] [--biomed 80] [--gold-texts] \
        [--out benchmarks/results/figure_ranker_delta_fidelity.json]

``--model`` must hold the ranker's encoder whole (trained with
``--components.figure_ranker.model.delta_rank 0``).
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DEFAULT_DATA_ROOT, RESULTS_DIR, ensure_repo_on_path, machine_info, markdown_table, write_json  # noqa: E402
from figure_ranker_aggregation import paper_id_of, readable_papers, unseen_papers  # noqa: E402

ensure_repo_on_path()

CHOOSING_GROUPS = ("acl", "biomed")
"""The groups the rank is chosen on (never the gold papers)."""


def folder_megabytes(path: Path) -> float:
    """The size of the files under ``path`` in MB (10^6 bytes)."""
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6


def encoder_record(pipeline_folder: Path) -> dict:
    """The ``backbone.json`` of a saved pipeline's figure_ranker encoder (its layout, rank)."""
    return json.loads((pipeline_folder / "figure_ranker" / "model" / "backbone.json").read_text(encoding="utf-8"))


def scorable(ranker, doc) -> bool:
    """True when the ranker's caption score can order two or more of the paper's figures."""
    from scholarly_figure_ranker.texts import abstract_sentences, caption_text

    return bool(abstract_sentences(doc)) and sum(bool(caption_text(f)) for f in ranker.candidates(doc)) >= 2


def rankings_and_scores(nlp, docs: list) -> list[dict]:
    """Per paper, the caption-score and fused rankings of the pipeline's figure_ranker and the
    caption scores (figure id -> score). The ranker reads none of the extensions it writes, so
    the same Docs can be ranked by one pipeline after another."""
    from scholarly_figure_ranker.factory import rank_figures

    ranker = nlp.get_pipe("figure_ranker")
    result = []
    for doc in nlp.pipe(docs):
        ids = [f.id for f in ranker.candidates(doc)]
        caption = {fid: values["caption"] for fid, values in (doc._.figure_signals or {}).items()}
        result.append({"caption": rank_figures(ids, caption), "fused": rank_figures(ids, doc._.figure_scores or {}),
                       "caption_scores": caption})
    return result


def spearman(first: list[str], second: list[str]) -> float:
    """Spearman correlation of two rankings of the same ids (NaN for fewer than 2 ids)."""
    if len(first) < 2:
        return math.nan
    position = {fid: k for k, fid in enumerate(second)}
    order = numpy.arange(len(first), dtype=float)
    other = numpy.array([position[fid] for fid in first], dtype=float)
    return float(numpy.corrcoef(order, other)[0, 1])


def compare(whole: list[dict], truncated: list[dict], names: list[str]) -> dict:
    """How the truncated model's rankings of ``names``'s papers differ from the whole model's."""
    caption_changed = [n for n, w, t in zip(names, whole, truncated) if w["caption"][0] != t["caption"][0]]
    fused_changed = [n for n, w, t in zip(names, whole, truncated) if w["fused"][0] != t["fused"][0]]
    rhos, errors, non_finite = [], [], 0
    for w, t in zip(whole, truncated):
        scored = [fid for fid in w["caption"] if fid in w["caption_scores"]]
        rhos.append(spearman(scored, [fid for fid in t["caption"] if fid in t["caption_scores"]]))
        gaps = [abs(w["caption_scores"][fid] - t["caption_scores"][fid]) for fid in scored]
        non_finite += sum(not math.isfinite(gap) for gap in gaps)
        errors.append(max(gaps))
    return {"papers": len(names), "caption_top1": 1 - len(caption_changed) / len(names),
            "fused_top1": 1 - len(fused_changed) / len(names), "caption_spearman": float(numpy.nanmedian(rhos)),
            "median_max_score_error": float(numpy.median(errors)), "non_finite_scores": non_finite,
            "caption_first_changed": caption_changed, "fused_first_changed": fused_changed,
            "max_score_errors": [float(e) for e in errors]}


def pooled_agreement(groups: dict[str, dict]) -> float:
    """The share of the papers of :data:`CHOOSING_GROUPS` whose caption first figure did not change."""
    chosen = [groups[g] for g in CHOOSING_GROUPS if g in groups]
    return 1 - sum(len(m["caption_first_changed"]) for m in chosen) / sum(m["papers"] for m in chosen)


def pooled_score_error(groups: dict[str, dict]) -> float:
    """The median, over the papers of :data:`CHOOSING_GROUPS`, of the largest change of a figure's caption score."""
    return float(numpy.median([e for g in CHOOSING_GROUPS if g in groups for e in groups[g]["max_score_errors"]]))


def parse_format(text: str) -> tuple[int, int]:
    """``"32"`` -> (32, 16): float16 factors; ``"64:8"`` -> (64, 8): int8 factors. A rank below 1
    or a width other than 8 or 16 is a ValueError (before the whole model's long pass)."""
    from scholarly_nlp.ml import check_factor_bits

    rank, _, bits = text.strip().partition(":")
    if int(rank) < 1:
        raise ValueError(f"a format needs a rank >= 1, got {text!r}")
    return int(rank), check_factor_bits(int(bits or 16))


def format_key(rank: int, bits: int) -> str:
    """The report's name of a format: ``"32"`` for float16 factors, ``"64:8"`` for int8 ones."""
    return str(rank) if bits == 16 else f"{rank}:{bits}"


def parse_formats(text: str) -> list[tuple[int, int]]:
    """The comma-separated formats of ``--ranks``, each once (``"64:16"`` is ``"64"``)."""
    formats = [parse_format(item) for item in text.split(",")]
    keys = [format_key(*f) for f in formats]
    repeated = sorted({k for k in keys if keys.count(k) > 1})
    if repeated:
        raise ValueError(f"--ranks names {', '.join(repeated)} more than once")
    return formats


def most_faithful_within(report: dict, max_mb: float, agreement: float):
    """The format (its key) that passes ``agreement`` within ``max_mb`` with the smallest pooled
    caption score error, or None."""
    fitting = [(entry["choosing_score_error"], key) for key, entry in report["ranks"].items()
               if entry["megabytes"] <= max_mb and entry["choosing_caption_top1"] >= agreement
               and math.isfinite(entry["choosing_score_error"])]
    return min(fitting)[1] if fitting else None


def load_papers(nlp, groups: dict[str, list[Path]]) -> dict[str, list[tuple[str, object]]]:
    """Group -> (paper id, Doc) of the papers the ranker's caption score can rank."""
    ranker = nlp.get_pipe("figure_ranker")
    return {group: [(paper_id_of(path), doc) for path, doc in readable_papers(nlp, paths) if scorable(ranker, doc)]
            for group, paths in groups.items()}


def save_at_rank(model: Path, rank: int, folder: Path, bits: int = 16) -> Path:
    """``model`` saved with its figure ranker as a rank-``rank`` weight difference with
    ``bits``-bit factors, as shipped."""
    import scholarly_nlp

    if folder.exists():
        shutil.rmtree(folder)
    override = {"components": {"figure_ranker": {"model": {"delta_rank": rank, "delta_bits": bits}}}}
    scholarly_nlp.load(model, components=["figure_ranker"], config=override).to_disk(folder)
    record = encoder_record(folder)
    if record.get("layout") != "delta" or record.get("delta_rank") != rank or record.get("delta_bits") != bits:
        raise RuntimeError(f"{folder}: saved as {record}, not as a rank-{rank} weight difference in {bits} bits")
    return folder


def print_report(report: dict) -> None:
    """The measured table, one row per rank and group."""
    rows = []
    for rank, entry in report["ranks"].items():
        for group, measured in entry["groups"].items():
            rows.append([rank, group, measured["papers"], f"{measured['caption_top1']:.3f}", f"{measured['fused_top1']:.3f}",
                         f"{measured['caption_spearman']:.3f}", f"{measured['median_max_score_error']:.3f}",
                         f"{entry['megabytes']:.1f}"])
    print(markdown_table(["format", "papers", "n", "caption top-1 agreement", "fused top-1 agreement",
                          "caption Spearman (median)", "caption score error (median of max)", "MB"], rows))
    print(f"smallest rank with caption top-1 agreement >= {report['agreement_rule']} over the "
          f"{' + '.join(CHOOSING_GROUPS)} papers: {report['chosen_rank']}")
    if "most_faithful_within_budget" in report:
        print(f"most faithful format within {report['max_mb']} MB: {report['most_faithful_within_budget']}")


def main(argv=None) -> dict:
    """Command line (see the module docstring)."""
    import scholarly_nlp

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True, help="pipeline folder whose figure_ranker encoder is whole")
    parser.add_argument("--ranks", default="32,64,96", help="formats: RANK (float16 factors) or RANK:8 (int8)")
    parser.add_argument("--max-mb", type=float, default=None, help="choose the most faithful format within this size")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA_ROOT)
    parser.add_argument("--biomed", type=int, default=80, help="biomedical TEI papers beside the held-out ACL ones")
    parser.add_argument("--gold-texts", action="store_true", help="also compare on the dev gold papers' texts (no labels)")
    parser.add_argument("--agreement", type=float, default=0.99)
    parser.add_argument("--keep", type=Path, default=None, help="keep each rank's saved pipeline under this folder")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "figure_ranker_delta_fidelity.json")
    args = parser.parse_args(argv)
    try:
        formats = parse_formats(args.ranks)
    except ValueError as error:
        sys.exit(f"error: {error}")

    started = time.perf_counter()
    if encoder_record(args.model).get("layout") != "full":
        sys.exit(f"error: {args.model}: its figure_ranker is not stored whole ({encoder_record(args.model)}); "
                 "train with --components.figure_ranker.model.delta_rank 0")
    nlp = scholarly_nlp.load(args.model, components=["figure_ranker"], require=["figure_ranker"])
    if "caption" not in nlp.get_pipe("figure_ranker").cfg["signals"]:
        sys.exit(f"error: {args.model}: its figure_ranker does not compute the caption score")
    groups = unseen_papers(args.data, args.biomed)
    if args.gold_texts:
        from scholarly_figure_ranker.evaluation import read_gold

        groups["gold"] = [args.data / "tei" / "acl" / f"{pid}.tei.xml"
                          for pid in read_gold(args.data / "gold" / "central_figures_dev.jsonl")]
    papers = {group: found for group, found in load_papers(nlp, groups).items() if found}
    if not any(group in papers for group in CHOOSING_GROUPS):
        sys.exit(f"error: no paper under {args.data} that the ranker can rank")
    whole = {group: rankings_and_scores(nlp, [doc for _, doc in found]) for group, found in papers.items()}
    report = {"model": str(args.model), "model_config": dict(nlp.config["components"]["figure_ranker"]["model"]),
              "papers": {group: len(found) for group, found in papers.items()}, "agreement_rule": args.agreement,
              "ranks": {}}
    workdir = args.keep if args.keep else Path(tempfile.mkdtemp(prefix="delta_fidelity_"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        for rank, bits in formats:
            key = format_key(rank, bits)
            folder = save_at_rank(args.model, rank, workdir / f"rank{key.replace(':', 'x')}", bits)
            truncated = scholarly_nlp.load(folder, components=["figure_ranker"])
            report["ranks"][key] = {
                "megabytes": round(folder_megabytes(folder / "figure_ranker"), 2),
                "groups": {group: compare(whole[group], rankings_and_scores(truncated, [doc for _, doc in found]),
                                          [pid for pid, _ in found])
                           for group, found in papers.items()}}
            print(key, json.dumps({g: m["caption_first_changed"] for g, m in report["ranks"][key]["groups"].items()}),
                  flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    for entry in report["ranks"].values():
        entry["choosing_caption_top1"] = pooled_agreement(entry["groups"])
        entry["choosing_score_error"] = pooled_score_error(entry["groups"])
    passing = [int(key) for key, entry in report["ranks"].items()
               if ":" not in key and entry["choosing_caption_top1"] >= args.agreement]
    report["chosen_rank"] = min(passing) if passing else None
    if args.max_mb is not None:
        report["max_mb"] = args.max_mb
        report["most_faithful_within_budget"] = most_faithful_within(report, args.max_mb, args.agreement)
    report["seconds"] = round(time.perf_counter() - started, 1)
    report["machine"] = machine_info()
    write_json(args.out, report)
    print_report(report)
    return report


if __name__ == "__main__":
    main()
