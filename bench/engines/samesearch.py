"""Search through an engine against the embedded store, for ``bench.engines.remote --serve DATASET --compare-search
N``: the index built through the engine (what ``serve --store sparql:`` without ``--published`` builds at the
first search) and the one built by the same code from the dataset's embedded store, asked the same generated queries."""

import random
import sqlite3
import time
from pathlib import Path

from bibgraph.graph.dataset import directory
from bibgraph.graph.site.search import SearchIndex
from bibgraph.graph.site.searchbuild import build_search_index
from bibgraph.graph.stores.remote import RemoteGraphStore
from bibgraph.graph.stores.store import GraphStore, OxigraphGraphStore


def compare_search(dataset: Path, endpoint: str | None, scratch: Path, count: int, seed: int = 26) -> None:
    """Build the search index through the engine (what ``serve --store sparql:`` without ``--published`` does at the
    first search; kept from an earlier run when ``endpoint`` is None) and from the dataset's embedded store, both by
    this code (the dataset's own index may come from an older build: its numbering then differs), and compare their
    answers on ``count`` generated queries: a name, a name's first word, one or two title words, a word's prefix;
    every hit (IRI, kind, title, papers, areas, tier) of the first two pages, the totals, and the autocomplete."""
    version = directory.current_version(dataset)
    built, embedded = scratch / "engine-search.sqlite", scratch / "embedded-search.sqlite"
    sources: list[tuple[Path, GraphStore, str]] = [
        (embedded, OxigraphGraphStore.disk(version / "store", read_only=True), "the embedded store")
    ]
    if endpoint is not None:
        remote = RemoteGraphStore(f"{endpoint}?default-graph-uri=urn:bibgraph:bench", timeout=3600)
        sources.append((built, remote, "the engine"))
    for path, store, name in sources:
        path.unlink(missing_ok=True)
        started = time.perf_counter()
        build_search_index(store, path)
        seconds = time.perf_counter() - started
        print(f"search index built from {name}: {seconds:.1f} s, {path.stat().st_size / 1e6:.1f} MB", flush=True)
    with sqlite3.connect(f"file:{embedded}?mode=ro", uri=True) as db:
        titles = [row[0] for row in db.execute("SELECT title FROM items ORDER BY id")]
    chosen = random.Random(seed)
    queries: list[str] = []
    while len(queries) < count:
        words = [word for word in chosen.choice(titles).split() if word.isalpha()] or ["Wang"]
        shape = len(queries) % 5
        if shape == 0:
            queries.append(" ".join(words[:3]))
        elif shape == 1:
            queries.append(words[0])
        elif shape == 2:
            queries.append(" ".join(chosen.sample(words, min(2, len(words)))))
        elif shape == 3:
            queries.append(words[-1][: max(2, len(words[-1]) // 2)])
        else:
            queries.append(chosen.choice(words))
    theirs, ours = SearchIndex(built), SearchIndex(embedded)
    differ = []
    for query in queries:
        a = [theirs.search(query, offset, 20) for offset in (0, 20)] + [theirs.author_names(query)]
        b = [ours.search(query, offset, 20) for offset in (0, 20)] + [ours.author_names(query)]
        if a != b:
            differ.append(query)
    alike = len(queries) - len(differ)
    print(f"{len(queries)} generated queries: {alike} answered alike, {len(differ)} differ: {differ[:10]}")
