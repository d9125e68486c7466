"""Starting real servers on loopback, for the integration tests and the benchmarks (bibgraph itself, Virtuoso)."""

import contextlib
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

CHROMIUM = "/usr/bin/chromium"
# Debian's chromium as Playwright should start it here: no sandbox as root, no background traffic.
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def stop(process: subprocess.Popen, timeout: float = 10) -> None:
    """Terminate, then kill if it does not exit in time."""
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for_http(url: str, process: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode} before answering {url}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.05)  # fine enough for bench.serving.serve's ready time
    raise TimeoutError(f"{url} did not answer within {timeout} s")


@contextlib.contextmanager
def bibgraph_server(args: Sequence[str], log: Path, port: int | None = None) -> Iterator[str]:
    """``bibgraph serve ARGS`` on a free loopback port; yields its base URL (also the base IRI)."""
    with bibgraph_process(args, log, port) as (base, _):
        yield base


@contextlib.contextmanager
def bibgraph_process(
    args: Sequence[str],
    log: Path,
    port: int | None = None,
    ready: str = "/sparql?query=ASK%7B%7D",
    timeout: float = 60,
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """As :func:`bibgraph_server`, with the web process as well (its pid is the server's, for /proc); ready once
    the path ``ready`` answers, within ``timeout`` seconds (a 1M-paper dataset's store opens in minutes, cold)."""
    port = port or free_port()
    command = [
        sys.executable,
        "-m",
        "bibgraph.web.commands.cli",
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        *args,
    ]
    with log.open("w") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
        try:
            base = f"http://127.0.0.1:{port}"
            wait_for_http(base + ready, process, timeout)
            yield base, process
        finally:
            stop(process)


def kept_top_authors(version: Path) -> list[list[str]]:
    """The two most prolific authors (IRI, papers) from the incidence the dataset keeps, if it keeps one: at a
    million papers the Oxigraph server's GROUP BY over every creator took over 600 s on this loaded machine."""
    return kept_authors(version)[0]


def kept_authors(version: Path) -> tuple[list[list[str]], list[str]]:
    """The two most prolific authors and a typical one (the median of papers per author, the first such by
    index), each as (IRI, papers), from the incidence the dataset keeps; ``([], [])`` if it keeps none."""
    from bibgraph.graph.dataset.derived import DerivedFiles, derived_key
    from bibgraph.graph.dataset.directory import DERIVED

    kept, incidence = DerivedFiles(version / DERIVED).load(derived_key("incidence"))
    if not kept:
        return [], []
    counts = np.diff(incidence.author_ptr)
    ranked = np.lexsort((np.arange(len(counts)), -counts))
    typical = int(ranked[len(ranked) // 2])
    top = [[incidence.authors[int(a)], str(int(counts[a]))] for a in ranked[:2]]
    return top, [incidence.authors[typical], str(int(counts[typical]))]
