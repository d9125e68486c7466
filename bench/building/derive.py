"""The derive stage of a dataset build, value by value: CPU seconds and peak memory of each (issue 28).

    nice -n 5 .venv/bin/python -m bench.building.derive --dataset /work/data/d100k [--old] [--scratch DIR]
    nice -n 5 .venv/bin/python -m bench.building.derive --synthetic 1000000 --like /work/data/d100k [--scratch DIR]

``--dataset``: the incidence a dataset keeps (and its store, for the values read from it: concept figures, the
home page's, the search index). ``--synthetic N``: an incidence of N papers shaped like the one ``--like`` keeps
(its papers' author counts, its authors' paper counts, its subjects and cut lists, sampled; authors scaled with
the papers): at a million papers ~1.85M authors, as ``bench.generate``'s corpora, with no dataset built. Each value
is computed in a child forked from the process holding the incidence, so each line is its own: user+system
CPU-s and the child's peak RSS (the incidence's pages included; the parent's RSS is printed first). ``--old``
also runs the whole co-author exports as the engine makes them (a networkx graph and a layout of every author).
The last line is the whole derive of the networks in one child: what a build's derive adds, at most.
"""

import argparse
import os
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from bibgraph.graph.arrays.sets import distinct
from bibgraph.graph.dataset import sitedata, wholeexports
from bibgraph.graph.dataset.derived import DerivedFiles, derived_key
from bibgraph.graph.networks import engine
from bibgraph.graph.networks.exports import NETWORK_SYNTAXES
from bibgraph.graph.networks.incidence import Incidence, Strings
from bibgraph.graph.networks.spec import COAUTHORS, TOPIC_MAP, TOPICS, NetworkSpec
from bibgraph.graph.networks.wholecoauthors import WholeCoauthors

MAX_VIEW_NODES = 1000  # the setting's default


def kept_incidence(dataset: Path) -> Incidence:
    found, incidence = DerivedFiles(dataset / "current" / "derived").load(derived_key("incidence"))
    if not found:
        raise SystemExit(f"{dataset} keeps no incidence")
    return incidence


