"""Benchmark and cross-check the query guard: latency against the old guard and rdflib, and agreement.

Latency: the README's example queries through the guard of ``main`` (the regex deny-list, read
with ``git show``), this guard uncached and cached, and rdflib's parser (the rejected alternative).
Agreement: queries generated as in tests/test_guard.py (escapes, comments ended by CR, strings
holding ``#``, IRIs, nested groups, every SERVICE form) are checked by this guard, the old one,
and rdflib's parse tree (a ``ServiceGraphPattern`` anywhere); whether each holds a SERVICE is
known by construction, and Oxigraph says which benign ones are valid. Usage:
``python -m bench.guard --examples 300`` (run from the repository, with git).
"""

import argparse
import re
import subprocess
import sys
import timeit
import types
from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rdflib.plugins.sparql.parser import parseQuery
from rdflib.plugins.sparql.parserutils import CompValue

from bench.service_queries import assemble, oxigraph_runs, pieces
from bibgraph.graph.serving import guard

ROOT = Path(__file__).resolve().parent.parent


def old_guard(revision: str) -> types.ModuleType:
    source = subprocess.run(
        ["git", "show", f"{revision}:graph/guard.py"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    module = types.ModuleType("old_guard")
    exec(compile(source, "old_guard.py", "exec"), module.__dict__)
    return module


def refuses(check: Any, query: str) -> bool:
    try:
        check(query)
    except Exception:  # the guards' QueryRefused, rdflib's ParseException or RecursionError
        return True
    return False


def rdflib_sees_service(query: str) -> bool | None:
    """Whether rdflib's parse tree holds a SERVICE; None when rdflib refuses the query."""
    try:
        tree = parseQuery(query)
    except Exception:
        return None

    def walk(node: Any) -> bool:
        if isinstance(node, CompValue) and node.name == "ServiceGraphPattern":
            return True
        if isinstance(node, dict):
            return any(walk(value) for value in node.values())
        if isinstance(node, list | tuple):
            return any(walk(value) for value in node)
        return False

    return walk(list(tree))


def latency(old: types.ModuleType) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    queries = re.findall(r"```sparql\n(.*?)```", readme, re.S)
    print("guard latency per README example query (median of 5 runs), microseconds")
    print(f"{'query':>6} {'old guard':>10} {'new':>10} {'new cached':>11} {'rdflib parse':>13}")
    for number, query in enumerate(queries, 1):
        guard.check_query(query)

        def per_call(call: Any, repeat: int) -> float:
            runs = timeit.repeat(call, number=repeat, repeat=5)
            return sorted(runs)[2] / repeat * 1e6

        figures = (
            per_call(lambda q=query: old.check_query(q), 200),
            per_call(lambda q=query: guard._check(q), 200),
            per_call(lambda q=query: guard.check_query(q), 2000),
            per_call(lambda q=query: parseQuery(q), 3),
        )
        print(f"{number:>6} " + " ".join(f"{f:>10.1f}" for f in figures))


def agreement(old: types.ModuleType, examples: int) -> None:
    counts: Counter[str] = Counter()
    url = "http://127.0.0.1:9/sparql"  # nothing is run that holds a SERVICE: no connection is attempted

    @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(parts=st.lists(pieces(), min_size=1, max_size=6))
    def check(parts: list[tuple[str, bool, bool]]) -> None:
        query, live, _ = assemble(parts, url)
        counts["queries"] += 1
        rdflib_service = rdflib_sees_service(query)
        if live:
            counts["with SERVICE"] += 1
            counts["  refused by this guard"] += refuses(guard.check_query, query)
            counts["  refused by the old guard"] += refuses(old.check_query, query)
            counts["  rdflib refuses to parse"] += rdflib_service is None
            counts["  rdflib parses, finds no SERVICE"] += rdflib_service is False
            return
        counts["benign"] += 1
        if not oxigraph_runs(query):
            counts["  invalid for Oxigraph"] += 1
            return
        counts["  valid for Oxigraph"] += 1
        counts["    refused by this guard"] += refuses(guard.check_query, query)
        counts["    refused by the old guard"] += refuses(old.check_query, query)
        counts["    refused by rdflib's parser"] += rdflib_service is None

    check()
    print(f"\ndifferential over {examples} generated queries (SERVICE known by construction)")
    for key in (
        "queries",
        "with SERVICE",
        "  refused by this guard",
        "  refused by the old guard",
        "  rdflib refuses to parse",
        "  rdflib parses, finds no SERVICE",
        "benign",
        "  invalid for Oxigraph",
        "  valid for Oxigraph",
        "    refused by this guard",
        "    refused by the old guard",
        "    refused by rdflib's parser",
    ):
        print(f"{key:<40} {counts[key]:>6}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=300)
    parser.add_argument("--old", default="main", help="git revision of the old guard (default: main)")
    args = parser.parse_args(argv)
    old = old_guard(args.old)
    latency(old)
    agreement(old, args.examples)
    return 0


if __name__ == "__main__":
    sys.exit(main())
