"""The contribution_linker project's ``evaluate-detector`` interface: every paper of an
NCG-format folder scored by the shipped ``contribution_detector``, the same P/R/F1 as
``ContributionDetector.score``, a broken paper folder reported and skipped, the TF-IDF
baselines trained only on papers that are not evaluated, and a clear error for an unknown
pipeline."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
import warnings

import pytest
import srsly
from spacy.training import Example

import scholarly_nlp
from scholarly_nlp.readers.ncg import ncg_folders
from scholarly_contribution_detector.ncg_docs import read_ncg_docs

from conftest import REPO, shared

PROJECT = REPO / "projects" / "contribution_linker"
SCRIPT = PROJECT / "scripts" / "evaluate_detector.py"
PIPE = "contribution_detector"
KEYS = {"precision", "recall", "f1", "tp", "fp", "fn", "n_papers", "n_sentences", "n_positive", "threshold", "model",
        "failed", "per_paper", "baselines", "vs_baselines"}
BROKEN = "broken_task/0"


def run_script(*args, cwd):
    """Run evaluate_detector.py; the CompletedProcess (text output)."""
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=600)


def copy_paper(folder, root, paper_id):
    """Copy an NCG paper folder to ``root/<paper_id>``; returns the copy."""
    target = root / paper_id
    shutil.copytree(folder, target)
    return target


@pytest.fixture(scope="module")
def folders():
    """Three real NCG paper folders to evaluate and six others to train the baselines on."""
    every = ncg_folders(shared("nlpcontributiongraph"))
    return every[:3], every[3:9]


@pytest.fixture(scope="module")
def ncg_dirs(folders, tmp_path_factory):
    """``(eval_dir, train_dir)``: the three papers plus a folder whose sentences.txt points past the
    end of its Stanza file; the six others plus the first evaluated paper filed under another id."""
    root = tmp_path_factory.mktemp("ncg")
    evaluated, others = folders
    for folder in evaluated:
        copy_paper(folder, root / "eval", f"{folder.parent.name}/{folder.name}")
    broken = copy_paper(evaluated[0], root / "eval", BROKEN)
    (broken / "sentences.txt").write_text("999999\n")
    for folder in others:
        copy_paper(folder, root / "train", f"{folder.parent.name}/{folder.name}")
    copy_paper(evaluated[0], root / "train", "renamed_task/99")
    return root / "eval", root / "train"


@pytest.fixture(scope="module")
def result(ncg_dirs, tmp_path_factory):
    """The metrics and the predictions of one run with both baselines."""
    eval_dir, train_dir = ncg_dirs
    work = tmp_path_factory.mktemp("run")
    proc = run_script("--ncg-eval-dir", eval_dir, "--output-dir", work / "out", "--model", "scholarly_core",
                      "--baselines", "tfidf,tfidf_context", "--train-ncg-dir", train_dir, cwd=work)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    metrics = json.loads((work / "metrics" / "detector.json").read_text())
    predictions = list(srsly.read_jsonl(work / "out" / "detector_predictions.jsonl"))
    return metrics, predictions, proc


@pytest.fixture(scope="module")
def expected(ncg_dirs):
    """ContributionDetector.score of the shipped detector on the readable evaluated papers."""
    nlp = scholarly_nlp.load("scholarly_core", components=[PIPE])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        references = list(read_ncg_docs(ncg_dirs[0], nlp))
    examples = [Example(nlp(doc.copy()), doc) for doc in references]
    return nlp.get_pipe(PIPE).score(examples), examples


def test_metrics_have_the_interface_keys_and_score_every_readable_paper(result, folders):
    metrics, _, _ = result
    assert KEYS <= set(metrics)
    assert metrics["model"] == "scholarly_core" and metrics["threshold"] == 0.5
    evaluated_ids = [f"{f.parent.name}/{f.name}" for f in folders[0]]
    assert metrics["n_papers"] == 3 and sorted(metrics["per_paper"]) == sorted(evaluated_ids)
    for key in ("n_sentences", "n_positive", "tp", "fp", "fn"):
        assert metrics[key] == sum(paper[key] for paper in metrics["per_paper"].values())
    assert metrics["tp"] + metrics["fn"] == metrics["n_positive"] > 0


def test_precision_recall_f1_are_those_of_contribution_detector_score(result, expected):
    metrics, _, _ = result
    scores, examples = expected
    assert metrics["n_sentences"] == sum(len(eg.reference._.contribution_gold) for eg in examples)
    assert metrics["precision"] == pytest.approx(scores["contribution_p"])
    assert metrics["recall"] == pytest.approx(scores["contribution_r"])
    assert metrics["f1"] == pytest.approx(scores["contribution_f1"])


def test_the_broken_folder_is_reported_by_name_and_skipped(result):
    metrics, predictions, proc = result
    (failed,) = metrics["failed"]
    assert failed["paper_id"] == BROKEN and "sentences.txt" in failed["reason"] and "out of range" in failed["reason"]
    assert BROKEN not in metrics["per_paper"] and BROKEN in proc.stderr
    assert BROKEN not in {p["paper_id"] for p in predictions}


def test_predictions_have_one_line_per_gold_sentence(result):
    metrics, predictions, _ = result
    assert len(predictions) == metrics["n_sentences"]
    assert all(set(p) == {"paper_id", "sentence", "probability", "predicted", "gold"} for p in predictions)
    assert sum(p["gold"] for p in predictions) == metrics["n_positive"]
    assert sum(p["predicted"] and p["gold"] for p in predictions) == metrics["tp"]
    assert all(p["predicted"] == (p["probability"] >= metrics["threshold"]) for p in predictions)


def test_baselines_train_only_on_papers_that_are_not_evaluated(result):
    metrics, _, _ = result
    for name in ("tfidf", "tfidf_context"):
        baseline = metrics["baselines"][name]
        assert baseline["n_train_papers"] == 6  # the evaluated paper filed under another id is left out
        assert 0.0 <= baseline["precision"] <= 1.0 and 0.0 <= baseline["recall"] <= 1.0
        assert baseline["tp"] + baseline["fn"] == metrics["n_positive"]


def test_each_baseline_is_compared_with_the_detector_paper_by_paper(result):
    metrics, _, proc = result
    assert set(metrics["vs_baselines"]) == {"tfidf", "tfidf_context"}
    for name, test in metrics["vs_baselines"].items():
        baseline = metrics["baselines"][name]
        assert sorted(baseline["per_paper"]) == sorted(metrics["per_paper"])
        for key in ("tp", "fp", "fn"):
            assert baseline[key] == sum(paper[key] for paper in baseline["per_paper"].values())
        # the test's delta is the difference of the pooled F1s the metrics report
        assert test["delta"] == pytest.approx(metrics["f1"] - baseline["f1"])
        assert test["ci_low"] <= test["ci_high"] and 0.0 < test["p_value"] <= 1.0 and test["n_papers"] == 3
        assert f"contribution_detector - {name}: F1 {test['delta']:+.3f}" in proc.stdout


def test_one_paper_gets_no_bootstrap(result, monkeypatch):
    script = load_script(monkeypatch)
    metrics, _, _ = result
    (paper_id,) = list(metrics["per_paper"])[:1]
    one = {paper_id: metrics["per_paper"][paper_id]}
    baselines = {name: {**result_, "per_paper": {paper_id: result_["per_paper"][paper_id]}}
                 for name, result_ in metrics["baselines"].items()}
    assert all("skipped" in test for test in script.versus_baselines(one, baselines).values())
    assert set(script.versus_baselines(one, baselines)) == {"tfidf", "tfidf_context"}


def load_script(monkeypatch):
    """evaluate_detector.py imported in this process, registered in sys.modules for the test
    (dataclasses look their module up there)."""
    spec = importlib.util.spec_from_file_location("evaluate_detector", SCRIPT)
    script = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, script)
    spec.loader.exec_module(script)
    return script


def test_an_unknown_model_says_so_in_one_line(ncg_dirs, tmp_path, monkeypatch):
    # in this process (the script's own imports are already paid for): sys.exit(message) is exit status 1
    script = load_script(monkeypatch)
    metrics = tmp_path / "metrics" / "detector.json"
    with pytest.raises(SystemExit) as exit_info:
        script.main(["--ncg-eval-dir", str(ncg_dirs[0]), "--output-dir", str(tmp_path / "out"),
                     "--model", str(tmp_path / "missing"), "--metrics", str(metrics)])
    message = exit_info.value.code
    assert isinstance(message, str) and "\n" not in message
    assert message.startswith(f"error: no trained pipeline at {tmp_path / 'missing'}")
    assert not metrics.exists()


def test_the_weasel_command_has_the_interface_and_runs_after_evaluate():
    config = srsly.read_yaml(PROJECT / "project.yml")
    (command,) = [c for c in config["commands"] if c["name"] == "evaluate-detector"]
    (line,) = command["script"]
    for option, var in (("--ncg-eval-dir", "ncg_eval_dir"), ("--output-dir", "output_dir"), ("--model", "model")):
        assert f"{option} ${{vars.{var}}}" in line
    assert config["vars"]["detector_metrics"] == "metrics/detector.json" and "--metrics ${vars.detector_metrics}" in line
    assert config["vars"]["ncg_eval_dir"] == "${vars.ncg_dir}"
    # 'all' measures the detector on the papers preprocess held out, with the same script
    steps = config["workflows"]["all"]
    assert steps.index("evaluate-detector-dev") == steps.index("evaluate") + 1
    (dev,) = [c for c in config["commands"] if c["name"] == "evaluate-detector-dev"]
    (dev_line,) = dev["script"]
    assert dev_line.startswith("python scripts/evaluate_detector.py --ncg-eval-dir corpus/ncg_dev ")
    assert "--metrics metrics/detector_dev.json" in dev_line and "corpus/ncg_dev" in dev["deps"]
    (pre,) = [c for c in config["commands"] if c["name"] == "preprocess"]
    assert "corpus/ncg_dev" in pre["outputs"]
