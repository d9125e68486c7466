"""Benchmark the search index alone: build it from an Oxigraph store (opened read-only), then search and
autocomplete cold (a fresh process opening the file: its first request) and warm (the same request again).

Baseline in the same run: a plain FTS5 ``count(*)`` of the query's matches on the same file (the least
any answer costs), so the ratios stay meaningful on a loaded machine.
Usage: ``python -m bench.building.search STORE OUT.sqlite`` (e.g. a dataset's ``current/store``); ``--reuse`` keeps
an index already at OUT and only measures the searches.

``--writers PY [PY ...]``: the index written by each interpreter's checkout (e.g. this venv's and main's), alternately,
``--runs`` rounds, each in a fresh process reading the incidence from the store's dataset (``../derived``) as the
build's derive does: the writer's CPU-s (``build_search_index`` alone) and the process's, the bytes the writer read
(``rchar``: the page cache's included), the process's peak RSS, the file's size.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

QUERIES = ("a", "learning", "wang", "wei wang", "deep learn", "zzzz", "li")
# autocomplete: 1-, 2- and 3-letter prefixes, then texts that begin no name (generated names: no "wa…" given or
# family name) and are found inside names (a scan in key order until 20 are found), the last two by a whole scan
NAMES = ("w", "li", "ahm", "wa", "wan", "ngxi", "jqxk", "zzzzz")

_PROBE = """
import json, sys, time
from pathlib import Path
from bibgraph.graph.site.search import SearchIndex, words
path, kind, text = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
figures = []
for attempt in range(4):
    started = time.perf_counter()
    index = SearchIndex(path) if attempt == 0 else index
    if kind == "search":
        counts = index.counts(text)
        page = index.search(text, 0, 20, counts)
        found = page.total
    elif kind == "names":
        found = len(index.author_names(text, 20))
    else:  # the baseline: count the matches only
        match = " ".join(f'"{t}"*' for t in words(text))
        db = index._connection()
        found = db.execute("SELECT count(*) FROM words WHERE words MATCH ?", (match,)).fetchone()[0]
    figures.append(time.perf_counter() - started)
print(json.dumps({"cold": figures[0], "warm": min(figures[1:]), "found": found}))
"""


def probe(path: Path, kind: str, text: str) -> dict[str, float]:
    """Cold and warm seconds of one request, in a fresh process."""
    answer = subprocess.run([sys.executable, "-c", _PROBE, str(path), kind, text], check=True, capture_output=True)
    return json.loads(answer.stdout)


_WRITE = """
import json, resource, sys
from pathlib import Path
from bibgraph.graph.dataset.derived import DerivedFiles, derived_key
from bibgraph.graph.site.searchbuild import build_search_index
from bibgraph.graph.stores.store import OxigraphGraphStore
store_path, out = Path(sys.argv[1]), Path(sys.argv[2])
found, incidence = DerivedFiles(store_path.parent / "derived").load(derived_key("incidence"))
store = OxigraphGraphStore.disk(store_path, read_only=True)
def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
def read():  # bytes read by read(2) and pread(2), the page cache's included
    return int(next(l for l in Path("/proc/self/io").read_text().splitlines() if l.startswith("rchar:")).split()[1])
before, was_read = cpu(), read()
build_search_index(store, out, incidence if found else None)
figures = {"index": cpu() - before, "read": read() - was_read, "incidence kept": found, "size": out.stat().st_size}
print(json.dumps(figures))
"""


def written(python: str, store_path: Path, out: Path) -> dict[str, float]:
    """One index written by ``python``'s checkout in a fresh process: its figures and the whole process's."""
    out.unlink(missing_ok=True)
    child = subprocess.Popen([python, "-c", _WRITE, str(store_path), str(out)], stdout=subprocess.PIPE)
    assert child.stdout is not None
    answer = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise SystemExit(f"{python}: the index was not written (exit {child.returncode})")
    figures = json.loads(answer)
    return {**figures, "process": usage.ru_utime + usage.ru_stime, "peak": usage.ru_maxrss / 1024}


def compare(pythons: list[str], store_path: Path, out: Path, runs: int) -> None:
    """Each writer in turn, ``runs`` rounds (paired in one window), then each one's median."""
    print("| round | writer | index CPU-s | process CPU-s | read | peak RSS | file | load (1 min) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    seen: dict[str, list[dict[str, float]]] = {python: [] for python in pythons}
    for round_ in range(1, runs + 1):
        for python in pythons:
            figures = written(python, store_path, out)
            seen[python].append(figures)
            print(
                f"| {round_} | {python} | {figures['index']:.2f} | {figures['process']:.2f}"
                f" | {figures['read'] / 1e9:.2f} GB | {figures['peak']:.0f} MB"
                f" | {figures['size'] / 1e6:.1f} MB | {os.getloadavg()[0]:.1f} |",
                flush=True,
            )
    for python, rows in seen.items():
        index, peak = statistics.median(r["index"] for r in rows), statistics.median(r["peak"] for r in rows)
        print(f"| median | {python} | {index:.2f} | | | {peak:.0f} MB | | |")


def build(store_path: Path, out: Path) -> None:
    from bibgraph.graph.site.searchbuild import build_search_index
    from bibgraph.graph.stores.store import OxigraphGraphStore

    store = OxigraphGraphStore.disk(store_path, read_only=True)
    started = time.perf_counter()
    build_search_index(store, out)
    took = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"| build the index | {took:.1f} s |")
    print(f"| build: peak RSS of the process (store queries included) | {peak:.0f} MB |")
    print(f"| index file | {out.stat().st_size / 1e6:.0f} MB |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--reuse", action="store_true", help="measure the index already at OUT")
    parser.add_argument("--writers", nargs="+", metavar="PY", help="compare the index writers of these interpreters")
    parser.add_argument("--runs", type=int, default=3, help="rounds of --writers")
    args = parser.parse_args()
    if args.writers:
        compare(args.writers, args.store, args.out, args.runs)
        return
    print("| measure | value |")
    print("|---|---:|")
    if not (args.reuse and args.out.exists()):
        build(args.store, args.out)
    for query in QUERIES:
        found = probe(args.out, "search", query)
        floor = probe(args.out, "count", query)
        print(
            f"| search {query!r} ({found['found']} hits): first / again / count-only again"
            f" | {found['cold']:.3f} / {found['warm']:.3f} / {floor['warm']:.3f} s"
            f" (×{found['warm'] / max(floor['warm'], 1e-6):.1f}) |",
            flush=True,
        )
    for text in NAMES:
        found = probe(args.out, "names", text)
        times = f"{found['cold']:.3f} / {found['warm']:.3f} s"
        print(f"| autocomplete {text!r} ({found['found']} names): first / again | {times} |")


if __name__ == "__main__":
    main()
