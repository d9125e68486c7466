"""Benchmark filtered network downloads in process: where the first request's CPU goes (web process or child).

``python -m bench.serving.downloads first DATASET --bounds 0 1000`` serves ``DATASET`` with the Flask test client (no
HTTP,
no other process but a download's child) once per ``DOWNLOAD_IN_PROCESS_AUTHORS`` value, alternately, ``--rounds``
times; after a map of the same area has loaded the engine and the incidence, it asks each download of
:data:`DOWNLOADS` with ``--keys`` fresh keys (a new ``resolution`` each: a first request every time) and prints the
medians: wall, the web process's CPU, its children's CPU (a download computed in a child); then the CPU a request
of the last key asked again (its body a file sent), and the load. Any checkout's interpreter runs it from this
directory (``OTHER/.venv/bin/python -m bench.serving.downloads first DIR``: the setting is ignored by a checkout without
it). ``python -m bench.serving.downloads size --synthetic 1000000 --like DATASET``: the CPU of
:func:`bibgraph.graph.networks.engine.size` (what decides the place) on an incidence of N papers shaped like the
dataset's (:func:`bench.building.derive.synthetic`). ``python -m bench.serving.downloads memory DATASET --bounds 0
1000``: a served
dataset's process tree (PSS) after ``--keys`` distinct downloads of each kind, per bound.
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from bench.servers import free_port, stop, wait_for_http
from bibgraph.graph.networks import engine
from bibgraph.graph.networks.filters import Filters
from bibgraph.graph.networks.spec import COAUTHORS, NetworkSpec
from bibgraph.graph.serving.memory import tree_pss
from bibgraph.web.app import create_app

AREA = "area/applications"  # an area of bench.generate's corpora
DOWNLOADS = {
    "area, min 3 papers, VOSviewer": f"/graph/coauthors.vosviewer?area={AREA}&min_papers=3",
    "top 500, fractional, node-link JSON": "/graph/coauthors.json?top=500&weighting=fractional",
}
AGAIN = 200  # repeats of a download whose body is kept, for its CPU a request


def children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def first(dataset: Path, bound: int, keys: int) -> None:
    """One app: each download with ``keys`` fresh keys; one line of medians each."""
    app = create_app({"BIBGRAPH_STORE": f"dataset:{dataset}", "DOWNLOAD_IN_PROCESS_AUTHORS": bound, "TESTING": True})
    try:
        client = app.test_client()
        assert client.get(f"/graph/coauthors?area={AREA}&min_papers=3").status_code == 200  # engine, incidence
        for name, path in DOWNLOADS.items():
            rows = []
            for key in range(keys):
                started, cpu, kids = time.perf_counter(), time.process_time(), children_cpu()
                assert client.get(f"{path}&resolution={1.1 + key / 10:.1f}").status_code == 200
                rows.append((time.perf_counter() - started, time.process_time() - cpu, children_cpu() - kids))
            wall, web, child = (statistics.median(row[i] for row in rows) for i in range(3))
            cpu = time.process_time()
            for _ in range(AGAIN):  # the last key again: its body is a file
                client.get(f"{path}&resolution={1.1 + (keys - 1) / 10:.1f}").close()
            again = (time.process_time() - cpu) / AGAIN * 1000
            print(
                f"| {bound} | {name} | {wall:.3f} | {web:.3f} | {child:.3f} | {web + child:.3f} | {again:.2f} |"
                f" {os.getloadavg()[0]:.1f} |",
                flush=True,
            )
    finally:
        app.extensions["bibgraph"].close()


def memory(dataset: Path, bound: int, keys: int) -> None:
    """``bibgraph serve DATASET`` with the bound: the process tree's PSS after a map of the area (the engine loaded),
    then after ``keys`` distinct downloads of each of :data:`DOWNLOADS` (MB), and the load."""
    port = free_port()
    server = f"http://127.0.0.1:{port}"
    command = [str(Path(sys.executable).parent / "bibgraph"), "serve", str(dataset), "--port", str(port)]
    command += ["--download-in-process-authors", str(bound)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        wait_for_http(f"{server}/health", process, timeout=600)
        urllib.request.urlopen(f"{server}/graph/coauthors?area={AREA}&min_papers=3", timeout=600).read()
        before = tree_pss(process.pid) / 2**20
        for key in range(keys):
            for path in DOWNLOADS.values():
                urllib.request.urlopen(f"{server}{path}&resolution={1.1 + key / 10:.1f}", timeout=600).read()
        after = tree_pss(process.pid) / 2**20
        print(f"| {bound} | {before:.0f} | {after:.0f} | {after / before:.2f} | {os.getloadavg()[0]:.1f} |", flush=True)
    finally:
        stop(process, timeout=20)


def size(papers: int, like: Path) -> None:
    # bench.building.derive reads this checkout's dataset modules: an older checkout running ``first`` need not have
    # them
    from bench.building.derive import kept_incidence, synthetic

    inc = synthetic(papers, kept_incidence(like))
    area = inc.concepts[0].area
    subarea = next(c.concept for c in inc.concepts if c.concept != c.area)
    print(f"{len(inc.papers):,} papers, {len(inc.authors):,} authors, {len(inc.ap_author):,} authorships")
    print("| filters | nodes | links (bound) | CPU s (median of 5) | load |\n|---|---:|---:|---:|---:|")
    for label, filters in {
        "area, min 3 papers": Filters(area=area, min_papers=3),
        "a subarea": Filters(subarea=subarea),
        "top 500": Filters(top=500),
        "min 2 joint papers": Filters(min_joint=2),
    }.items():
        times = []
        for _ in range(5):
            started = time.process_time()
            nodes, links = engine.size(inc, NetworkSpec(COAUTHORS, filters))
            times.append(time.process_time() - started)
        print(f"| {label} | {nodes:,} | {links:,} | {statistics.median(times):.3f} | {os.getloadavg()[0]:.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    firsts = commands.add_parser("first", help="first requests of filtered downloads, per DOWNLOAD_IN_PROCESS_AUTHORS")
    firsts.add_argument("dataset", type=Path)
    firsts.add_argument("--bounds", type=int, nargs="+", default=[0, 1000])
    firsts.add_argument("--rounds", type=int, default=2)
    firsts.add_argument("--keys", type=int, default=20)
    memories = commands.add_parser("memory", help="a server's PSS after distinct filtered downloads, per bound")
    memories.add_argument("dataset", type=Path)
    memories.add_argument("--bounds", type=int, nargs="+", default=[0, 1000])
    memories.add_argument("--rounds", type=int, default=2)
    memories.add_argument("--keys", type=int, default=20)
    sizes = commands.add_parser("size", help="engine.size's CPU on a synthetic incidence")
    sizes.add_argument("--synthetic", type=int, required=True)
    sizes.add_argument("--like", type=Path, required=True)
    args = parser.parse_args()
    if args.command == "size":
        size(args.synthetic, args.like)
        return
    if args.command == "memory":
        print("| DOWNLOAD_IN_PROCESS_AUTHORS | PSS after a map (MB) | after the downloads (MB) | ratio | load |")
        print("|---:|---:|---:|---:|---:|")
        for _ in range(args.rounds):
            for bound in args.bounds:
                memory(args.dataset, bound, args.keys)
        return
    print(f"{sys.executable} {args.dataset}")
    columns = "wall s | web CPU s | child CPU s | CPU s | again, CPU ms | load"
    print(f"| DOWNLOAD_IN_PROCESS_AUTHORS | download | {columns} |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    for _ in range(args.rounds):
        for bound in args.bounds:
            first(args.dataset, bound, args.keys)


if __name__ == "__main__":
    main()
