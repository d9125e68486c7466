"""The roles step's cost (``graph/site/roles.py``): made by the build's pass against read back from its store.

``python -m bench.building.roles LISTS`` builds LISTS into a disk store in a scratch directory (the parse, the
persons and
the store's load: no dataset, no derive) with the build's roles step (:func:`roles_of_persons`) measured, then reads
the roles back from that store as a build did before (:func:`roles_of`, after the incidence is read, which is not
counted), measured the same way, and says whether both give the same arrays. Each step's CPU seconds (this process,
every thread), wall seconds, the most memory its own allocations held at once (``tracemalloc``: Python objects and
numpy arrays; not the store's own memory) and its peak resident set over the resident set at its start (the peak
reset by ``/proc/self/clear_refs`` at its start: the store's memory included).
"""

import argparse
import os
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from bibgraph.graph.dataset import triples
from bibgraph.graph.dataset.build import build_graph
from bibgraph.graph.networks.incidence import incidence_of
from bibgraph.graph.site.roles import Roles, roles_of
from bibgraph.graph.stores.store import OxigraphGraphStore


def _status(field: str) -> float:
    """A field of /proc/self/status in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def measured(name: str, step: Callable[..., Any], *args: Any) -> Any:
    """``step(*args)``, its figures printed."""
    Path("/proc/self/clear_refs").write_text("5")  # the peak resident set starts again from here
    resident, cpu, wall = _status("VmRSS"), time.process_time(), time.perf_counter()
    tracemalloc.start()
    try:
        result = step(*args)
        traced = tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    peak = _status("VmHWM") - resident
    print(f"{name}: {cpu:.2f} CPU-s, {wall:.2f} s wall, allocations at peak {traced:.1f} MB, RSS peak +{peak:.1f} MB")
    print(f"  load {os.getloadavg()[0]:.1f}")
    return result


def same(one: Roles | None, other: Roles | None) -> bool:
    if one is None or other is None:
        return one is other
    arrays = ("repeats", "positions", "listed")
    return (
        all(np.array_equal(getattr(one, name), getattr(other, name)) for name in arrays)
        and list(one.others) == list(other.others)
        and one.fingerprint == other.fingerprint
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lists", type=Path)
    parser.add_argument("--scratch", type=Path, default=None, help="where the store is built (a temporary dir)")
    args = parser.parse_args()
    made = triples.roles_of_persons
    triples.roles_of_persons = lambda *given: measured("roles from the build's pass", made, *given)
    with tempfile.TemporaryDirectory(dir=args.scratch) as scratch:
        start = time.process_time()
        store, report = build_graph([args.lists], store=OxigraphGraphStore.disk(Path(scratch)), roles=True)
        print(f"build (parse, persons, load, VoID): {time.process_time() - start:.1f} CPU-s, {report.summary()}")
        start = time.process_time()
        incidence = incidence_of(store)
        print(f"incidence read from the store (not counted): {time.process_time() - start:.1f} CPU-s")
        read = measured("roles read from the store", roles_of, store, incidence)
        print(f"same arrays: {same(report.roles, read)}; authorships {len(read.positions) if read else 0:,}")
        del store


if __name__ == "__main__":
    main()
