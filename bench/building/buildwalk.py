"""One ``bibgraph build --dataset``, in this process: its time by stage, or the walk of its modules.

``python -m bench.building.buildwalk stages LISTS OUT`` runs the build (the console script's own entry point, so any
checkout's interpreter can run this file: ``OTHER/.venv/bin/python -m bench.building.buildwalk ...`` from this checkout)
with its stages timed by :class:`bench.stages.Stages` (wall and CPU seconds, inclusive of what they call; a stage a
checkout lacks is left out): parse/identity/load, dumps, checksums, the derivation of what the site serves and,
within it, the incidence, the networks, their layouts and summaries, concept and home figures, the search index
and the whole networks' export files. CPU is this process's (every thread); work done in other processes (an older
checkout derived through its query workers) shows in wall time only.

``python -m bench.building.buildwalk walk LISTS OUT`` runs it under a profile hook (``sys.setprofile`` and
``threading.setprofile``) and prints each of the package's modules in the order the build first calls a function
of it (a call made while a module is imported is not counted), with the module it was entered from and the seconds
since the start (the hook slows the run: times are for the order only). Used for the walk of one build in
docs/architecture.md.
"""

import argparse
import importlib
import sys
import threading
import time
from pathlib import Path
from types import FrameType
from typing import Any

from bench.stages import Stages, cpu_seconds

# (module, function, label): the first that exists in a checkout is wrapped; an indented label is part of the
# stage above it. Modules are named as this checkout and older ones (856933a, before the regroup) name them: a row
# naming nothing here is another checkout's (tests/test_bench_stages.py checks each label has a row that exists).
STAGES = (
    ("bibgraph.graph.dataset.build", "build_graph", "parse, identity, load and write N-Triples; VoID"),
    ("bibgraph.graph.build", "build_graph", "parse, identity, load and write N-Triples; VoID"),
    ("bibgraph.graph.dataset.triples", "persons_of", "  of which identity: persons decided"),
    ("bibgraph.graph.model", "persons_of", "  of which identity: persons decided"),
    ("bibgraph.graph.dataset.dumps", "complete_streamed_dumps", "Turtle from the streamed N-Triples, VoID"),
    ("bibgraph.web.commands.versionwrite", "complete_streamed_dumps", "Turtle from the streamed N-Triples, VoID"),
    ("bibgraph.web.datasets", "complete_streamed_dumps", "Turtle from the streamed N-Triples, VoID"),
    ("bibgraph.graph.dataset.directory", "checksums", "checksums"),
    ("bibgraph.graph.datadir", "checksums", "checksums"),
    ("bibgraph.web.commands.versionwrite", "derive", "derive what the site serves"),
    ("bibgraph.web.datasets", "derive", "derive what the site serves"),
    ("bibgraph.graph.networks.incidence", "incidence_of", "  incidence"),
    ("bibgraph.graph.networks.engine", "network", "  networks"),
    ("bibgraph.graph.networks.engine", "positions", "  layouts"),
    ("bibgraph.graph.networks.engine", "summary", "  map summaries"),
    ("bibgraph.graph.dataset.sitedata", "concept_figures", "  concept figures and paper orders"),
    ("bibgraph.graph.dataset.sitedata", "home_figures", "  home figures"),
    ("bibgraph.graph.site.searchbuild", "build_search_index", "  search index"),
    ("bibgraph.graph.site.roles", "roles_of", "  roles (read from the store when the build's are not kept)"),
    ("bibgraph.graph.dataset.sitedata", "roles_of", "  roles (read from the store when the build's are not kept)"),
    ("bibgraph.graph.dataset.triples", "roles_of_persons", "  roles (from the build's persons, in the parse stage)"),
    ("bibgraph.graph.dataset.triples", "incidence_of_persons", "  incidence (from the build's persons, parse stage)"),
    ("bibgraph.graph.dataset.sitedata", "derive_exports", "  whole networks' export files (all formats)"),
    ("bibgraph.graph.dataset.sitedata", "_derive_exports", "  whole networks' export files (all formats)"),
)


def _cli() -> Any:
    """The ``bibgraph`` command's ``main``, where this checkout or an older one (before the regroup) has it."""
    for module in ("bibgraph.web.commands.cli", "bibgraph.web.cli"):
        try:
            return importlib.import_module(module).main
        except ImportError:
            continue
    raise ImportError("no bibgraph command line found")


def stages(lists: Path, out: Path) -> None:
    timer, wrapped = Stages(), set()
    for module, function, label in STAGES:
        if label in wrapped:
            continue
        try:
            owner = importlib.import_module(module)
        except ImportError:
            continue
        if hasattr(owner, function):
            timer.wrap(owner, function, label)
            wrapped.add(label)
    main = _cli()
    start, cpu = time.perf_counter(), cpu_seconds()
    with timer.children():
        assert main(["build", str(lists), "--dataset", str(out), "--quiet"]) in (0, None)
    print(timer.table(time.perf_counter() - start, cpu_seconds() - cpu))


class Walk:
    """The package's modules in the order first entered, each with the module it was entered from."""

    def __init__(self) -> None:
        self.start = time.perf_counter()
        self.seen: dict[str, tuple[float, str]] = {}
        self.lock = threading.Lock()

    def hook(self, frame: FrameType, event: str, arg: object) -> None:
        if event != "call":
            return
        module = frame.f_globals.get("__name__", "")
        if not module.startswith("bibgraph.") or module in self.seen:
            return
        caller = ""
        back: FrameType | None = frame
        while back is not None:  # the nearest other module of the package; none running an import's body
            if back.f_code.co_name == "<module>" and back.f_globals.get("__name__") != "__main__":
                return  # a call made while a module is imported (a class body, a constant): not the build's walk
            name = back.f_globals.get("__name__", "")
            caller = caller or (name if name.startswith("bibgraph.") and name != module else "")
            back = back.f_back
        with self.lock:
            self.seen.setdefault(module, (time.perf_counter() - self.start, caller))


def walk(lists: Path, out: Path) -> None:
    main, trace = _cli(), Walk()
    threading.setprofile(trace.hook)
    sys.setprofile(trace.hook)
    try:
        assert main(["build", str(lists), "--dataset", str(out), "--quiet"]) in (0, None)
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    print("| # | module | entered from | at (s) |\n|---:|---|---|---:|")
    for number, (module, (at, caller)) in enumerate(sorted(trace.seen.items(), key=lambda i: i[1][0]), start=1):
        print(f"| {number} | `{module.removeprefix('bibgraph.')}` | {caller.removeprefix('bibgraph.')} | {at:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["stages", "walk"])
    parser.add_argument("lists", type=Path)
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    (stages if args.command == "stages" else walk)(args.lists, args.out)


if __name__ == "__main__":
    main()
