"""Differential: the search index as the writer now bulk-loads it (FTS5's words buffered in memory, words found by
an ASCII pattern in ASCII text, the readers' indexes made after the rows) against the writer it replaced (ced6c66's,
kept in ``tests/former_searchbuild.py``): the same schema, rows, full-text entries (every word at every position) and
statistics, the same answers (hits, order, counts, autocomplete, titles), and add layers over each answering alike."""

import sqlite3
from contextlib import closing
from pathlib import Path
from types import ModuleType

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bibgraph.graph.ingest.names import normalise
from bibgraph.graph.site import searchbuild
from bibgraph.graph.site.search import SearchIndex
from bibgraph.graph.site.searchbuild import FULL_TEXT_BUFFER, write_index
from bibgraph.graph.site.searchlayers import layer_name, open_search
from tests import former_searchbuild
from tests.site.test_search import queries
from tests.site.test_searchlayers import histories


def contents(path: Path) -> dict[str, list[tuple]]:
    """Everything a reader may use: the schema, the rows, FTS5's entries (each word, item and position), each item's
    size and the table's totals (BM25's statistics, which the layers read), FTS5's settings but its write buffer."""
    with closing(sqlite3.connect(path)) as db:
        db.execute("CREATE VIRTUAL TABLE temp.entries USING fts5vocab(main, words, instance)")
        db.execute("CREATE VIRTUAL TABLE temp.spelled USING fts5vocab(main, spelling_words, row)")
        found = {
            "schema": "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name",
            "entries": "SELECT term, doc, col, offset FROM temp.entries ORDER BY 1, 2, 3, 4",
            "spelled": "SELECT term, doc, cnt FROM temp.spelled ORDER BY 1",
            "sizes": "SELECT id, sz FROM words_docsize ORDER BY id",
            "totals": "SELECT block FROM words_data WHERE id = 1",
            "settings": "SELECT k, v FROM words_config WHERE k != 'hashsize' ORDER BY k",
            "spelling settings": "SELECT k, v FROM spelling_words_config WHERE k != 'hashsize' ORDER BY k",
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


@settings(deadline=None, max_examples=50, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_the_bulk_loaded_index_is_the_former_writers(tmp_path: Path, data: st.DataObject) -> None:
    documents, facts, names, adds = data.draw(histories())
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
    """FTS5 keeps :data:`FULL_TEXT_BUFFER` bytes of words before writing a segment (not its default, 1 MB), and the
    file opens as an index with it."""
    path = tmp_path / "search.sqlite"
    write_index(path, [("a:1", "author", "wang wei", "wang wei"), ("p:1", "paper", "deep wang", "P1")], [], [])
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("SELECT v FROM words_config WHERE k = 'hashsize'").fetchone() == (FULL_TEXT_BUFFER,)
    index = SearchIndex(path)
    assert index.counts("wa") == (1, 0, 1)
    index.close()
