"""The contribution_linker Weasel project: the evaluate interface (predictions.jsonl and
metrics), bad input (a missing TEI paper, no trained pipeline) and the smoke workflow."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

import scholarly_nlp

from conftest import REPO, save_untrained_bi_encoder_pipe, shared

PROJECT = REPO / "projects" / "contribution_linker"
EVALUATE = PROJECT / "scripts" / "evaluate.py"
OUTPUTS = ("corpus", "training", "metrics", "output", "smoke", "assets", "__pycache__", "project.lock")


@pytest.fixture()
def gold_path():
    return shared("gold", "contributions_dev.jsonl")


@pytest.fixture()
def tei_dir():
    return shared("tei", "acl")


def run(args, cwd, timeout=900):
    """Run a command; return the CompletedProcess (text output)."""
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def tiny_pipeline(tmp_path_factory):
    """A saved pipeline with only the contribution_linker over a tiny random backbone."""
    return save_untrained_bi_encoder_pipe(tmp_path_factory.mktemp("contrib"), "contribution_linker")


def test_evaluate_writes_predictions_and_metrics_and_reports_a_missing_paper(gold_path, tei_dir, tmp_path, tiny_pipeline):
    lines = gold_path.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    same_paper = [line for line in lines if json.loads(line)["paper_id"] == first["paper_id"]][:3]
    missing = json.dumps({"paper_id": "X00-0000", "sentence": "We propose nothing.", "paragraph_start": "Nothing"})
    gold = tmp_path / "gold.jsonl"
    gold.write_text("\n".join(same_paper + [missing]) + "\n", encoding="utf-8")
    out, metrics_path = tmp_path / "out", tmp_path / "metrics.json"
    proc = run([sys.executable, str(EVALUATE), "--tei-dir", str(tei_dir), "--gold", str(gold), "--output-dir", str(out),
                "--model", str(tiny_pipeline), "--metrics", str(metrics_path), "--baselines", "bm25,first_paragraph"],
               cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "failed: X00-0000" in proc.stderr
    predictions = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert [p["paper_id"] for p in predictions] == [first["paper_id"]] * len(same_paper) + ["X00-0000"]
    assert all(len(p["ranked_paragraphs"]) == 5 and all(len(t) > 80 for t in p["ranked_paragraphs"])
               for p in predictions[:-1])
    assert predictions[-1]["ranked_paragraphs"] == []
    metrics = json.loads(metrics_path.read_text())
    assert metrics["n_queries"] == len(same_paper) + 1 and metrics["n_unmatched_sentence"] == 1
    assert [f["paper_id"] for f in metrics["failed"]] == ["X00-0000"]
    for name in ("bm25", "first_paragraph", "random_expected"):
        assert 0.0 <= metrics["baselines"][name]["hit_at_1"] <= metrics["baselines"][name]["hit_at_5"] <= 1.0
    assert 0.0 <= metrics["hit_at_1"] <= metrics["hit_at_5"] <= 1.0 and 0.0 <= metrics["mrr"] <= 1.0
    # the paired bootstrap against each baseline resamples the per-query values the means come from
    assert set(metrics["vs_baselines"]) == set(metrics["baselines"])
    for name, baseline in {"pipeline": metrics, **metrics["baselines"]}.items():
        for metric in ("hit_at_1", "hit_at_5", "mrr"):
            values = baseline["per_query"][metric]
            assert len(values) == metrics["n_queries"] and sum(values) / len(values) == pytest.approx(baseline[metric])
        assert baseline["per_query"]["mrr"][-1] == 0.0  # the missing paper's query is a miss
    for name, test in metrics["vs_baselines"].items():
        assert test["n_items"] == 2  # papers resampled whole: the real one and the missing one
        for metric in ("hit_at_1", "hit_at_5", "mrr"):
            delta = metrics[metric] - metrics["baselines"][name][metric]
            assert test[metric]["delta"] == pytest.approx(delta)
            assert test[metric]["ci_low"] <= delta <= test[metric]["ci_high"] and 0.0 < test[metric]["p_value"] <= 1.0
        assert f"pipeline - {name}: hit@1 " in proc.stdout


def test_evaluate_without_a_trained_pipeline_says_so_in_one_line(gold_path, tei_dir, tmp_path):
    proc = run([sys.executable, str(EVALUATE), "--tei-dir", str(tei_dir), "--gold", str(gold_path), "--output-dir",
                str(tmp_path / "out"), "--model", str(tmp_path / "missing")], cwd=tmp_path)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    (line,) = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert line.startswith(f"error: no trained pipeline at {tmp_path / 'missing'}: it is neither")
    assert "the shipped scholarly_core (pip install -r requirements.txt" in line and "weasel run all" in line


@pytest.mark.slow
def test_smoke_workflow(gold_path, tei_dir, tmp_path):
    project = tmp_path / "contribution_linker"
    shutil.copytree(PROJECT, project, ignore=shutil.ignore_patterns(*OUTPUTS))
    proc = run([sys.executable, "-m", "weasel", "run", "smoke", str(project),
                f"--vars.ncg_dir={shared('nlpcontributiongraph')}", f"--vars.tei_dir={tei_dir}", f"--vars.gold={gold_path}",
                f"--vars.pdf_dir={shared('pdfs', 'acl')}"],
               cwd=tmp_path, timeout=1500)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    summary = json.loads((project / "smoke" / "corpus" / "summary.json").read_text())
    assert summary["ncg_train_papers"] > 0 and summary["ncg_dev_papers"] > 0 and summary["silver_pairs"] > 0
    gold_ids = {json.loads(line)["paper_id"] for line in gold_path.read_text().splitlines() if line.strip()}
    assert set(summary["held_out_gold_papers"]) == gold_ids  # evaluation papers never mined for silver pairs
    assert summary["pdf_papers"] == 4  # smoke mines the first 4 ACL PDFs too
    for name in ("contributions.json", "contributions_zero_shot.json"):
        metrics = json.loads((project / "smoke" / "metrics" / name).read_text())
        assert metrics["n_queries"] == 68 and metrics["n_unmatched_sentence"] == 0 and metrics["failed"] == []
        assert metrics["pipes"][-1] == "contribution_linker"
        assert metrics["baselines"]["bm25"]["hit_at_5"] > metrics["baselines"]["random_expected"]["hit_at_5"]
    predictions = (project / "smoke" / "output" / "predictions.jsonl").read_text().splitlines()
    assert len(predictions) == 68
    # fit-detector-stage2 learnt from out-of-fold scores of every training paper, and the
    # assembled pipeline carries the fitted trees
    fit = json.loads((project / "smoke" / "training" / "detector" / "stacked" / "stage2_fit.json").read_text())
    with_gold = [d for d in scholarly_nlp.load_docbin(project / "smoke" / "corpus" / "detector_train.spacy")
                 if d._.contribution_gold]
    assert fit["papers"] == len(with_gold) > 0 and fit["folds"] == 3 and fit["abstract"] is True
    assert fit["sentences"] == sum(len(d._.contribution_gold) for d in with_gold) and 0 < fit["positives"] < fit["sentences"]
    assert (project / "smoke" / "training" / "pipeline" / "contribution_detector" / "stage2").is_file()


def test_preprocess_copies_the_held_out_ncg_papers_for_evaluate_detector(tmp_path):
    """The dev papers of the detector's split are copied as an NCG folder whose papers read as
    the same paper ids, so evaluate-detector-dev scores exactly the papers training left out."""
    import importlib.util

    from scholarly_nlp.readers import iter_ncg_papers

    # loaded under a name of its own: four projects have a scripts/preprocess.py
    spec = importlib.util.spec_from_file_location("contribution_project_preprocess", PROJECT / "scripts" / "preprocess.py")
    preprocess = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(preprocess)
    detector_corpora = preprocess.detector_corpora
    out = tmp_path / "corpus"
    out.mkdir()
    (out / "ncg_dev" / "stale_task" / "1").mkdir(parents=True)  # an earlier run's paper is not kept
    summary = detector_corpora(shared("nlpcontributiongraph"), out, scholarly_nlp.blank(), 0.25, 0, 8)
    copied = list(iter_ncg_papers(out / "ncg_dev"))
    assert sorted(p.paper_id for p in copied) == summary["ncg_dev_ids"] and summary["ncg_dev_papers"] == 2
    dev_docs = list(scholarly_nlp.load_docbin(out / "detector_dev.spacy"))
    assert len(dev_docs) == len(copied)
    originals = {p.paper_id: p for p in iter_ncg_papers(shared("nlpcontributiongraph"))}
    for paper in copied:  # the same sentences and labels as the shared copy
        assert paper.sentences == originals[paper.paper_id].sentences
        assert paper.contribution_lines == originals[paper.paper_id].contribution_lines


def test_preprocess_mines_pdfs_for_training_only_silver_pairs(gold_path, tei_dir, tmp_path):
    """PDF papers with section pointers add silver pairs to the training split only; a PDF
    that cannot be read is reported with its reason and the rest goes on."""
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    for name in ("P01-1027.pdf", "P10-2066.pdf", "C02-1164.pdf"):  # one pointer each; the last needs OCR
        (pdfs / name).symlink_to(shared("pdfs", "acl", name))
    sys.path.insert(0, str(PROJECT / "scripts"))
    try:
        from preprocess import silver_corpora
    finally:
        sys.path.remove(str(PROJECT / "scripts"))
    nlp = scholarly_nlp.blank()
    without = silver_corpora(tei_dir, gold_path, tmp_path / "tei_only", nlp, 0.2, 0, 12)
    counts = silver_corpora(tei_dir, gold_path, tmp_path / "with_pdfs", nlp, 0.2, 0, 12, pdfs)
    assert counts["pdf_papers"] == 3 and counts["pdf_silver_papers"] == 2 and counts["pdf_silver_pairs"] == 2
    assert len(counts["pdf_failed"]) == 1 and counts["pdf_failed"][0].startswith("C02-1164.pdf: ")
    assert "OCR" in counts["pdf_failed"][0]
    trained = list(scholarly_nlp.load_docbin(tmp_path / "with_pdfs" / "silver_train.spacy"))
    dev_with = list(scholarly_nlp.load_docbin(tmp_path / "with_pdfs" / "silver_dev.spacy"))
    dev_without = list(scholarly_nlp.load_docbin(tmp_path / "tei_only" / "silver_dev.spacy"))
    assert [d.text for d in dev_with] == [d.text for d in dev_without]  # selection pairs unchanged
    pointers = [pair["sentence"] for d in trained[-2:] for pair in d._.contribution_pairs]
    assert len(pointers) == 2 and all("Section" in sentence for sentence in pointers)
    assert len(trained) == without["silver_papers"] - len(dev_without) + 2
