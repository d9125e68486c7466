"""The ``bibgraph`` command line: build, serve and inspect the graph.

Exit codes: 0 ok, 1 input problems under ``--strict`` (or a failed check or write, a damaged dataset, another
writer), 2 usage errors. The one table of them is in docs/operating.md (tests/web/commands/test_build.py checks it).
"""

import argparse
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING

from bibgraph.graph.networks.exports import NETWORK_SYNTAXES
from bibgraph.graph.rdf.formats import RDF_SYNTAXES, rdf_syntax
from bibgraph.graph.rdf.iris import DEFAULT_BASE
from bibgraph.web.commands.readgraph import (
    EXIT_OK,
    EXIT_PROBLEMS,
    cmd_check,
    cmd_export_graph,
    cmd_publish,
    cmd_query,
    cmd_stats,
    cmd_validate,
    filter_options,
    is_dataset_or_version,
    named_lists,
    usage_error,
    write_error,
)
from bibgraph.web.settings import SETTINGS, resolve

if TYPE_CHECKING:
    from bibgraph.graph.dataset.build import BuildReport

# Shorter or earlier names some options also answer to.
OPTION_ALIASES = {"QUERY_TIMEOUT": ("--timeout",), "SPARQL_UNSANDBOXED": ("--unsandboxed",)}


def cmd_build(args: argparse.Namespace) -> int:
    lists = named_lists(args.inputs)  # before the imports: inputs holding no list are refused in a fraction of a second
    if args.dataset:
        return _build_dataset(args, lists)
    # imported here, not at the top: `serve` never builds, and the build pulls in the name parser
    from bibgraph.graph.dataset.build import build_graph
    from bibgraph.graph.dataset.dumps import write_dump

    syntax = rdf_syntax(args.format)
    try:
        store, report = build_graph(lists, base=args.base, progress=not args.quiet)
    except ValueError as error:
        return usage_error(str(error))
    try:
        size = write_dump(store, Path(args.out), syntax)
    except OSError as error:
        return write_error(args.out, error)
    for problem in report.problems:
        print(problem, file=sys.stderr)
    print(f"wrote {args.out} ({syntax.label}, {size} bytes): {report.summary()}")
    if not args.quiet:
        for line in report.quality_lines():
            print(line)
    return EXIT_PROBLEMS if _strict_failure(args.strict, report) else EXIT_OK


def _build_dataset(args: argparse.Namespace, lists: list[Path]) -> int:
    from bibgraph.web.commands.versionwrite import build_dataset

    report = _write_dataset(args, lambda: build_dataset(lists, Path(args.dataset), args.base), "wrote dataset")
    if isinstance(report, int):
        return report
    if not args.quiet:
        for line in report.quality_lines():
            print(line)
    return EXIT_PROBLEMS if _strict_failure(args.strict, report) else EXIT_OK


def _write_dataset(
    args: argparse.Namespace, write: Callable[[], tuple[Path, "BuildReport"]], done: str
) -> "BuildReport | int":
    """Run a dataset write (build or add) and say how it went: its report, or the exit status of its failure."""
    from bibgraph.graph.dataset.derived import DamagedFile
    from bibgraph.graph.dataset.directory import DatasetBusy, DatasetDamaged, DatasetError
    from bibgraph.graph.serving.childprocess import PhaseFailed
    from bibgraph.web.commands.versionwrite import DeriveError

    try:
        version, report = write()
    except (
        DatasetBusy,
        DatasetDamaged,
        DamagedFile,
    ) as error:  # nothing wrong with the command: the dataset cannot be written
        print(f"bibgraph: error: {error}", file=sys.stderr)
        return EXIT_PROBLEMS
    except (ValueError, DatasetError) as error:
        return usage_error(str(error))
    except (DeriveError, PhaseFailed) as error:
        print(f"bibgraph: error: {error}; the dataset is unchanged", file=sys.stderr)
        return EXIT_PROBLEMS
    except OSError as error:
        return write_error(args.dataset, error)
    for problem in report.problems:
        print(problem, file=sys.stderr)
    print(f"{done} {args.dataset} (version {version.name}): {report.summary()}")
    return report


STRICT_CHECKS = ("problems", "names")


