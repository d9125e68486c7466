"""Benchmark page and map latencies, cold and warm, of this checkout against another, alternately.

``python -m bench.serving.latency DATASET --against OTHER/.venv/bin/python OTHER_DATASET --rounds 3`` serves ``DATASET``
with this checkout's ``bibgraph serve`` (or ``--python PYTHON``'s) and ``OTHER_DATASET`` with the other
interpreter's (each dataset built by its own checkout: a dataset's derived files are its builder's), one server
after the other, ``--rounds`` times.
Each server run asks every page of :func:`bench.serving.serve.page_paths`, a typical author's (the median of papers per
author), and every map of :func:`bench.serving.maps.map_paths` twice: "first" is the first answer since the server
started
(cold: nothing derived in that process yet), "again" the same request repeated (warm). The pages to ask (the two
most prolific authors, a paper, the biggest subarea and its area) are found through the server's own ``/sparql``
before anything is timed, once per server; with ``--same-paths`` once, on this server, and asked of the other too:
two datasets built from the same corpus mint the same IRIs, an older checkout keeps no incidence to find the top
authors in, and at a million papers the GROUP BY that would find them takes over 600 s (an author the other does
not know by IRI is asked as its most prolific person of that name: :func:`same_people`). Only the command line
and HTTP are used, so any checkout of the project can be measured; the table gives the median of the rounds for
each server, the ratio of this checkout's to the other's, the server's ready time and peak PSS (the process tree),
and the load average at the start and end of the run.

Without ``--against``, one server alone (``python -m bench.serving.latency /work/data/d1m --rounds 1``): at a million
papers there may be no other checkout's dataset to pair with. ``--only "page home" map`` asks only the paths whose
name starts with one of these; ``--settle 60`` asks the first of them a minute after the paths are found, once the
server's warm-up is over (as it is after the earlier rows of a whole run). A request that fails (an HTTP error, a
timeout) is left out of its row's median, which says how many failed (``nan`` if all did), with a line saying why,
not the end of the run: at 100k an old server's map did not answer within 600 s, and nothing was reported. Each
request's time goes to stderr as it is measured (a round at 1M takes many minutes).
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.parse
from pathlib import Path

from bench.servers import free_port, kept_authors, stop, wait_for_http
from bench.serving.maps import map_paths
from bench.serving.serve import AREA_OF, BIGGEST_SUBAREA, ONE_PAPER, TOP_AUTHOR, get, page_paths, select
from bench.serving.sparql import MemoryWatch
from bibgraph.graph.dataset.directory import MANIFEST, read_manifest
from bibgraph.graph.dataset.opener import dataset_version
from bibgraph.graph.serving.memory import tree_pss
from bibgraph.graph.site.crawl import SITEMAP_LIMIT

AUTHORS = "SELECT (COUNT(DISTINCT ?a) AS ?n) WHERE { ?p <http://purl.org/dc/terms/creator> ?a }"
PAPERS = "SELECT (COUNT(?p) AS ?n) WHERE { ?p a <https://schema.org/ScholarlyArticle> }"
# the least prolific author of one paper, when the dataset keeps no incidence to take the median from
TYPICAL_AUTHOR = """SELECT ?a (COUNT(?q) AS ?n) WHERE { ?p <http://purl.org/dc/terms/creator> ?a .
  ?q <http://purl.org/dc/terms/creator> ?a } GROUP BY ?a ORDER BY ?n ?a LIMIT 1"""
NAME = "SELECT ?n WHERE { ?a <http://xmlns.com/foaf/0.1/name> ?n } LIMIT 1"
KNOWN = "SELECT ?t WHERE { ?a a ?t } LIMIT 1"
# the most prolific person of a name: a checkout that decides persons at build time splits one IRI of another
NAMED = """SELECT ?a (COUNT(?p) AS ?n) WHERE { ?a <http://xmlns.com/foaf/0.1/name> ?name .
  ?p <http://purl.org/dc/terms/creator> ?a } GROUP BY ?a ORDER BY DESC(?n) ?a LIMIT 1"""


def paths(server: str, dataset: Path, people: dict[str, str]) -> dict[str, str]:
    """Every page and map to ask, found through the server's own endpoint (an IRI's path is its page's path); the
    two most prolific authors and a typical one from the incidence the dataset keeps, if it does (a GROUP BY over
    every creator is slow at a million papers), the counts of authors and papers from its manifest if it has them
    (a COUNT(DISTINCT) over every creator is too). ``people`` gets each author's name, by IRI."""
    endpoint = f"{server}/sparql"
    version = dataset_version(dataset) if dataset.is_dir() else None
    kept, typical = kept_authors(version) if version else ([], [])
    top = kept or select(endpoint, TOP_AUTHOR)
    author, other = (urllib.parse.urlsplit(row[0]).path for row in top)
    subarea, papers = select(endpoint, BIGGEST_SUBAREA)[0]
    area = select(endpoint, AREA_OF.replace("?c", f"<{subarea}>"))[0][0]
    paper = select(endpoint, ONE_PAPER)[0][0]
    typical = typical or select(endpoint, TYPICAL_AUTHOR.replace("?p", f"<{paper}>", 1))[0]
    counts = read_manifest(version).get("counts", {}) if version and (version / MANIFEST).is_file() else {}
    authors = counts.get("authors") or int(select(endpoint, AUTHORS)[0][0])
    last_authors = -(-authors // SITEMAP_LIMIT)
    paper, area, subarea = (urllib.parse.urlsplit(iri).path for iri in (paper, area, subarea))
    pages = page_paths(author, other, int(top[0][1]), paper, area, subarea, int(papers), last_authors)
    pages[f"author, typical ({typical[1]} papers)"] = urllib.parse.urlsplit(typical[0]).path
    papers_count = counts.get("papers") or int(select(endpoint, PAPERS)[0][0])  # the papers' OFFSET walks the store
    last_papers = -(-papers_count // SITEMAP_LIMIT)
    pages[f"sitemap, papers {last_papers}"] = f"/sitemap-papers-{last_papers}.xml"
    maps = map_paths(area.lstrip("/"), subarea.lstrip("/"), author, other)
    for iri in (top[0][0], top[1][0], typical[0]):
        people[iri] = select(endpoint, NAME.replace("?a", f"<{iri}>"))[0][0]
    return {**{f"page {name}": path for name, path in pages.items()}, **{f"map {k}": v for k, v in maps.items()}}


def timed(url: str, failures: list[str]) -> float:
    """Seconds to fetch ``url``; NaN, and a line in ``failures``, if it fails."""
    started = time.perf_counter()
    try:
        return get(url)
    except (urllib.error.HTTPError, OSError) as error:
        failures.append(f"{url}: {error} after {time.perf_counter() - started:.1f} s")
        return math.nan


def median_of(values: list[float]) -> tuple[float, int]:
    """The median of the rounds that answered (a failed request is NaN, which has no place in an order), and how
    many failed."""
    answered = [value for value in values if not math.isnan(value)]
    return (statistics.median(answered) if answered else math.nan), len(values) - len(answered)


def shown(median: tuple[float, int]) -> str:
    value, failed = median
    return f"{value:.3f}" + (f" ({failed} failed)" if failed else "")


def same_people(server: str, asked: dict[str, str], people: dict[str, str]) -> dict[str, str]:
    """``asked`` with each author this server does not know (by IRI) replaced by its most prolific person of the
    same name: the dataset before persons were decided at build time has one IRI where a later one has several."""
    endpoint = f"{server}/sparql"
    for iri, name in people.items():
        if select(endpoint, KNOWN.replace("?a", f"<{iri}>")):
            continue
        found = urllib.parse.urlsplit(select(endpoint, NAMED.replace("?name", json.dumps(name)))[0][0]).path
        asked = {key: value.replace(urllib.parse.urlsplit(iri).path, found) for key, value in asked.items()}
    return asked


def run(
    python: str,
    dataset: Path,
    only: list[str],
    failures: list[str],
    asked: dict[str, str],
    people: dict[str, str],
    settle: float = 0.0,
) -> dict[str, float]:
    """One server run: seconds until ready, then every path first and again (``settle`` seconds after the paths
    are found: a warm-up's work is then over, as in a run of every path); the PSS of its process tree once every
    path was asked twice, and its peak. The paths are found at the first run that gets ``asked`` empty and kept in
    it for the next runs given the same dict (``people``: their authors' names, for :func:`same_people`)."""
    port = free_port()
    server = f"http://127.0.0.1:{port}"
    command = [str(Path(python).parent / "bibgraph"), "serve", str(dataset), "--port", str(port)]
    command += ["--timeout", "600", "--client-queries", "0"]  # one client here: no fair share
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        watch = MemoryWatch(process.pid)
        wait_for_http(f"{server}/health", process, timeout=600)
        figures = {"ready: /health answers (s)": time.perf_counter() - started}
        figures["server PSS when ready (MB)"] = tree_pss(process.pid) / 2**20
        asked.update(asked or paths(server, dataset, people))
        time.sleep(settle)
        for name, path in same_people(server, asked, people).items():
            if only and not name.startswith(tuple(only)):
                continue
            for when in ("first", "again"):
                figures[f"{name}: {when}"] = seconds = timed(server + path, failures)
                print(f"  {name}: {when} {seconds:.3f} s", file=sys.stderr, flush=True)  # a long run shows its way
        figures["server PSS after (MB)"] = tree_pss(process.pid) / 2**20
        figures["server peak PSS (MB)"] = watch.stop()
        return figures
    finally:
        stop(process, timeout=20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--against", nargs=2, metavar=("PYTHON", "DATASET"), help="the other server (default: none)")
    parser.add_argument("--python", default=sys.executable, help="the interpreter serving DATASET (default: this one)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", nargs="*", default=[], help="ask only the paths whose name starts with one of these")
    parser.add_argument("--same-paths", action="store_true", help="ask the other server the paths found on this one")
    parser.add_argument("--settle", type=float, default=0.0, help="seconds to wait before the first path is asked")
    args = parser.parse_args()
    servers = {"this": (args.python, args.dataset)}
    if args.against:
        servers["other"] = (args.against[0], Path(args.against[1]))
    load = os.getloadavg()
    failures: list[str] = []
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in servers}
    shared: tuple[dict[str, str], dict[str, str]] = ({}, {})
    asked = {name: shared if args.same_paths else ({}, {}) for name in servers}
    for round_ in range(args.rounds):
        for name, (python, dataset) in servers.items() if round_ % 2 == 0 else reversed(servers.items()):
            runs[name].append(run(python, dataset, args.only, failures, *asked[name], args.settle))
            print(f"round {round_ + 1}: {name} done (load {os.getloadavg()[0]:.1f})", file=sys.stderr, flush=True)
    other = f"; other: {' '.join(args.against)}" if args.against else ""
    other += ", the paths found on this server" if args.same_paths and args.against else ""
    settled = f", {args.settle:g} s after ready" if args.settle else ""
    print(f"this: {args.python} {args.dataset}{other}; {args.rounds} rounds{settled}")
    print(f"load average (1, 5, 15 min) at the start {load}, at the end {os.getloadavg()}\n")
    if not args.against:
        print("| measure | this (median) |\n|---|---:|")
    else:
        print("| measure | this (median) | other (median) | this / other |\n|---|---:|---:|---:|")
    # paired by position: a page named by its counts (the top author's papers) may differ between the datasets
    for index, measure in enumerate(runs["this"][0]):
        mine = median_of([list(r.values())[index] for r in runs["this"]])
        if not args.against:
            print(f"| {measure} | {shown(mine)} |")
            continue
        theirs = median_of([list(r.values())[index] for r in runs["other"]])
        ratio = mine[0] / theirs[0] if theirs[0] else math.nan
        print(f"| {measure} | {shown(mine)} | {shown(theirs)} | {ratio:.2f} |")
    for failure in failures:
        print(f"failed: {failure}")


if __name__ == "__main__":
    main()
