"""Benchmark the map views at scale: the dataset build's derive step (time, peak memory) and each map view's
first (cold) and repeated (warm) answer from a served dataset.

``python -m bench.serving.maps derive STORE OUT --base IRI`` derives the views' data of the complete on-disk store
``STORE`` (opened read-only, never written) into the version directory ``OUT`` (``OUT/store`` is a link to
it), as ``build --dataset`` does, and prints its time and the peak PSS of its process tree (the web process
and its query workers). ``python -m bench.serving.maps views DIR`` serves the dataset ``DIR`` and asks each map view
twice; the baseline, measured in the same run on the same server, is a one-row SPARQL query.
``python -m bench.serving.maps burst DIR --requests K --against OTHER/.venv/bin/python`` serves the dataset ``DIR`` with
this checkout and with the other interpreter's (e.g. main's), in turn, and sends each K distinct map requests at
once (co-author maps and whole-network GraphML exports, every one a filter combination not kept): the peak PSS
of the server's process tree over its PSS once warm, the answers by status, and the time until all are answered.
``python -m bench.serving.maps synthetic --papers N`` builds the incidence of N generated papers in this process
(no store: skewed productivity, 1-20 authors a paper, 32 subjects) and times each map's computation
from it, beside the baseline of one vectorised count of papers per author over the same arrays.
"""

import argparse
import re
import resource
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from array import array
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import numpy as np

from bench.servers import free_port, stop, wait_for_http
from bench.serving.serve import COUNT_PAPERS, TOP_AUTHOR, get, local, select
from bench.serving.sparql import MemoryWatch, pss_kb
from bibgraph.graph.dataset.derived import DATA_FORMATS
from bibgraph.graph.dataset.directory import MANIFEST, STORE, read_manifest
from bibgraph.graph.dataset.opener import dataset_version
from bibgraph.graph.networks import Filters, analytics, coauthor, ego, topic
from bibgraph.graph.networks.incidence import Concept, _arrays
from bibgraph.graph.networks.layout import layout
from bibgraph.graph.networks.spec import author_radius

SUBAREA_OF = """SELECT ?sub ?area WHERE { ?sub <http://www.w3.org/2004/02/skos/core#broader> ?area }
ORDER BY ?sub LIMIT 1"""


