"""Differential: the search index as the writer now bulk-loads it (FTS5's words buffered in memory, words found by
an ASCII pattern in ASCII text, the readers' indexes made after the rows) against the writer it replaced (ced6c66's,
kept in ``tests/former_searchbuild.py``): the same schema, rows, full-text entries (every word at every position) and
statistics, the same answers (hits, order, counts, autocomplete, titles), and add layers over each answering alike."""

import sqlite3
from contextlib import closing
from pathlib import Path
from types import ModuleType
from unittest.mock import patch

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bibgraph.graph.ingest.names import normalise
from bibgraph.graph.site import searchbuild
from bibgraph.graph.site.search import SearchIndex
from bibgraph.graph.site.searchbuild import FULL_TEXT_BUFFER, WRITE_SETTINGS, write_index
from bibgraph.graph.site.searchlayers import layer_name, open_search
from tests import former_searchbuild
from tests.site.test_search import name, queries, text
from tests.site.test_searchlayers import histories


def contents(path: Path) -> dict[str, list[tuple]]:
    """Everything a reader may use: the schema, the rows, FTS5's entries (each word, item and position), each item's
    size and the table's totals (BM25's statistics, which the layers read), FTS5's settings but those of its writing
    (:data:`~.searchbuild.WRITE_SETTINGS`: its buffer, its merges)."""
    writing = ", ".join(f"'{key}'" for key in WRITE_SETTINGS)
    with closing(sqlite3.connect(path)) as db:
        db.execute("CREATE VIRTUAL TABLE temp.entries USING fts5vocab(main, words, instance)")
        db.execute("CREATE VIRTUAL TABLE temp.spelled USING fts5vocab(main, spelling_words, row)")
        found = {
            "schema": "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name",
            "entries": "SELECT term, doc, col, offset FROM temp.entries ORDER BY 1, 2, 3, 4",
            "spelled": "SELECT term, doc, cnt FROM temp.spelled ORDER BY 1",
            "sizes": "SELECT id, sz FROM words_docsize ORDER BY id",
            "totals": "SELECT block FROM words_data WHERE id = 1",
            "settings": f"SELECT k, v FROM words_config WHERE k NOT IN ({writing}) ORDER BY k",
            "spelling settings": f"SELECT k, v FROM spelling_words_config WHERE k NOT IN ({writing}) ORDER BY k",
        }
        tables = ("meta", "items", "spellings", "names", "removed")
        present = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        found |= {table: f"SELECT * FROM {table}" for table in tables if table in present}
        return {what: sorted(db.execute(sql).fetchall(), key=repr) for what, sql in found.items()}


def written(writer: ModuleType, directory: Path, documents: list, facts: list, names: list, adds: list) -> list[Path]:
    """The build's file then one layer per add, by ``writer`` (this checkout's module or the former one)."""
    directory.mkdir()
    paths = [directory / layer_name(0)]
    writer.write_index(paths[0], documents, facts, names)
    for number, (rows, more_facts, more_names, replaced) in enumerate(adds, 1):
        paths.append(directory / layer_name(number))
        writer.write_layer(paths[:-1], paths[-1], replaced, rows, more_facts, more_names)
    return paths


Rows = list[tuple[str, str, str, str]]


@st.composite
def tangled(draw: st.DrawFn, rows: Rows, others: bool = True) -> Rows:
    """``rows`` with more texts for some of their items, in any order: a paper listed again with another abstract or
    title (the store gives a row per pair), and (``others``) an author's IRI given an area's label too. An item's
    words are its texts' in the order they came, its title the least, and its kind the least (``area``)."""
    papers = sorted({iri for iri, kind, _, _ in rows if kind == "paper"})
    authors = sorted({iri for iri, kind, _, _ in rows if kind == "author"}) if others else []
    more = (
        [(iri, "paper", draw(text), f"Paper {draw(name)}") for iri in draw(st.lists(st.sampled_from(papers)))]
        if papers
        else []
    )
    more += (
        [
            (iri, "area", draw(name), f"Area · {draw(name)}")
            for iri in draw(st.lists(st.sampled_from(authors), max_size=2))
        ]
        if authors
        else []
    )
    return draw(st.permutations(rows + more))


