"""Shared fixtures: the real data in ../shared/data and a blank scholarly_nlp pipeline.

The data root is ``$SCHOLARLY_NLP_DATA`` when set, else ``../shared/data`` beside the
repository. Every test that needs it goes through :func:`shared` / :func:`need` (or the
``needs_data`` marker), which skip the test at run time when the data is missing, or fail
it when ``SCHOLARLY_NLP_REQUIRE_DATA=1`` (CI): nothing is checked at import or collection.
"""

from __future__ import annotations

import importlib
import os
import sys
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Iterator, NoReturn

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA_ENV = "SCHOLARLY_NLP_DATA"
REQUIRE_DATA_ENV = "SCHOLARLY_NLP_REQUIRE_DATA"


def data_root() -> Path:
    """``$SCHOLARLY_NLP_DATA`` when set (relative to the working directory), else ../shared/data."""
    value = os.environ.get(DATA_ENV, "").strip()
    return Path(value).expanduser().resolve() if value else REPO.parent / "shared" / "data"


SHARED_DATA = data_root()


@contextmanager
def benchmark_modules(*names: str) -> Iterator[tuple[ModuleType, ...]]:
    """The modules ``benchmarks/<name>.py``, imported with ``benchmarks/`` on ``sys.path`` (as the
    scripts run), so their imports of each other resolve. The folder is taken off again when the
    block ends, but a benchmark that puts it on the path itself (most do) leaves its own entry."""
    folder = str(REPO / "benchmarks")
    sys.path.insert(0, folder)
    try:
        yield tuple(importlib.import_module(name) for name in names)
    finally:
        sys.path.remove(folder)


def data_required() -> bool:
    """True when a missing data file must fail the test (``SCHOLARLY_NLP_REQUIRE_DATA=1``)."""
    return os.environ.get(REQUIRE_DATA_ENV, "").strip().lower() in ("1", "true", "yes")


def missing_data(reason: str) -> NoReturn:
    """The one place a test gives up for missing data: skip, or fail under REQUIRE_DATA."""
    if data_required():
        pytest.fail(f"{reason} ({REQUIRE_DATA_ENV}=1: missing data fails)", pytrace=False)
    pytest.skip(f"{reason} (set {DATA_ENV} to the data folder)")


def data_path(*parts: str) -> Path:
    """A path under the data root, not checked (for module constants; check with :func:`need`)."""
    return SHARED_DATA.joinpath(*parts)


def need(path: Path) -> Path:
    """``path`` when it exists; otherwise skip the test (fail under REQUIRE_DATA)."""
    if not Path(path).exists():
        missing_data(f"shared data not available: {path}")
    return Path(path)


def shared(*parts: str) -> Path:
    """A path under the data root (../shared/data); skips the test when the data is not there."""
    return need(data_path(*parts))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """``@pytest.mark.needs_data("tei/with-pdf", ...)``: checked before any fixture is set up."""
    for marker in item.iter_markers("needs_data"):
        for relative in marker.args or ("",):
            shared(relative)


@pytest.fixture(scope="session")
def nlp():
    """A blank English pipeline with the plugins loaded."""
    import scholarly_nlp

    return scholarly_nlp.blank()


@pytest.fixture(scope="session")
def acl_tei_dir() -> Path:
    return shared("tei", "acl")


@pytest.fixture(scope="session")
def biomed_tei_dir() -> Path:
    return shared("tei", "biomed")


@pytest.fixture(scope="session")
def with_pdf_dir() -> Path:
    return shared("tei", "with-pdf")


@pytest.fixture(scope="session")
def backbone(tmp_path_factory) -> str:
    """A tiny random-weight BERT with the default backbone's vocabulary (seconds on a CPU)."""
    from scholarly_nlp.ml.backbones import make_tiny_backbone

    return str(make_tiny_backbone(tmp_path_factory.mktemp("backbones") / "tiny"))


def save_untrained_bi_encoder_pipe(root: Path, pipe: str) -> Path:
    """Save, under ``root/pipeline``, a pipeline holding only ``pipe`` (a linker) over a tiny
    random bi-encoder, initialised without examples (it links but is untrained); its path."""
    import torch

    import scholarly_nlp
    from scholarly_nlp.ml.backbones import make_tiny_backbone

    backbone = make_tiny_backbone(root / "tiny")
    torch.manual_seed(0)
    nlp = scholarly_nlp.blank()
    nlp.add_pipe(pipe, config={"model": {"@architectures": "scholarly_nlp.BiEncoderScorer.v1",
                                         "name": str(backbone), "max_length": 64}})
    with pytest.warns(UserWarning):  # no training examples: the pipe says so and still links
        nlp.initialize()
    nlp.to_disk(root / "pipeline")
    return root / "pipeline"


@pytest.fixture(scope="module")
def pipeline_dir(tmp_path_factory):
    """A saved pipeline of tiny untrained components (figure ranker, contribution detector and
    linker) for ``analyze`` runs: real pipes, seconds to build."""
    import warnings

    from spacy.training import Example

    import scholarly_nlp
    from scholarly_nlp.ml.backbones import make_tiny_backbone

    for package in ("scholarly_figure_ranker", "scholarly_contribution_detector", "scholarly_contribution_linker"):
        pytest.importorskip(package)
    backbone = str(make_tiny_backbone(tmp_path_factory.mktemp("backbones") / "tiny"))
    nlp = scholarly_nlp.blank()
    nlp.add_pipe("figure_ranker", config={"model": {"@architectures": "scholarly_nlp.CrossEncoder.v1",
                                                    "name": backbone, "max_length": 64}})
    nlp.add_pipe("contribution_detector")
    nlp.add_pipe("contribution_linker", config={"model": {"@architectures": "scholarly_nlp.BiEncoderScorer.v1",
                                                          "name": backbone, "max_length": 64}})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nlp.initialize(lambda: [Example(nlp.make_doc("x"), nlp.make_doc("x"))])
    path = tmp_path_factory.mktemp("pipelines") / "tiny"
    nlp.to_disk(path)
    return path