def derive(store: Path, out: Path, base: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    if not (out / STORE).exists():
        (out / STORE).symlink_to(store.resolve())
    code = (
        f"from bibgraph.web.commands.versionwrite import derive; derive(__import__('pathlib').Path({str(out)!r}), "
        f"{base!r})"
    )
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-c", code])
    watch = MemoryWatch(process.pid)
    if process.wait():
        raise SystemExit(f"derive failed with {process.returncode}")
    print("| measure | seconds (or MB) |\n|---|---:|")
    seconds = time.perf_counter() - started
    print(f"| derive step (incidence, default/area/subarea maps, topic maps, search, home) | {seconds:.2f} |")
    print(f"| derive step peak PSS, web process and workers (MB) | {watch.stop():.0f} |")
    size = sum(path.stat().st_size for path in (out / "derived").iterdir()) / 2**20
    print(f"| derived/ on disk (MB) | {size:.0f} |")


def map_paths(area: str, sub: str, author: str, other: str) -> dict[str, str]:
    """The map views asked for (name: path), of an area, one of its subareas and the two top authors (app paths);
    shared with bench.serving.latency."""
    return {
        "co-author map (precomputed)": "/graph/coauthors",
        "co-author map of an area (precomputed)": f"/graph/coauthors?area={area}",
        "co-author map of a subarea (precomputed)": f"/graph/coauthors?subarea={sub}",
        "co-author map, area + min 3 papers": f"/graph/coauthors?area={area}&min_papers=3",
        "co-author map, min 2 joint papers": "/graph/coauthors?min_joint=2",
        "co-author map, subarea + community 0": f"/graph/coauthors?subarea={sub}&community=0",
        "co-author map, top 200 fractional": "/graph/coauthors?top=200&weighting=fractional",
        "ego of the top author": "/graph/ego" + author,
        "ego of the top author, radius 2": f"/graph/ego{author}?radius=2",
        "topic map (precomputed)": "/graph/topics",
        "topic map, all subareas (precomputed)": "/graph/topics?subareas=all",
        "download: area map, min 3 papers, VOSviewer": f"/graph/coauthors.vosviewer?area={area}&min_papers=3",
        "download: top 500, fractional, node-link JSON": "/graph/coauthors.json?top=500&weighting=fractional",
        "download: subarea map, GEXF": f"/graph/coauthors.gexf?subarea={sub}",
        "download: topic network GraphML": "/graph/topics.graphml",
        "path between the two top authors": f"/graph/path?from={quote(author)}&to={quote(other)}",
    }


def views(root: Path) -> None:
    version = dataset_version(root)
    base = read_manifest(version)["base"] if (version / MANIFEST).is_file() else None
    port = free_port()
    server = f"http://127.0.0.1:{port}"
    command = [str(Path(sys.executable).parent / "bibgraph"), "serve", str(root), "--port", str(port)]
    command += ["--timeout", "600", "--client-queries", "0"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        watch = MemoryWatch(process.pid)
        wait_for_http(f"{server}/health", process, timeout=600)
        endpoint = f"{server}/sparql"
        base = base or server + "/"
        top = select(endpoint, TOP_AUTHOR)
        sub, area = select(endpoint, SUBAREA_OF)[0]
        author, other = (local(base, row[0]) for row in top)
        area, sub = local(base, area).lstrip("/"), local(base, sub).lstrip("/")
        baseline = f"/sparql?query={quote(COUNT_PAPERS)}"
        paths = {"baseline: SPARQL count of papers": baseline, **map_paths(area, sub, author, other)}
        print("| view | first (s) | again (s) |\n|---|---:|---:|")
        for name, path in paths.items():
            first = get(server + path)
            again = get(server + path)
            print(f"| {name} | {first:.2f} | {again:.2f} |", flush=True)
        print(f"| server peak PSS (MB) | {watch.stop():.0f} | |")
    finally:
        stop(process, timeout=20)


def burst(root: Path, requests: int, against: list[str], rounds: int) -> None:
    """K distinct map requests at once, against a server of each interpreter in turn (see the module docstring)."""
    # even: a drawn map of (about) 1,000 authors with its layout (not the default 1,000: a dataset keeps that one);
    # odd: the whole co-author network exported
    paths = [
        f"/graph/coauthors?top={999 - i}" if i % 2 == 0 else f"/graph/coauthors.graphml?top={1_000_000 - i}"
        for i in range(requests)
    ]
    print("| server | round | PSS warm (MB) | peak PSS (MB) | peak - warm (MB) | answers | all answered (s) |")
    print("|---|---:|---:|---:|---:|---|---:|")
    for round_ in range(rounds):
        for name, python in (("this checkout", sys.executable), *((f"{p} (against)", p) for p in against)):
            warm, peak, statuses, seconds, refused = _burst(python, root, paths)
            answers = ", ".join(f"{statuses.count(code)}x {code}" for code in sorted(set(statuses)))
            answers += f" ({refused})" if refused else ""
            row = [name, str(round_ + 1), f"{warm:.0f}", f"{peak:.0f}", f"{peak - warm:.0f}", answers, f"{seconds:.1f}"]
            print("| " + " | ".join(row) + " |", flush=True)


def _burst(python: str, root: Path, paths: list[str]) -> tuple[float, float, list[int], float, str]:
    """Serve ``root`` with ``python``; PSS once warm, peak PSS while ``paths`` are asked at once, their statuses,
    the seconds until all are answered, and the refusals by cause (as ``/metrics`` counts them, if it does)."""
    port = free_port()
    server = f"http://127.0.0.1:{port}"
    command = [
        python,
        "-m",
        "bibgraph.web.commands.cli",
        "serve",
        str(root),
        "--port",
        str(port),
        "--client-queries",
        "0",
    ]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        wait_for_http(f"{server}/health", process, timeout=600)
        _status(server + "/graph/coauthors?min_papers=9&min_joint=9")  # the incidence, loaded once
        time.sleep(1)
        warm = pss_kb(process.pid) / 1024
        watch = MemoryWatch(process.pid)
        statuses: list[int] = []
        start = threading.Barrier(len(paths) + 1)
        threads = [threading.Thread(target=_ask, args=(start, server + path, statuses)) for path in paths]
        for thread in threads:
            thread.start()
        start.wait()
        started = time.perf_counter()
        for thread in threads:
            thread.join()
        seconds = time.perf_counter() - started
        with urllib.request.urlopen(server + "/metrics", timeout=60) as answer:  # the refusals by cause, if counted
            causes = re.findall(
                r'^bibgraph_map_derivations_refused_total\{cause="(\w+)"\} (\S+)$', answer.read().decode(), re.M
            )
        refused = ", ".join(f"{float(count):.0f} {cause}" for cause, count in causes if float(count))
        return warm, watch.stop(), statuses, seconds, refused
    finally:
        stop(process, timeout=20)


def _ask(start: threading.Barrier, url: str, statuses: list[int]) -> None:
    start.wait()
    statuses.append(_status(url))


def _status(url: str) -> int:
    """The HTTP status of ``url``, its body read."""
    try:
        with urllib.request.urlopen(url, timeout=900) as answer:
            answer.read()
            return int(answer.status)
    except urllib.error.HTTPError as error:
        error.read()
        return int(error.code)


def synthetic(papers: int, seed: int = 7) -> None:
    rng = np.random.default_rng(seed)
    authors = papers * 3 // 2
    sizes = np.minimum(1 + rng.geometric(0.35, papers), 20)
    # productivity: a few authors write hundreds of papers, most one or two (as bench/generate.py's lists)
    chosen = np.minimum((authors * rng.random(int(sizes.sum())) ** 2.2).astype(np.int64), authors - 1)
    paper_of = np.repeat(np.arange(papers), sizes)
    base = "http://127.0.0.1:5000/"
    started = time.perf_counter()
    author_ids = {f"{base}author/a{i:07d}": i for i in range(authors)}
    paper_ids = {f"{base}paper/p{i:07d}": i for i in range(papers)}
    concepts: dict[Concept, int] = {}
    for a in range(10):
        concepts[Concept(f"{base}area/a{a}", f"Area {a}", f"{base}area/a{a}", f"Area {a}")] = len(concepts)
    for s in range(22):
        a = s % 10
        key = Concept(f"{base}area/a{a}/s{s}", f"Sub {s}", f"{base}area/a{a}", f"Area {a}")
        concepts[key] = len(concepts)
    ap = array("q", np.column_stack([paper_of, chosen]).ravel().tolist())
    pc = array("q", np.column_stack([np.arange(papers), rng.integers(0, len(concepts), papers)]).ravel().tolist())
    names: list[str | None] = [f"Name {i}" for i in range(authors)]
    incidence = _arrays(author_ids, names, paper_ids, rng.random(papers) < 0.05, concepts, ap, pc)
    built = time.perf_counter() - started
    del author_ids, paper_ids, names, ap, pc
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    _, write, read = DATA_FORMATS["incidence"]
    data = write(incidence)
    started = time.perf_counter()
    read(data)
    loaded = time.perf_counter() - started
    print(f"| {papers} papers, {len(incidence.authors)} authors, {len(incidence.ap_paper)} authorships | | |")
    print("| measure | seconds | ratio to baseline |\n|---|---:|---:|")
    _, baseline = _timed(incidence.paper_counts, None)
    area, sub = f"{base}area/a1", f"{base}area/a1/s11"
    top = incidence.authors[int(np.argmax(incidence.paper_counts(None)))]

    def network(filters: Filters) -> Any:
        return coauthor.coauthor_network(incidence, filters)

    drawn = network(Filters(top=1000))

    figures = {
        "baseline: papers per author (one bincount)": lambda: incidence.paper_counts(None),
        "co-author map, top 1000": lambda: network(Filters(top=1000)),
        "co-author map of an area, top 1000": lambda: coauthor.coauthor_network(
            incidence, Filters(area=area, top=1000)
        ),
        "co-author map of a subarea, top 1000": lambda: coauthor.coauthor_network(
            incidence, Filters(subarea=sub, top=1000)
        ),
        "area + min 3 papers + min 2 joint": lambda: coauthor.coauthor_network(
            incidence, Filters(area=area, min_papers=3, min_joint=2, top=1000)
        ),
        "collaboration counts of 1000 drawn authors": lambda: coauthor.collaboration(incidence, Filters(), list(drawn)),
        "ego rings of the top author, radius 2, K 25": lambda: ego.ego_rings(incidence, top, 2, 25),
        "topic network": lambda: topic.topic_network(incidence),
        "topic map, all subareas": lambda: topic.topic_map(incidence, "all"),
    }
    for name, make in figures.items():
        _, seconds = _timed(make)
        print(f"| {name} | {seconds:.3f} | {seconds / baseline:.0f}x |", flush=True)
    radii = {node: author_radius(papers) for node, papers in drawn.nodes(data="papers")}
    _, seconds = _timed(layout, drawn, radii)
    print(
        f"| layout of the top-1000 map ({drawn.number_of_edges()} edges) | {seconds:.2f} | {seconds / baseline:.0f}x |"
    )
    _, seconds = _timed(analytics.summary, drawn)
    print(f"| analytics of the top-1000 map | {seconds:.2f} | {seconds / baseline:.0f}x |")
    print(f"| incidence built from IRIs (no store) | {built:.2f} | |")
    print(f"| peak RSS of this process while building (MB) | {peak:.0f} | |")
    print(f"| incidence kept as .npz (MB) / loaded (s) | {len(data) / 2**20:.0f} / {loaded:.2f} | |")


def _timed(function: Callable[..., Any], *args: Any) -> tuple[Any, float]:
    started = time.perf_counter()
    value = function(*args)
    return value, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    deriving = commands.add_parser("derive")
    deriving.add_argument("store", type=Path)
    deriving.add_argument("out", type=Path)
    deriving.add_argument("--base", required=True)
    serving = commands.add_parser("views")
    serving.add_argument("dataset", type=Path)
    bursting = commands.add_parser("burst")
    bursting.add_argument("dataset", type=Path)
    bursting.add_argument("--requests", type=int, default=6)
    bursting.add_argument("--against", nargs="*", default=[], help="other interpreters (checkouts) to serve with")
    bursting.add_argument("--rounds", type=int, default=1)
    generated = commands.add_parser("synthetic")
    generated.add_argument("--papers", type=int, default=1_000_000)
    args = parser.parse_args()
    if args.command == "derive":
        derive(args.store, args.out, args.base)
    elif args.command == "views":
        views(args.dataset)
    elif args.command == "burst":
        burst(args.dataset, args.requests, args.against, args.rounds)
    else:
        synthetic(args.papers)


if __name__ == "__main__":
    main()