@st.composite
def relabelled(draw: st.DrawFn, facts: list[tuple[str, str | None, int]]) -> list[tuple[str, str | None, int]]:
    """``facts`` with any labels (quotes, backslashes, control characters, non-ASCII: as SQLite's JSON writes them)."""
    labels = draw(st.lists(st.text(max_size=4), min_size=1, max_size=4))
    return [(author, None if area is None else draw(st.sampled_from(labels)), n) for author, area, n in facts]


@settings(deadline=None, max_examples=50, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_the_bulk_loaded_index_is_the_former_writers(tmp_path: Path, data: st.DataObject) -> None:
    documents, facts, names, adds = data.draw(histories())
    documents, facts = data.draw(tangled(documents)), data.draw(relabelled(facts))
    adds = [(data.draw(tangled(rows, others=False)), data.draw(relabelled(more)), *rest) for rows, more, *rest in adds]
    case = tmp_path / f"case{len(list(tmp_path.iterdir()))}"
    case.mkdir()
    new = written(searchbuild, case / "new", documents, facts, names, adds)
    old = written(former_searchbuild, case / "old", documents, facts, names, adds)
    for one, two in zip(new, old, strict=True):
        assert contents(one) == contents(two), one.name
    vocabulary = documents + [row for add in adds for row in add[0]]
    iris = [*sorted({row[0] for row in vocabulary}), "p:never-indexed"]
    for paths in ([new[0]], [old[0]]), (new, old):  # the build's file alone, then with its add layers
        fresh, former = open_search(paths[0]), open_search(paths[1])
        assert fresh.titles(iris) == former.titles(iris)
        for _ in range(4):
            query = data.draw(queries(vocabulary))
            assert fresh.counts(query) == former.counts(query), query
            assert fresh.search(query, 0, 1000) == former.search(query, 0, 1000), query
            offset, limit = data.draw(st.integers(0, 8)), data.draw(st.integers(0, 5))
            assert fresh.search(query, offset, limit) == former.search(query, offset, limit), query
            typed = normalise(query)[: data.draw(st.integers(1, 3))]
            assert fresh.author_names(typed, 3) == former.author_names(typed, 3), typed
        fresh.close()
        former.close()


def test_the_full_text_table_is_written_with_its_buffer(tmp_path: Path) -> None:
    """FTS5 keeps :data:`FULL_TEXT_BUFFER` bytes of words before writing a segment (not its default, 1 MB), merges
    none of its segments as they come (all at once at the end), and the file opens as an index with it."""
    path = tmp_path / "search.sqlite"
    write_index(path, [("a:1", "author", "wang wei", "wang wei"), ("p:1", "paper", "deep wang", "P1")], [], [])
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("SELECT v FROM words_config WHERE k = 'hashsize'").fetchone() == (FULL_TEXT_BUFFER,)
        assert dict(db.execute("SELECT k, v FROM words_config WHERE k IN ('automerge', 'crisismerge')")) == {
            "automerge": 0,
            "crisismerge": 1999,
        }
    index = SearchIndex(path)
    assert index.counts("wa") == (1, 0, 1)
    index.close()


@settings(deadline=None, max_examples=10, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_segments_left_unmerged_until_the_end_make_the_same_index(tmp_path: Path, data: st.DataObject) -> None:
    """With a buffer of 64 bytes FTS5 writes a segment every few items, hundreds of them at a level with no merge
    before the end (its ``crisismerge`` is 16 by default): the index is still the former writer's."""
    documents, facts, names, _ = data.draw(histories())
    documents = data.draw(tangled(documents)) * 20
    documents = [(f"{iri}-{n}", kind, body, title) for n, (iri, kind, body, title) in enumerate(documents)]
    case = tmp_path / f"case{len(list(tmp_path.iterdir()))}"
    case.mkdir()
    small = searchbuild.SCHEMA.replace(f"'hashsize', {FULL_TEXT_BUFFER}", "'hashsize', 64")
    with patch.object(searchbuild, "SCHEMA", small):
        new = written(searchbuild, case / "new", documents, facts, names, [])
    old = written(former_searchbuild, case / "old", documents, facts, names, [])
    assert contents(new[0]) == contents(old[0])
    with closing(sqlite3.connect(new[0])) as db:
        assert db.execute("SELECT v FROM words_config WHERE k = 'hashsize'").fetchone() == (64,)
