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
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from bench.stages import Stages
from bibgraph.graph.dataset import build, buildphases, triples
from bibgraph.graph.identity import decide, join
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


class Sampler:
    """Samples of the resident memory every ``every`` seconds, each counted to the innermost stage running then
    (:attr:`Stages.running`): each stage's highest sample."""

    def __init__(self, stages: Stages, every: float) -> None:
        self.stages = stages
        self.every = every
        self.highest: dict[str, dict[str, float]] = {}  # stage -> its highest sample (VmRSS, with RssAnon then)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> "Sampler":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        while not self._stop.wait(self.every):
            now = status()
            step = (self.stages.running or ["outside the steps"])[-1]
            best = self.highest.get(step)
            if best is None or now["VmRSS"] > best["VmRSS"]:
                self.highest[step] = now


def printing_sizes(original: Callable[..., Any]) -> Callable[..., Any]:
    """``original`` (deciding: its first argument the evidence) printing what the evidence holds first."""

    @functools.wraps(original)
    def sized(collected: Collected, *args: Any, **kwargs: Any) -> Any:
        evidence_sizes(collected)
        return original(collected, *args, **kwargs)

    return sized


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
    if args.sizes:  # every module that imported it by name calls the printing one (before the stages wrap it)
        original = decide.persons_of
        sized = printing_sizes(original)
        for holder in [m for m in (decide, triples) if getattr(m, "persons_of", None) is original]:
            setattr(holder, "persons_of", sized)  # noqa: B010 - a module mypy does not see holding it
    stages = Stages(log=sys.stderr)  # each step's start and end, with the resident memory then
    for owner, name, label in STEPS:
        stages.wrap(owner, name, label)
    cpu, wall, load = time.process_time(), time.perf_counter(), os.getloadavg()[0]
    try:
        with Sampler(stages, args.every) as sampler, stages.stage("load phase"):
            report = buildphases.load_lists(version, [args.lists], DEFAULT_BASE, None)
    finally:
        stages.restore()
        shutil.rmtree(version, ignore_errors=True)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    print(f"\n{report.summary()}")
    print("| step | highest RSS MB | anonymous then | file then |\n|---|---:|---:|---:|")
    for label, best in sampler.highest.items():
        print(f"| {label.strip()} | {best['VmRSS']:,.0f} | {best['RssAnon']:,.0f} | {best['RssFile']:,.0f} |")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"ru_maxrss {peak:,.0f} MB; {cpu:.1f} CPU-s, {wall:.1f} s wall; load {load:.1f} -> {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