def _strict(value: str) -> frozenset[str]:
    """``--strict`` (problems), ``--strict=names``, ``--strict=problems,names`` or ``--strict=all``."""
    checks = frozenset(STRICT_CHECKS) if value == "all" else frozenset(part.strip() for part in value.split(","))
    if not checks or not checks <= set(STRICT_CHECKS):
        raise argparse.ArgumentTypeError(f"expected {', '.join(STRICT_CHECKS)} or all (comma-separated): {value!r}")
    return checks


def _strict_failure(checks: frozenset[str], report: "BuildReport") -> bool:
    return bool(
        ("problems" in checks and report.problems)
        or ("names" in checks and (report.repaired_names or report.name_warnings))
    )


def cmd_authors(args: argparse.Namespace) -> int:
    """Suspected homonyms and variant pairs with their evidence, largest first (where a curator looks)."""
    lists = named_lists(args.inputs)  # before the identity's imports (scikit-learn): a refusal is quick
    from bibgraph.graph.identity.suspects import report_lines, suspects

    try:
        homonyms, pairs = suspects(lists)
    except ValueError as error:
        return usage_error(str(error))
    for line in report_lines(homonyms, pairs, args.limit):
        print(line)
    return EXIT_OK


def cmd_serve(args: argparse.Namespace) -> int:
    opened = _opened_dataset(args)  # before the web stack's imports: what cannot be served is refused at once
    if isinstance(opened, int):
        return opened
    from bibgraph.graph.serving.memory import limit_arenas

    limit_arenas()  # before any thread: the heaps each web thread would take keep their peaks (memory.py)
    from bibgraph.web.app import create_app
    from bibgraph.web.logs import configure as configure_logging
    from bibgraph.web.server import AddressUnusable, check_address, serve
    from bibgraph.web.versionswitch import watch

    # options given on the command line win over BIBGRAPH_... variables, which win over the defaults
    given = {setting.name: getattr(args, setting.name) for setting in SETTINGS if setting.name != "BIBGRAPH_INPUTS"}
    config = {name: value for name, value in given.items() if value is not None}
    if args.inputs:
        config["BIBGRAPH_INPUTS"] = args.inputs
    try:
        settings = resolve(config)
        check_address(settings["HOST"], settings["PORT"])
    except (ValueError, AddressUnusable) as error:
        return usage_error(str(error))
    from bibgraph.graph.dataset.directory import DatasetDamaged
    from bibgraph.graph.serving.pool import WorkerFailed

    try:
        configure_logging(settings["LOG_FORMAT"])
        app = create_app(config)
    except DatasetDamaged as error:
        print(f"bibgraph: error: {error}", file=sys.stderr)
        return EXIT_PROBLEMS
    except WorkerFailed as error:  # e.g. a damaged store file the manifest's check could not see
        print(
            f"bibgraph: error: {error} ({config.get('BIBGRAPH_STORE', 'memory')}); a dataset: run `bibgraph check DIR`",
            file=sys.stderr,
        )
        return EXIT_PROBLEMS
    except ValueError as error:
        return usage_error(str(error))
    except OSError as error:  # e.g. a full disk while a disk store is built: nothing half-built is kept
        where = f" ({error.filename})" if error.filename else ""
        print(f"bibgraph: error: cannot prepare the store: {error.strerror or error}{where}", file=sys.stderr)
        return EXIT_PROBLEMS
    watch(app)  # a dataset directory: switch to an add's version when it is published, not at a request after
    try:
        serve(app, app.config["HOST"], app.config["PORT"])
    except AddressUnusable as error:  # taken while the graph was built
        return usage_error(str(error))
    return EXIT_OK


