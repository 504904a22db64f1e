"""fix_malloc_mmap_threshold: glibc takes the setting; elsewhere it is a no-op that says so."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from scholarly_nlp.ml import fix_malloc_mmap_threshold
from scholarly_nlp.ml import heap


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc only")
def test_glibc_takes_the_threshold():
    # In a child process: the setting is process-wide and would change every later test's heap.
    code = ("from scholarly_nlp.ml import fix_malloc_mmap_threshold as f; "
            "print(f(), f(256 * 1024), f(0))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["True", "True", "True"]


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


@pytest.mark.parametrize("threshold", [-1, heap.MAX_THRESHOLD + 1, 2**32])
def test_a_threshold_glibc_cannot_take_is_refused_before_the_call(threshold, monkeypatch):
    def never(name):
        raise AssertionError("mallopt must not be reached")

    monkeypatch.setattr(heap.ctypes, "CDLL", never)
    with pytest.raises(ValueError, match="threshold"):
        fix_malloc_mmap_threshold(threshold)
