"""A dataset's N-Triples dump bulk-loaded into Virtuoso (``ld_dir`` + ``rdf_loader_run``) as a version graph, then
the pointer written as ``bibgraph publish`` writes it: what ``bench.engines.remote --serve DATASET --published`` serves.

At 1M papers ``publish`` (the Graph Store Protocol, a batch a request) runs at 2,600 to 5,500 triples/s on this
shared machine: 48M triples take hours. Virtuoso's bulk loader reads the dump from its disk, no HTTP, no parse in
Python. Usage: ``python -m bench.engines.virtuosoload DATASET DIR [--buffers N]``: the database in ``DIR/virtuoso``; the
dump is linked into ``DIR/load`` (Virtuoso reads only its ``DirsAllowed``); then ``--published`` serves it.
"""

import argparse
import os
import time
from pathlib import Path

from bench.virtuoso import isql, sql_port, virtuoso
from bibgraph.graph.dataset import directory
from bibgraph.graph.engines.client import Deadline, Session
from bibgraph.graph.engines.publish import Engine, Target, dataset_content, version_graph
from bibgraph.graph.stores.remote import CURRENT

GRAPH = "urn:bibgraph:bench"  # what bench.engines.remote --serve reads


def bulk_load(dataset: Path, scratch: Path, buffers: int) -> None:
    """Load ``dataset``'s current N-Triples dump into a new version graph of :data:`GRAPH` in the Virtuoso kept in
    ``scratch``; count it; record the dataset's identity and make it ``current``. Prints the wall and the rate (the
    CPU is Virtuoso's: run it under ``/usr/bin/time -v``)."""
    version = directory.current_version(dataset)
    load = scratch / "load"
    load.mkdir(parents=True, exist_ok=True)
    link = load / "bibgraph.nt"
    link.unlink(missing_ok=True)
    link.symlink_to(version / "dumps" / "bibgraph.nt")
    (scratch / "virtuoso").mkdir(exist_ok=True)
    graph = version_graph(GRAPH, version.name)
    with virtuoso(scratch / "virtuoso", None, buffers, 100_000_000, 3600, allowed=[load]) as endpoint:
        server, port = endpoint.removesuffix("/sparql"), sql_port(scratch / "virtuoso")
        started = time.perf_counter()
        print(f"loading into <{graph}>; load {os.getloadavg()}", flush=True)
        isql(port, f"ld_dir('{load}', 'bibgraph.nt', '{graph}');")
        isql(port, "rdf_loader_run();", timeout=6 * 3600)
        isql(port, "checkpoint;", timeout=3600)
        wall = time.perf_counter() - started
        target = Target.parse(f"{server}/sparql-graph-crud-auth", GRAPH, user="dba", password="dba")
        engine = Engine(target, Session(target.credentials, Deadline(3600)))
        for url in (target.url, target.update):
            engine.session.login(url)
        count = engine.count(graph)
        print(f"loaded {count} triples in {wall:.1f} s ({count / wall:,.0f} triples/s); load {os.getloadavg()}")
        content = dataset_content(version / directory.STORE)
        if content is not None:
            engine.record(graph, content)
        engine.mark(insert=[(CURRENT, graph)])
        print(f"readers of <{GRAPH}> now read <{graph}>", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("scratch", type=Path, help="the Virtuoso database goes in SCRATCH/virtuoso")
    parser.add_argument("--buffers", type=int, default=400_000, help="Virtuoso NumberOfBuffers (8 kB pages)")
    args = parser.parse_args()
    bulk_load(args.dataset, args.scratch, args.buffers)


if __name__ == "__main__":
    main()
