"""``weasel run evaluate-papers`` of the figure_embeddings project on a few real papers with a tiny pipeline.

The evaluation folders hold real ACL PDFs and GROBID TEI files that cite each other, plus a
bad file of each kind; the thresholds come from a small dev split (a preprocessed corpus, or
the dev-split papers of the training folders).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import warnings

import pytest

import scholarly_nlp
from scholarly_figure_embedder.relations import corpus_relations

from conftest import REPO, shared
from test_figure_embedder import make_nlp

PROJECT = REPO / "projects" / "figure_embeddings"
# C08-1098 cites D12-1133 and D13-1032; D15-1075 is cited by D16-1062 and D18-1407 (none in the dev split).
EVAL_PDFS = ["C08-1098", "D12-1133", "D13-1032"]
CITING = {("C08-1098", "D12-1133"), ("C08-1098", "D13-1032"), ("D15-1075", "D16-1062"), ("D15-1075", "D18-1407")}
EVAL_TEIS = ["D15-1075", "D16-1062", "D18-1407"]
# Dev-split papers: D15-1085 cites P05-1045 and P14-1062, which cites P15-1030. D16-1062 is not in dev.
DEV_PDFS = ["P05-1045"]
DEV_TEIS = ["D15-1085", "P14-1062", "P15-1030"]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    """A saved pipeline holding only a small, untrained figure_embedder over a tiny random encoder."""
    from scholarly_nlp.ml.backbones import make_tiny_backbone

    nlp = make_nlp(make_tiny_backbone(tmp_path_factory.mktemp("backbones") / "tiny"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nlp.initialize()
    path = tmp_path_factory.mktemp("pipelines") / "figure_embedder"
    nlp.to_disk(path)
    return path


def copy_papers(folder, pdfs=(), teis=()):
    """``folder`` holding copies of the shared ACL PDFs and TEI files named by paper id."""
    folder.mkdir(parents=True, exist_ok=True)
    for paper_id in pdfs:
        shutil.copy(shared("pdfs", "acl", f"{paper_id}.pdf"), folder)
    for paper_id in teis:
        shutil.copy(shared("tei", "acl", f"{paper_id}.tei.xml"), folder)
    return folder


def project_copy(tmp_path):
    """The project's files in ``tmp_path`` (no corpus, metrics or output of the working tree)."""
    project = tmp_path / "figure_embeddings"
    shutil.copytree(PROJECT, project, ignore=shutil.ignore_patterns("corpus", "training", "metrics", "output", "smoke",
                                                                    "assets"))
    return project


