"""Whole-network exports: the product's writers (streamed, :mod:`bibgraph.graph.networks.exports`) against
networkx's own writers (``write_graphml``, ``write_gexf``, ``node_link_data`` + ``json.dumps``) on the same
network: CPU seconds and the peak memory each adds, from one run.

    .venv/bin/python -m bench.networks.exports [--authors 250000] [--links 900000]

The network is a generated co-author network of the given size, with the attributes the engine's have (name,
papers, community, areas, kind; weight and fractional). Each writer runs in a process of its own, the two
kinds alternating, so each peak is its own and a slow spell of a shared machine hits both. Printed per
format: CPU seconds and the memory above the network's own (peak RSS minus RSS once the network is made),
networkx's and ours, and their ratios.
"""

import argparse
import io
import json
import random
import resource
import subprocess
import sys
import time

import networkx as nx

from bibgraph.graph.networks import exports

FORMATS = ("graphml", "gexf", "json")


def network(authors: int, links: int) -> nx.Graph:
    """A co-author network shaped like the engine's (the same seed gives the same network)."""
    pick = random.Random(1)
    made = nx.Graph()
    for i in range(authors):
        made.add_node(
            f"https://bib.example.org/author/a{i}",
            name=f"Author Name {i}",
            papers=pick.randint(1, 20),
            community=pick.randint(0, 40),
            areas=["reinforcement-learning", "graphs"],
            kind="author",
        )
    for _ in range(links):
        a, b = pick.sample(range(authors), 2)
        made.add_edge(
            f"https://bib.example.org/author/a{a}",
            f"https://bib.example.org/author/a{b}",
            weight=pick.randint(1, 5),
            fractional=pick.random(),
        )
    return made


def flat(network: nx.Graph) -> nx.Graph:
    """A copy whose attributes are all scalars as our writers write them (a list or set as one ``a; b`` string):
    what networkx's writers are given, here and in the differential tests
    (tests/networks/exports/test_exports_writers.py)."""
    copy = nx.Graph()
    for node, data in network.nodes(data=True):
        copy.add_node(node, **{k: exports._scalar(v) for k, v in data.items() if v is not None})
    for a, b, data in network.edges(data=True):
        copy.add_edge(a, b, **{k: v for k, v in data.items() if v is not None})
    return copy


def networkx_writer(fmt: str, graph: nx.Graph) -> bytes:
    flat_graph = flat(graph)
    if fmt == "json":
        return json.dumps(nx.node_link_data(flat_graph, edges="links"), ensure_ascii=False, indent=1).encode("utf-8")
    out = io.BytesIO()
    (nx.write_graphml if fmt == "graphml" else nx.write_gexf)(flat_graph, out, encoding="utf-8")
    return out.getvalue()


OURS = {"graphml": exports.graphml, "gexf": exports.gexf, "json": exports.node_link}


def worker(fmt: str, kind: str, authors: int, links: int) -> None:
    graph = network(authors, links)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.process_time()
    body = networkx_writer(fmt, graph) if kind == "networkx" else OURS[fmt](graph)
    cpu = time.process_time() - started
    added = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    print(json.dumps({"cpu": cpu, "added_mb": added / 1024, "bytes": len(body)}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--authors", type=int, default=250_000)
    parser.add_argument("--links", type=int, default=900_000)
    parser.add_argument("--worker", nargs=2, metavar=("FORMAT", "KIND"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker[0], args.worker[1], args.authors, args.links)
        return
    print(f"{args.authors:,} authors, {args.links:,} links")
    print(
        f"{'format':8} {'networkx CPU s':>15} {'ours CPU s':>11} {'ratio':>6}"
        f" {'networkx +MB':>13} {'ours +MB':>9} {'ratio':>6}"
    )
    for fmt in FORMATS:
        runs = {}
        for kind in ("networkx", "ours"):
            command = [sys.executable, "-m", "bench.networks.exports", "--worker", fmt, kind]
            command += ["--authors", str(args.authors), "--links", str(args.links)]
            runs[kind] = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
        theirs, ours = runs["networkx"], runs["ours"]
        print(
            f"{fmt:8} {theirs['cpu']:15.1f} {ours['cpu']:11.1f} {theirs['cpu'] / ours['cpu']:5.1f}x"
            f" {theirs['added_mb']:13,.0f} {ours['added_mb']:9,.0f}"
            f" {theirs['added_mb'] / max(ours['added_mb'], 1):5.1f}x"
        )


if __name__ == "__main__":
    main()
