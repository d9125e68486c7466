"""Benchmark ``bibgraph publish`` into Virtuoso and the views served from it, against the embedded store.

The row path (what the embedded store serves with, and what a remote store did before push-down)
fetches every authorship row once (timed on both stores), then derives each view in Python; the
push-down path has the engine aggregate, per view, on the embedded store and on Virtuoso (what
``serve --store sparql:URL`` does). Nothing else is cached between measures.
Usage: ``python -m bench.remote --size 100000`` (needs Debian's virtuoso-opensource; ``--buffers``
sizes its cache in 8 kB pages). ``--store DIR`` measures an on-disk store already built (say, from
``/tmp/shared-bench/l100k``) instead of generating one; with ``--scratch DIR`` the Virtuoso database is
kept there, and ``--published`` serves what an earlier run published into it rather than publishing again.
"""

import argparse
import contextlib
import os
import subprocess
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TypeVar

import networkx as nx

from bench.generate import write_lists
from bench.virtuoso import virtuoso
from bibgraph.graph import analytics
from bibgraph.graph.dataset import build_disk_store
from bibgraph.graph.networks import (
    Authorship,
    Filters,
    authorships,
    bipartite_graph,
    coauthor_network,
    topic_map,
    topic_network,
)
from bibgraph.graph.publish import Target, publish
from bibgraph.graph.pushdown import (
    author_names_from,
    coauthor_network_from,
    collaboration_from,
    ego_rings_from,
    topic_map_from,
    topic_network_from,
)
from bibgraph.graph.stores.remote import RemoteGraphStore
from bibgraph.graph.stores.store import GraphStore, OxigraphGraphStore
from bibgraph.graph.vocab import sparql_prologue

BASE = "http://bibgraph.test/"
VIEW_CAP = 1000  # MAX_VIEW_NODES's default: the co-author map draws at most this many authors
EGO_TOP = 25  # the ego map's default K


T = TypeVar("T")


def timed(function: Callable[[], T]) -> tuple[T, float]:
    started = time.perf_counter()
    result = function()
    return result, time.perf_counter() - started


def size_of(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def peak_kb(marker: str) -> int:
    """Peak resident memory (VmHWM) of the process whose command line holds ``marker``."""
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if entry.name.isdigit() and marker in (entry / "cmdline").read_bytes().decode(errors="replace"):
                for line in (entry / "status").read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1])
    return 0


def views(prolific: str, area: str) -> dict[str, Callable[[GraphStore, list[Authorship] | None], object]]:
    """Each view from a store: pushed down when no rows are given, else derived from the rows (the row path)."""

    def ego(store: GraphStore, rows: list[Authorship] | None) -> nx.Graph:
        if rows is None:
            rings, _ = ego_rings_from(store, prolific, 2, EGO_TOP)
        else:
            rings, _ = analytics.ego_rings(bipartite_graph(rows), prolific, 2, EGO_TOP)
        return coauthors(store, rows, Filters(authors=frozenset(node for ring in rings for node in ring)))

    def summary(store: GraphStore, rows: list[Authorship] | None) -> object:
        drawn = list(coauthors(store, rows, Filters(top=VIEW_CAP)))
        if rows is None:
            return collaboration_from(store, Filters(), drawn)
        return analytics.collaboration(bipartite_graph(rows), drawn)

    def names(store: GraphStore, rows: list[Authorship] | None) -> object:
        if rows is None:
            return author_names_from(store)
        return {name for _, name in bipartite_graph(rows).nodes(data="name") if name}

    return {
        "co-author network, whole": lambda s, r: coauthors(s, r, Filters()),
        f"co-author map, top {VIEW_CAP}": lambda s, r: coauthors(s, r, Filters(top=VIEW_CAP)),
        f"co-author map, one area, top {VIEW_CAP}": lambda s, r: coauthors(s, r, Filters(area=area, top=VIEW_CAP)),
        f"ego network (radius 2, top {EGO_TOP})": ego,
        f"map summary (collaboration of {VIEW_CAP})": summary,
        "topic network": lambda s, r: topic_network_from(s, push_down=True) if r is None else topic_network(r),
        "topic map": lambda s, r: topic_map_from(s, None, 3, push_down=True) if r is None else topic_map(r),
        "author names (autocomplete)": names,
    }


def most_prolific_and_largest_area(store: GraphStore) -> tuple[str, str]:
    """The author with most papers (the ego view's centre) and the area with most authorships (the filtered map's)."""
    author = store.select(
        sparql_prologue() + "SELECT ?a WHERE { ?p dcterms:creator ?a } GROUP BY ?a ORDER BY DESC(COUNT(?p)) ?a LIMIT 1"
    )[0]["a"]
    area = store.select(
        sparql_prologue() + "SELECT ?area WHERE { ?p dcterms:creator ?a ; dcterms:subject ?c ."
        " OPTIONAL { ?c skos:broader ?parent } BIND (COALESCE(?parent, ?c) AS ?area) }"
        " GROUP BY ?area ORDER BY DESC(COUNT(*)) ?area LIMIT 1"
    )[0]["area"]
    return str(author), str(area)


