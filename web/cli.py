"""The ``bibgraph`` command line: build, serve and inspect the graph.

Exit codes: 0 ok, 1 input problems under ``--strict`` (or a failed check), 2 usage errors.
"""

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from bibgraph.graph.build import DEFAULT_BASE, build_graph
from bibgraph.graph.dump import write_dump
from bibgraph.graph.formats import RDF_SYNTAXES, rdf_syntax
from bibgraph.seeds import seed_directory

EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE = 0, 1, 2


def _inputs(values: Sequence[str]) -> list[Path]:
    paths = [Path(value) for value in values] or [seed_directory()]
    missing = [str(path) for path in paths if not path.exists()]
    if missing:
        raise SystemExit(_usage_error(f"no such file or directory: {', '.join(missing)}"))
    return paths


def _usage_error(message: str) -> int:
    print(f"bibgraph: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def cmd_build(args: argparse.Namespace) -> int:
    syntax = rdf_syntax(args.format)
    try:
        store, report = build_graph(_inputs(args.inputs), base=args.base, progress=not args.quiet)
    except ValueError as error:
        return _usage_error(str(error))
    size = write_dump(store, Path(args.out), syntax)
    for problem in report.problems:
        print(problem, file=sys.stderr)
    print(f"wrote {args.out} ({syntax.label}, {size} bytes): {report.summary()}")
    if not args.quiet:
        for line in report.quality_lines():
            print(line)
    return EXIT_PROBLEMS if args.strict and report.problems else EXIT_OK


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bibgraph", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)

    build = commands.add_parser("build", help="build the RDF graph from paper lists and write a dump")
    build.add_argument("inputs", nargs="*", metavar="FILES_OR_DIRS", help="paper lists (default: the seeds)")
    build.add_argument("--out", required=True, help="dump file to write (atomically)")
    build.add_argument("--format", default="turtle", choices=[s.name for s in RDF_SYNTAXES])
    build.add_argument("--base", default=DEFAULT_BASE, help=f"base IRI of minted IRIs (default {DEFAULT_BASE})")
    build.add_argument("--strict", action="store_true", help="exit 1 when any input problem is reported")
    build.add_argument("--quiet", action="store_true", help="no progress bar and no quality report")
    build.set_defaults(handler=cmd_build)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    return int(args.handler(args))


if __name__ == "__main__":
    sys.exit(main())
