"""Wall time by stage of one run: module functions wrapped with timers (inclusive of what they call).

Each stage also counts the process's CPU time (every thread: the store's loader threads too), what a busy shared
machine distorts least, and notes the process's peak RSS when it ends: the peak only grows, so the first stage
whose figure is close to the final peak is the one that set it. Beside it, the resident memory when the stage
last ended (what it left alive: a stage's peak hides what the one before it let go), and the bytes the process
read and wrote in it (Linux's ``/proc/self/io``: ``rchar``, every byte read by a system call, the page cache's
too; ``write_bytes``, what it gave the storage to write): a stage whose bytes grow with the dataset, not with
what is added, stands out.

A build's costly phases run in child interpreters (:func:`bibgraph.graph.serving.childprocess.in_child`), where a
wrap made here does not reach: inside :meth:`Stages.children` each such child makes the same wraps and hands its
figures back in a file, which the table adds to its rows (a child's peak is its own), and its CPU and bytes to the
total.
"""

import functools
import importlib
import inspect
import json
import os
import resource
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple, TextIO
from unittest.mock import patch

CHILD_SPEC = "BENCH_STAGES_CHILD"  # the environment variable that tells a phase's child what to wrap, where to report
CHILD_MAIN = "from bench.stages import serve_timed_child; serve_timed_child"
SUMMED = ("seconds", "cpu", "read", "written")
PEAKS = ("peak_mb", "peak_before_mb", "now_mb")

LOGGED_CALL = 1.0  # seconds: a call's end is logged when it lasted this long (not each of a stage's many calls)


class Wrapped(NamedTuple):
    """A function :meth:`Stages.wrap` times, found again by its module and names in a phase's child."""

    module: str
    owner: str  # the class's qualified name, or "" for a module's function
    name: str
    label: str
    often: bool  # called per record or per line: timed in a child only when asked (its timers cost CPU)


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
        self._wraps: list[Wrapped] = []
        self.running: list[str] = []  # the stages whose calls are under way, innermost last (read by samplers)
        self.children_total = {"read": 0, "written": 0}  # bytes of the phases' children (:meth:`children`)

    def wrap(self, owner: object, name: str, label: str, often: bool = False) -> None:
        """Time every call of ``owner.name`` (a module attribute looked up at call time) as ``label``.

        A name ``owner`` lacks is left out (another checkout, compared by running this bench with its Python).
        """
        original: Callable[..., Any] | None = getattr(owner, name, None)
        if original is None:
            return
        self._declare(label)
        if isinstance(owner, type):
            self._wraps.append(Wrapped(owner.__module__, owner.__qualname__, name, label, often))
        else:
            self._wraps.append(Wrapped(getattr(owner, "__name__", ""), "", name, label, often))

        @functools.wraps(original)  # its name and module: a phase sent to a child is pickled as the original's
        def timed(*args: Any, **kwargs: Any) -> Any:
            if label not in self.peak_before_mb:  # a stage's first call: the start of its phase
                self._log("start", label)
            self.peak_before_mb.setdefault(label, _peak_mb())
            start = _now()
            self.running.append(label)
            try:
                result = original(*args, **kwargs)
            finally:
                self.running.remove(label)
                self._note(label, start)
            if inspect.isgenerator(result):
                return self._timed_iteration(result, label)
            if _now()[0] - start[0] >= LOGGED_CALL:
                self._log("end", label)
            return result

        # every module that imported it by name calls the same timer (a phase handed to a child is pickled by its
        # name, which must then give this very function back)
        holders = (
            [owner] if isinstance(owner, type) else [m for m in list(sys.modules.values()) if _holds(m, name, original)]
        )
        for holder in holders:
            self._restore.append((holder, name, original))
            setattr(holder, name, timed)

    def _timed_iteration(self, items: Iterator[Any], label: str) -> Iterator[Any]:
        """A generator's items, the time spent making each counted to ``label``."""
        while True:
            start = _now()
            self.running.append(label)
            try:
                item = next(items)
            except StopIteration:
                self._log("end", label)
                return
            finally:
                self.running.remove(label)
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

    @contextmanager
    def children(self, often: bool = False) -> Iterator[None]:
        """Time the same functions in every phase's child started meanwhile, and add their figures; those called
        ``often`` (per record, per line: each call reads ``/proc`` twice) only if asked, since they add their own
        CPU to the figures (+56 CPU-s to a 100k build's 163: the ratio is measured without them)."""
        from bibgraph.graph.serving import childprocess

        with tempfile.TemporaryDirectory(prefix="bench-stages-") as reports:
            spec = json.dumps([reports, [w._asdict() for w in self._wraps if often or not w.often]])
            try:
                with patch.dict(os.environ, {CHILD_SPEC: spec}), patch.object(childprocess, "CHILD_MAIN", CHILD_MAIN):
                    yield
            finally:
                for report in sorted(Path(reports).glob("*.json")):
                    self._add(json.loads(report.read_text()))

    def figures(self) -> dict[str, Any]:
        """This process's figures by stage and its totals, as :meth:`children` reads a child's."""
        read, written = io_bytes()
        total = {"read": read, "written": written}
        return {name: getattr(self, name) for name in SUMMED + PEAKS} | {"total": total}

    def _add(self, child: dict[str, Any]) -> None:
        for name in SUMMED:
            mine = getattr(self, name)
            for label, value in child[name].items():
                mine[label] = mine.get(label, 0) + value
        for name in PEAKS:
            mine = getattr(self, name)
            for label, value in child[name].items():
                mine[label] = max(mine.get(label, value), value)
        for name, value in child["total"].items():
            self.children_total[name] += value

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
        read, written = read + self.children_total["read"], written + self.children_total["written"]
        end = (
            f"| total | {total:.1f} | 100% | {total_cpu:.1f} | 100% | | {_peak_mb():,.0f} | {_resident_mb():,.0f} |"
            f" {read / 1e6:,.1f} | {written / 1e6:,.1f} |"
        )
        return "\n".join([*rows, end])


def serve_timed_child(answers: int) -> None:
    """A phase's child (``CHILD_MAIN`` inside :meth:`Stages.children`): the parent's wraps made here, the phase
    served, this process's figures written where the parent reads them."""
    from bibgraph.graph.serving.childprocess import serve_child

    reports, wraps = json.loads(os.environ[CHILD_SPEC])
    stages = Stages(log=sys.stderr)
    for wrapped in (Wrapped(**fields) for fields in wraps):
        target: Any = importlib.import_module(wrapped.module)
        for part in filter(None, wrapped.owner.split(".")):
            target = getattr(target, part)
        stages.wrap(target, wrapped.name, wrapped.label, wrapped.often)
    try:
        serve_child(answers)
    finally:
        Path(reports, f"{os.getpid()}.json").write_text(json.dumps(stages.figures()))


def _holds(module: object, name: str, function: object) -> bool:
    try:
        return getattr(module, name, None) is function
    except Exception:  # a lazy module that fails to load an attribute
        return False


def cpu_seconds() -> float:
    """CPU seconds of this process and of the children it has waited for (a build's phases)."""
    return sum(
        usage.ru_utime + usage.ru_stime
        for usage in map(resource.getrusage, (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    )


def peak_mb() -> float:
    """The largest peak resident memory of this process and of each child it has waited for, in MB."""
    return max(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)) / 1024


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
