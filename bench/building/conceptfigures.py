"""A build's concept figures: from the incidence's arrays (:mod:`~bibgraph.graph.site.conceptbuild`) against the
store's queries, concept by concept (:func:`~bibgraph.graph.site.conceptindex.concept_index`, the build's before).

``python -m bench.building.conceptfigures DATASET [--runs N]`` opens DATASET's current version (its store read-only,
its kept
incidence: what the build's derive holds when it makes them), then makes every concept's figures and paper order
both ways, alternately, ``N`` times each (default 2), and prints each run's CPU seconds (this process, every thread)
and wall seconds with the load, and whether both ways gave the same figures and orders.
"""

import argparse
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from bibgraph.graph.dataset.derived import DerivedFiles, derived_key
from bibgraph.graph.dataset.directory import DERIVED, STORE, current_version
from bibgraph.graph.site.conceptbuild import concept_index_of
from bibgraph.graph.site.conceptindex import concept_index
from bibgraph.graph.stores.store import OxigraphGraphStore


def timed(name: str, make: Callable[[], Iterator[Any]]) -> list[Any]:
    cpu, wall = time.process_time(), time.perf_counter()
    result = list(make())
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    print(f"{name}: {cpu:.2f} CPU-s, {wall:.2f} s wall, load {os.getloadavg()[0]:.1f}", flush=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    version = current_version(args.dataset)
    store = OxigraphGraphStore.disk(version / STORE, read_only=True)
    found, incidence = DerivedFiles(version / DERIVED).load(derived_key("incidence"))
    assert found, f"{version} keeps no incidence"
    results = []
    for _ in range(args.runs):
        results.append(timed("store, concept by concept", lambda: concept_index(store)))
        results.append(timed("incidence's arrays", lambda: concept_index_of(store, incidence)))
    print("same figures and orders:", all(result == results[0] for result in results))


if __name__ == "__main__":
    main()
