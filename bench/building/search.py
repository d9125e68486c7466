"""Benchmark the search index alone: build it from an Oxigraph store (opened read-only), then search and
autocomplete cold (a fresh process opening the file: its first request) and warm (the same request again).

Baseline in the same run: a plain FTS5 ``count(*)`` of the query's matches on the same file (the least
any answer costs), so the ratios stay meaningful on a loaded machine.
Usage: ``python -m bench.building.search STORE OUT.sqlite`` (e.g. a dataset's ``current/store``); ``--reuse`` keeps
an index already at OUT and only measures the searches.
"""

import argparse
import json
import resource
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
    args = parser.parse_args()
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
