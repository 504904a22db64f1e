"""Shared fixtures: the real data in ../shared/data and a blank scholarly_nlp pipeline."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


def shared(*parts: str) -> Path:
    """A path under ../shared/data; skips the test when the data is not there."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data not available: {path}")
    return path


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