def run_evaluate_papers(project, model, pdf_dir, tei_dir, output_dir, *overrides):
    """Run the command through weasel, exactly as the held-out measurement does; returns the metrics."""
    proc = subprocess.run([sys.executable, "-m", "weasel", "run", "evaluate-papers", str(project),
                           "--vars.eval_pdf_dir", str(pdf_dir), "--vars.eval_tei_dir", str(tei_dir),
                           "--vars.output_dir", str(output_dir), "--vars.model", str(model), *overrides],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads((project / "metrics" / "figure_embeddings.json").read_text())


def test_evaluate_papers_scores_model_and_tfidf_on_the_same_pairs(tmp_path, tiny_model):
    pdf_dir = copy_papers(tmp_path / "eval" / "pdfs", pdfs=EVAL_PDFS)
    tei_dir = copy_papers(tmp_path / "eval" / "tei", teis=EVAL_TEIS)
    (pdf_dir / "notes.pdf").write_text("not a PDF at all")
    (tei_dir / "broken.tei.xml").write_text(shared("tei", "acl", "D14-1003.tei.xml").read_text()[:3000])
    project = project_copy(tmp_path)
    nlp = scholarly_nlp.blank()
    dev = [scholarly_nlp.read(path, nlp) for path in copy_papers(tmp_path / "dev", DEV_PDFS, DEV_TEIS).iterdir()]
    scholarly_nlp.save_docbin(dev, project / "corpus" / "dev.spacy")
    corpus_relations(dev).save(project / "corpus" / "relations.json")

    output_dir = tmp_path / "out"
    report = run_evaluate_papers(project, tiny_model, pdf_dir, tei_dir, output_dir)

    counts = report["counts"]
    assert (counts["papers_read"], counts["pdf_papers"], counts["tei_papers"]) == (6, 3, 3)
    assert sorted(counts["papers"]) == sorted(EVAL_PDFS + EVAL_TEIS)
    assert {f["file"] for f in counts["failed"]} == {"notes.pdf", "broken.tei.xml"} and counts["papers_failed"] == 2
    assert all(f["reason"] for f in counts["failed"])
    assert counts["figures"] > 0 and counts["figures_with_image"] > 0  # the PDFs' figure crops
    assert counts["relations"]["cites"] >= 4
    assert report["thresholds"]["tuned_on"].endswith("dev.spacy") and report["thresholds"]["papers"] == 4
    rows = [json.loads(line) for line in (output_dir / "pair_predictions.jsonl").read_text().splitlines()]
    for name in ("same", "citing"):
        result = report["pairs"][name]
        assert counts["pairs"][name] == result["n_test_pairs"] > 0
        assert result["n_positive"] == result["n_negative"] == result["n_test_pairs"] // 2
        assert result["embedding"]["n_pairs"] == result["tfidf"]["n_pairs"] == result["hybrid"]["n_pairs"] \
            == result["n_test_pairs"]
        for method in ("embedding", "tfidf", "hybrid"):
            assert 0.0 <= result[method]["accuracy"] <= 1.0 and result[method]["threshold"] is not None
            assert 0.0 <= result[method]["auc"] <= 1.0
        assert result["embedding_vs_tfidf"] is not None and result["hybrid_vs_tfidf"] is not None
        assert result["hybrid"]["weight"] is not None
        pair_rows = [row for row in rows if row["pair_set"] == name]
        assert len(pair_rows) == result["n_test_pairs"]
        for method in ("embedding", "hybrid"):
            correct = sum(row[f"{method}_related"] == bool(row["label"]) for row in pair_rows)
            assert correct / len(pair_rows) == pytest.approx(result[method]["accuracy"])
    citing = {tuple(sorted((row["paper_a"], row["paper_b"]))) for row in rows if row["pair_set"] == "citing"
              and row["label"]}
    assert citing <= CITING and any(pair[0].startswith("C08") for pair in citing)  # PDF pairs among them


def test_thresholds_from_the_training_folders_leave_out_the_evaluation_papers(tmp_path, tiny_model):
    pdf_dir = copy_papers(tmp_path / "eval" / "pdfs", pdfs=["D12-1133", *DEV_PDFS])
    tei_dir = tmp_path / "eval" / "tei"
    tei_dir.mkdir()
    train_pdfs = copy_papers(tmp_path / "train" / "pdfs", pdfs=DEV_PDFS)
    train_teis = copy_papers(tmp_path / "train" / "tei", teis=[*DEV_TEIS, "D16-1062"])
    project = project_copy(tmp_path)

    report = run_evaluate_papers(project, tiny_model, pdf_dir, tei_dir, tmp_path / "out",
                                 "--vars.pdf_dir", str(train_pdfs), "--vars.tei_dir", str(train_teis))

    assert (report["counts"]["papers_read"], report["counts"]["tei_papers"]) == (2, 0)  # an empty TEI folder
    thresholds = report["thresholds"]
    assert thresholds["tuned_on"].startswith("dev split of")
    assert thresholds["papers"] == 3 and thresholds["excluded_evaluation_papers"] == 1
    assert report["pairs"]["same"]["n_test_pairs"] > 0 and report["pairs"]["same"]["tfidf"]["accuracy"] is not None
    citing = report["pairs"]["citing"]  # the two evaluation papers do not cite each other
    assert citing["n_test_pairs"] == 0 and citing["embedding"]["accuracy"] is None and citing["tfidf"]["auc"] is None


def test_a_missing_evaluation_folder_is_an_error_naming_it(tmp_path):
    missing = tmp_path / "no_such_folder"
    proc = subprocess.run([sys.executable, str(PROJECT / "scripts" / "evaluate_papers.py"), "--model", "unused",
                           "--eval-pdf-dir", str(missing), "--eval-tei-dir", str(tmp_path),
                           "--output-dir", str(tmp_path / "out"), "--metrics", str(tmp_path / "m.json")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    assert "eval_pdf_dir" in proc.stderr and str(missing) in proc.stderr
