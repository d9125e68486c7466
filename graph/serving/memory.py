"""Giving freed memory back to the operating system after large, short-lived work.

CPython and Rust free their objects into glibc's heap, which keeps the pages; a long-running
server that once built a graph or serialised a large answer would keep that peak for good.
``malloc_trim`` returns the free pages (a no-op where the C library is not glibc).
"""

import ctypes
import ctypes.util
import gc
import os
from functools import cache

M_ARENA_MAX = -8  # glibc's mallopt parameter (malloc.h)
ARENAS = 2  # heaps of a serving process: see limit_arenas


@cache
def c_library() -> "ctypes.CDLL | None":
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None


def limit_arenas(arenas: int = ARENAS) -> bool:
    """Let glibc's malloc use at most ``arenas`` heaps (called before the server starts its threads), unless the
    operator set ``MALLOC_ARENA_MAX``; whether it was set.

    glibc gives each thread that allocates at once a heap of its own (up to 8 per core), and a heap's freed pages
    stay with it: a whole-network computation in one web thread after another left each heap holding its peak. At
    10k papers the server's process tree went from 296 to 617 MB PSS over 20 distinct whole-network computations
    (2.25x); with two heaps it stayed at 360-414 MB (1.30x), the computations as fast (bench/serving/abuse.py costly).
    """
    libc = c_library()
    if libc is None or "MALLOC_ARENA_MAX" in os.environ or not hasattr(libc, "mallopt"):
        return False
    return bool(libc.mallopt(M_ARENA_MAX, arenas))


def release_free_memory(collect: bool = True) -> None:
    """Collect garbage (``collect``) and hand the heap's free pages back to the system."""
    if collect:
        gc.collect()
    libc = c_library()
    if libc is not None and hasattr(libc, "malloc_trim"):
        libc.malloc_trim(0)
