"""A generated corpus mixing every author-line class of issue 10: no record lost, every repair reported.

The same check at 50,000 records is ``python -m bench.persons.names --records 50000`` (on demand).
"""

import io
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.generate import CLASSES, Expected, write_corpus, write_lists
from bench.persons.names import check
from bibgraph.graph.dataset.build import build_graph
from bibgraph.graph.rdf.iris import DEFAULT_BASE, Iris
from bibgraph.graph.rdf.vocab import sparql_prologue
from bibgraph.graph.stores.store import OxigraphGraphStore


def test_messy_corpus_keeps_every_record_and_reports_every_repair(tmp_path: Path) -> None:
    expected = Expected()
    write_lists(tmp_path, 700, per_file=250, seed=3, messy=0.6, expected=expected)  # each class 10+ times
    assert all(expected[f"class {kind}"] > 0 for kind in CLASSES)
    lines, _, ok = check(tmp_path, expected)
    assert ok, "\n".join(lines)
    store, _ = build_graph([tmp_path], progress=False)
    names = [str(row["name"]) for row in store.select(sparql_prologue() + "SELECT ?name { ?p foaf:name ?name }")]
    leftovers = [n for n in names if any(c in n for c in "*†‡#\\{}$[];") or n[-1].isdigit() or " and " in n]
    assert leftovers == []


def test_messy_lists_give_byte_identical_turtle_in_any_file_order(tmp_path: Path) -> None:
    import io

    from bibgraph.graph.rdf.formats import rdf_syntax

    paths = write_lists(tmp_path, 600, per_file=200, seed=5, messy=0.6, expected=Expected())
    dumps = []
    for order in (paths, list(reversed(paths))):
        store, _ = build_graph(order, progress=False)
        out = io.BytesIO()
        store.dump(out, rdf_syntax("turtle"))
        dumps.append(out.getvalue())
    assert dumps[0] == dumps[1]


def test_a_corpus_at_scale_is_deterministic_and_read_whole(tmp_path: Path) -> None:
    """``write_corpus`` (the million-paper generator): the same bytes for a seed, every record read,
    people shared across files with heavy-tailed productivity, author counts from 1 to many."""
    first = write_corpus(tmp_path / "a", 3000, per_file=1000, seed=4)
    again = write_corpus(tmp_path / "b", 3000, per_file=1000, seed=4)
    assert [p.read_bytes() for p in first] == [p.read_bytes() for p in again]
    store, report = build_graph([tmp_path / "a"], progress=False)
    assert (report.records, report.problems) == (3000, [])
    assert report.authorships / report.papers > 3.5
    rows = store.select(
        sparql_prologue() + "SELECT ?person (COUNT(DISTINCT ?file) AS ?files) (COUNT(DISTINCT ?paper) AS ?papers)"
        " { ?paper dcterms:creator ?person ; prov:wasDerivedFrom/bg:sourceFile ?file } GROUP BY ?person"
    )
    papers = Counter(int(row["papers"]) for row in rows)  # type: ignore[arg-type]
    assert papers.most_common(1)[0][0] == 1 and max(papers) >= 20  # most often one paper, a few people many
    assert max(int(row["files"]) for row in rows) == 3  # type: ignore[arg-type]


def test_the_disk_build_holds_the_same_triples_as_the_memory_build(tmp_path: Path) -> None:
    """The disk store is bulk-loaded from a stream of lines; the memory store is loaded in batches."""
    write_corpus(tmp_path / "lists", 400, per_file=150, seed=2, messy=0.5)
    memory, _ = build_graph([tmp_path / "lists"], progress=False)
    disk, _ = build_graph([tmp_path / "lists"], store=OxigraphGraphStore.disk(tmp_path / "store"), progress=False)
    assert set(disk.store) == set(memory.store)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 40), max_size=30), st.integers(1, 200))
