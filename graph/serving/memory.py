"""Giving freed memory back to the operating system after large, short-lived work.

CPython and Rust free their objects into glibc's heap, which keeps the pages; a long-running
server that once built a graph or serialised a large answer would keep that peak for good.
``malloc_trim`` returns the free pages (a no-op where the C library is not glibc).
"""

import ctypes
import ctypes.util
import gc
from functools import cache


@cache
def _malloc_trim() -> "ctypes._NamedFuncPointer | None":
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


def release_free_memory() -> None:
    """Collect garbage and hand the heap's free pages back to the system."""
    gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
