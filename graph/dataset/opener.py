"""Getting a graph ready to serve: build from lists, load dumps, reuse a disk store, or go remote.

Returns an *opener*: a function that gives a :class:`GraphStore` in the process that calls it.
The query pool calls it in its worker process (sharing an in-memory store copy-on-write, or
opening an on-disk store read-only), so this module decides nothing about HTTP.
"""

import gc
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import pyoxigraph as ox

from bibgraph.graph.dataset.directory import (
    DERIVED,
    MANIFEST,
    STORE,
    DatasetError,
    check_opened,
    current_version,
    is_dataset,
    read_manifest,
)
from bibgraph.graph.dataset.wholeexports import DEFAULT_EXPORTS, export_file
from bibgraph.graph.networks.exports import NETWORK_SYNTAXES
from bibgraph.graph.rdf.formats import RDF_SYNTAXES, rdf_syntax
from bibgraph.graph.serving.pool import Opener
from bibgraph.graph.stores.atomic import remove_stale_temporaries, temporary_name
from bibgraph.graph.stores.store import OxigraphGraphStore

if TYPE_CHECKING:
    from bibgraph.graph.dataset.build import BuildReport
    from bibgraph.graph.dataset.searchspool import DocumentSpool
    from bibgraph.graph.identity.numbering import Numbering
    from bibgraph.graph.networks.incidence import Incidence

COMPLETE_MARKER = "bibgraph-store-complete"  # written last: a store directory without it is half-built
LARGE_GRAPH_TRIPLES = 1_000_000  # above this, suggest the disk store (100k records: 1.2 GB on disk, 3.8 GB in memory)
DUMP_SUFFIXES = {f".{syntax.suffix}": syntax for syntax in RDF_SYNTAXES} | {".json": rdf_syntax("jsonld")}


def is_dump(path: Path) -> bool:
    return path.is_file() and path.suffix.lower() in DUMP_SUFFIXES


def fill(
    store: OxigraphGraphStore,
    inputs: Sequence[Path],
    base: str,
    ntriples: BinaryIO | None = None,
    numbering: "Numbering | None" = None,
    roles: bool = False,
    describe: bool = True,
    incidence: "Callable[[Incidence], None] | None" = None,
    search: "DocumentSpool | None" = None,
) -> "BuildReport | None":
    """Load dumps as they are and build the paper lists among ``inputs`` into ``store``.

    ``ntriples`` receives the built data as N-Triples (:func:`build_graph`); give it only for inputs
    without dumps (what a loaded dump holds is not copied there), and ``search`` likewise (the search index's texts
    of the built data). ``numbering``, ``roles``, ``describe``, ``incidence``: see :func:`build_graph`.
    """
    dumps = [path for path in inputs if is_dump(path)]
    lists = [path for path in inputs if not is_dump(path)]
    for path in dumps:
        try:
            store.store.bulk_load(
                path=str(path), format=DUMP_SUFFIXES[path.suffix.lower()].oxigraph, to_graph=ox.DefaultGraph()
            )
        except (SyntaxError, OSError) as error:  # a bad dump is refused in one line, never served half-loaded
            raise ValueError(f"{path}: cannot load this dump: {error}") from error
    if lists or not dumps:  # nothing given at all: build_graph builds its default, the seeds
        from bibgraph.graph.dataset.build import (
            build_graph,  # here, not at the top: serving a dataset never builds (nor loads the parser)
        )

        _, report = build_graph(
            lists,
            base=base,
            store=store,
            progress=True,
            ntriples=ntriples,
            numbering=numbering,
            roles=roles,
            describe=describe,
            incidence=incidence,
            search=search,
        )
        for problem in report.problems:
            print(problem, file=sys.stderr)
        return report
    return None


def whole_exports() -> frozenset[str]:
    """The whole networks' exports a dataset keeps, by path in its version: files a download sends as they are,
    checked before the first (``web/downloads.py``), not hashed at each start (1 GB at 100k papers: 1.9 s of it)."""
    return frozenset(
        f"{DERIVED}/{export_file(Path(), spec, syntax.name, 'weight').name}"
        for spec in DEFAULT_EXPORTS
        for syntax in NETWORK_SYNTAXES
    )