def test_blocks_load_every_line_once_and_copy_the_bytes_in_order(shape: list[int], limit: int) -> None:
    """Lines (some texts empty, some holding several lines, some non-ASCII) loaded in blocks of any size: the store
    holds each triple, the copy is their bytes in order, whatever the blocks' ends."""
    import pyoxigraph as ox

    from bibgraph.graph.dataset import build

    texts = ["".join(f'<http://a.test/s{n}> <http://a.test/p> "é{k}" .\n' for k in range(n)) for n in shape]
    store, copy, old = ox.Store(), io.BytesIO(), build.LOAD_CHARS
    build.LOAD_CHARS = limit
    try:
        build.load_blocks(store, iter(texts), copy)
    finally:
        build.LOAD_CHARS = old
    assert copy.getvalue() == "".join(texts).encode("utf-8")
    assert len(store) == len(set(ox.parse(copy.getvalue(), format=ox.RdfFormat.N_TRIPLES)))


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 6), st.integers(0, 6), st.integers(1, 300))
def test_an_empty_piece_ends_a_stage_its_lines_loaded_before_the_next_runs(before: int, after: int, limit: int) -> None:
    """What precedes an empty piece (every record read) is in the store, its loader done, when the maker of the lines
    runs on (the persons decided): a block held or loading meanwhile was half a gigabyte at a million records."""
    import time

    from bibgraph.graph.dataset import build

    loaded: list[bytes] = []

    class SlowStore:
        def bulk_load(self, block: bytes, format: object) -> None:
            time.sleep(0.01)
            loaded.append(block)

    line = '<http://a.test/s{}> <http://a.test/p> "é" .\n'
    seen: list[int] = []

    def lines() -> Iterator[str]:
        yield from (line.format(n) for n in range(before))
        yield ""
        seen.append(sum(block.count(b"\n") for block in loaded))  # what the store holds when the stage resumes
        yield from (line.format(n) for n in range(before, before + after))

    copy, old = io.BytesIO(), build.LOAD_CHARS
    build.LOAD_CHARS = limit
    try:
        build.load_blocks(SlowStore(), lines(), copy)  # type: ignore[arg-type]
    finally:
        build.LOAD_CHARS = old
    assert seen == [before]
    expected = "".join(line.format(n) for n in range(before + after)).encode("utf-8")
    assert b"".join(loaded) == copy.getvalue() == expected


def test_the_collector_runs_rarely_while_the_lines_are_made_and_as_before_after(tmp_path: Path) -> None:
    """The catalogue's long-lived containers are not walked every 700 allocations; the setting is restored when the
    lines end, and when their reader stops early."""
    import gc

    from bibgraph.graph.dataset.build import graph_lines
    from bibgraph.graph.dataset.triples import Catalogue
    from bibgraph.graph.rdf.iris import DEFAULT_BASE, Iris
    from bibgraph.graph.serving.memory import RARE_COLLECTIONS
    from bibgraph.seeds import seed_directory

    before = gc.get_threshold()
    lines = graph_lines([seed_directory()], Iris(DEFAULT_BASE), Catalogue(), [], progress=False)
    next(lines)
    assert gc.get_threshold()[0] == RARE_COLLECTIONS
    lines.close()
    assert gc.get_threshold() == before
    assert sum(1 for _ in graph_lines([seed_directory()], Iris(DEFAULT_BASE), Catalogue(), [], progress=False)) > 0
    assert gc.get_threshold() == before


def test_the_store_loader_checks_the_streamed_lines_the_turtle_dump_then_parses_leniently(tmp_path: Path) -> None:
    """The Turtle dump is converted from the N-Triples copy without checking IRIs again: the strict loader of the
    store read the same bytes, and refuses a bad IRI the lenient parse would let through."""
    import pyoxigraph as ox
    import pytest

    bad = b"<http://a.test/s> <http://a.test/p> <http://a.test/o o> .\n"
    from bibgraph.graph.dataset.build import load_blocks

    lines = ["<http://a.test/s> <http://a.test/p> <http://a.test/o> .\n", bad.decode()]
    store = ox.Store(str(tmp_path / "store"))
    with pytest.raises(SyntaxError):
        load_blocks(store, iter(lines), io.BytesIO())
    assert len(list(ox.parse(bad, format=ox.RdfFormat.N_TRIPLES, lenient=True))) == 1


def test_freed_memory_goes_back_to_the_system_around_deciding_and_each_engine_count(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """glibc keeps freed pages: the parse's maps are handed back before persons are decided, deciding's arrays
    before the persons are written, and, where the engine counts a store (one a build did not tally), the caller's
    pages before the counts and each count's hash set before the next query (at 1M the counts stacked ~1 GB on the
    build's freed-but-kept heap)."""
    from bibgraph.graph.dataset import build, triples, void
    from bibgraph.seeds import seed_directory

    events: list[str] = []
    decide, count = triples.persons_of, build.engine_counts

    def persons_of(*args: object, **kwargs: object) -> object:
        events.append("decide")
        return decide(*args, **kwargs)  # type: ignore[arg-type]

    def engine_counts(*args: object, **kwargs: object) -> object:
        events.append("counts")
        return count(*args, **kwargs)  # type: ignore[arg-type]

    for module in (build, triples, void):
        monkeypatch.setattr(module, "release_free_memory", lambda collect=True: events.append("release"))
    monkeypatch.setattr(triples, "persons_of", persons_of)
    monkeypatch.setattr(build, "engine_counts", engine_counts)
    store, _ = build_graph([seed_directory()], progress=False, describe=False)
    assert "counts" not in events  # tallied as written
    build.describe_store(store, Iris(DEFAULT_BASE))  # no tally given: the engine counts
    decided, counted = events.index("decide"), events.index("counts")
    assert events[decided - 1] == events[decided + 1] == events[counted - 1] == "release"
    assert events[counted + 1 :] == ["release"] * 5  # one per query of engine_counts
