"""CL-SciSumm Task 1A: stage 1 of the citance linker (BM25, BM25 + position prior).

For each of the reference papers (RPs) in ``train-manual`` (40 in the 2018+ release),
every annotated citance is linked to the RP's sentences with
:mod:`scholarly_nlp.retrieval.sentences`; the top-``k`` sentence ids are the system
answer. Task 1A precision/recall/F1 are computed with
:mod:`scholarly_nlp.metrics.clscisumm` (one (system, gold) pair per annotation file,
micro = summed counts over the files, macro = the 2018 script's definition).

This stage has no trained parameters (BM25 k1/b and the prior are fixed), so there is
no train/test split: "cross-validation" here is simply the evaluation grouped by
reference paper, which the per-paper table (``--per-paper``) and the JSON show. A later
trained stage should use the same RP grouping for its folds.

A citance is keyed by (citing article, citance number); when one annotation file holds
the same key twice, gold sids are the union of the records (the system answers it once).

    python benchmarks/clscisumm_bm25_cv.py [--data DIR] [--out FILE.json] [--per-paper]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (
    DEFAULT_DATA_ROOT,
    RESULTS_DIR,
    ensure_repo_on_path,
    machine_info,
    markdown_table,
    write_json,
)

ensure_repo_on_path()

KS = (1, 2, 3, 4)
VARIANTS = {"bm25": 1.0, "bm25+prior": 1.5}


def evaluate(data: Path, ks=KS, prior_fraction: float = 0.3) -> dict:
    """Scores per variant and k over every RP under ``data``; also per-paper counts."""
    import scholarly_nlp
    from scholarly_nlp.retrieval import SentenceIndex
    from scholarly_nlp.metrics import aggregate_counts, prf, task1a_counts
    from scholarly_nlp.readers import read_annotations, reference_doc

    nlp = scholarly_nlp.blank()
    counts = {(v, k): [] for v in VARIANTS for k in ks}
    per_paper = {}
    n_citances = 0
    rps = sorted(p for p in data.iterdir() if (p / "Reference_XML").is_dir())
    for rp_dir in rps:
        rp = rp_dir.name
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            doc = reference_doc(rp_dir / "Reference_XML" / f"{rp}.xml", nlp)
        index = SentenceIndex.for_doc(doc)
        sids = index.sids or [str(i) for i in range(len(index))]
        per_paper[rp] = {"sentences": len(index), "files": []}
        for ann in sorted((rp_dir / "annotation").glob("*.txt")):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                records = read_annotations(ann)
            gold, texts = defaultdict(set), {}
            for rec in records:
                if not rec["reference_offsets"] or not rec["citation_text"].strip():
                    continue
                key = (rec["citing_article"], rec["citance_number"])
                gold[key].update(rec["reference_offsets"])
                texts.setdefault(key, rec["citation_text"])
            n_citances += len(gold)
            file_row = {"file": ann.name, "citances": len(gold)}
            for variant, boost in VARIANTS.items():
                ranked = {key: index.search(text, max(ks), position_boost=boost, prior_fraction=prior_fraction)
                          for key, text in texts.items()}
                for k in ks:
                    system = {}
                    for key, hits in ranked.items():
                        system[key] = list(dict.fromkeys(sids[i] for i, _ in hits[:k]))
                    c = task1a_counts(system, gold)
                    counts[(variant, k)].append(c)
                    file_row[f"{variant}@{k}"] = {**c._asdict(), **prf(c)}
            per_paper[rp]["files"].append(file_row)
    results = {f"{v}@{k}": aggregate_counts(cs) for (v, k), cs in counts.items()}
    return {"papers": len(rps), "citances": n_citances, "results": results, "per_paper": per_paper,
            "builds": SentenceIndex.builds}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA_ROOT / "clscisumm" / "train-manual")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "clscisumm_bm25_cv.json")
    parser.add_argument("--prior-fraction", type=float, default=0.3)
    parser.add_argument("--per-paper", action="store_true", help="also print F1@k per reference paper")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    out = evaluate(args.data, prior_fraction=args.prior_fraction)
    out["seconds"] = round(time.perf_counter() - start, 2)
    out["machine"] = machine_info()
    out["settings"] = {"ks": list(KS), "position_boost": VARIANTS, "prior_fraction": args.prior_fraction,
                       "stopwords": "bm25s english", "stemmer": None, "bm25": "bm25s lucene k1=1.5 b=0.75"}
    print(f"## CL-SciSumm Task 1A, BM25 stage: {out['papers']} RPs, {out['citances']} citances, "
          f"{out['builds']} index builds, {out['seconds']} s\n")
    rows = []
    for variant in VARIANTS:
        for k in KS:
            r = out["results"][f"{variant}@{k}"]
            rows.append([variant, k, f"{r['precision_micro']:.4f}", f"{r['recall_micro']:.4f}", f"{r['f1_micro']:.4f}",
                         f"{r['f1_macro']:.4f}", r["tp"], r["fp"], r["fn"]])
    print(markdown_table(["system", "k", "P micro", "R micro", "F1 micro", "F1 macro", "TP", "FP", "FN"], rows))
    if args.per_paper:
        rows = []
        for rp, info in out["per_paper"].items():
            for f in info["files"]:
                rows.append([rp, f["citances"]] + [f"{f[f'{v}@{k}']['f1']:.3f}" for v in VARIANTS for k in KS])
        print()
        print(markdown_table(["RP", "citances"] + [f"{v}@{k}" for v in VARIANTS for k in KS], rows))
    write_json(args.out, out)
    print(f"\nJSON: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
