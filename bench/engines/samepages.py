"""The same pages from the embedded store and from an engine: ``serve --store dataset:DATASET``, then ``serve --store
sparql:URL --published DATASET`` on the same port (so ``/dataset`` names the same endpoint), each page's bytes
compared by SHA-256: issue 26's differential test, at a size the suite cannot hold (1M papers).

Usage: ``python -m bench.engines.samepages DATASET sparql:URL --scratch DIR`` (the engine loaded by
``bench.engines.virtuosoload``
or ``bench.oxigraphserver``, and serving), or ``--oxigraph DIR`` for ``sparql:URL``: the Oxigraph server read-only on
that store, its pointer the dataset's base IRI; or ``--virtuoso DIR``: the Virtuoso ``bench.engines.virtuosoload``
loaded in
``DIR``. The pages: home, searches (two pages of a broad one), ``/areas``,
``/dataset``, the most prolific author's profile (two pages), the concept with most papers, its area, the default
co-author maps, the topic maps, and papers of that author.
"""

import argparse
import contextlib
import hashlib
import os
import time
import urllib.error
import urllib.request
from pathlib import Path

from bench.engines.remote import sample_pages
from bench.engines.virtuosoload import GRAPH
from bench.oxigraphserver import oxigraph_server
from bench.servers import bibgraph_process, free_port
from bench.virtuoso import virtuoso
from bibgraph.graph.dataset import directory

START = 1800  # seconds a server may take to answer: d1m's embedded store opened in over 60 s (load 17)


def fetch(url: str) -> tuple[int, str, int, float]:
    """Status, SHA-256, length and seconds of one GET."""
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(url, timeout=600) as response:
            body = response.read()
            status = response.status
    except urllib.error.HTTPError as error:
        body, status = error.read(), error.code
    return status, hashlib.sha256(body).hexdigest(), len(body), time.perf_counter() - started


def pages(dataset: Path) -> list[str]:
    """The paths compared (see the module's docstring)."""
    profile, concept = sample_pages(directory.current_version(dataset))
    area = "/".join(concept.split("/")[:3])
    return [
        "/",
        "/search?q=Wang",
        "/search?q=regret",
        "/search?q=regret&page=2",
        "/areas",
        "/dataset",
        profile,
        profile + "?page=2",
        concept,
        area,
        "/graph/coauthors",
        f"/graph/coauthors?area={area.rsplit('/', 1)[-1]}",
        "/graph/topics",
        "/graph/topics?expand=all",
    ]


def answers(args: list[str], paths: list[str], port: int, log: Path) -> dict[str, tuple[int, str, int, float]]:
    """Each path's answer from ``bibgraph serve ARGS`` (the start's warm-up waited for)."""
    with bibgraph_process(args, log, port, timeout=START) as (site, _):
        while "GET /graph/topics " not in log.read_text(errors="replace"):
            time.sleep(0.2)
        return {path: fetch(site + path) for path in paths}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("store", nargs="?", help="sparql:URL of the engine holding the dataset")
    parser.add_argument("--oxigraph", type=Path, metavar="DIR", help="serve this store read-only, read it")
    parser.add_argument("--virtuoso", type=Path, metavar="DIR", help="start the Virtuoso of DIR/virtuoso, read it")
    parser.add_argument("--scratch", type=Path, required=True, help="the two servers' logs")
    parser.add_argument("--paths", nargs="+", help="more paths to compare (a paper, ...)")
    args = parser.parse_args()
    args.scratch.mkdir(parents=True, exist_ok=True)
    base = directory.read_manifest(directory.current_version(args.dataset))["base"]
    paths, port = pages(args.dataset) + (args.paths or []), free_port()
    embedded = answers(
        ["--store", f"dataset:{args.dataset}", "--base", base], paths, port, args.scratch / "embedded.log"
    )
    print(f"embedded served; load {os.getloadavg()}", flush=True)
    with contextlib.ExitStack() as stack:
        store = args.store
        if args.oxigraph is not None:
            server = stack.enter_context(oxigraph_server(args.oxigraph, read_only=True))
            store = f"sparql:{server}/query?default-graph-uri={base}"
        if args.virtuoso is not None:
            endpoint = stack.enter_context(virtuoso(args.virtuoso / "virtuoso", None, 400_000, 100_000_000, 3600))
            store = f"sparql:{endpoint}?default-graph-uri={GRAPH}"
        engine_args = ["--store", store, "--base", base, "--published", str(args.dataset)]
        engine = answers(engine_args, paths, port, args.scratch / "engine.log")
    print(f"engine served; load {os.getloadavg()}")
    print("| path | status | bytes | embedded s | engine s | same bytes |\n|---|---:|---:|---:|---:|---|")
    for path in paths:
        (status, digest, size, seconds), (their_status, theirs, _, their_seconds) = embedded[path], engine[path]
        same = "yes" if (status, digest) == (their_status, theirs) else f"**no** ({their_status})"
        print(f"| `{path}` | {status} | {size} | {seconds:.3f} | {their_seconds:.3f} | {same} |")


if __name__ == "__main__":
    main()
