"""A dataset's dump files checked against its manifest before they are first served: in the background, one file at
a time, at the lowest CPU priority, each file once per process whoever asks; ``503`` with ``Retry-After`` for that
file meanwhile, and never a byte of a file not checked.

The first ``GET`` of each dump hashed the whole file in its request's thread (6-8 GB at a million papers: minutes of
a core), outside any client's share: every dump and every version's new segment could be had hashed by anyone, and a
client that left went on costing the hash. A check per segment as it is sent would not bound it either: a build
writes each dump as one segment, so a request (a range of one kilobyte too) would still pay for the whole file
before its first byte. So a check is queued work, shared: the first request queues it and waits :data:`WAIT`
seconds (a small dump's check ends in that time, so it is served at once), then gets 503; the one thread that
checks runs at ``nice`` :data:`NICENESS` (the thread alone: pages and maps keep their cores) and goes on whether the
requester stays or not, so no client's visit is repeated work. A file is known by its device, inode, size, time and
the checksum it is checked against: a segment an earlier version shares is not checked again, a file changed since
is. A failed check is kept (the file is refused until it changes) and told by :class:`CheckFailed`.
"""

import contextlib
import os
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

WAIT = 2.0  # seconds a request waits for a check it asked for (or found running), before 503
RETRY_AFTER = 10  # seconds a client is told to wait while a file is checked
NICENESS = 19  # the checking thread's: the lowest priority, so it takes only the CPU nobody else wants
Key = tuple[int, int, int, int, str | None]  # device, inode, size, time (ns), the checksum checked against


class CheckPending(Exception):
    """The file is being checked (or waits its turn): 503 with ``Retry-After``."""


class CheckFailed(Exception):
    """The file's check failed: its message (the file named), kept until the file changes; ``first``: this is the
    first request told (it logs the failure, later ones do not)."""

    def __init__(self, message: str, first: bool) -> None:
        super().__init__(message)
        self.first = first


@dataclass
class _Check:
    run: Callable[[], None]  # raises when the file is not as built
    done: threading.Event = field(default_factory=threading.Event)
    failed: str | None = None
    told: bool = False  # whether a request has logged the failure (once, not at each refusal)


_checks: dict[Key, _Check] = {}
_queue: deque[_Check] = deque()
_lock = threading.Condition()
_worker: list[threading.Thread] = []  # the one checking thread, started by the first check


def checked(key: Key, run: Callable[[], None], wait: float = WAIT) -> None:
    """Return once the file ``key`` names has passed ``run`` (queued, if this is the first ask, for the checking
    thread); :class:`CheckPending` when it is still checked after ``wait`` seconds, :class:`CheckFailed` when it
    failed."""
    with _lock:
        check = _checks.get(key)
        if check is None:
            check = _checks[key] = _Check(run)
            _queue.append(check)
            if not _worker:
                _worker.append(threading.Thread(target=_work, daemon=True, name="dump checks"))
                _worker[0].start()
            _lock.notify()
    if not check.done.wait(wait):
        raise CheckPending("is being checked against the dataset's manifest (once, before it is first served)")
    if check.failed is not None:
        with _lock:
            first, check.told = not check.told, True
        raise CheckFailed(check.failed, first)


def passed(key: Key) -> bool:
    """Whether the file ``key`` names has been checked and passed (nothing is queued)."""
    check = _checks.get(key)
    return check is not None and check.done.is_set() and check.failed is None


def _work() -> None:
    """The checking thread: lowest priority, one file at a time, in the order they were asked for."""
    with contextlib.suppress(OSError, AttributeError):  # a thread's own niceness (Linux: a thread is a task)
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICENESS)
    while True:
        with _lock:
            while not _queue:
                _lock.wait()
            check = _queue.popleft()
        try:
            check.run()
        except Exception as error:  # any failure refuses the file: its message names it
            check.failed = str(error) or type(error).__name__
        check.done.set()
