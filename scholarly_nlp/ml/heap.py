"""Keep a long training loop's resident memory from creeping up on glibc.

glibc serves an allocation from ``mmap`` when it is above a threshold, and raises that
threshold (up to 32 MB) each time such a block is freed. A loop that allocates and frees
arrays of a few MB with shapes that vary from batch to batch (padded token vectors, one
batch after another) then gets them from the heap instead, and the heap fragments: the
aspect head's training grew by about 0.37 GB per epoch (7 to 16.5 GB over 3 seeds of 8
epochs, and killed for memory at 24 GB with a third more pairs) without holding any more
objects. Fixing the threshold turns the dynamic adjustment off, so blocks above it always
go back to the system when freed.
"""

from __future__ import annotations

import ctypes

#: glibc's ``mallopt`` parameter number for the mmap threshold (``M_MMAP_THRESHOLD``).
M_MMAP_THRESHOLD = -3
#: glibc's default threshold before it adjusts it: 128 KiB.
DEFAULT_THRESHOLD = 128 * 1024
#: The largest threshold glibc accepts on 64-bit systems (``DEFAULT_MMAP_THRESHOLD_MAX``).
MAX_THRESHOLD = 32 * 1024 * 1024


def fix_malloc_mmap_threshold(threshold: int = DEFAULT_THRESHOLD) -> bool:
    """Fix glibc's mmap threshold at ``threshold`` bytes for this process.

    Call it once, before the loop, in a process that trains for many epochs: every block
    above the threshold is then mapped and unmapped on its own (a system call each, cheap next
    to a forward pass). Returns True when glibc took the setting, False where there is no
    glibc ``mallopt`` (macOS, Windows, musl) or glibc refused the value: then nothing changed.
    """
    if not 0 <= threshold <= MAX_THRESHOLD:
        raise ValueError(f"threshold must be a number of bytes from 0 to {MAX_THRESHOLD}, got {threshold!r}")
    try:
        libc = ctypes.CDLL(None)  # the running process's symbols, the C library's among them
        mallopt = libc.mallopt
    except (OSError, AttributeError, TypeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, int(threshold)))
