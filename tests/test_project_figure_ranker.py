"""The figure_ranker Weasel project's smoke workflow runs end to end (tiny backbone, few papers)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from conftest import REPO, shared

PROJECT = REPO / "projects" / "figure_ranker"


@pytest.mark.slow
def test_smoke_workflow(tmp_path):
    data = shared()
    project = tmp_path / "figure_ranker"
    shutil.copytree(PROJECT, project, ignore=shutil.ignore_patterns("corpus", "training", "metrics", "output", "smoke", "assets"))
    overrides = [f"--vars.train_inputs={data / 'tei' / 'acl'}", f"--vars.tei_dir={data / 'tei' / 'acl'}",
                 f"--vars.gold={data / 'gold' / 'central_figures_dev.jsonl'}", "--vars.smoke_papers=6"]
    proc = subprocess.run([sys.executable, "-m", "weasel", "run", "smoke", str(project), *overrides],
                          capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    metrics = json.loads((project / "smoke" / "metrics" / "figures.json").read_text())
    for key in ("map", "mrr", "acc_at_1", "acc_at_3"):
        assert 0.0 <= metrics[key] <= 1.0
    assert metrics["baselines"]["pick_first"]["acc_at_1"] is not None
    assert metrics["vs_baselines"]["pick_first"]["n_items"] == 20
    assert metrics["vs_baselines"]["pick_first"]["acc_at_1"]["delta"] == pytest.approx(
        metrics["acc_at_1"] - metrics["baselines"]["pick_first"]["acc_at_1"])
    assert "figure_ranker - pick_first: Acc@1 " in proc.stdout
    predictions = [json.loads(line) for line in (project / "smoke" / "output" / "predictions.jsonl").read_text().splitlines()]
    assert len(predictions) == 20 and all(p["ranking"] for p in predictions)
