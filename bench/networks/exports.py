"""Whole-network exports: the product's writers (streamed, :mod:`bibgraph.graph.networks.exports`) against
networkx's own writers (``write_graphml``, ``write_gexf``, ``node_link_data`` + ``json.dumps``) on the same
network: CPU seconds and the peak memory each adds, from one run.

    .venv/bin/python -m bench.networks.exports [--authors 250000] [--links 900000]
    nice -n 5 .venv/bin/python -m bench.networks.exports --dataset DATASET --against OTHER/.venv/bin/python [--runs 2]

The network is a generated co-author network of the given size, with the attributes the engine's have (name,
papers, community, areas, kind; weight and fractional). Each writer runs in a process of its own, the two
kinds alternating, so each peak is its own and a slow spell of a shared machine hits both. Printed per
format: CPU seconds and the memory above the network's own (peak RSS minus RSS once the network is made),
networkx's and ours, and their ratios.

``--dataset``: the child a build runs for the whole networks' exports (``wholeexports.derive_kept``: the kept
incidence loaded, every format of the whole co-author and topic networks written), this checkout's against another's
(``--against``: that checkout's interpreter), alternately in one window, each run a fresh interpreter on a fresh
directory holding only the dataset's kept incidence (hard-linked): its user+system CPU seconds and peak RSS from
``wait4``, the load beside it; then the two sides' files compared byte for byte.
"""

import argparse
import filecmp
import io
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

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


DERIVE = (
    "import sys; from pathlib import Path;"
    " from bibgraph.graph.dataset.wholeexports import DEFAULT_EXPORTS, derive_kept;"
    " derive_kept(Path(sys.argv[1]), DEFAULT_EXPORTS, False)"
)


def derive_child(python: str, directory: Path) -> tuple[float, float, float]:
    """CPU seconds, wall seconds and peak MB of the build's exports child run by ``python`` in ``directory``."""
    started = time.monotonic()
    child = subprocess.Popen([python, "-c", DERIVE, str(directory)])
    _, status, usage = os.wait4(child.pid, 0)
    if status:
        raise SystemExit(f"{python}: the exports child failed ({status})")
    return usage.ru_utime + usage.ru_stime, time.monotonic() - started, usage.ru_maxrss / 1024


def fresh(directory: Path, incidence: Path) -> Path:
    """``directory`` emptied, holding only ``incidence`` (hard-linked)."""
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    os.link(incidence, directory / incidence.name)
    return directory


def against(dataset: Path, other: str, runs: int, scratch: Path) -> None:
    """This checkout's exports child against ``other``'s on ``dataset``'s kept incidence, alternately."""
    from bibgraph.graph.dataset.derived import derived_key, file_name

    incidence = dataset / "current" / "derived" / file_name(derived_key("incidence"))
    sides = {"this": sys.executable, "other": other}
    print(f"{'run':>3} {'side':6} {'CPU-s':>7} {'wall s':>7} {'peak MB':>8} {'load':>5}")
    figures: dict[str, list[float]] = {side: [] for side in sides}
    for run in range(runs):
        for side, python in sides.items():
            cpu, wall, peak = derive_child(python, fresh(scratch / side, incidence))
            figures[side].append(cpu)
            print(f"{run + 1:>3} {side:6} {cpu:7.1f} {wall:7.1f} {peak:8.0f} {os.getloadavg()[0]:5.1f}")
    this, theirs = min(figures["this"]), min(figures["other"])
    print(f"least CPU-s: this {this:.1f}, other {theirs:.1f}: {theirs / this:.2f}x")
    names = sorted(path.name for path in (scratch / "this").iterdir() if path.name != incidence.name)
    same = [name for name in names if filecmp.cmp(scratch / "this" / name, scratch / "other" / name, shallow=False)]
    print(f"same bytes: {len(same)} of {len(names)} files")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--authors", type=int, default=250_000)
    parser.add_argument("--links", type=int, default=900_000)
    parser.add_argument("--worker", nargs=2, metavar=("FORMAT", "KIND"), help=argparse.SUPPRESS)
    parser.add_argument("--dataset", type=Path, help="a dataset whose kept incidence the build's exports child reads")
    parser.add_argument("--against", help="the other checkout's python, for --dataset")
    parser.add_argument("--runs", type=int, default=2, help="runs of each side, alternating, for --dataset")
    parser.add_argument("--scratch", type=Path, default=Path("/tmp/bench-exports"), help="where --dataset's go")
    args = parser.parse_args()
    if args.dataset:
        against(args.dataset, args.against or sys.executable, args.runs, args.scratch)
        return
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