def prepare(inputs: Sequence[Path], spec: str, base: str) -> tuple[Opener, str]:
    """An opener for the store ``spec`` filled from ``inputs``, and a line saying what was done."""
    if spec.startswith("sparql:"):
        if inputs:
            raise ValueError("a remote store serves its own data: load it there, not through bibgraph")
        endpoint = spec.removeprefix("sparql:")
        from bibgraph.graph.stores.remote import (
            RemoteGraphStore,  # here: urllib.request and its TLS stack cost ~0.3 s at start
        )

        RemoteGraphStore(endpoint)  # validates the URL now rather than in a worker
        return (lambda: RemoteGraphStore(endpoint)), f"remote SPARQL store {endpoint}"
    if spec.startswith("dataset:"):
        if inputs:
            raise ValueError("a dataset is served as it was built: add lists with `bibgraph add DIR FILES`")
        version = dataset_version(Path(spec.removeprefix("dataset:")))
        if (version / MANIFEST).is_file():  # a published version: refused unless what is read is as built
            check_opened(version, sent=whole_exports())
            built: dict[str, Any] = read_manifest(version)
        else:  # the version a build or add is deriving the data of (its manifest is written last)
            built = {"base": base, "counts": {}}
        if built["base"] != base:
            raise ValueError(f"{version} was built with base IRI {built['base']}, not {base}: serve it with that base")
        counts = ", ".join(f"{value} {name}" for name, value in built["counts"].items())
        return (lambda: OxigraphGraphStore.disk(version / STORE, read_only=True)), f"dataset {version}: {counts}"
    if spec.startswith("disk:"):
        path = Path(spec.removeprefix("disk:"))
        summary = "reused" if _reusable(path, inputs) else build_disk_store(path, inputs, base)
        return (lambda: OxigraphGraphStore.disk(path, read_only=True)), f"disk store {path}: {summary}"
    if spec != "memory":
        raise ValueError(f"unknown store {spec!r}: use memory, disk:PATH, dataset:DIR or sparql:URL")
    memory = OxigraphGraphStore.memory()
    report = fill(memory, inputs, base)
    triples = memory.triple_count()
    summary = report.summary() if report else f"{triples} triples loaded"
    if triples > LARGE_GRAPH_TRIPLES:
        summary += " (hint: --store disk:PATH serves a graph this size in about a third of the memory)"
    return (lambda: memory), f"in-memory store: {summary}"


def dataset_version(path: Path) -> Path:
    """The version directory of a dataset ``path`` (its current one), or ``path`` when it is a version itself;
    absolute, so that it names the same files whatever directory later code runs in (a relative one given to
    ``serve`` made Flask's ``send_file`` look for the dumps under the package's directory: 500)."""
    path = path.absolute()
    if is_dataset(path):
        return current_version(path)
    if path.is_symlink():  # DIR/current itself: the pointer, unchecked, and a worker opened later would follow it
        raise DatasetError(f"{path} is a link, not a version directory: give the dataset directory it belongs to")
    if (path / STORE / COMPLETE_MARKER).is_file() or (path / MANIFEST).is_file():  # a damaged one: refused, exit 1
        return path
    raise DatasetError(f"{path} is neither a bibgraph dataset nor one of its versions")


def _reusable(path: Path, inputs: Sequence[Path]) -> bool:
    """Whether the disk store at ``path`` is served as it is: complete, and no inputs to build."""
    remove_stale_temporaries(path.parent)
    if not path.exists() or not any(path.iterdir()):
        return False
    if not (path / COMPLETE_MARKER).is_file():
        raise ValueError(
            f"{path} is not a complete bibgraph store (an interrupted build, or not ours): "
            "remove it, then start again to build it"
        )
    return not inputs


def build_disk_store(path: Path, inputs: Sequence[Path], base: str) -> str:
    """Build an on-disk store into a temporary directory beside ``path``, then rename it to ``path``.

    A build killed half-way leaves only the temporary (removed by the next start, once its process
    is gone), so ``path`` always holds a complete store or nothing. Returns the summary line.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    building = temporary_name(path)
    try:
        store = OxigraphGraphStore.disk(building)
        report = fill(store, inputs, base)
        store.close()
        del store
        gc.collect()  # release RocksDB's lock before the directory moves and the worker opens it
        (building / COMPLETE_MARKER).write_text("complete\n", encoding="utf-8")
        if path.exists():
            retired = temporary_name(path)
            path.rename(retired)
            building.rename(path)
            shutil.rmtree(retired, ignore_errors=True)
        else:
            building.rename(path)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    return report.summary() if report else "loaded dumps"
