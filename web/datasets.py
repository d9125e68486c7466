"""``bibgraph build --dataset DIR``: the store, the dumps and the derived data of the views, in one version.

The derived data is made by the app itself: the build opens the new version as a server would and
asks for the pages whose data is costly to derive (home charts, the default co-author and topic maps,
the search index, the author names, the paper-author graph of paths and ego networks); the app's
network cache keeps every value it derives in the version's ``derived/`` files. So what a server
reads later is exactly what it would have derived, by the same code, with the default settings.
"""

import gc
from collections.abc import Sequence
from pathlib import Path

from bibgraph.graph.build import BuildReport
from bibgraph.graph.datadir import DERIVED, DUMPS, STORE, new_version
from bibgraph.graph.dataset import COMPLETE_MARKER, fill
from bibgraph.graph.dump import write_dump
from bibgraph.graph.formats import rdf_syntax
from bibgraph.graph.stores.store import OxigraphGraphStore
from bibgraph.graph.void import DUMP_STEM

from .netcache import DERIVED_WRITABLE

DUMP_SYNTAXES = ("nt", "turtle")
# Pages and views whose data a build derives ahead (GET paths, answered by the app over the new version).
WARM_PATHS = (
    "/",
    "/graph/coauthors",
    "/graph/topics",
    "/search?q=a",
    "/graph/authors.json?q=zz",
    "/graph/path?from=a&to=b",
)


def build_dataset(inputs: Sequence[Path], root: Path, base: str) -> tuple[Path, BuildReport]:
    """Build ``inputs`` into a new version of the dataset ``root`` and switch to it; the version and the report."""
    with new_version(root, base) as (version, manifest):
        store = OxigraphGraphStore.disk(version / STORE)
        report = fill(store, inputs, base) or BuildReport()
        (version / DUMPS).mkdir()
        for name in DUMP_SYNTAXES:
            syntax = rdf_syntax(name)
            write_dump(store, version / DUMPS / f"{DUMP_STEM}.{syntax.suffix}", syntax)
        store.close()
        del store
        gc.collect()  # release RocksDB's lock before the app's worker opens the store read-only
        (version / STORE / COMPLETE_MARKER).write_text("complete\n", encoding="utf-8")
        manifest["counts"] = {
            "records": report.records,
            "papers": report.papers,
            "authors": report.authors,
            "authorships": report.authorships,
            "concepts": report.concepts,
            "triples": report.triples,
        }
        manifest["inputs"] = sorted(str(path) for path in inputs)
        derive(version, base)
    return root / manifest["name"], report


def derive(version: Path, base: str) -> None:
    """Derive the views' costly data of ``version`` into its ``derived/`` files, through the app."""
    from .app import create_app
    from .graphstore import get_store

    (version / DERIVED).mkdir(exist_ok=True)
    app = create_app(
        {"BIBGRAPH_STORE": f"dataset:{version}", "BIBGRAPH_BASE": base, DERIVED_WRITABLE: True, "WEB_THREADS": 1}
    )
    try:
        client = app.test_client()
        for path in WARM_PATHS:
            response = client.get(path)
            if response.status_code != 200:
                raise RuntimeError(f"deriving {path} failed with HTTP {response.status_code}")
    finally:
        with app.app_context():
            get_store().close()