def coauthors(store: GraphStore, rows: list[Authorship] | None, filters: Filters) -> nx.Graph:
    return coauthor_network_from(store, filters, push_down=True) if rows is None else coauthor_network(rows, filters)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000, help="papers to generate")
    parser.add_argument("--buffers", type=int, default=170_000, help="Virtuoso NumberOfBuffers (8 kB pages)")
    parser.add_argument("--batch", type=int, default=100_000, help="triples per publish request")
    parser.add_argument("--skip-embedded-push-down", action="store_true", help="measure push-down on Virtuoso only")
    parser.add_argument("--only", nargs="+", help="measure only the views whose names contain one of these words")
    parser.add_argument("--scratch", type=Path, help="keep the data here (default: a temporary directory)")
    parser.add_argument("--store", type=Path, help="an on-disk store to measure (default: generate and build one)")
    parser.add_argument("--published", action="store_true", help="the Virtuoso database in --scratch is loaded")
    parser.add_argument("--no-views", action="store_true", help="measure the publish only")
    parser.add_argument("--no-rows", action="store_true", help="skip the row path (push-down only)")
    parser.add_argument("--remote-rows", action="store_true", help="also time fetching every row from Virtuoso")
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        scratch = args.scratch or Path(stack.enter_context(tempfile.TemporaryDirectory()))
        scratch.mkdir(parents=True, exist_ok=True)
        store_dir = args.store or scratch / "store"
        if not store_dir.exists():
            lists = write_lists(scratch / "lists", args.size)
            summary, seconds = timed(lambda: build_disk_store(store_dir, lists, BASE))
            print(f"build (disk store): {seconds:.1f} s: {summary}", flush=True)
        store = OxigraphGraphStore.disk(store_dir, read_only=True)
        triples = store.triple_count()
        print(f"embedded store: {triples} triples, {size_of(store_dir) / 1e9:.2f} GB on disk", flush=True)
        prolific, area = most_prolific_and_largest_area(store)

        database = scratch / "virtuoso"
        database.mkdir(exist_ok=True)
        endpoint = stack.enter_context(
            virtuoso(database, None, buffers=args.buffers, max_rows=100_000_000, max_seconds=3600)
        )
        server = endpoint.removesuffix("/sparql")
        target = Target.parse(f"{server}/sparql-graph-crud-auth", BASE, user="dba", password="dba")
        if not args.published:
            report = publish(store_dir, target, args.batch, progress=print)
            print(f"publish (batches of {args.batch}): {report.summary()}", flush=True)
        subprocess.run(["sync"], check=False)
        print(
            f"virtuoso: {size_of(database) / 1e9:.2f} GB on disk, peak {peak_kb(str(database)) / 1e6:.2f} GB resident",
            flush=True,
        )
        if args.no_views:
            return
        remote = RemoteGraphStore(f"{endpoint}?default-graph-uri={BASE}", timeout=3600)

        print(f"\n{args.size} papers, {triples} triples; machine load {os.getloadavg()[0]:.1f} at start")
        local_rows: list[Authorship] = []
        if not args.no_rows:
            local_rows, local_seconds = timed(lambda: authorships(store))
            print(f"authorship rows ({len(local_rows)}), the row path's input, fetched once and cached by the app:")
            print(f"embedded {local_seconds:.2f} s", flush=True)
        if args.remote_rows:
            print(f"Virtuoso {timed(lambda: authorships(remote))[1]:.2f} s")
        print()
        print("| view | from cached rows (either store) | embedded, push-down | Virtuoso, push-down |")
        print("|---|---:|---:|---:|")
        for name, view in views(prolific, area).items():
            if args.only and not any(word in name for word in args.only):
                continue
            cells = [] if args.no_rows else [timed(partial(view, store, local_rows))[1]]
            if not args.skip_embedded_push_down:
                cells.append(timed(partial(view, store, None))[1])
            cells.append(timed(partial(view, remote, None))[1])
            shown = [f"{seconds:.2f} s" for seconds in cells]
            if args.skip_embedded_push_down:
                shown.insert(len(shown) - 1, "not run")
            if args.no_rows:
                shown.insert(0, "not run")
            print(f"| {name} | {' | '.join(shown)} |", flush=True)
        print(f"\nvirtuoso peak after the views: {peak_kb(str(database)) / 1e6:.2f} GB resident")
        print(f"machine load {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