def synthetic(papers: int, like: Incidence, seed: int = 1) -> Incidence:
    """An incidence of ``papers`` papers shaped like ``like``: list lengths and authors' paper counts sampled from
    it (authors scaled by papers), authors placed at random, each paper's subjects and cut flag those of a
    sampled paper of ``like``."""
    pick = np.random.default_rng(seed)
    sizes_like, counts_like = np.diff(like.paper_ptr), np.diff(like.author_ptr)
    authors = round(len(like.authors) * papers / len(like.papers))
    sizes = pick.choice(sizes_like, papers)
    slots = np.repeat(np.arange(authors, dtype=np.int64), pick.choice(counts_like, authors))
    pick.shuffle(slots)
    slots = np.resize(slots, int(sizes.sum()))
    owner = np.repeat(np.arange(papers, dtype=np.int64), sizes)
    keys = distinct(owner * authors + slots)
    del owner, slots
    ap_paper, ap_author = (keys // authors).astype(np.int32), (keys % authors).astype(np.int32)
    del keys
    used = np.zeros(authors, dtype=bool)
    used[ap_author] = True
    new = np.cumsum(used) - 1
    ap_author = new[ap_author].astype(np.int32)
    authors = int(used.sum())
    source = pick.integers(0, len(like.papers), papers)
    pc_start = np.searchsorted(like.pc_paper, source, side="left")
    pc_len = np.searchsorted(like.pc_paper, source, side="right") - pc_start
    offsets = np.arange(pc_len.sum()) - np.repeat(np.cumsum(pc_len) - pc_len, pc_len)
    pc_concept = like.pc_concept[np.repeat(pc_start, pc_len) + offsets]
    pc_paper = np.repeat(np.arange(papers, dtype=np.int32), pc_len)
    by_author = np.lexsort((ap_paper, ap_author))

    def strings(prefix: str, count: int) -> Strings:
        return Strings.of(f"{prefix}{i:08d}" for i in range(count))

    return Incidence(
        authors=strings("https://bib.example.org/person/p", authors),
        names=Strings.of(f"Author Name {i}" for i in range(authors)),
        papers=strings("https://bib.example.org/paper/w", papers),
        truncated=like.truncated[source],
        ap_paper=ap_paper,
        ap_author=ap_author,
        paper_ptr=np.searchsorted(ap_paper, np.arange(papers + 1)).astype(np.int64),
        author_ptr=np.searchsorted(ap_author[by_author], np.arange(authors + 1)).astype(np.int64),
        author_papers=ap_paper[by_author],
        pc_paper=pc_paper.astype(np.int32),
        pc_concept=pc_concept.astype(np.int32),
        concepts=like.concepts,
    )


def measured(label: str, work: Callable[[], Any]) -> None:
    """Run ``work`` in a forked child; print its CPU seconds, wall seconds and peak RSS."""
    sys.stdout.flush()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        try:
            work()
        except BaseException as error:  # the line says it failed, the parent goes on
            print(f"  {label}: FAILED {error!r}", file=sys.stderr)
            os._exit(1)
        os._exit(0)
    _, status, usage = os.wait4(pid, 0)
    cpu = usage.ru_utime + usage.ru_stime
    state = "" if status == 0 else "  (failed)"
    print(f"{label:<48} {cpu:8.1f} CPU-s {time.monotonic() - started:8.1f} s {usage.ru_maxrss / 1024:8.0f} MB{state}")


def run(inc: Incidence, store: Path | None, scratch: Path, old: bool, only: list[str] | None = None) -> None:
    def whole_new(formats: list[str] | None = None) -> None:
        whole = WholeCoauthors(inc)
        for syntax in NETWORK_SYNTAXES:
            if formats is not None and syntax.name not in formats:
                continue
            with open(scratch / f"new.{syntax.suffix}", "wb") as out:
                whole.write(syntax.name, out)

    def whole_old() -> None:
        spec = wholeexports.DEFAULT_EXPORTS[0]
        network = engine.network(inc, spec)
        for syntax in NETWORK_SYNTAXES:  # the layout of every author, as before LAID_OUT_MAX_NODES
            (scratch / f"old.{syntax.suffix}").write_bytes(
                syntax.write(network)
                if not syntax.positioned
                else syntax.write(network, engine.positions(spec, network))  # type: ignore[call-arg]
            )

    topics = engine.network(inc, NetworkSpec(TOPICS))
    maps = sitedata.default_maps(topics, MAX_VIEW_NODES)

    def default_maps(kinds: tuple[str, ...]) -> Callable[[], None]:
        def work() -> None:
            for spec in maps:
                if spec.kind in kinds:
                    sitedata._derive_map(spec, inc, lambda key, make: make())

        return work

    def every() -> None:
        engine.network(inc, NetworkSpec(TOPICS))
        default_maps((COAUTHORS, TOPIC_MAP))()
        engine.coauthor_degrees(inc)
        whole_new()
        wholeexports.derive(scratch / "all", inc, (NetworkSpec(TOPICS),))

    print(f"{'incidence held by the parent':<48} {'':>14} {'':>10} {rss_mb():8.0f} MB")
    if only:
        measured(f"whole co-author exports, {' '.join(only)} (arrays)", lambda: whole_new(only))
        return
    measured("topic network", lambda: engine.network(inc, NetworkSpec(TOPICS)))
    measured("whole co-author map (top 1,000, laid out)", lambda: sitedata._derive_map(maps[0], inc, lambda k, m: m()))
    measured(f"every default co-author map ({sum(s.kind == COAUTHORS for s in maps)})", default_maps((COAUTHORS,)))
    measured(f"every topic map ({sum(s.kind == TOPIC_MAP for s in maps)})", default_maps((TOPIC_MAP,)))
    measured("co-author degrees (home chart)", lambda: engine.coauthor_degrees(inc))
    measured("whole co-author links only (arrays)", lambda: WholeCoauthors(inc))
    measured("whole co-author exports, 4 formats (arrays)", whole_new)
    (scratch / "all").mkdir(exist_ok=True)
    measured("whole topic exports", lambda: wholeexports.derive(scratch / "all", inc, (NetworkSpec(TOPICS),)))
    if store is not None:
        measured("concept figures and orders (store)", lambda: sitedata.concept_figures(opened(store)))
        measured(
            "search index (store's texts, incidence's facts)",
            lambda: search_index(store, scratch / "search.sqlite", inc),
        )
    if old:
        measured("whole co-author exports, 4 formats (networkx, layout)", whole_old)
    measured("the derive's networks, all in one", every)
    for path in scratch.glob("*.*"):
        print(f"  {path.name}: {path.stat().st_size / 1e6:,.0f} MB")


def opened(store: Path) -> Any:
    from bibgraph.graph.stores.store import OxigraphGraphStore

    return OxigraphGraphStore.disk(store, read_only=True)


def search_index(store: Path, path: Path, inc: Incidence) -> None:
    from bibgraph.graph.site.searchbuild import build_search_index

    build_search_index(opened(store), path, inc)


def rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", type=Path, help="a dataset whose kept incidence (and store) is derived from")
    parser.add_argument("--synthetic", type=int, help="papers of a synthetic incidence shaped like --like")
    parser.add_argument("--like", type=Path, help="the dataset whose incidence the synthetic one is shaped like")
    parser.add_argument("--old", action="store_true", help="also the engine's whole exports (networkx, layout)")
    parser.add_argument("--only", nargs="+", help="only the whole co-author exports in these formats")
    parser.add_argument("--scratch", type=Path, help="where the exports are written (a temporary directory)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(dir=args.scratch) as directory:
        started = time.process_time()
        if args.synthetic:
            if args.like is None:
                parser.error("--synthetic needs --like")
            inc, store = synthetic(args.synthetic, kept_incidence(args.like)), None
        elif args.dataset:
            inc, store = kept_incidence(args.dataset), args.dataset / "current" / "store"
        else:
            parser.error("--dataset or --synthetic")
        print(
            f"{len(inc.papers):,} papers, {len(inc.authors):,} authors, {len(inc.ap_paper):,} authorships"
            f" (made in {time.process_time() - started:.1f} CPU-s); load {os.getloadavg()[0]:.1f}"
        )
        print(f"peak RSS of this process so far {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
        run(inc, store, Path(directory), args.old, args.only)
        print(f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
