"""Benchmark ``bibgraph publish`` into Virtuoso and the views served from it, against the embedded store.

Every view of either store is computed by the one network engine from the store's incidence, read by the same
streamed queries (timed on both stores: what ``serve --store sparql:URL`` reads once); then each view is timed
from that incidence (the same work whichever store it was read from). Nothing else is cached between measures.
Usage: ``python -m bench.engines.remote --size 100000`` (needs Debian's virtuoso-opensource; ``--buffers``
sizes its cache in 8 kB pages). ``--store DIR`` measures an on-disk store already built (say, from
``/tmp/shared-bench/l100k``) instead of generating one; with ``--scratch DIR`` the Virtuoso database is
kept there, and ``--published`` serves what an earlier run published into it rather than publishing again
(``--cold``: Virtuoso's files dropped from the page cache before it starts, so "cold" is as after a reboot).

``--serve DATASET`` measures the site in front of the engine instead (``--oxigraph DIR``: the Oxigraph server on a
store loaded already, rather than Virtuoso): the dataset published while a reader
polls the count (which counts it saw; not again with ``--published``), then ``bibgraph serve --store sparql:URL
--published DATASET`` (``--modes``: with it, without it, or both in turn): the home page, the first searches, a
profile, a concept page and the co-author map cold (once the start's warm-up ended) and warm, and the web
process's memory (PSS, and the whole server's) while each dump and the whole co-author network (GraphML, JSON)
are downloaded.
"""

import argparse
import contextlib
import os
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TypeVar

import numpy as np

from bench.engines.samesearch import compare_search
from bench.generate import write_lists
from bench.oxigraphserver import oxigraph_server
from bench.servers import bibgraph_process, kept_top_authors
from bench.virtuoso import virtuoso
from bibgraph.graph.dataset import directory
from bibgraph.graph.dataset.opener import build_disk_store
from bibgraph.graph.engines.publish import Target, publish
from bibgraph.graph.networks import Filters, engine
from bibgraph.graph.networks.incidence import Incidence, incidence_of
from bibgraph.graph.networks.spec import COAUTHORS, EGO, TOPIC_MAP, TOPICS, NetworkSpec
from bibgraph.graph.rdf.vocab import sparql_prologue
from bibgraph.graph.stores import remote as remote_store
from bibgraph.graph.stores.remote import RemoteGraphStore
from bibgraph.graph.stores.store import GraphStore, OxigraphGraphStore

BASE = "http://bibgraph.test/"
VIEW_CAP = 1000  # MAX_VIEW_NODES's default: the co-author map draws at most this many authors
EGO_TOP = 25  # the ego map's default K
EXPORTS = ("/graph/coauthors.graphml", "/graph/coauthors.json")  # the whole co-author network, two formats


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


