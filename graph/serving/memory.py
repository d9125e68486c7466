"""Giving freed memory back to the operating system after large, short-lived work.

CPython and Rust free their objects into glibc's heap, which keeps the pages; a long-running
server that once built a graph or serialised a large answer would keep that peak for good.
``malloc_trim`` returns the free pages (a no-op where the C library is not glibc). And what a process tree holds
(PSS, from ``/proc``), against a budget: the server's maps are refused while it is over (``web/maps/gate.py``).
"""

import contextlib
import ctypes
import ctypes.util
import gc
import math
import os
import threading
import time
from collections.abc import Iterator
from functools import cache
from pathlib import Path

M_ARENA_MAX = -8  # glibc's mallopt parameter (malloc.h)
ARENAS = 2  # heaps of a serving process: see limit_arenas
RARE_COLLECTIONS = 100_000  # allocations between the collector's youngest runs in a batch job (Python's: 700)


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


@contextlib.contextmanager
def fewer_collections(threshold: int = RARE_COLLECTIONS) -> Iterator[None]:
    """Let the cyclic garbage collector run rarely (its youngest generation every ``threshold`` allocations) while a
    batch job grows long-lived structures: each full collection walks every object alive again, and what such a
    job drops in cycles is little (the build's lines: a sixth of their CPU at 10,000 papers; an add at 1M papers
    spent 1.07 of its 13.4 CPU-s in 1,575 collections that found 6,590 objects)."""
    before = gc.get_threshold()
    gc.set_threshold(threshold, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


def no_huge_pages_for_arrays() -> None:
    """Ask numpy not to back its large arrays with transparent huge pages, in this process (if numpy is not imported
    yet) and in the children it starts, unless the operator chose (``NUMPY_MADVISE_HUGEPAGE``, numpy's own switch).

    numpy asks the kernel for huge pages for every array of 4 MB or more; where the kernel then compacts memory
    to find one (``defrag`` ``madvise``, Debian's default), each first touch of such an array zeroes and may
    compact 2 MB. An add at 1M papers allocates and frees arrays of the whole incidence again and again: it spent
    1.4 of its 13 CPU-s zeroing huge pages (perf: ``clear_page_erms`` under ``do_huge_pmd_anonymous_page``); without
    them, 1.3 CPU-s less (sys time 3.8-4.5 -> 2.4-3.1 s). A build at 100k papers is the same either way."""
    os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")


def release_free_memory(collect: bool = True) -> None:
    """Collect garbage (``collect``) and hand the heap's free pages back to the system."""
    if collect:
        gc.collect()
    libc = c_library()
    if libc is not None and hasattr(libc, "malloc_trim"):
        libc.malloc_trim(0)


def children(pid: int) -> list[int]:
    """Child processes of ``pid`` (forked by any of its threads)."""
    found = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError):
                found += [int(child) for child in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
    return found


def tree_pss(pid: int) -> int:
    """PSS in bytes of ``pid`` and all its descendants (zygote, query workers): what the kernel says they hold."""
    total, pending = 0, [pid]
    while pending:
        process = pending.pop()
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{process}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1]) * 1024
                    break
        pending += children(process)
    return total


class MemoryBudget:
    """This server's process tree's PSS against ``limit`` bytes (0: none), measured at most every ``every`` s."""

    def __init__(self, limit: int, every: float = 1.0, pid: int | None = None) -> None:
        self.limit, self.every, self.pid = limit, every, os.getpid() if pid is None else pid
        self._measured, self._at = 0, -math.inf
        self._lock = threading.Lock()

    def pss(self, fresh: bool = False) -> int:
        with self._lock:
            if fresh or time.monotonic() - self._at >= self.every:
                self._measured, self._at = tree_pss(self.pid), time.monotonic()
            return self._measured

    def over(self, fresh: bool = False) -> bool:
        return bool(self.limit) and self.pss(fresh) > self.limit
