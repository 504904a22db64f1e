"""The citance_linkage Weasel project: test layout, the evaluate interface (bm25 system), bad
reference-paper folders, the official scoring of the written CSVs, and the smoke workflow."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import warnings

import pytest

from conftest import REPO, save_untrained_bi_encoder_pipe, shared
from scholarly_nlp.metrics.clscisumm import clscisumm_task1_official
from scholarly_nlp.readers.clscisumm_cells import official_reference_text_ok, official_task1_maps
from scholarly_nlp.readers.clscisumm import read_task1_csv, reference_folder_doc
from scholarly_nlp.readers.clscisumm_csv import TASK1_CSV_HEADER, read_task1_rows

PROJECT = REPO / "projects" / "citance_linkage"
SCRIPTS = PROJECT / "scripts"
PAPERS = ("J00-3003", "N01-1011")
OUTPUTS = ("corpus", "training", "metrics", "output", "smoke", "assets", "__pycache__", "project.lock")


def run(args, cwd, timeout=600):
    """Run a command; return the CompletedProcess (text output)."""
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def copy_project(tmp_path):
    """A copy of the project without its outputs."""
    project = tmp_path / "citance_linkage"
    shutil.copytree(PROJECT, project, ignore=shutil.ignore_patterns(*OUTPUTS))
    return project


@pytest.fixture(scope="module")
def layout(tmp_path_factory):
    """A 2018 test layout and gold files made from two train-manual papers."""
    source = shared("clscisumm", "train-manual")
    root = tmp_path_factory.mktemp("layout")
    proc = run([sys.executable, str(SCRIPTS / "make_test_layout.py"), "--source", str(source), "--papers",
                ",".join(PAPERS), "--out", str(root / "test"), "--gold", str(root / "gold")], cwd=root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return root


@pytest.fixture(scope="module")
def nlp_blank():
    import scholarly_nlp

    return scholarly_nlp.blank()


def test_make_test_layout(layout, nlp_blank):
    source = shared("clscisumm", "train-manual")
    for paper in PAPERS:
        folder = layout / "test" / paper
        assert (folder / "Reference_XML" / f"{paper}.xml").read_bytes() == (source / paper / "Reference_XML" / f"{paper}.xml").read_bytes()
        assert sorted(p.name for p in (folder / "Citance_XML").iterdir()) == sorted(p.name for p in (source / paper / "Citance_XML").iterdir())
        rows = read_task1_rows(folder / "annotation" / f"{paper}.csv")
        assert list(rows[0]) == list(TASK1_CSV_HEADER)
        assert all(r["Reference Offset"] == r["Reference Text"] == r["Discourse Facet"] == "" for r in rows)
        assert all(r["Citation Marker Offset"] == "0" for r in rows)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            blank = reference_folder_doc(folder, nlp_blank)
            original = reference_folder_doc(source / paper, nlp_blank)
        assert [c["id"] for c in blank._.incoming_citances] == [c["id"] for c in original._.incoming_citances]
        assert [c["text"] for c in blank._.incoming_citances] == [c["text"] for c in original._.incoming_citances]
        assert all(not c["sids"] and not c["facets"] for c in blank._.incoming_citances)
        # The gold file holds the original answers.
        gold = {str(r["citance_number"]): r for r in read_task1_csv(layout / "gold" / f"{paper}_1.csv")}
        for citance in original._.incoming_citances:
            assert set(gold[citance["id"]]["reference_offsets"]) >= set(citance["sids"])
            assert list(gold[citance["id"]]["facets"]) == list(citance["facets"])


def check_outputs(output_dir, layout, metrics):
    """The written CSVs answer every input row in the official format, and the metrics are
    the official scores of those files."""
    pairs = []
    for paper in PAPERS:
        system = read_task1_rows(output_dir / f"{paper}.csv")
        inputs = read_task1_rows(layout / "test" / paper / "annotation" / f"{paper}.csv")
        assert (output_dir / f"{paper}.csv").read_text(encoding="utf-8").splitlines()[0] == ",".join(TASK1_CSV_HEADER)
        assert [r["Citance Number"] for r in system] == [r["Citance Number"] for r in inputs]
        assert [r["Citation Text"] for r in system] == [r["Citation Text"] for r in inputs]
        for row in system:
            assert row["Reference Text"] != "NA" and official_reference_text_ok(row["Reference Text"])
            assert row["Reference Offset"].startswith("['") and row["Discourse Facet"].endswith("_Citation")
        pairs.append((system, read_task1_rows(layout / "gold" / f"{paper}_1.csv")))
    expected = clscisumm_task1_official([(official_task1_maps(s), official_task1_maps(g)) for s, g in pairs])
    for key in ("task1a_precision", "task1a_recall", "task1a_f1", "task1b_precision", "task1b_recall", "task1b_f1",
                "task1a_f1_macro", "task1b_f1_macro"):
        assert metrics[key] == pytest.approx(expected[key]), key
        assert 0.0 <= metrics[key] <= 1.0
    for key in ("task1a_f1", "task1b_f1"):
        assert 0.0 <= metrics["per_citance"][key] <= 1.0
    assert metrics["n_papers"] == len(PAPERS) and metrics["n_gold_files"] == len(PAPERS)
    assert metrics["n_citances"] == metrics["n_answered"] == sum(len(s) for s, _ in pairs)


def test_evaluate_interface_bm25(tmp_path, layout):
    project = copy_project(tmp_path)
    out = tmp_path / "system"
    proc = run([sys.executable, "-m", "weasel", "run", "evaluate", str(project), f"--vars.test_dir={layout / 'test'}",
                f"--vars.gold_dir={layout / 'gold'}", f"--vars.output_dir={out}", "--vars.system=bm25"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    metrics = json.loads((project / "metrics" / "clscisumm.json").read_text())
    assert metrics["system"] == "bm25" and metrics["settings"]["k"] == 3
    check_outputs(out, layout, metrics)
    for paper in PAPERS:
        facets = {r["Discourse Facet"] for r in read_task1_rows(out / f"{paper}.csv")}
        assert facets == {"Method_Citation"}
        offsets = [r["Reference Offset"] for r in read_task1_rows(out / f"{paper}.csv")]
        assert all(o.count("'") == 6 for o in offsets)  # top 3 sentences each
    assert metrics["failed"] == [] and metrics["gold_files_without_system"] == []


@pytest.fixture(scope="module")
def tiny_linker_pipeline(tmp_path_factory):
    """A saved pipeline with only an untrained citance_linker over a tiny random backbone."""
    return save_untrained_bi_encoder_pipe(tmp_path_factory.mktemp("citance_pipeline"), "citance_linker")


def test_evaluate_model_against_its_bm25_baseline(tmp_path, layout, tiny_linker_pipeline):
    test_dir = tmp_path / "test"
    shutil.copytree(layout / "test", test_dir)
    broken = test_dir / "X99-0001"  # neither system can read it: reported for both, compared on neither
    (broken / "Reference_XML").mkdir(parents=True)
    (broken / "Reference_XML" / "X99-0001.xml").write_bytes(b"\x00 this is not XML at all")
    (broken / "annotation").mkdir()
    shutil.copyfile(test_dir / PAPERS[0] / "annotation" / f"{PAPERS[0]}.csv", broken / "annotation" / "X99-0001.csv")
    out, metrics_path = tmp_path / "system", tmp_path / "metrics.json"
    proc = run([sys.executable, str(SCRIPTS / "evaluate.py"), "--test-dir", str(test_dir),
                "--gold-dir", str(layout / "gold"), "--output-dir", str(out), "--metrics", str(metrics_path),
                "--model", str(tiny_linker_pipeline)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    metrics = json.loads(metrics_path.read_text())
    check_outputs(out, layout, metrics)
    # the baseline is answered on the same folders, into its own folder, as evaluate-bm25 answers them
    baseline = metrics["baselines"]["bm25"]
    assert baseline["settings"]["k"] == 3 and baseline["n_gold_files"] == len(PAPERS)
    bm25_out, bm25_metrics = tmp_path / "bm25", tmp_path / "bm25.json"
    alone = run([sys.executable, str(SCRIPTS / "evaluate.py"), "--test-dir", str(layout / "test"),
                 "--gold-dir", str(layout / "gold"), "--output-dir", str(bm25_out), "--metrics", str(bm25_metrics),
                 "--system", "bm25"], cwd=tmp_path)
    assert alone.returncode == 0, alone.stderr[-2000:]
    for paper in PAPERS:
        assert read_task1_rows(out / "baselines" / "bm25" / f"{paper}.csv") == read_task1_rows(bm25_out / f"{paper}.csv")
    assert baseline["task1a_f1"] == json.loads(bm25_metrics.read_text())["task1a_f1"]
    # the paired bootstrap resamples the reference papers with their official counts pooled
    test = metrics["vs_baselines"]["bm25"]
    assert test["n_items"] == len(PAPERS)
    for task in ("task1a", "task1b"):
        assert test[f"{task}_f1"]["delta"] == pytest.approx(metrics[f"{task}_f1"] - baseline[f"{task}_f1"])
        assert test[f"{task}_f1"]["ci_low"] <= test[f"{task}_f1"]["ci_high"]
    assert "model - bm25: Task 1A F1 " in proc.stdout and "(2 reference papers)" in proc.stdout
    assert "failed: X99-0001: " in proc.stdout and "failed (bm25): X99-0001: " in proc.stdout
    assert [f["paper"] for f in baseline["failed"]] == ["X99-0001"]
    assert {entry["paper"] for entry in metrics["per_file"]} == set(PAPERS)


def test_bad_reference_paper_folders(tmp_path, layout):
    test = tmp_path / "test"
    shutil.copytree(layout / "test", test)
    broken = test / "X99-0001"
    (broken / "Reference_XML").mkdir(parents=True)
    (broken / "Reference_XML" / "X99-0001.xml").write_bytes(b"\x00 this is not XML at all")
    (broken / "annotation").mkdir()
    shutil.copyfile(test / PAPERS[0] / "annotation" / f"{PAPERS[0]}.csv", broken / "annotation" / "X99-0001.csv")
    no_xml = test / "X99-0002"
    (no_xml / "annotation").mkdir(parents=True)
    shutil.copyfile(test / PAPERS[0] / "annotation" / f"{PAPERS[0]}.csv", no_xml / "annotation" / "X99-0002.csv")
    no_annotation = test / "X99-0003"
    shutil.copytree(test / PAPERS[0] / "Reference_XML", no_annotation / "Reference_XML")
    gold = tmp_path / "gold"
    shutil.copytree(layout / "gold", gold)
    shutil.copyfile(gold / f"{PAPERS[0]}_1.csv", gold / "X99-0002_1.csv")
    out, metrics_path = tmp_path / "system", tmp_path / "metrics.json"
    proc = run([sys.executable, str(SCRIPTS / "evaluate.py"), "--test-dir", str(test), "--gold-dir", str(gold),
                "--output-dir", str(out), "--metrics", str(metrics_path), "--system", "bm25"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    metrics = json.loads(metrics_path.read_text())
    failed = {f["paper"]: f["reason"] for f in metrics["failed"]}
    assert set(failed) == {"X99-0001", "X99-0002", "X99-0003"}
    assert "X99-0001.xml" in failed["X99-0001"] and "XML" in failed["X99-0001"]
    assert "Reference_XML" in failed["X99-0002"]
    assert "annotation" in failed["X99-0003"]
    for paper in failed:
        assert f"failed: {paper}" in proc.stdout
        assert not (out / f"{paper}.csv").exists()
    assert metrics["gold_files_without_system"] == ["X99-0002_1.csv"]
    check_outputs(out, layout, metrics)


def test_evaluate_without_a_trained_pipeline(tmp_path, layout):
    project = copy_project(tmp_path)
    proc = run([sys.executable, "-m", "weasel", "run", "evaluate", str(project), f"--vars.test_dir={layout / 'test'}",
                f"--vars.gold_dir={layout / 'gold'}", f"--vars.output_dir={tmp_path / 'out'}",
                "--vars.model=training/pipeline"], cwd=tmp_path)
    assert proc.returncode != 0
    errors = [line for line in (proc.stdout + proc.stderr).splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "no trained pipeline at training/pipeline" in errors[0]
    assert "Traceback" not in proc.stderr


def test_evaluate_without_test_folder(tmp_path):
    proc = run([sys.executable, str(SCRIPTS / "evaluate.py"), "--test-dir", str(tmp_path / "missing"),
                "--gold-dir", str(tmp_path), "--output-dir", str(tmp_path / "o"), "--system", "bm25"], cwd=tmp_path)
    assert proc.returncode != 0 and "error: no test folder" in proc.stderr and "Traceback" not in proc.stderr


def _has_components() -> bool:
    try:
        import scholarly_nlp

        nlp = scholarly_nlp.blank()
        nlp.add_pipe("citance_linker")
        nlp.add_pipe("citance_facet_classifier")
    except Exception:
        return False
    return True


@pytest.mark.slow
def test_smoke_workflow(tmp_path):
    if not _has_components():
        pytest.skip("the citance_linker / citance_facet_classifier components are not installed")
    data = shared("clscisumm")
    project = copy_project(tmp_path)
    proc = run([sys.executable, "-m", "weasel", "run", "smoke", str(project), f"--vars.clscisumm_dir={data}",
                f"--vars.benchmarks={REPO / 'benchmarks'}"], cwd=tmp_path, timeout=1200)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    metrics = json.loads((project / "smoke" / "metrics" / "clscisumm.json").read_text())
    for key in ("task1a_precision", "task1a_recall", "task1a_f1", "task1b_f1"):
        assert 0.0 <= metrics[key] <= 1.0
    assert metrics["system"] == "model" and metrics["n_papers"] == 2 and metrics["n_gold_files"] == 2
    assert metrics["settings"]["pipes"] == ["citance_linker", "citance_facet_classifier"]
    split = json.loads((project / "smoke" / "corpus" / "split.json").read_text())
    for paper in split["dev_papers"]:
        rows = read_task1_rows(project / "smoke" / "output" / f"{paper}.csv")
        assert rows and all(official_reference_text_ok(r["Reference Text"]) for r in rows)

    # smoke-cv: one fold trained (LoRA weights move, tested in test_citance_linker_cv), one
    # zero-shot, paired over the same citances of the same held-out papers
    report = json.loads((project / "smoke" / "metrics" / "cv_linker_report.json").read_text())
    trained = json.loads((project / "smoke" / "metrics" / "cv_linker.json").read_text())
    assert trained["meta"][0]["steps"] == 2 and trained["meta"][0]["overrides"]["components.citance_linker.model.lora_rank"] == 16
    assert report["n_citances"] > 0 and report["versus"]["fixed"]["n_citances"] == report["n_citances"]
    assert 0.0 <= report["versus"]["fixed"]["mean_f1"] <= 1.0