def views(prolific: str, area: str) -> dict[str, Callable[[Incidence], object]]:
    """Each view, from an incidence, as the engine computes it for the web's maps."""

    def summary(incidence: Incidence) -> object:
        spec = NetworkSpec(COAUTHORS, Filters(top=VIEW_CAP))
        return engine.summary(incidence, spec, engine.network(incidence, spec))

    def network(spec: NetworkSpec) -> Callable[[Incidence], object]:
        return lambda incidence: engine.network(incidence, spec)

    return {
        "co-author network, whole": network(NetworkSpec(COAUTHORS)),
        f"co-author map, top {VIEW_CAP}": network(NetworkSpec(COAUTHORS, Filters(top=VIEW_CAP))),
        f"co-author map, one area, top {VIEW_CAP}": network(NetworkSpec(COAUTHORS, Filters(area=area, top=VIEW_CAP))),
        f"ego network (radius 2, top {EGO_TOP})": network(NetworkSpec(EGO, ego=(prolific, 2, EGO_TOP))),
        f"map summary (collaboration of {VIEW_CAP})": summary,
        "topic network": network(NetworkSpec(TOPICS)),
        "topic map": network(NetworkSpec(TOPIC_MAP)),
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


def pss_kb(pid: int) -> int:
    """Proportional set size of ``pid`` (shared pages divided among their users), 0 once it has gone."""
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    return 0


def descendants(pid: int) -> list[int]:
    found = [pid]
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            for child in (task / "children").read_text().split():
                found += descendants(int(child))
    return found


def get(url: str) -> tuple[int, float, int]:
    """Status, seconds and bytes of one GET, the body read through."""
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(url, timeout=3600) as response:
            size = sum(len(chunk) for chunk in iter(lambda: response.read(1 << 20), b""))
            return response.status, time.perf_counter() - started, size
    except urllib.error.HTTPError as error:
        return error.code, time.perf_counter() - started, 0


def made_in_the_background(url: str) -> tuple[int, float, int]:
    """A dump made in the background (``sparql:`` store, no published dataset), or the published dataset's dump
    checked against its manifest before its first send: GETs 2 s apart while they answer 503 (with Retry-After; a
    HEAD says 200 for a dataset's dump not checked yet), the last one read through: the status, seconds and bytes."""
    started = time.perf_counter()
    while True:
        status, seconds, size = get(url)
        if status != 503:
            break
        if time.perf_counter() - started < seconds + 1:
            print(f"first GET {url}: {status} in {seconds:.3f} s", flush=True)
        time.sleep(2)
    total = time.perf_counter() - started
    print(f"ready after {total - seconds:.1f} s, then sent in {seconds:.1f} s", flush=True)
    return status, total, size


def download_memory(
    url: str, pid: int, fetch: Callable[[str], tuple[int, float, int]] = get
) -> tuple[tuple[int, float, int], list[int], list[int]]:
    """``fetch`` of ``url`` while the PSS of ``pid`` and of its whole tree is sampled: before, and the peaks."""

    def now() -> list[int]:
        return [pss_kb(pid), sum(map(pss_kb, descendants(pid)))]

    before = now()
    peak = list(before)
    finished = threading.Event()

    def sample() -> None:
        while not finished.is_set():
            peak[:] = map(max, peak, now())
            time.sleep(0.05)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        return fetch(url), before, peak
    finally:
        finished.set()
        sampler.join()


def sample_pages(version: Path) -> list[str]:
    """A profile and a concept page (the most prolific author, the concept with most papers) of a dataset version,
    read from the incidence it keeps (a GROUP BY over every creator through the engine takes minutes at 1M)."""
    from bibgraph.graph.dataset.derived import DerivedFiles, derived_key

    base = directory.read_manifest(version)["base"]
    pages = [iri for iri, _ in kept_top_authors(version)[:1]]  # at 100k: 919 papers
    kept, incidence = DerivedFiles(version / directory.DERIVED).load(derived_key("incidence"))
    if kept and len(incidence.pc_concept):
        pages.append(incidence.concepts[int(np.bincount(incidence.pc_concept).argmax())].concept)
    return ["/" + iri.removeprefix(base) for iri in pages]


def publish_watched(dataset: Path, target: Target, reader: RemoteGraphStore, batch: int) -> None:
    """Publish ``dataset`` while a reader polls the count; print the report and which counts the reader saw."""
    seen: list[int] = []
    done = threading.Event()

    def poll() -> None:
        while not done.is_set():
            seen.append(reader.triple_count())
            time.sleep(0.05)

    remote_store.POINTER_TTL = 0.0  # this process's reader looks the pointer up for every count
    thread = threading.Thread(target=poll)
    thread.start()
    try:
        report = publish(dataset, target, batch)
    finally:
        done.set()
        thread.join()
    seen.append(reader.triple_count())  # the last poll may have come before the switch: what a reader reads now
    print(f"publish: {report.summary()}; load {os.getloadavg()}")
    print(f"a reader polling the count during it ({len(seen)} polls) saw: {sorted(set(seen))}", flush=True)


def serve_figures(
    dataset: Path,
    endpoint: str,
    server: str,
    scratch: Path,
    batch: int,
    loaded: bool,
    modes: list[str],
    pages_only: bool = False,
    dumps: bool = False,
    graph: str = "urn:bibgraph:bench",
) -> None:
    """Publish ``dataset`` into ``graph`` while a reader polls (unless ``loaded``); serve it from the engine in each
    of ``modes`` (``dataset``: with ``--published DATASET``; ``engine``: without); time pages; measure the web process
    during downloads."""
    version = directory.current_version(dataset)
    base = directory.read_manifest(version)["base"]
    if not loaded:
        target = Target.parse(f"{server}/sparql-graph-crud-auth", graph, user="dba", password="dba")
        publish_watched(dataset, target, RemoteGraphStore(f"{endpoint}?default-graph-uri={graph}", timeout=3600), batch)
    profile_and_concept = sample_pages(version)
    store = f"sparql:{endpoint}?default-graph-uri={graph}"
    for mode in modes:
        args = ["--store", store, "--base", base] + (["--published", str(dataset)] if mode == "dataset" else [])
        serve_one(args, scratch / f"serve-{mode}.log", profile_and_concept, pages_only=pages_only, dumps_only=dumps)


def settle(pid: int, idle: float = 0.05, seconds: float = 1.0, most: float = 120.0) -> None:
    """Wait until the process ``pid`` used under ``idle`` s of CPU in ``seconds`` (its warm-up has ended)."""

    def cpu() -> float:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    ends = time.monotonic() + most
    while time.monotonic() < ends:
        before = cpu()
        time.sleep(seconds)
        if cpu() - before < idle:
            return


def serve_one(
    args: list[str],
    log: Path,
    profile_and_concept: list[str],
    exports: tuple[str, ...] = EXPORTS,
    pages_only: bool = False,
    dumps_only: bool = False,
) -> None:
    """Start ``bibgraph serve ARGS``, wait for its warm-up, time the pages, measure the downloads and ``exports``
    (not with ``pages_only``: the profile first, cold, then the home page and the first searches, each twice;
    ``dumps_only``: the dump downloads alone, made in the background when served from the engine alone)."""
    print(f"serve {' '.join(args)}", flush=True)
    started = time.perf_counter()
    with bibgraph_process(args, log) as (site, process):
        while "GET /graph/topics " not in log.read_text(errors="replace"):  # the start's warm-up of the maps
            time.sleep(0.2)
        settle(process.pid)  # and of the rest (the kept search index checked, the incidence read): what a visitor
        # arriving minutes after the start meets; a page asked meanwhile waits for it (the first profile did, 3-4 s)
        print(f"start and warm-up: {time.perf_counter() - started:.1f} s; load {os.getloadavg()}")
        print("| request (after the warm-up) | status | seconds | bytes | load |\n|---|---:|---:|---:|---:|")
        paths = ["/", "/", "/search?q=Wang", "/search?q=Wang", "/search?q=regret", "/areas"]
        paths += [page for page in profile_and_concept for _ in range(2)] + ["/graph/coauthors"] * 2
        if pages_only:
            paths = [page for page in profile_and_concept for _ in range(2)] + paths[:6]
        for path in [] if dumps_only else paths:
            status, seconds, size = get(site + path)
            print(f"| `{path}` | {status} | {seconds:.3f} | {size} | {os.getloadavg()[0]:.1f} |", flush=True)
        if pages_only:
            return
        exports = () if dumps_only else exports
        downloads = ["/download/bibgraph.nt", "/download/bibgraph.ttl"]
        for path in [*downloads, *exports]:  # a dataset's dump is checked before its first send (503 meanwhile)
            fetch = made_in_the_background if path in downloads else get
            (status, seconds, size), before, peak = download_memory(site + path, process.pid, fetch)
            print(
                f"{path}: {status}, {size / 1e6:.1f} MB in {seconds:.1f} s; web process PSS"
                f" {before[0] / 1e3:.1f} MB before, {peak[0] / 1e3:.1f} MB peak; whole server"
                f" {before[1] / 1e3:.1f} MB before, {peak[1] / 1e3:.1f} MB peak; load {os.getloadavg()}",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000, help="papers to generate")
    parser.add_argument("--buffers", type=int, default=170_000, help="Virtuoso NumberOfBuffers (8 kB pages)")
    parser.add_argument("--batch", type=int, default=100_000, help="triples per publish request")
    parser.add_argument("--only", nargs="+", help="measure only the views whose names contain one of these words")
    parser.add_argument("--scratch", type=Path, help="keep the data here (default: a temporary directory)")
    parser.add_argument("--store", type=Path, help="an on-disk store to measure (default: generate and build one)")
    parser.add_argument("--published", action="store_true", help="the Virtuoso database in --scratch is loaded")
    parser.add_argument("--no-views", action="store_true", help="measure the publish only")
    parser.add_argument("--cold", action="store_true", help="drop Virtuoso's files from the page cache at its start")
    parser.add_argument("--serve", type=Path, metavar="DATASET", help="measure the site in front of the engine")
    parser.add_argument("--pages", action="store_true", help="with --serve: time the pages only (profile first)")
    parser.add_argument("--dumps", action="store_true", help="with --serve: the dump downloads, not the exports")
    parser.add_argument(
        "--oxigraph",
        type=Path,
        metavar="DIR",
        help="with --serve: the Oxigraph server (read-only) on this store, loaded already, its pointer the dataset's"
        " base IRI (bench.oxigraphserver: a version graph, or the dataset's own store in place)",
    )
    parser.add_argument("--compare-search", type=int, metavar="N", help="with --serve: compare N searches instead")
    parser.add_argument(
        "--modes",
        nargs="+",
        choices=["dataset", "engine"],
        default=["dataset"],
        help="with --serve: serve with --published DATASET (dataset), without it (engine), or both, in turn",
    )
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        scratch = args.scratch or Path(stack.enter_context(tempfile.TemporaryDirectory()))
        scratch.mkdir(parents=True, exist_ok=True)
        if args.serve is not None and args.oxigraph is not None:
            server = stack.enter_context(oxigraph_server(args.oxigraph, cold=args.cold, read_only=True))
            base = directory.read_manifest(directory.current_version(args.serve))["base"]
            figures = (args.serve, f"{server}/query", server, scratch, args.batch, True, args.modes)
            serve_figures(*figures, args.pages, args.dumps, graph=base)
            return
        if args.serve is not None:
            (scratch / "virtuoso").mkdir(exist_ok=True)
            endpoint = stack.enter_context(
                virtuoso(
                    scratch / "virtuoso",
                    None,
                    buffers=args.buffers,
                    max_rows=100_000_000,
                    max_seconds=3600,
                    cold=args.cold,
                )
            )
            server = endpoint.removesuffix("/sparql")
            if args.compare_search:
                compare_search(args.serve, endpoint, scratch, args.compare_search)
                return
            serve_figures(
                args.serve, endpoint, server, scratch, args.batch, args.published, args.modes, args.pages, args.dumps
            )
            return
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
        local, local_seconds = timed(lambda: incidence_of(store))
        far, far_seconds = timed(lambda: incidence_of(remote))
        print(f"incidence ({len(local.ap_paper)} authorships), read once and kept by the app:")
        print(f"embedded {local_seconds:.2f} s, Virtuoso {far_seconds:.2f} s", flush=True)
        print()
        print("| view | from the embedded store's incidence | from Virtuoso's |")
        print("|---|---:|---:|")
        for name, view in views(prolific, area).items():
            if args.only and not any(word in name for word in args.only):
                continue
            cells = [timed(partial(view, local))[1], timed(partial(view, far))[1]]
            print(f"| {name} | {' | '.join(f'{seconds:.2f} s' for seconds in cells)} |", flush=True)
        print(f"\nvirtuoso peak after the views: {peak_kb(str(database)) / 1e6:.2f} GB resident")
        print(f"machine load {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
