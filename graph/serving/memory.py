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
from functools import cache
from pathlib import Path

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
