"""Benchmark serving a dataset: build time, serve-ready time, per-page latency cold and warm, server memory.

Baseline measured in the same run: the Oxigraph server (``oxigraph serve-read-only``) on the very store
the dataset holds, answering a SPARQL query; memory is the proportional set size (PSS) of each server's
whole process tree, sampled every 0.2 s. "Ready" is the time from starting ``bibgraph serve DIR`` until
``/``, ``/sparql``, ``/graph/coauthors`` and an author page have all answered.
Each server run uses ``--query-threads N`` (one run per N) and ends with N whole-store queries at once, so
the memory figures show whether memory grows with the query threads. bibgraph logs every query it runs
(``--slow-query-seconds 0``, JSON log); the Oxigraph server is then run again on the store and asked all of
them in the same order, for its peak memory under the very work bibgraph's pages did.
Usage: ``python -m bench.serving.serve --sizes 10000 100000`` (``--dataset DIR`` measures an existing dataset).
"""

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench.generate import write_lists
from bench.servers import free_port, kept_top_authors, stop, wait_for_http
from bench.serving.sparql import MemoryWatch, pss_kb
from bibgraph.graph.dataset.directory import STORE, current_version, read_manifest
from bibgraph.graph.site.crawl import SITEMAP_LIMIT

COUNT_PAPERS = "SELECT (COUNT(?p) AS ?n) WHERE { ?p <http://purl.org/dc/terms/abstract> ?a }"
TOP_AUTHOR = """SELECT ?a (COUNT(?p) AS ?n) WHERE { ?p <http://purl.org/dc/terms/creator> ?a }
GROUP BY ?a ORDER BY DESC(?n) ?a LIMIT 2"""
ONE_PAPER = "SELECT ?p WHERE { ?p <http://purl.org/dc/terms/abstract> ?a } LIMIT 1"  # unsorted: sorting IRIs is slow
SKOS = "http://www.w3.org/2004/02/skos/core#"
BIGGEST_SUBAREA = f"""SELECT ?c (COUNT(?p) AS ?n) WHERE {{
  ?p <http://purl.org/dc/terms/subject> ?c . ?c <{SKOS}broader> ?a
}} GROUP BY ?c ORDER BY DESC(?n) ?c LIMIT 1"""
AREA_OF = f"SELECT ?a WHERE {{ ?c <{SKOS}broader> ?a }}"  # bound to the subarea below


def busy(n: int) -> str:
    """A query that reads the whole store (a different one per thread, so no answer comes from the cache)."""
    return f"SELECT (COUNT(*) + {n} AS ?n) WHERE {{ ?s ?p ?o }}"


def get(url: str, timeout: float = 600) -> float:
    """Seconds to fetch ``url`` completely (an HTTP error raises)."""
    started = time.perf_counter()
    with urllib.request.urlopen(url, timeout=timeout) as answer:
        answer.read()
    return time.perf_counter() - started


def select(endpoint: str, query: str) -> list[list[str]]:
    url = urllib.request.Request(f"{endpoint}?query={urllib.parse.quote(query)}", headers={"Accept": "text/csv"})
    with urllib.request.urlopen(url, timeout=600) as answer:
        lines = answer.read().decode("utf-8").splitlines()[1:]
    return [line.split(",") for line in lines]


def local(base: str, iri: str) -> str:
    """The app path of an IRI minted under ``base``."""
    return "/" + iri.removeprefix(base)


