"""Wall time by stage of one run: module functions wrapped with timers (inclusive of what they call).

Each stage also counts the process's CPU time (every thread: the store's loader threads too), what a busy shared
machine distorts least, and notes the process's peak RSS when it ends: the peak only grows, so the first stage
whose figure is close to the final peak is the one that set it. Beside it, the resident memory when the stage
last ended (what it left alive: a stage's peak hides what the one before it let go), and the bytes the process
read and wrote in it (Linux's ``/proc/self/io``: ``rchar``, every byte read by a system call, the page cache's
too; ``write_bytes``, what it gave the storage to write): a stage whose bytes grow with the dataset, not with
what is added, stands out.
"""

import inspect
import resource
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

LOGGED_CALL = 1.0  # seconds: a call's end is logged when it lasted this long (not each of a stage's many calls)


class Stages:
    """Seconds spent inside named functions, summed over their calls."""

    def __init__(self, log: TextIO | None = None) -> None:
        self.log = log  # each call's start and end, with the clock and resident memory, as they happen
        self._started = time.time()
        self.seconds: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self.peak_mb: dict[str, float] = {}
        self.peak_before_mb: dict[str, float] = {}
        self.now_mb: dict[str, float] = {}
        self.read: dict[str, int] = {}
        self.written: dict[str, int] = {}
        self._restore: list[tuple[object, str, Any]] = []

    def wrap(self, owner: object, name: str, label: str) -> None:
        """Time every call of ``owner.name`` (a module attribute looked up at call time) as ``label``.

        A name ``owner`` lacks is left out (another checkout, compared by running this bench with its Python).
        """
        original: Callable[..., Any] | None = getattr(owner, name, None)
        if original is None:
            return
        self._declare(label)

        def timed(*args: Any, **kwargs: Any) -> Any:
            if label not in self.peak_before_mb:  # a stage's first call: the start of its phase
                self._log("start", label)
            self.peak_before_mb.setdefault(label, _peak_mb())
            start = _now()
            try:
                result = original(*args, **kwargs)
            finally:
                self._note(label, start)
            if inspect.isgenerator(result):
                return self._timed_iteration(result, label)
            if _now()[0] - start[0] >= LOGGED_CALL:
                self._log("end", label)
            return result

        self._restore.append((owner, name, original))
        setattr(owner, name, timed)

    def _timed_iteration(self, items: Iterator[Any], label: str) -> Iterator[Any]:
        """A generator's items, the time spent making each counted to ``label``."""
        while True:
            start = _now()
            try:
                item = next(items)
            except StopIteration:
                self._log("end", label)
                return
            finally:
                self._note(label, start)
            yield item

    def _declare(self, label: str) -> None:
        for figures in (self.seconds, self.cpu, self.read, self.written):
            figures.setdefault(label, 0)

    def _note(self, label: str, start: tuple[float, float, int, int]) -> None:
        wall, cpu, read, written = _now()
        self.seconds[label] += wall - start[0]
        self.cpu[label] += cpu - start[1]
        self.read[label] += read - start[2]
        self.written[label] += written - start[3]
        self.peak_mb[label] = _peak_mb()
        self.now_mb[label] = _resident_mb()

    def _log(self, event: str, label: str) -> None:
        if self.log is not None:
            when = time.strftime("%H:%M:%S")
            print(
                f"BENCH_STAGES {when} +{time.time() - self._started:.0f}s {event} {label.strip()}"
                f" rss {_resident_mb():,.0f} MB peak {_peak_mb():,.0f} MB",
                file=self.log,
                flush=True,
            )

    @contextmanager
    def stage(self, label: str) -> Iterator[None]:
        self._declare(label)
        start = _now()
        try:
            yield
        finally:
            self._note(label, start)

    def restore(self) -> None:
        for owner, name, original in reversed(self._restore):
            setattr(owner, name, original)
        self._restore.clear()

    def table(self, total: float, total_cpu: float = float("nan"), since: tuple[int, int] = (0, 0)) -> str:
        """The stages' figures as a Markdown table; ``since``: the process's bytes read and written (``_io()``) when
        the measured run started, for the total's."""
        rows = [
            "| stage | seconds | share | CPU s | CPU share | peak MB at its start | at its end | RSS MB at its end"
            " | MB read | MB written |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        rows += [
            f"| {label} | {seconds:.1f} | {seconds / total:.0%} | {self.cpu[label]:.1f} |"
            f" {self.cpu[label] / total_cpu:.0%} |"
            f" {self.peak_before_mb.get(label, float('nan')):,.0f} | {self.peak_mb.get(label, float('nan')):,.0f} |"
            f" {self.now_mb.get(label, float('nan')):,.0f} | {self.read[label] / 1e6:,.1f} |"
            f" {self.written[label] / 1e6:,.1f} |"
            for label, seconds in self.seconds.items()
        ]
        read, written = (now - then for now, then in zip(io_bytes(), since, strict=True))
        end = (
            f"| total | {total:.1f} | 100% | {total_cpu:.1f} | 100% | | {_peak_mb():,.0f} | {_resident_mb():,.0f} |"
            f" {read / 1e6:,.1f} | {written / 1e6:,.1f} |"
        )
        return "\n".join([*rows, end])


def _now() -> tuple[float, float, int, int]:
    """Wall time, the process's CPU time (all its threads), the bytes it read and wrote (:func:`io_bytes`)."""
    return time.perf_counter(), time.process_time(), *io_bytes()


def io_bytes() -> tuple[int, int]:
    """The bytes this process read (``rchar``) and gave the storage to write (``write_bytes``) so far, every thread
    (Linux's ``/proc/self/io``; zeros elsewhere)."""
    try:
        with open("/proc/self/io", encoding="ascii") as io:
            fields = dict(line.split(": ") for line in io.read().splitlines())
    except OSError:
        return 0, 0
    return int(fields["rchar"]), int(fields["write_bytes"])


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _resident_mb() -> float:
    """The process's resident memory now (Linux's ``/proc``; NaN elsewhere)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            return int(statm.read().split()[1]) * resource.getpagesize() / 2**20
    except OSError:
        return float("nan")
