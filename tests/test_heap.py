"""fix_malloc_mmap_threshold: glibc takes the setting; elsewhere it is a no-op that says so."""

from __future__ import annotations

import platform

import pytest

from scholarly_nlp.ml import fix_malloc_mmap_threshold
from scholarly_nlp.ml import heap


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc only")
def test_glibc_takes_the_threshold():
    assert fix_malloc_mmap_threshold() is True
    assert fix_malloc_mmap_threshold(256 * 1024) is True


def test_a_libc_without_mallopt_is_reported_not_raised(monkeypatch):
    class NoMallopt:
        def __init__(self, name):
            pass

    monkeypatch.setattr(heap.ctypes, "CDLL", NoMallopt)
    assert fix_malloc_mmap_threshold() is False


def test_no_c_library_is_reported_not_raised(monkeypatch):
    def missing(name):
        raise OSError(f"{name}: cannot open shared object file")

    monkeypatch.setattr(heap.ctypes, "CDLL", missing)
    assert fix_malloc_mmap_threshold() is False


def test_a_negative_threshold_is_refused():
    with pytest.raises(ValueError, match="threshold"):
        fix_malloc_mmap_threshold(-1)
