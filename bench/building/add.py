"""Benchmark ``bibgraph add DATASET FILES``: wall time by stage, CPU and peak memory of one add.

Stages are timed inclusively (``add lists`` includes appending to the dumps and the VoID); the add
makes a new version of ``DATASET`` (use a copy to measure again from the same start). Usage:
``python -m bench.building.add /tmp/d100k /tmp/add1k``; ``--whole-dumps`` writes the dumps from the store as
before the dumps were continued; ``--full-concepts`` derives the concept index (each area's figures and paper
order) over the whole store again as before it was updated; ``--compare`` runs the add twice on copies of
``DATASET``, in a process each, with ``--full-concepts`` (the baseline) and without, and prints both, the ratio of
their derive times and what the concept index keeps. ``OTHER/.venv/bin/python -m bench.building.add …`` run from this
checkout times another checkout's add (the stages it has).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.stages import Stages, cpu_seconds, io_bytes, peak_mb


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("files", type=Path, nargs="+")
    parser.add_argument("--whole-dumps", action="store_true", help="write the dumps whole (the baseline)")
    parser.add_argument("--no-derive", action="store_true", help="leave the derived data out (their own stage)")
    parser.add_argument("--full-concepts", action="store_true", help="derive the concept index in full (the baseline)")
    parser.add_argument("--compare", action="store_true", help="the add with --full-concepts and without, on copies")
    args = parser.parse_args()
    if args.compare:
        compare(args.dataset, args.files)
        return
    from bibgraph.graph.dataset import add, derived, directory, dumps, sitedata, void, wholeexports
    from bibgraph.graph.identity import numbering
    from bibgraph.graph.site import conceptupdate
    from bibgraph.web import pages
    from bibgraph.web.commands import versionwrite

    if args.no_derive:
        versionwrite.derive = lambda version, base, previous=None, roles=None: None
    stages = Stages()
    stages.wrap(versionwrite, "_check_extended", "the version extended checked")
    stages.wrap(versionwrite, "checked_files", "  of which its search layers and person map hashed (if not recorded)")
    stages.wrap(numbering, "read", "the person map read")
    stages.wrap(versionwrite, "add_lists", "add lists (parse, look up, write, append to dumps, VoID)")
    stages.wrap(getattr(void, "VoidCounts", None), "observe", "  of which VoID statistics (updated)")
    stages.wrap(getattr(dumps, "Segments", None), "append", "  of which appending to the dumps")
    stages.wrap(dumps, "_copy_head", "copy the previous dumps' data (a checkout before the dumps were segments)")
    stages.wrap(versionwrite, "write_dataset_dumps", "write the dumps whole")
    stages.wrap(versionwrite, "write_dump", "write the dumps whole (a checkout before the dumps were continued)")
    stages.wrap(add, "_replace_void", "  of which VoID statistics (counted again: that checkout)")
    stages.wrap(versionwrite, "update_search_index", "search index (updated; within the derive from h28a on)")
    stages.wrap(numbering.Numbering, "write", "the person map written")
    stages.wrap(directory, "checksums", "checksums")
    stages.wrap(directory, "_sync_tree", "fsync")
    stages.wrap(versionwrite, "derive", "derive")
    stages.wrap(versionwrite, "_extend_incidence", "  of which the incidence (extended, saved)")
    stages.wrap(versionwrite, "merged", "    of which merging the added pairs into its arrays")
    stages.wrap(versionwrite, "_update_home", "  of which the home page's figures (updated)")
    stages.wrap(versionwrite, "_update_concept_index", "  of which the concept index (updated)")
    stages.wrap(versionwrite, "_update_roles", "  of which the roles (updated; none kept before session 17)")
    stages.wrap(conceptupdate, "updated_index", "    of which the update (the rest: writing the order pieces)")
    stages.wrap(conceptupdate, "_new_in_concepts", "      of which finding the papers new to each concept")
    stages.wrap(conceptupdate, "_creators", "      of which their creators")
    for name in ("_concept_counts", "concept_counts"):  # a query per block of authors, or the incidence's arrays
        stages.wrap(conceptupdate, name, "      of which counting the touched authors' papers")
    stages.wrap(conceptupdate, "author_names", "      of which naming the touched authors")
    stages.wrap(conceptupdate, "_places", "      of which placing the new papers (pieces read, labels probed)")
    stages.wrap(conceptupdate.KeptOrder, "between", "      of which reading the rest of the kept orders")
    stages.wrap(pages, "concept_index", "  of which the concept index (derived in full)")
    stages.wrap(versionwrite, "_keep_unreached_maps", "  of which keeping the maps no added paper reaches")
    stages.wrap(sitedata, "_derive_map", "  of which the default maps (derived again where reached)")
    stages.wrap(sitedata, "home_figures", "  of which the home page's figures")
    stages.wrap(sitedata, "_derive_exports", "  of which the whole networks' exports")
    stages.wrap(wholeexports, "derive", "  of which the whole networks' exports")
    stages.wrap(sitedata, "derive", "  of which the rest (sitedata.derive: the topic network and maps, whole graph's)")
    stages.wrap(derived.DerivedFiles, "save", "  across the derive: derived values written")
    if args.full_concepts:
        versionwrite._update_concept_index = lambda *_: None
    if args.whole_dumps:
        original = versionwrite.read_manifest
        versionwrite.read_manifest = lambda version: {k: v for k, v in original(version).items() if k != "dumps"}
    cpu, since = cpu_seconds(), io_bytes()
    start = time.perf_counter()
    with stages.children():
        version, report = versionwrite.add_to_dataset(args.dataset, args.files)
    total, cpu = time.perf_counter() - start, cpu_seconds() - cpu
    print(f"{version}: {report.summary()}")
    print(stages.table(total, cpu, since))
    print(f"CPU {cpu:.1f} s (this process and its children), peak RSS {peak_mb():,.0f} MB (the largest process's)")
    print(kept_index(version))
    print(disk_per_version(version))


def disk_per_version(version: Path) -> str:
    """The disk ``version`` takes beyond the other versions of its dataset: its files that are no hard link to one
    of theirs (``du`` of the dataset's versions in order, counting a file once)."""
    others = {
        (status.st_dev, status.st_ino)
        for other in version.parent.glob("v-*")
        if other != version
        for path in other.rglob("*")
        if (status := path.lstat()) and path.is_file()
    }
    own = shared = 0
    for path in version.rglob("*"):
        if path.is_file() and not path.is_symlink():
            status = path.lstat()
            if (status.st_dev, status.st_ino) in others:
                shared += status.st_blocks * 512
            else:
                own += status.st_blocks * 512
    return f"disk: this version's own files {own / 1e6:,.1f} MB, shared with the other versions {shared / 1e6:,.1f} MB"


def kept_index(version: Path) -> str:
    """The size of the concept index ``version`` keeps: its figures and order pieces, and how many pieces are
    hard links to the previous version's (kept as they were by the update)."""
    from bibgraph.graph.dataset.derived import DerivedFiles, derived_key, file_name
    from bibgraph.graph.dataset.directory import DERIVED
    from bibgraph.graph.dataset.sitedata import CONCEPT_FIGURES, ORDER_CHUNK, order_piece_key

    derived = version / DERIVED
    key = derived_key("page", None, CONCEPT_FIGURES)
    found, figures = DerivedFiles(derived).load(key)
    if not found:
        return "concept index: not kept"
    pieces = [
        derived / file_name(order_piece_key(concept.iri, number))
        for concept in figures.values()
        for number in range(max(1, -(-concept.papers // ORDER_CHUNK)))
    ]
    linked = sum(os.stat(path).st_nlink > 1 for path in pieces)
    size = (derived / file_name(key)).stat().st_size
    return (
        f"concept index kept: {len(figures)} concepts, figures {size / 1e3:,.0f} kB,"
        f" {len(pieces):,} order pieces of {sum(path.stat().st_size for path in pieces) / 1e6:,.1f} MB"
        f" ({sum(concept.papers for concept in figures.values()):,} entries), {linked:,} of them hard links"
    )


def compare(dataset: Path, files: list[Path]) -> None:
    """The add with the concept index derived in full (as before) and updated, on a copy of ``dataset`` each."""
    derive = {}
    for variant, flags in (("before: concept index derived in full", ["--full-concepts"]), ("after: updated", [])):
        with tempfile.TemporaryDirectory(dir=dataset.parent, prefix=".bench-add-") as scratch:
            copy = Path(scratch) / dataset.name
            shutil.copytree(dataset, copy, symlinks=True)
            command = [sys.executable, "-m", "bench.building.add", str(copy), *map(str, files), *flags]
            out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
        print(f"## {variant}\n{out}")
        derive[variant] = float(re.search(r"^\| derive \| ([0-9.]+) \|", out, re.MULTILINE)[1])  # type: ignore[index]
    before, after = derive.values()
    print(f"derive: {before:.1f} s before, {after:.1f} s after ({before / after:.1f}x less)")


if __name__ == "__main__":
    main()
