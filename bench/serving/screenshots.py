"""Screenshots of every page kind on a generated corpus, at desktop and phone size (on demand, not in CI).

Serves a generated corpus (default 10,000 papers, :mod:`bench.generate`) with ``bibgraph serve``,
opens each page kind in Debian's chromium and writes ``NAME-desktop.png`` (1440×900) and
``NAME-mobile.png`` (390×844) into ``docs/screenshots/``, reduced to 256 colours so they stay small.
Map views are named ``view-*`` so they never overwrite the map screenshots committed beside them.

    .venv/bin/python -m bench.serving.screenshots [--records 10000] [--out docs/screenshots] [--only home paper]
"""

import argparse
import contextlib
import io
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

from bench.generate import write_lists
from bench.servers import CHROMIUM, CHROMIUM_FLAGS, free_port, stop, wait_for_http
from bibgraph.graph.rdf.vocab import sparql_prologue

SIZES = {"desktop": (1440, 900), "mobile": (390, 844)}
RESULTS_QUERY = (
    "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> PREFIX dcterms: <http://purl.org/dc/terms/>\n"
    "SELECT ?paper ?label ?abstract WHERE { ?paper rdfs:label ?label ; dcterms:abstract ?abstract } LIMIT 5"
)
BROKEN_QUERY = "SELECT ?paper ?label WHERE {\n  ?paper rdfs:label ?label\n  FILTER (CONTAINS(?label, ))\n}"


@contextlib.contextmanager
def serve(inputs: Path, log: Path) -> Iterator[str]:
    port = free_port()
    command = [sys.executable, "-m", "bibgraph.web.commands.cli", "serve", "--port", str(port), str(inputs)]
    with log.open("w") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
        try:
            base = f"http://127.0.0.1:{port}"
            wait_for_http(f"{base}/sparql?query=ASK%7B%7D", process, timeout=900)
            yield base
        finally:
            stop(process)


def select(base: str, query: str) -> list[dict[str, str]]:
    """Rows of a SELECT against the server, as plain strings."""
    import json
    import urllib.request

    body = urllib.parse.urlencode({"query": sparql_prologue() + query}).encode()
    request = urllib.request.Request(f"{base}/sparql", body, {"Accept": "application/sparql-results+json"})
    with urllib.request.urlopen(request, timeout=300) as answer:
        bindings = json.load(answer)["results"]["bindings"]
    return [{k: v["value"] for k, v in row.items()} for row in bindings]


def targets(base: str) -> dict[str, str]:
    """The path of each page kind, chosen from the data (the busiest author, a paper with math...)."""
    local = len(base) + 1
    top = select(base, "SELECT ?a WHERE { ?p dcterms:creator ?a } GROUP BY ?a ORDER BY DESC(COUNT(?p)) LIMIT 1")[0]["a"]
    chain = select(
        base,
        f"""SELECT ?c WHERE {{ ?p1 dcterms:creator <{top}>, ?b . ?p2 dcterms:creator ?b, ?c .
            FILTER (?b != <{top}> && ?c != ?b && ?c != <{top}>)
            FILTER NOT EXISTS {{ ?p3 dcterms:creator <{top}>, ?c }} }} LIMIT 1""",
    )
    paper = select(base, 'SELECT ?p WHERE { ?p dcterms:abstract ?a FILTER(CONTAINS(?a, "$")) } LIMIT 1')[0]["p"]
    subarea = select(base, "SELECT ?s WHERE { ?s skos:broader ?a } ORDER BY ?s LIMIT 1")[0]["s"]
    area = select(base, f"SELECT ?a WHERE {{ <{subarea}> skos:broader ?a }}")[0]["a"]
    author = top[local:]
    pages = {
        "home": "/",
        "home-charts": "/",  # scrolled to the histograms
        "paper": "/" + paper[local:],
        "author": "/" + author,
        "area": "/" + area[local:],
        "subarea": "/" + subarea[local:],
        "areas": "/areas",
        "dataset": "/dataset",
        "search": "/search?q=wang",
        "sparql": "/sparql",
        "sparql-results": "/sparql",  # scrolled to the results table
        "sparql-error": "/sparql?" + urllib.parse.urlencode({"query": sparql_prologue() + BROKEN_QUERY}),
        "404": "/paper/0000000000000000",
        "download": "/download/",
        "view-coauthors": "/graph/coauthors",
        "view-ego": f"/graph/ego/{author}",
        "view-topics": "/graph/topics",
    }
    if chain:
        pages["view-path"] = "/graph/path?" + urllib.parse.urlencode({"from": author, "to": chain[0]["c"][local:]})
    return pages


def settle(page: Page, name: str) -> None:
    """Wait until the page shows what it is for (results run, network drawn)."""
    if name == "sparql":
        page.wait_for_selector(".yasqe .CodeMirror", timeout=30000)
        page.click("#examples button >> nth=3")
        page.wait_for_selector(".yasr tbody tr", timeout=60000)
    elif name == "sparql-results":  # long values: labels and abstracts, as a reader would ask
        page.wait_for_selector(".yasqe .CodeMirror", timeout=30000)
        page.evaluate("(q) => { const t = bibgraphYasgui.getTab(); t.setQuery(q); t.query(); }", RESULTS_QUERY)
        page.wait_for_selector(".yasr tbody tr", timeout=60000)
        page.evaluate("document.querySelector('.yasr .tableControls').scrollIntoView({block: 'start'})")
    elif name == "home-charts":
        page.locator("svg.histogram").last.scroll_into_view_if_needed()
    elif name.startswith("view-"):
        with contextlib.suppress(Exception):
            page.wait_for_selector("body[data-network-ready]", state="attached", timeout=120000)
    page.wait_for_timeout(300)


def save(png: bytes, path: Path) -> None:
    from PIL import Image  # here: the tests import this module's queries without the bench's extras

    image = Image.open(io.BytesIO(png)).convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    image.save(path, optimize=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--out", type=Path, default=Path("docs/screenshots"))
    parser.add_argument("--only", nargs="*", help="page kinds to take (default: all)")
    parser.add_argument("--url", help="use this running server instead of starting one")
    parser.add_argument("--full", action="store_true", help="the whole page, not only the first screen")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch, contextlib.ExitStack() as stack:
        if args.url:
            base = args.url.rstrip("/")
        else:
            lists = Path(scratch) / "lists"
            write_lists(lists, args.records)
            started = time.monotonic()
            base = stack.enter_context(serve(lists, Path(scratch) / "serve.log"))
            print(f"serving {args.records} papers after {time.monotonic() - started:.0f} s", flush=True)
        pages = targets(base)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
            for name, path in pages.items():
                if args.only and name not in args.only:
                    continue
                for size, (width, height) in SIZES.items():
                    page = browser.new_page(viewport={"width": width, "height": height})
                    page.goto(base + path, wait_until="load", timeout=300000)
                    settle(page, name)
                    target = args.out / f"{name}-{size}.png"
                    save(page.screenshot(full_page=args.full), target)
                    print(f"{target}  {path[:90]}", flush=True)
                    page.close()
            browser.close()


if __name__ == "__main__":
    main()