def measure(root: Path, log: Path, threads: int) -> list[tuple[str, float]]:
    version = current_version(root)
    base = read_manifest(version)["base"]
    figures, (top, paper, (subarea, area, in_subarea)) = oxigraph(version / STORE, threads)  # pages to ask for
    author, other = (local(base, row[0]) for row in top)
    paper, area, subarea = local(base, paper), local(base, area), local(base, subarea)
    last_authors = -(-read_manifest(version)["counts"]["authors"] // SITEMAP_LIMIT)  # the last sitemap of authors
    port = free_port()
    server = f"http://127.0.0.1:{port}"
    bindir = Path(sys.executable).parent
    command = [str(bindir / "bibgraph"), "serve", str(root), "--port", str(port), "--timeout", "600"]
    command += ["--query-threads", str(threads), "--client-queries", "0"]  # one client here: no fair share
    command += ["--slow-query-seconds", "0", "--log-format", "json"]  # every query logged: replayed on Oxigraph
    started = time.perf_counter()
    with log.open("w") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
    try:
        watch = MemoryWatch(process.pid)
        wait_for_http(f"{server}/health", process, timeout=600)
        figures.append(("serve: /health answers", time.perf_counter() - started))
        for path in ("/", f"/sparql?query={urllib.parse.quote(COUNT_PAPERS)}", "/graph/coauthors", author):
            figures.append((f"serve: first {path.split('?')[0]}", get(server + path)))
        figures.append(("serve: ready (/, /sparql, /graph/coauthors, top author page)", time.perf_counter() - started))
        pages = page_paths(author, other, int(top[0][1]), paper, area, subarea, in_subarea, last_authors)
        for name, path in pages.items():
            cold = get(server + path)
            warm = get(server + path)
            figures += [(f"page {name}: first", cold), (f"page {name}: again", warm)]
        with ThreadPoolExecutor(threads) as clients:  # every query thread busy at once
            list(clients.map(lambda n: get(f"{server}/sparql?query={urllib.parse.quote(busy(n))}"), range(threads)))
        figures.append(("bibgraph server peak PSS (MB)", watch.stop()))
        figures += [(f"PSS at the end (MB): {name}", mb) for name, mb in process_pss(process.pid)]
    finally:
        stop(process, timeout=20)
    return figures + replayed(version / STORE, logged_queries(log))


def page_paths(
    author: str, other: str, author_papers: int, paper: str, area: str, subarea: str, in_subarea: int, last_authors: int
) -> dict[str, str]:
    """The pages asked for (name: app path): the two top authors', a paper's, an area's and its biggest subarea's
    (of ``in_subarea`` papers), the last sitemap of authors; shared with bench.serving.latency."""
    deep = max(1, in_subarea // 50 // 2)  # a page half-way through the biggest subarea
    return {
        "home": "/",
        "paper": paper,
        f"author ({author_papers} papers)": author,
        "area": area,
        "area, page 2": f"{area}?page=2",
        f"subarea ({in_subarea} papers)": subarea,
        f"subarea, page {deep}": f"{subarea}?page={deep}",
        "areas": "/areas",
        "dataset": "/dataset",
        "sitemap index": "/sitemap.xml",
        "sitemap, papers 1": "/sitemap-papers-1.xml",
        f"sitemap, authors {last_authors}": f"/sitemap-authors-{last_authors}.xml",
        "search": "/search?q=learning",
        "search, one letter": "/search?q=a",
        "author autocomplete": "/graph/authors.json?q=li",
        "co-author map": "/graph/coauthors",
        "co-author map, min 2 papers": "/graph/coauthors?min_papers=2",
        "ego": "/graph/ego" + author,
        "path": f"/graph/path?from={urllib.parse.quote(author)}&to={urllib.parse.quote(other)}",
        "topics": "/graph/topics",
    }


def logged_queries(log: Path) -> tuple[list[str], int]:
    """The SPARQL queries bibgraph ran (its JSON log, every query logged as slow), in order; and how many were
    logged cut (too long to replay)."""
    queries, cut = [], 0
    for line in log.read_text(encoding="utf-8").splitlines():
        with contextlib.suppress(ValueError):
            record = json.loads(line)
            if isinstance(record, dict) and record.get("name") == "bibgraph.queries" and "query" in record:
                if record["query"].endswith("…"):
                    cut += 1
                else:
                    queries.append(record["query"])
    return queries, cut


def replayed(store: Path, logged: tuple[list[str], int]) -> list[tuple[str, float]]:
    """The Oxigraph server on the same store answering every query bibgraph's pages and endpoint ran, one at a
    time in the same order: its peak memory under the same work (the baseline above answers only a few)."""
    queries, cut = logged
    port = free_port()
    bindir = Path(sys.executable).parent
    command = [str(bindir / "oxigraph"), "serve-read-only", "--location", str(store), "--bind", f"127.0.0.1:{port}"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        watch = MemoryWatch(process.pid)
        endpoint = f"http://127.0.0.1:{port}/query"
        wait_for_http(f"{endpoint}?query={urllib.parse.quote('ASK {}')}", process, timeout=600)
        started = time.perf_counter()
        for query in queries:
            request = urllib.request.Request(
                endpoint,
                data=query.encode("utf-8"),
                headers={
                    "Content-Type": "application/sparql-query",
                    "Accept": "text/tab-separated-values, application/n-triples",  # as bibgraph asks
                },
            )
            with urllib.request.urlopen(request, timeout=600) as answer:
                answer.read()
        seconds = time.perf_counter() - started
        return [
            (f"oxigraph server replaying bibgraph's {len(queries)} queries ({cut} too long, left out): s", seconds),
            ("oxigraph server replaying bibgraph's queries: peak PSS (MB)", watch.stop()),
        ]
    finally:
        stop(process, timeout=20)


def process_pss(root: int) -> list[tuple[str, float]]:
    """PSS of each process of the server's tree (the web process, then its descendants: zygote, worker)."""
    found, pids = [], [(root, "web process")]
    while pids:
        pid, name = pids.pop(0)
        found.append((f"{name} {pid}", pss_kb(pid, children=False) / 1024))
        with contextlib.suppress(OSError):
            for task in os.listdir(f"/proc/{pid}/task"):
                with contextlib.suppress(OSError):
                    children = Path(f"/proc/{pid}/task/{task}/children").read_text().split()
                    pids += [(int(child), f"child of {pid}") for child in children]
    return found


def oxigraph(store: Path, threads: int) -> tuple[list[tuple[str, float]], tuple[list[list[str]], str, tuple]]:
    """The Oxigraph server on the same store: ready time and peak memory after the same queries as bibgraph's;
    and what it answered (the two most prolific authors, a paper, the biggest subarea with its area and papers)."""
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}/query"
    bindir = Path(sys.executable).parent
    command = [str(bindir / "oxigraph"), "serve-read-only", "--location", str(store), "--bind", f"127.0.0.1:{port}"]
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        watch = MemoryWatch(process.pid)
        wait_for_http(f"{endpoint}?query={urllib.parse.quote('ASK {}')}", process, timeout=600)
        ready = time.perf_counter() - started
        select(endpoint, COUNT_PAPERS)
        subarea, papers = select(endpoint, BIGGEST_SUBAREA)[0]
        area = select(endpoint, AREA_OF.replace("?c", f"<{subarea}>"))[0][0]
        top = kept_top_authors(store.parent) or select(endpoint, TOP_AUTHOR)
        found = top, select(endpoint, ONE_PAPER)[0][0], (subarea, area, int(papers))
        with ThreadPoolExecutor(threads) as clients:  # as many whole-store queries at once as bibgraph gets
            list(clients.map(lambda n: get(f"{endpoint}?query={urllib.parse.quote(busy(n))}"), range(threads)))
        return [("oxigraph server: ready", ready), ("oxigraph server peak PSS (MB)", watch.stop())], found
    finally:
        stop(process, timeout=20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000])
    parser.add_argument("--dataset", type=Path, help="measure this dataset rather than building one")
    parser.add_argument("--query-threads", type=int, nargs="+", default=[4, 16], help="one server run per count")
    args = parser.parse_args()
    print("| records | measure | seconds (or MB) |")
    print("|---:|---|---:|")
    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = Path(scratch_name)
        runs: list[tuple[str, Path]] = []
        if args.dataset:
            runs.append((str(read_manifest(current_version(args.dataset))["counts"]["records"]), args.dataset))
        for size in [] if args.dataset else args.sizes:
            write_lists(scratch / f"lists-{size}", size)
            root = scratch / f"dataset-{size}"
            started = time.perf_counter()
            bindir = Path(sys.executable).parent
            build = ["build", str(scratch / f"lists-{size}"), "--dataset", str(root), "--quiet"]
            subprocess.run([str(bindir / "bibgraph"), *build], check=True)
            print(f"| {size} | build --dataset | {time.perf_counter() - started:.2f} |", flush=True)
            runs.append((str(size), root))
        for size, root in runs:
            for threads in args.query_threads:
                for measure_name, value in measure(root, scratch / f"serve-{size}.log", threads):
                    print(f"| {size} | {measure_name} ({threads} query threads) | {value:.2f} |", flush=True)


if __name__ == "__main__":
    main()