def _opened_dataset(args: argparse.Namespace) -> int | None:
    """``serve DIR`` with a dataset directory: serve its current version with the base IRI it was built with."""
    from bibgraph.graph.dataset.directory import DatasetError, read_manifest
    from bibgraph.graph.dataset.opener import dataset_version

    if len(args.inputs) != 1 or not is_dataset_or_version(Path(args.inputs[0])):
        named_lists(args.inputs)
        return None
    try:  # a dataset (its current version, followed as it changes) or one version of it (as it is)
        version = dataset_version(Path(args.inputs[0]))
        built = read_manifest(version)["base"]
    except DatasetError as error:
        return usage_error(str(error))
    if args.BIBGRAPH_BASE not in (None, built):
        return usage_error(f"{args.inputs[0]} was built with base IRI {built}: serve it with that base")
    root = Path(args.inputs[0]).absolute()  # the same files whatever directory later code runs in
    args.inputs, args.BIBGRAPH_STORE, args.BIBGRAPH_BASE = [], f"dataset:{root}", built
    return None


def cmd_add(args: argparse.Namespace) -> int:
    lists = named_lists(args.inputs)  # before the imports: inputs holding no list are refused in a fraction of a second
    from bibgraph.graph.serving.memory import no_huge_pages_for_arrays

    no_huge_pages_for_arrays()  # before numpy is imported (memory.py says why)
    from bibgraph.web.commands.versionwrite import add_to_dataset

    report = _write_dataset(args, lambda: add_to_dataset(Path(args.dataset), lists), "added to")
    if isinstance(report, int):
        return report
    return EXIT_PROBLEMS if args.strict and report.problems else EXIT_OK


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bibgraph", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"%(prog)s {version('bibgraph')}")
    commands = parser.add_subparsers(dest="command", required=True)

    build = commands.add_parser("build", help="build the RDF graph from paper lists and write a dump")
    build.add_argument("inputs", nargs="*", metavar="FILES_OR_DIRS", help="paper lists (default: the seeds)")
    written = build.add_mutually_exclusive_group(required=True)
    written.add_argument("--out", help="dump file to write (atomically)")
    written.add_argument("--dataset", metavar="DIR", help="dataset directory to write (store, dumps, derived data)")
    build.add_argument("--format", default="turtle", choices=[s.name for s in RDF_SYNTAXES])
    build.add_argument("--base", default=DEFAULT_BASE, help=f"base IRI of minted IRIs (default {DEFAULT_BASE})")
    build.add_argument(
        "--strict",
        nargs="?",
        type=_strict,
        const=frozenset({"problems"}),
        default=frozenset(),
        metavar="problems|names|all",
        help="exit 1 on input problems (bare --strict), on repaired names or author-list warnings (--strict=names),"
        " or on both (--strict=all)",
    )
    build.add_argument("--quiet", action="store_true", help="no progress bar and no quality report")
    build.set_defaults(handler=cmd_build)

    authors = commands.add_parser("authors", help="list suspected homonyms and name variants, with their evidence")
    authors.add_argument("inputs", nargs="*", metavar="FILES_OR_DIRS", help="paper lists (default: the seeds)")
    authors.add_argument("--limit", type=int, default=50, help="entries shown of each list (default 50)")
    authors.set_defaults(handler=cmd_authors)

    serve = commands.add_parser(
        "serve",
        help="build (or load) the graph and serve the site and SPARQL endpoint",
        epilog="Each option can also be given as the environment variable in the README's settings table.",
    )
    serve.add_argument("inputs", nargs="*", metavar="FILES_OR_DIRS", help="paper lists or RDF dumps (default: seeds)")
    for setting in SETTINGS:
        if setting.name == "BIBGRAPH_INPUTS":
            continue
        names = [setting.option, *OPTION_ALIASES.get(setting.name, ())]
        described = f"{setting.help.replace('%', '%%')} [{setting.env}; default {setting.default}]"
        if setting.type is bool:  # a switch: given means true
            serve.add_argument(*names, dest=setting.name, action="store_const", const=True, help=described)
            continue
        serve.add_argument(
            *names,
            dest=setting.name,
            type=setting.parse,
            metavar={int: "N", float: "SECONDS"}.get(setting.type, "TEXT"),
            choices=setting.choices or None,
            help=described,
        )
    serve.set_defaults(handler=cmd_serve)

    add = commands.add_parser("add", help="add paper lists to a dataset directory (a new version, switched atomically)")
    add.add_argument("dataset", metavar="DIR", help="a dataset built with `build --dataset DIR`")
    add.add_argument("inputs", nargs="+", metavar="FILES_OR_DIRS", help="the new paper lists")
    add.add_argument("--strict", action="store_true", help="exit 1 when an added record is malformed")
    add.set_defaults(handler=cmd_add)

    export = commands.add_parser("export-graph", help="write the co-author or topic network (Gephi, VOSviewer...)")
    export.add_argument("inputs", nargs="*", metavar="FILES_OR_DIRS", help="paper lists or dumps (default: seeds)")
    export.add_argument("--kind", choices=["coauthors", "topics"], default="coauthors")
    export.add_argument("--format", choices=[s.name for s in NETWORK_SYNTAXES], default="graphml")
    export.add_argument("--out", required=True)
    export.add_argument("--base", default=DEFAULT_BASE)
    filter_options(export)
    export.set_defaults(handler=cmd_export_graph)

    query = commands.add_parser("query", help="run a SPARQL query against the local graph or a server")
    query.add_argument("query", help="the query text, or - to read it from standard input")
    query.add_argument("inputs", nargs="*", metavar="FILES_OR_DIRS", help="paper lists or dumps (default: seeds)")
    query.add_argument("--endpoint", help="a running SPARQL endpoint (e.g. http://127.0.0.1:5000/sparql)")
    query.add_argument("--format", choices=["table", "csv", "tsv", "json"], default="table")
    query.add_argument("--base", default=DEFAULT_BASE)
    query.set_defaults(handler=cmd_query)

    stats = commands.add_parser("stats", help="count papers, authors, authorships, concepts and triples")
    stats.add_argument("inputs", nargs="*", metavar="FILES_OR_DIRS")
    stats.add_argument("--base", default=DEFAULT_BASE)
    stats.set_defaults(handler=cmd_stats)

    check = commands.add_parser("validate", help="check the graph against the SHACL shapes (exit 1 if not)")
    check.add_argument("inputs", nargs="*", metavar="FILES_OR_DIRS")
    check.add_argument("--base", default=DEFAULT_BASE)
    check.set_defaults(handler=cmd_validate)

    checked = commands.add_parser(
        "check", help="verify a dataset's files against its manifest's checksums (exit 1 if not)"
    )
    checked.add_argument("dataset", metavar="DIR", help="a dataset built with `build --dataset DIR`")
    checked.set_defaults(handler=cmd_check)

    publish = commands.add_parser(
        "publish",
        help="load a dataset, dump or store into a SPARQL engine as a new version, then switch readers to it",
    )
    publish.add_argument(
        "source", nargs="?", metavar="SOURCE", help="a dataset directory (its current version), a version, a dump"
    )
    publish.add_argument(
        "--to",
        required=True,
        metavar="URL",
        help="Graph Store endpoint, e.g. http://host:8890/sparql-graph-crud-auth (never with a password in it)",
    )
    publish.add_argument("--graph", metavar="IRI", help="the graph readers read (default: the --base IRI)")
    publish.add_argument("--base", default=DEFAULT_BASE, help=f"the dataset's base IRI (default {DEFAULT_BASE})")
    publish.add_argument("--sparql", metavar="URL", help="query endpoint (default: beside --to)")
    publish.add_argument("--update", metavar="URL", help="SPARQL Update endpoint (default: beside --to)")
    publish.add_argument("--user", help="user name for digest or basic authentication")
    publish.add_argument(
        "--password-file", metavar="PATH", help="file whose first line is the password (else BIBGRAPH_PUBLISH_PASSWORD)"
    )
    publish.add_argument(
        "--insecure-http", action="store_true", help="allow credentials over plain HTTP to a host other than loopback"
    )
    publish.add_argument("--batch", type=int, default=100_000, metavar="N", help="triples per request (default 100000)")
    publish.add_argument(
        "--timeout", type=float, default=6 * 3600.0, metavar="SECONDS", help="deadline for the whole publish"
    )
    publish.add_argument("--replace", action="store_true", help="accepted for old scripts: every publish replaces")
    publish.add_argument("--clean", action="store_true", help="drop what interrupted publishes left, and stop")
    publish.add_argument("--quiet", action="store_true", help="no progress line per batch")
    publish.set_defaults(handler=cmd_publish)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    return int(args.handler(args))


if __name__ == "__main__":
    sys.exit(main())
