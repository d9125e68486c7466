"""Benchmark ``bibgraph build`` against two baselines measured in the same run.

- floor: the same triples written as N-Triples by plain string formatting (after the same parse);
- naive rdflib: rdflib's Memory store, ``add`` each triple, ``serialize`` Turtle;
- oxrdflib add: the same naive script on the Oxigraph store (the store choice, through rdflib's API);
- bibgraph: ``bibgraph build`` (Rust bulk load, VoID, canonical Turtle dump).

Each variant runs in its own process so that peak memory (ru_maxrss) is its own. Usage:
``python -m bench.build --sizes 1000 10000 100000``.
"""

import argparse
import json
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from bench.generate import write_lists

VARIANTS = ("floor", "naive-rdflib", "oxrdflib-add", "bibgraph")
_LINE = re.compile(r'^<([^>]*)> <([^>]*)> (?:<([^>]*)>|"((?:[^"\\]|\\.)*)"(?:\^\^<([^>]*)>)?) \.$')


def _catalogue_lines(directory: Path) -> Iterator[str]:
    """The same parse and the same triples as ``bibgraph build``, as N-Triples text."""
    from bibgraph.graph.build import DEFAULT_BASE, graph_lines
    from bibgraph.graph.iris import Iris
    from bibgraph.graph.model import Catalogue

    return graph_lines([directory], Iris(DEFAULT_BASE), Catalogue(), [], progress=False)


def _naive(directory: Path, out: Path, store: str) -> int:
    from rdflib import Graph, Literal, URIRef

    graph = Graph(store=store)
    unescape = {"\\n": "\n", "\\r": "\r", '\\"': '"', "\\\\": "\\"}
    for line in _catalogue_lines(directory):
        match = _LINE.match(line.rstrip("\n"))
        assert match is not None, line  # the builder writes only lines of this shape
        s, p, o, text, datatype = match.groups()
        obj: URIRef | Literal
        if o is not None:
            obj = URIRef(o)
        else:
            value = re.sub(r"\\[nr\"\\]", lambda m: unescape[m.group(0)], text)
            obj = Literal(value, datatype=URIRef(datatype) if datatype else None)
        graph.add((URIRef(s), URIRef(p), obj))
    graph.serialize(out, format="turtle")
    return len(graph)


def run_variant(variant: str, directory: Path, out: Path) -> dict:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu_start = usage.ru_utime + usage.ru_stime  # CPU time: what a shared, busy machine distorts least
    start = time.perf_counter()
    if variant == "floor":
        triples = 0
        with out.open("w", encoding="utf-8") as stream:
            for line in _catalogue_lines(directory):
                stream.write(line)
                triples += 1
    elif variant == "naive-rdflib":
        triples = _naive(directory, out, "default")
    elif variant == "oxrdflib-add":
        triples = _naive(directory, out, "Oxigraph")
    else:
        from bibgraph.graph.build import build_graph
        from bibgraph.graph.dump import write_dump
        from bibgraph.graph.formats import rdf_syntax

        store, _ = build_graph([directory], progress=False)
        write_dump(store, out, rdf_syntax("turtle"))
        triples = store.triple_count()
    seconds = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu = usage.ru_utime + usage.ru_stime - cpu_start
    return {"variant": variant, "seconds": seconds, "cpu": cpu, "triples": triples, "peak_mb": usage.ru_maxrss / 1024}


def measure(variant: str, directory: Path, out: Path, timeout: float) -> dict:
    command = [sys.executable, "-m", "bench.build", "--worker", variant, str(directory), str(out)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=True)
    except subprocess.TimeoutExpired:
        return {"variant": variant, "seconds": float("nan"), "cpu": float("nan"), "triples": 0, "peak_mb": float("nan")}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description="bibgraph build benchmark")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS)
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument("--worker", nargs=3, metavar=("VARIANT", "DIR", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        variant, directory, out = args.worker
        print(json.dumps(run_variant(variant, Path(directory), Path(out))))
        return
    print("| records | variant | seconds | CPU s | records/s | triples/s | peak MB | vs floor | naive/this |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as scratch:
        for size in args.sizes:
            directory = Path(scratch) / f"lists-{size}"
            write_lists(directory, size)
            results = {v: measure(v, directory, Path(scratch) / f"out-{v}-{size}", args.timeout) for v in args.variants}
            floor = results.get("floor", {}).get("seconds")
            naive = results.get("naive-rdflib", {}).get("seconds")
            triples = results.get("bibgraph", results[args.variants[0]])["triples"]
            for variant, result in results.items():
                seconds = result["seconds"]
                print(
                    f"| {size} | {variant} | {seconds:.2f} | {result['cpu']:.2f} | {size / seconds:,.0f} |"
                    f" {triples / seconds:,.0f} |"
                    f" {result['peak_mb']:.0f} | {seconds / floor if floor else float('nan'):.2f}× |"
                    f" {naive / seconds if naive else float('nan'):.1f}× |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
