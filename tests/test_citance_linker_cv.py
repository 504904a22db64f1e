"""``benchmarks/citance_linker_cv.py`` trains as ``spacy train`` does: the schedule advances.

Its first version built the optimiser with a warm-up schedule and never stepped it, so the
learning rate stayed at the warm-up's first value, 0, and every cross-validated "fine-tuned"
scorer was the untrained one. Trained here on four real CL-SciSumm reference papers with a tiny
backbone and the project's two training configs: the LoRA weights leave zero and the scores move.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from conftest import benchmark_modules, shared

import scholarly_nlp
from scholarly_nlp.readers import reference_folder_doc

REPO = Path(__file__).resolve().parents[1]
CONFIGS = REPO / "projects" / "citance_linkage" / "configs"


@pytest.fixture(scope="module")
def cv():
    with benchmark_modules("citance_linker_cv") as (module,):
        yield module


@pytest.fixture(scope="module")
def reference_docs(nlp):
    importlib.import_module("scholarly_citance_linker")
    root = shared("clscisumm", "train-manual")
    docs = [reference_folder_doc(folder, nlp) for folder in sorted(p for p in root.iterdir() if p.is_dir())[:4]]
    return [d for d in docs if d._.incoming_citances]


def _lora_b_total(nlp) -> float:
    module = nlp.get_pipe("citance_linker").model.shims[0]._model
    return sum(float(p.detach().abs().sum()) for name, p in module.named_parameters() if "lora_B" in name)


@pytest.mark.parametrize("config_name, extra", [
    ("citance_linker_biencoder.cfg", {}),
    ("citance_linker.cfg", {"components.citance_linker.model.lora_rank": 4}),
])
def test_cv_training_moves_the_weights(cv, reference_docs, backbone, config_name, extra):
    assert len(reference_docs) >= 3
    overrides = {"paths.backbone": backbone, "training.max_steps": 6, "training.batcher.size": 2,
                 "training.optimizer.learn_rate.warmup_steps": 2, **extra}
    config = cv.load_training_config(str(CONFIGS / config_name), overrides)
    untrained, _ = cv.train_linker(scholarly_nlp.blank, reference_docs, {**config, "training": {
        **config["training"], "max_steps": 0}}, seed=0, log=lambda line: None)
    trained, _ = cv.train_linker(scholarly_nlp.blank, reference_docs, config, seed=0, log=lambda line: None)
    assert _lora_b_total(untrained) == 0.0  # LoRA starts as the identity
    assert _lora_b_total(trained) > 0.0
    before = cv.score_citances(untrained, reference_docs[:1])
    after = cv.score_citances(trained, reference_docs[:1])
    assert [r["cand"] for r in before] == [r["cand"] for r in after]  # same BM25 candidates
    assert max(abs(a - b) for r0, r1 in zip(before, after) for a, b in zip(r0["ce"], r1["ce"])) > 1e-4
