"""The commands that read a graph where it lies (``query``, ``stats``, ``validate``, ``check``, ``export-graph``,
``publish``), and how every command reads its inputs: a dataset directory as built, or paper lists and dumps, or
an engine. One line and an exit code for what cannot be read (the table in docs/operating.md).
"""

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from bibgraph.graph.networks import Filters
from bibgraph.graph.networks.filters import CONCEPT, WEIGHTINGS, read_number, user_filters, weight_attribute
from bibgraph.graph.rdf.iris import Iris
from bibgraph.graph.stores.atomic import write_bytes_atomically

if TYPE_CHECKING:
    from bibgraph.graph.stores.store import OxigraphGraphStore

EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE = 0, 1, 2


def _inputs(values: Sequence[str]) -> list[Path]:
    """The inputs named, checked; none named is the build's default (the seeds, see ``build_graph``)."""
    paths = [Path(value) for value in values]
    missing = [str(path) for path in paths if not path.exists()]
    if missing:
        raise SystemExit(usage_error(f"no such file or directory: {', '.join(missing)}"))
    return paths


def usage_error(message: str) -> int:
    print(f"bibgraph: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def is_dataset_or_version(path: Path) -> bool:
    """A dataset directory, or one of its versions (what ``serve``, ``stats``... read as built, never as lists)."""
    from bibgraph.graph.dataset.directory import MANIFEST, STORE, is_dataset

    return is_dataset(path) or ((path / MANIFEST).is_file() and (path / STORE).is_dir())


def _refuse_datasets(values: Sequence[str]) -> None:
    """A dataset directory (or version) among several inputs is not a directory of paper lists: one line, exit 2."""
    found = [value for value in values if is_dataset_or_version(Path(value))]
    if found:
        raise SystemExit(usage_error(f"{', '.join(found)}: a dataset directory is read alone, not among other inputs"))


def named_lists(values: Sequence[str]) -> list[Path]:
    """The paper lists and dumps named (none: the seeds, the build's default), for a command that reads lists
    (``build``, ``add``, ``authors``, ``serve`` of lists): a dataset among them, or inputs holding no paper list
    (``*.txt``) nor dump, are refused in one line, exit 2. ``build`` of an empty directory wrote an empty graph,
    ``authors DIR`` of a dataset found nobody, ``serve`` of a dataset's version served nothing, all exit 0."""
    from bibgraph.graph.dataset.opener import is_dump
    from bibgraph.graph.ingest.inputs import find_input_files

    paths = _inputs(values)
    if found := [value for value in values if is_dataset_or_version(Path(value))]:
        raise SystemExit(
            usage_error(
                f"{', '.join(found)}: a dataset directory, not paper lists: `serve`, `stats`, `query`, `validate`,"
                " `export-graph` and `check` read it alone; `add DIR LISTS` adds lists to it"
            )
        )
    if paths and not any(is_dump(path) for path in paths) and next(find_input_files(paths), None) is None:
        raise SystemExit(usage_error(f"no paper list (*.txt) or RDF dump in {', '.join(map(str, values))}"))
    return paths


def cmd_export_graph(args: argparse.Namespace) -> int:
    """The network through the engine the web's maps and downloads use (same filters, same file)."""
    from bibgraph.graph.networks.engine import exported  # numpy, scipy, igraph: only for this command
    from bibgraph.graph.networks.incidence import incidence_of
    from bibgraph.graph.networks.spec import COAUTHORS, TOPICS, NetworkSpec

    incidence = incidence_of(_local_store(args.inputs, args.base))
    if args.kind == "topics":
        spec = NetworkSpec(TOPICS)
    else:
        iris = Iris(args.base)

        def given(field: Any) -> Any:
            value = getattr(args, field.name)
            return _concept(iris, value) if field.metadata["read"] == CONCEPT and value else value

        spec = NetworkSpec(COAUTHORS, Filters(**{field.name: given(field) for field in user_filters()}))
    weight = weight_attribute(args.weighting) if args.kind == "coauthors" else "weight"
    network, body = exported(incidence, spec, args.format, weight)
    try:
        write_bytes_atomically(Path(args.out), body)
    except OSError as error:
        return write_error(args.out, error)
    print(f"wrote {args.out}: {network.number_of_nodes()} nodes, {network.number_of_edges()} edges")
    return EXIT_OK


def filter_options(command: argparse.ArgumentParser) -> None:
    """An option per filter a user sets (:func:`~bibgraph.graph.networks.filters.user_filters`), and the weighting."""
    for field in user_filters():

        def read(text: str, metadata: Any = field.metadata) -> Any:
            if metadata["read"] == CONCEPT:
                return text
            try:
                return read_number(text, metadata)
            except ValueError as error:
                raise argparse.ArgumentTypeError(f"not a number: {text!r}") from error

        option = "--" + field.name.replace("_", "-")
        command.add_argument(option, type=read, default=field.default, help=field.metadata["help"])
    command.add_argument("--weighting", choices=sorted(WEIGHTINGS), default="full", help="link strength (VOSviewer)")


def _concept(iris: Iris, slug: str) -> str:
    """The area (``theory``) or subarea (``theory/complexity``) a ``--area``/``--subarea`` slug names."""
    iri = iris.concept(slug)
    if iri is None:
        raise SystemExit(usage_error(f"not an area or area/subarea slug: {slug!r}"))
    return iri


def _local_store(inputs: Sequence[str], base: str) -> "OxigraphGraphStore":
    """The graph of ``inputs``: a dataset directory (or one of its versions) read as built, its store opened
    read-only; else paper lists and dumps built in memory. Inputs that hold neither are refused (exit 2): a
    command given a directory of something else answered as if the graph were empty, and exited 0."""
    from bibgraph.graph.dataset.directory import POINTER, STORE, DatasetDamaged, DatasetError
    from bibgraph.graph.dataset.opener import COMPLETE_MARKER, dataset_version, fill, prepare
    from bibgraph.graph.stores.store import OxigraphGraphStore

    paths = _inputs(inputs)
    if (
        len(paths) == 1
        and paths[0].is_dir()
        and ((paths[0] / POINTER).is_symlink() or (paths[0] / STORE / COMPLETE_MARKER).is_file())
    ):
        try:
            version = dataset_version(paths[0])
            opener, _ = prepare([], f"dataset:{version}", _built_base(version, base))
        except DatasetDamaged as error:
            print(f"bibgraph: error: {error}", file=sys.stderr)
            raise SystemExit(EXIT_PROBLEMS) from None
        except DatasetError as error:
            raise SystemExit(usage_error(str(error))) from None
        try:
            return cast("OxigraphGraphStore", opener())
        except (OSError, RuntimeError) as error:  # RocksDB's own words on a damaged store, in one line
            first = str(error).splitlines()[0] if str(error) else type(error).__name__
            print(
                f"bibgraph: error: {version / STORE}: cannot open the store ({first}); run `bibgraph check`",
                file=sys.stderr,
            )
            raise SystemExit(EXIT_PROBLEMS) from None
    _refuse_datasets(inputs)
    store = OxigraphGraphStore.memory()
    try:
        report = fill(store, paths, base)
    except ValueError as error:  # e.g. lists that hold no record: one line, exit 2
        raise SystemExit(usage_error(str(error))) from None
    if paths and report is not None and report.files == 0:
        raise SystemExit(usage_error(f"no paper list or RDF dump in {', '.join(map(str, paths))}"))
    return store


def _built_base(version: Path, base: str) -> str:
    """The base IRI ``version`` was built with (its manifest's), whatever ``--base`` says."""
    from bibgraph.graph.dataset.directory import MANIFEST, read_manifest

    return str(read_manifest(version)["base"]) if (version / MANIFEST).is_file() else base


def cmd_query(args: argparse.Namespace) -> int:
    from bibgraph.graph.sparql.guard import QueryRefused, check_query
    from bibgraph.graph.stores.remote import RemoteGraphStore
    from bibgraph.graph.stores.store import QueryError

    query = sys.stdin.read() if args.query == "-" else args.query
    try:
        checked = check_query(query)
        store = RemoteGraphStore(args.endpoint) if args.endpoint else _local_store(args.inputs, args.base)
        if checked.returns_graph:
            sys.stdout.write(store.answer(checked.text, "json", "turtle").read().decode("utf-8"))
            return EXIT_OK
        if args.format in ("json", "csv", "tsv") or checked.form == "ask":
            fmt = "json" if args.format == "table" else args.format
            text = store.answer(checked.text, fmt, "turtle").read().decode("utf-8")
            sys.stdout.write(text if text.endswith("\n") else text + "\n")
            return EXIT_OK
        rows = store.select(checked.text)
    except (QueryRefused, QueryError, ValueError) as error:
        print(f"bibgraph: {error}", file=sys.stderr)
        return EXIT_PROBLEMS
    if not rows:
        print("(no results)")
        return EXIT_OK
    columns = list(rows[0])
    cells = [[("" if row[c] is None else str(row[c])) for c in columns] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
    print("  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for row in cells:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)))
    return EXIT_OK


def cmd_stats(args: argparse.Namespace) -> int:
    from bibgraph.graph.site.pagedata import dataset_summary

    store = _local_store(args.inputs, args.base)
    summary = dataset_summary(store)
    summary["triples"] = store.triple_count()
    for key, value in summary.items():
        print(f"{key:12} {value}")
    return EXIT_OK


def cmd_validate(args: argparse.Namespace) -> int:
    from bibgraph.graph.rdf.validate import validate

    store = _local_store(args.inputs, args.base)
    conforms, report = validate(store.rdflib_graph())
    print(report if not conforms else "conforms to ontology/shapes.ttl")
    return EXIT_OK if conforms else EXIT_PROBLEMS


def cmd_check(args: argparse.Namespace) -> int:
    """``bibgraph check DIR``: every file of the version served (store, dumps, derived data) hashed and compared
    with the manifest's checksums; exit 1 naming each file that differs or is missing."""
    from bibgraph.graph.dataset.directory import DatasetError, current_version, verify

    root = Path(args.dataset)
    try:
        version = current_version(root)
        damaged = verify(version)
    except DatasetError as error:
        return usage_error(str(error))
    for name in damaged:
        print(f"bibgraph: {version / name}: differs from the manifest's checksum, or is missing", file=sys.stderr)
    if damaged:
        print(f"{root}: version {version.name} is damaged ({len(damaged)} files); restore it or build it again")
        return EXIT_PROBLEMS
    print(f"{root}: version {version.name}: every file as built")
    return EXIT_OK


def cmd_publish(args: argparse.Namespace) -> int:
    from bibgraph.graph.engines.client import EngineError, escaped, read_password
    from bibgraph.graph.engines.publish import PublishError, Target, clean, publish

    if (args.source is None) == (not args.clean):
        return usage_error("publish needs a SOURCE, or --clean (and no SOURCE)")
    try:
        password = read_password(dict(os.environ), Path(args.password_file) if args.password_file else None)
        target = Target.parse(
            args.to, args.graph or args.base, args.sparql, args.user, password, args.update, args.insecure_http
        )
    except (ValueError, EngineError) as error:
        return usage_error(str(error))

    def progress(line: str) -> None:
        print(escaped(line, 2000), file=sys.stderr, flush=True)

    say = None if args.quiet else progress
    try:
        if args.clean:
            dropped = clean(target, args.timeout, say)
            print(f"dropped {len(dropped)} graphs left by interrupted publishes")
            return EXIT_OK
        print(f"publishing {args.source} to <{target.graph}> at {target.url}", file=sys.stderr)
        report = publish(Path(args.source), target, args.batch, say, args.timeout)
    except PublishError as error:
        print(f"bibgraph: error: {escaped(str(error), 4000)}", file=sys.stderr)
        return EXIT_PROBLEMS
    print(report.summary())
    return EXIT_OK


def write_error(out: str, error: OSError) -> int:
    """One line for a write that failed (full disk, no permission): the old file, if any, is untouched."""
    print(f"bibgraph: error: cannot write {out}: {error.strerror or error}", file=sys.stderr)
    return EXIT_PROBLEMS
