"""Communities: igraph's Leiden maximising modularity (what the product runs, :func:`assign_communities`) against
networkx's ``louvain_communities`` on the same co-author networks, time and modularity, from one run.

    .venv/bin/python -m bench.networks.louvain --size 10000 [--runs 3] [--scratch /tmp/me]
    .venv/bin/python -m bench.networks.louvain --dataset DATASET          # the store of a built dataset, as it is

Two networks of one corpus: the whole co-author network and the default map (the 1,000 most prolific
authors). Each engine runs ``--runs`` times, alternating, so a slow spell of a shared machine hits both;
the modularity of each partition is networkx's ``modularity`` with the same weights and resolution, so
the two are scored alike. Printed: the median and minimum seconds, the ratio networkx / igraph of the
medians, and both modularities.
"""

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import networkx as nx

from bench.generate import write_corpus
from bibgraph.graph.dataset.build import build_graph
from bibgraph.graph.dataset.directory import STORE, current_version
from bibgraph.graph.networks import Filters, engine
from bibgraph.graph.networks.communities import assign_communities
from bibgraph.graph.networks.filters import drawn
from bibgraph.graph.networks.incidence import Incidence, incidence_of
from bibgraph.graph.networks.spec import COAUTHORS, NetworkSpec
from bibgraph.graph.stores.store import OxigraphGraphStore

MAP_AUTHORS = 1000  # the default map's cap (the server's drawn(…, limit))
Partition = list[set[str]]


def _igraph(network: nx.Graph, resolution: float) -> Partition:
    return assign_communities(network, resolution)  # rewrites the ``community`` attribute networkx's run ignores


def _networkx(network: nx.Graph, resolution: float) -> Partition:
    return [set(c) for c in nx.community.louvain_communities(network, weight="weight", resolution=resolution, seed=42)]


ENGINES: dict[str, Callable[[nx.Graph, float], Partition]] = {"igraph": _igraph, "networkx": _networkx}


def compare(network: nx.Graph, resolution: float, runs: int) -> dict[str, tuple[list[float], float, int]]:
    """Per engine: the seconds of each run, the modularity of its (last) partition, and its number of communities."""
    seconds: dict[str, list[float]] = {name: [] for name in ENGINES}
    found: dict[str, Partition] = {}
    for _ in range(runs):
        for name, run in ENGINES.items():
            started = time.perf_counter()
            found[name] = run(network, resolution)
            seconds[name].append(time.perf_counter() - started)
    return {
        name: (
            seconds[name],
            nx.community.modularity(network, found[name], weight="weight", resolution=resolution),
            len(found[name]),
        )
        for name in ENGINES
    }


def _incidence(args: argparse.Namespace) -> tuple[Incidence, str]:
    if args.dataset is not None:
        store = OxigraphGraphStore.disk(current_version(args.dataset) / STORE, read_only=True)
        return incidence_of(store), f"dataset {args.dataset}"
    with tempfile.TemporaryDirectory(prefix="louvain-", dir=args.scratch) as scratch:
        write_corpus(Path(scratch), args.size)
        memory, _ = build_graph([Path(scratch)], base="http://example.org/", progress=False)
    return incidence_of(memory), f"generated corpus of {args.size:,} papers (bench.generate)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10000, help="papers of a generated corpus")
    parser.add_argument("--dataset", type=Path, help="read this dataset's store instead of generating")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--resolution", type=float, default=1.0)
    parser.add_argument("--scratch", type=Path, default=None, help="where the generated corpus goes")
    args = parser.parse_args()
    inc, source = _incidence(args)
    print(f"{source}; load average {os.getloadavg()[0]:.2f}; {args.runs} runs each, alternating")
    networks = {
        "whole co-author network": NetworkSpec(COAUTHORS, Filters()),
        f"default map ({MAP_AUTHORS} authors)": NetworkSpec(COAUTHORS, drawn(Filters(), MAP_AUTHORS)[0]),
    }
    for label, spec in networks.items():
        network = engine.network(inc, spec)
        size = f"{network.number_of_nodes():,} authors, {network.number_of_edges():,} links"
        results = compare(network, args.resolution, args.runs)
        medians = {name: statistics.median(seconds) for name, (seconds, _, _) in results.items()}
        print(f"{label}: {size}")
        for name, (seconds, modularity, count) in results.items():
            print(
                f"  {name:8} median {medians[name]:8.3f} s  min {min(seconds):8.3f} s"
                f"  modularity {modularity:.4f}  {count:,} communities"
            )
        print(f"  networkx / igraph: {medians['networkx'] / medians['igraph']:.1f}x")


if __name__ == "__main__":
    main()
