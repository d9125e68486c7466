"""Benchmark the network views: derivation, layout, rendering, and time until interactive in a browser.

Next to a baseline measured in the same run: plain pyvis (``Network.from_nx`` with its default
physics, vis-network inlined) on the same co-author network, timed until its physics has settled.
Usage: ``python -m bench.serving.views --sizes 1000 10000 100000`` (needs Debian's chromium).
"""

import argparse
import contextlib
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from playwright.sync_api import sync_playwright
from pyvis.network import Network

from bench.generate import write_lists
from bench.servers import CHROMIUM, CHROMIUM_FLAGS, bibgraph_server
from bibgraph.graph.dataset.build import build_graph
from bibgraph.graph.dataset.dumps import write_dump
from bibgraph.graph.networks import Filters
from bibgraph.graph.networks.coauthor import coauthor_network
from bibgraph.graph.networks.incidence import incidence_of
from bibgraph.graph.networks.layout import layout
from bibgraph.graph.networks.topic import topic_network
from bibgraph.graph.rdf.formats import rdf_syntax

T = TypeVar("T")

VIEW_CAP = 1000
# pyvis's template fades its loading bar out on "stabilizationIterationsDone".
BASELINE_READY = (
    "typeof network !== 'undefined' && network !== null && (document.getElementById('loadingBar') === null"
    " || document.getElementById('loadingBar').style.opacity === '0')"
)


def timed(function: Callable[..., T], *args: Any, **kwargs: Any) -> tuple[T, float]:
    started = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - started


def browser_seconds(page: Any, url: str, ready: str, timeout_s: float) -> float:
    started = time.perf_counter()
    page.goto(url, timeout=timeout_s * 1000)
    # a function: Playwright eval()s an expression while it polls, which the site's CSP forbids
    page.wait_for_function(f"() => ({ready})", timeout=timeout_s * 1000, polling=50)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--baseline-timeout", type=float, default=120)
    parser.add_argument("--dataset", action="store_true", help="also serve a dataset directory built from the lists")
    args = parser.parse_args()
    print("| records | authors | measure | seconds |")
    print("|---:|---:|---|---:|")
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as scratch_name:
            scratch = Path(scratch_name)
            store, _ = build_graph(write_lists(scratch / "lists", size), progress=False)
            rows, t_rows = timed(incidence_of, store)
            whole, t_whole = timed(coauthor_network, rows, Filters())
            capped, t_capped = timed(coauthor_network, rows, Filters(top=VIEW_CAP))
            topics, t_topics = timed(topic_network, rows)
            _, t_layout = timed(layout, capped)
            _, t_topic_layout = timed(layout, topics)
            dump = scratch / "dump.nt"
            write_dump(store, dump, rdf_syntax("nt"))
            del store
            authors = whole.number_of_nodes()

            def say(measure: str, seconds: float, size: int = size, authors: int = authors) -> None:
                print(f"| {size} | {authors} | {measure} | {seconds:.2f} |", flush=True)

            say("SPARQL read of the incidence", t_rows)
            say("co-author network, whole (projection + Louvain)", t_whole)
            say(f"co-author network, view cap {VIEW_CAP}", t_capped)
            say("topic network", t_topics)
            say(f"layout, capped co-author view ({capped.number_of_nodes()} nodes)", t_layout)
            say("layout, topic view", t_topic_layout)
            with contextlib.ExitStack() as stack:
                base = stack.enter_context(bibgraph_server([str(dump)], scratch / "serve.log"))
                playwright = stack.enter_context(sync_playwright())
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
                page = browser.new_page()
                for view in ("/graph/coauthors", "/graph/topics"):
                    first = browser_seconds(page, base + view, "document.body.dataset.networkReady", 600)
                    again = browser_seconds(page, base + view, "document.body.dataset.networkReady", 600)
                    say(f"browser interactive {view}, first (derive + layout + render)", first)
                    say(f"browser interactive {view}, cached", again)
                if args.dataset:
                    # built once (`build --dataset`), then served: the first view reads what the build derived
                    dataset = scratch / "dataset"
                    command = [sys.executable, "-m", "bibgraph.web.commands.cli", "build", str(scratch / "lists")]
                    _, t_build = timed(subprocess.run, [*command, "--dataset", str(dataset), "--quiet"], check=True)
                    say("dataset build (build --dataset: store, dumps, derived views)", t_build)
                    served = stack.enter_context(bibgraph_server([str(dataset)], scratch / "serve-dataset.log"))
                    for view in ("/graph/coauthors", "/graph/topics"):
                        first = browser_seconds(page, served + view, "document.body.dataset.networkReady", 600)
                        again = browser_seconds(page, served + view, "document.body.dataset.networkReady", 600)
                        say(f"browser interactive {view} from the dataset, first after start", first)
                        say(f"browser interactive {view} from the dataset, cached", again)
                baseline = scratch / "pyvis.html"
                net = Network(cdn_resources="in_line")
                net.from_nx(capped)
                net.write_html(str(baseline))
                try:
                    seconds = browser_seconds(
                        page,
                        baseline.as_uri(),
                        BASELINE_READY,
                        args.baseline_timeout,
                    )
                    say(f"baseline: plain pyvis from_nx + default physics ({capped.number_of_nodes()} nodes)", seconds)
                except Exception as error:  # timeouts are the result
                    print(f"baseline did not settle: {error}".splitlines()[0], file=sys.stderr)
                    say(f"baseline: plain pyvis (did not settle within {args.baseline_timeout:.0f} s)", float("nan"))
                browser.close()


if __name__ == "__main__":
    main()
