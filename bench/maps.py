"""Benchmark the map views at scale: the dataset build's derive step (time, peak memory) and each map view's
first (cold) and repeated (warm) answer from a served dataset.

``python -m bench.maps derive STORE OUT --base IRI`` derives the views' data of the complete on-disk store
``STORE`` (opened read-only, never written) into the version directory ``OUT`` (``OUT/store`` is a link to
it), as ``build --dataset`` does, and prints its time and the peak PSS of its process tree (the web process
and its query workers). ``python -m bench.maps views DIR`` serves the dataset ``DIR`` and asks each map view
twice; the baseline, measured in the same run on the same server, is a one-row SPARQL query.
"""

import argparse
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

from bench.serve import COUNT_PAPERS, TOP_AUTHOR, get, local, select, wait_until
from bench.servers import free_port, stop
from bench.sparql import MemoryWatch
from bibgraph.graph.datadir import MANIFEST, STORE, read_manifest
from bibgraph.graph.dataset import dataset_version

SUBAREA_OF = """SELECT ?sub ?area WHERE { ?sub <http://www.w3.org/2004/02/skos/core#broader> ?area }
ORDER BY ?sub LIMIT 1"""


def derive(store: Path, out: Path, base: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    if not (out / STORE).exists():
        (out / STORE).symlink_to(store.resolve())
    code = f"from bibgraph.web.datasets import derive; derive(__import__('pathlib').Path({str(out)!r}), {base!r})"
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-c", code])
    watch = MemoryWatch(process.pid)
    if process.wait():
        raise SystemExit(f"derive failed with {process.returncode}")
    print("| measure | seconds (or MB) |\n|---|---:|")
    seconds = time.perf_counter() - started
    print(f"| derive step (incidence, default/area/subarea maps, topic maps, search, home) | {seconds:.2f} |")
    print(f"| derive step peak PSS, web process and workers (MB) | {watch.stop():.0f} |")
    size = sum(path.stat().st_size for path in (out / "derived").iterdir()) / 2**20
    print(f"| derived/ on disk (MB) | {size:.0f} |")


def views(root: Path) -> None:
    version = dataset_version(root)
    base = read_manifest(version)["base"] if (version / MANIFEST).is_file() else None
    port = free_port()
    server = f"http://127.0.0.1:{port}"
    command = [str(Path(sys.executable).parent / "bibgraph"), "serve", str(root), "--port", str(port)]
    command += ["--timeout", "600", "--client-queries", "0"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        watch = MemoryWatch(process.pid)
        wait_until(f"{server}/health", process)
        endpoint = f"{server}/sparql"
        base = base or server + "/"
        top = select(endpoint, TOP_AUTHOR)
        sub, area = select(endpoint, SUBAREA_OF)[0]
        author, other = (local(base, row[0]) for row in top)
        area, sub = local(base, area).lstrip("/"), local(base, sub).lstrip("/")
        baseline = f"/sparql?query={quote(COUNT_PAPERS)}"
        paths = {
            "baseline: SPARQL count of papers": baseline,
            "co-author map (precomputed)": "/graph/coauthors",
            "co-author map of an area (precomputed)": f"/graph/coauthors?area={area}",
            "co-author map of a subarea (precomputed)": f"/graph/coauthors?subarea={sub}",
            "co-author map, area + min 3 papers": f"/graph/coauthors?area={area}&min_papers=3",
            "co-author map, min 2 joint papers": "/graph/coauthors?min_joint=2",
            "co-author map, subarea + community 0": f"/graph/coauthors?subarea={sub}&community=0",
            "co-author map, top 200 fractional": "/graph/coauthors?top=200&weighting=fractional",
            "ego of the top author": "/graph/ego" + author,
            "ego of the top author, radius 2": f"/graph/ego{author}?radius=2",
            "topic map (precomputed)": "/graph/topics",
            "topic map, all subareas (precomputed)": "/graph/topics?subareas=all",
            "download: area map, min 3 papers, VOSviewer": f"/graph/coauthors.vosviewer?area={area}&min_papers=3",
            "download: topic network GraphML": "/graph/topics.graphml",
            "path between the two top authors": f"/graph/path?from={quote(author)}&to={quote(other)}",
        }
        print("| view | first (s) | again (s) |\n|---|---:|---:|")
        for name, path in paths.items():
            first = get(server + path)
            again = get(server + path)
            print(f"| {name} | {first:.2f} | {again:.2f} |", flush=True)
        print(f"| server peak PSS (MB) | {watch.stop():.0f} | |")
    finally:
        stop(process, timeout=20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    deriving = commands.add_parser("derive")
    deriving.add_argument("store", type=Path)
    deriving.add_argument("out", type=Path)
    deriving.add_argument("--base", required=True)
    serving = commands.add_parser("views")
    serving.add_argument("dataset", type=Path)
    args = parser.parse_args()
    if args.command == "derive":
        derive(args.store, args.out, args.base)
    else:
        views(args.dataset)


if __name__ == "__main__":
    main()
