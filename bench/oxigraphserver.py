"""The Oxigraph server (``oxigraph serve``, PyPI's ``oxigraph``) on loopback over a store already loaded, for
``bench.engines.remote --serve DATASET --oxigraph DIR``: the second engine of issue 26, beside Virtuoso.

A 1M-paper dataset is loaded into it once (``bibgraph publish``, or ``oxigraph load --graph V`` then the pointer
written by :func:`point`), then served again and again, cold when asked: its files dropped from the page cache. Or
no load at all: a copy of the dataset's own store (its ``.sst`` files hard links), the pointer written into it with
``--in-place`` (readers then read its default graph: ``remote.IN_PLACE``), served by ``oxigraph serve-read-only``."""

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from bench.servers import free_port, stop, wait_for_http
from bibgraph.graph.engines.client import Deadline, Session
from bibgraph.graph.engines.publish import Engine, Target, dataset_content
from bibgraph.graph.stores.remote import CURRENT, IN_PLACE


def evict(directory: Path) -> None:
    """Drop the store's files in ``directory`` from the system's page cache (and no other file: the machine is
    shared), so the first queries read from the disk, as after a reboot."""
    for path in directory.iterdir():
        if path.is_file():
            descriptor = os.open(path, os.O_RDONLY)
            try:
                os.posix_fadvise(descriptor, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(descriptor)


@contextlib.contextmanager
def oxigraph_server(location: Path, cold: bool = False, read_only: bool = False) -> Iterator[str]:
    """``oxigraph serve`` on ``location`` (read-write: a publish may follow; ``read_only``: ``serve-read-only``,
    which writes nothing into the store); yields its base URL (``/query``, and ``/update``, ``/store`` if
    read-write)."""
    if cold:
        evict(location)
    port = free_port()
    serve = "serve-read-only" if read_only else "serve"
    command = [str(Path(sys.executable).parent / "oxigraph"), serve, "--location", str(location)]
    process = subprocess.Popen(
        [*command, "--bind", f"127.0.0.1:{port}"], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_http(f"{base}/query?query=ASK%7B%7D", process, timeout=600)
        yield base
    finally:
        stop(process, timeout=60)


def point(server: str, graph: str, version: str, dataset_store: Path) -> None:
    """Make ``version`` (a graph loaded by the engine's own loader) what readers of ``graph`` read, with the content
    identity of the dataset whose store is ``dataset_store`` (checked file by file first): what ``bibgraph publish``
    writes once its batches are loaded, for a graph loaded without it."""
    content = dataset_content(dataset_store)
    engine = Engine(Target.parse(f"{server}/store", graph), Session(None, Deadline(600)))
    if content is not None:
        engine.record(version, content)
    engine.mark(insert=[(CURRENT, version)])


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=point.__doc__)
    parser.add_argument("location", type=Path, help="the Oxigraph server's store (no server running on it)")
    parser.add_argument("version", help="the graph loaded (oxigraph load --graph VERSION), or in-place")
    parser.add_argument("dataset", type=Path, help="the dataset it was loaded from (its current version)")
    parser.add_argument("--graph", help="the graph readers read (default: the dataset's base IRI)")
    args = parser.parse_args()
    from bibgraph.graph.dataset import directory

    current = directory.current_version(args.dataset)
    with oxigraph_server(args.location) as url:
        version = IN_PLACE if args.version == "in-place" else args.version
        point(url, args.graph or directory.read_manifest(current)["base"], version, current / directory.STORE)
        print(f"readers of the pointer now read <{version}>")
