"""Benchmark ``bibgraph add DATASET FILES``: wall time by stage, CPU and peak memory of one add.

Stages are timed inclusively (``add lists`` includes appending to the dumps and the VoID); the add
makes a new version of ``DATASET`` (use a copy to measure again from the same start). Usage:
``python -m bench.add /tmp/d100k /tmp/add1k``; ``--whole-dumps`` writes the dumps from the store as
before the dumps were continued; ``OTHER/.venv/bin/python -m bench.add …`` run from this checkout times
another checkout's add (the stages it has).
"""

import argparse
import resource
import time
from pathlib import Path

from bench.stages import Stages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("files", type=Path, nargs="+")
    parser.add_argument("--whole-dumps", action="store_true", help="write the dumps whole (the baseline)")
    parser.add_argument("--no-derive", action="store_true", help="leave the derived data out (their own stage)")
    args = parser.parse_args()
    from bibgraph.graph import add, datadir, dump, void
    from bibgraph.web import datasets

    if args.no_derive:
        datasets.derive = lambda version, base, previous=None: None
    stages = Stages()
    stages.wrap(datasets, "add_lists", "add lists (parse, look up, write, append to dumps, VoID)")
    stages.wrap(getattr(void, "VoidCounts", None), "observe", "  of which VoID statistics (updated)")
    stages.wrap(getattr(dump, "Segments", None), "append", "  of which appending to the dumps")
    stages.wrap(dump, "_copy_head", "copy the previous dumps' data")
    stages.wrap(datasets, "write_dataset_dumps", "write the dumps whole")
    stages.wrap(datasets, "write_dump", "write the dumps whole (a checkout before the dumps were continued)")
    stages.wrap(add, "_replace_void", "  of which VoID statistics (counted again: that checkout)")
    stages.wrap(datadir, "checksums", "checksums")
    stages.wrap(datadir, "_sync_tree", "fsync")
    stages.wrap(datasets, "derive", "derive")
    if args.whole_dumps:
        original = datasets.read_manifest
        datasets.read_manifest = lambda version: {k: v for k, v in original(version).items() if k != "dumps"}
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu = usage.ru_utime + usage.ru_stime
    start = time.perf_counter()
    version, report = datasets.add_to_dataset(args.dataset, args.files)
    total = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(f"{version}: {report.summary()}")
    print(stages.table(total))
    print(
        f"CPU {usage.ru_utime + usage.ru_stime - cpu:.1f} s (this process; derive's worker not counted),"
        f" peak RSS {usage.ru_maxrss / 1024:,.0f} MB"
    )


if __name__ == "__main__":
    main()
