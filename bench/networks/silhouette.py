"""How well the co-author map shows its communities: the silhouette of node positions against the Louvain
communities (sklearn's ``silhouette_score``; 1 = communities far apart, 0 = mixed), on the default map
(the 1,000 most prolific authors, the map's link cap), as the server lays it out.

    .venv/bin/python -m bench.networks.silhouette seeds /tmp/corpus [--top 1000]

Communities of fewer than MIN_MEMBERS authors are left out of
the score (they are grey on the map, and a lone node has no silhouette)."""

import argparse
import time
from collections import Counter
from pathlib import Path

import numpy as np
from sklearn.metrics import silhouette_score

from bibgraph.graph.dataset.build import build_graph
from bibgraph.graph.networks import Filters, engine
from bibgraph.graph.networks.filters import drawn
from bibgraph.graph.networks.incidence import incidence_of
from bibgraph.graph.networks.spec import COAUTHORS, NetworkSpec

MIN_MEMBERS = 3


def silhouette(inputs: list[Path], top: int) -> tuple[float, int, int, float]:
    """(silhouette, authors scored, communities scored, layout seconds)."""
    store, _ = build_graph(inputs, base="http://example.org/", progress=False)
    spec = NetworkSpec(COAUTHORS, drawn(Filters(), top)[0])  # the default map, as the server draws it
    network = engine.network(incidence_of(store), spec)
    started = time.perf_counter()
    positions = engine.positions(spec, network)
    took = time.perf_counter() - started
    community = dict(network.nodes(data="community"))
    sizes = Counter(community.values())
    scored = [node for node in sorted(network) if sizes[community[node]] >= MIN_MEMBERS]
    points = np.array([positions[node] for node in scored])
    labels = [community[node] for node in scored]
    return float(silhouette_score(points, labels)), len(scored), len({*labels}), took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("inputs", nargs="+", type=Path)
    parser.add_argument("--top", type=int, default=1000)
    args = parser.parse_args()
    for source in args.inputs:
        score, authors, communities, took = silhouette([source], args.top)
        print(f"{source}: silhouette {score:.3f}, {authors} authors, {communities} communities, layout {took:.2f} s")


if __name__ == "__main__":
    main()
