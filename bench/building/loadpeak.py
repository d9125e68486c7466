"""The load phase's memory (issue 28): where a dataset build's peak is set, by step, in a process of its own.

``python -m bench.building.loadpeak LISTS SCRATCH`` runs the load phase alone (:func:`buildphases.load_lists`:
the parse, the persons decided, the incidence and roles made, the store filled, the N-Triples dump written)
into a fresh version directory under SCRATCH, in this process, as the build's child does. A thread samples
``/proc/self/status`` (VmRSS, RssAnon, RssFile) every ``--every`` seconds; the identity steps are wrapped, and
each step's start and end are logged with the resident memory then. At the end: each step's highest sample
(what it held at most, anonymous and file-backed apart: RocksDB's block cache and memtables are anonymous, its
tables read through the page cache are not resident here), ``ru_maxrss`` and the CPU seconds. ``--sizes``
prints what the evidence holds when deciding starts (numpy's ``nbytes``, Python containers by
``sys.getsizeof`` of their items).

Run it with another checkout's interpreter (``/work/main/.venv/bin/python -m bench.building.loadpeak`` from this
directory) for a pair: a step its code lacks is left out.
"""

import argparse
import functools
import os
import resource
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from bibgraph.graph.dataset import build, buildphases, triples
from bibgraph.graph.identity import join
from bibgraph.graph.identity.features import Collected
from bibgraph.graph.rdf.iris import DEFAULT_BASE

STEPS: list[tuple[object, str, str]] = [  # (module, function, label): each call a step of the timeline
    (build, "load_blocks", "parse and load"),
    (triples, "persons_of", "persons decided"),
    (Collected, "coauthors", "  co-author index"),
    (join, "Commonness", "  commonness"),
    (join, "_units", "  names split"),
    (join, "_join", "  forms joined"),
    (join, "_one_paper_one_person", "  joins kept"),
    (join, "_persons", "  persons made"),
    (triples, "person_keys", "person keys"),
    (triples, "roles_of_persons", "roles made"),
    (triples, "incidence_of_persons", "incidence made"),
    (triples, "person_lines", "persons' lines"),
]


def status() -> dict[str, float]:
    """VmRSS, RssAnon, RssFile and VmHWM of this process, in MB."""
    found = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
            found[name] = int(value.split()[0]) / 1024
    return found


class Timeline:
    """Samples of the resident memory, each with the step running then (the innermost)."""

    def __init__(self, every: float) -> None:
        self.every = every
        self.started = time.perf_counter()
        self.running: list[str] = ["before"]
        self.highest: dict[str, dict[str, float]] = {}  # step -> its highest sample (VmRSS, with RssAnon then)
        self.events: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> "Timeline":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        while not self._stop.wait(self.every):
            self.note()

    def note(self) -> None:
        now = status()
        step = self.running[-1]
        best = self.highest.get(step)
        if best is None or now["VmRSS"] > best["VmRSS"]:
            self.highest[step] = now

    def log(self, event: str, label: str) -> None:
        self.note()
        now = status()
        line = (
            f"{time.perf_counter() - self.started:8.1f}s {event:5} {label.strip():16} rss {now['VmRSS']:7,.0f}"
            f" anon {now['RssAnon']:7,.0f} file {now['RssFile']:5,.0f} hwm {now['VmHWM']:7,.0f} MB"
        )
        self.events.append(line)
        print(line, file=sys.stderr, flush=True)

    def wrap(self, owner: object, name: str, label: str) -> None:
        original: Callable[..., Any] | None = getattr(owner, name, None)
        if original is None:
            return
        timeline = self

        if name == "person_lines":  # a generator: the step lasts while it yields

            @functools.wraps(original)
            def lines(*args: Any, **kwargs: Any) -> Iterator[str]:
                timeline.enter(label)
                try:
                    yield from original(*args, **kwargs)
                finally:
                    timeline.leave(label)

            setattr(owner, name, lines)
            return

        @functools.wraps(original)
        def step(*args: Any, **kwargs: Any) -> Any:
            if name == "persons_of" and timeline.sizes:
                evidence_sizes(args[0])
            timeline.enter(label)
            try:
                return original(*args, **kwargs)
            finally:
                timeline.leave(label)

        setattr(owner, name, step)

    sizes = False

    def enter(self, label: str) -> None:
        self.log("start", label)
        self.running.append(label)

    def leave(self, label: str) -> None:
        self.log("end", label)
        self.running.remove(label)
        if self.running == ["before"]:  # the phase is over: later samples are not its start's
            self.running = ["after"]


def _deep(value: object) -> int:
    """Bytes of ``value`` and, for a list, dict or tuple, of its items (one level: strings and numbers)."""
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    size = sys.getsizeof(value)
    if isinstance(value, dict):
        size += sum(sys.getsizeof(k) + sys.getsizeof(v) for k, v in value.items())
    elif isinstance(value, (list, tuple)):
        size += sum(_deep(item) if isinstance(item, np.ndarray) else sys.getsizeof(item) for item in value)
    return size


def evidence_sizes(collected: Collected) -> None:
    """What the evidence holds as deciding starts, in MB, largest first."""
    parts = {
        "order (paper ids)": _deep(collected.order),
        "words (hashed indices)": _deep(collected.words),
        "starts (their rows)": _deep(collected.starts),
        "documents": _deep(collected.documents),
        "name table": _deep(collected.name_table.ids) + _deep(collected.name_table.strings),
        "written table": _deep(collected.written_table.ids) + _deep(collected.written_table.strings),
        "concept table": _deep(collected.concept_table.ids) + _deep(collected.concept_table.strings),
        "id arrays": sum(
            len(a) * a.itemsize
            for a in (collected.name_ids, collected.written_ids, collected.concept_ids, collected.row_starts)
        ),
        "places": sum(len(a) * a.itemsize * 2 for a, _ in collected.where.files.values()),
    }
    for name, size in sorted(parts.items(), key=lambda kv: -kv[1]):
        print(f"  evidence: {name:24} {size / 2**20:8.1f} MB", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("lists", type=Path)
    parser.add_argument("scratch", type=Path)
    parser.add_argument("--every", type=float, default=0.25, help="seconds between samples")
    parser.add_argument("--sizes", action="store_true", help="what the evidence holds when deciding starts")
    args = parser.parse_args()
    version = args.scratch / f"loadpeak-{os.getpid()}"
    shutil.rmtree(version, ignore_errors=True)
    version.mkdir(parents=True)
    timeline = Timeline(args.every)
    Timeline.sizes = args.sizes
    for owner, name, label in STEPS:
        timeline.wrap(owner, name, label)
    cpu, wall, load = time.process_time(), time.perf_counter(), os.getloadavg()[0]
    try:
        with timeline:
            timeline.enter("load phase")
            report = buildphases.load_lists(version, [args.lists], DEFAULT_BASE, None)
            timeline.leave("load phase")
    finally:
        shutil.rmtree(version, ignore_errors=True)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    print(f"\n{report.summary()}")
    print("| step | highest RSS MB | anonymous then | file then |\n|---|---:|---:|---:|")
    for label, best in timeline.highest.items():
        print(f"| {label.strip()} | {best['VmRSS']:,.0f} | {best['RssAnon']:,.0f} | {best['RssFile']:,.0f} |")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"ru_maxrss {peak:,.0f} MB; {cpu:.1f} CPU-s, {wall:.1f} s wall; load {load:.1f} -> {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
