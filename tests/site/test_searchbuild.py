"""Differential: the search index built with its authors' names and papers per area read from the incidence holds the
same rows and gives the same answers as the index built from the store's queries for them (``author_names.rq``,
``search_authors.rq``, what the build read before), on generated lists (authors under several spellings, papers
with no area, a subarea, a cut author list, persons whose name is missing) and on the seeds."""

import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bibgraph.graph.site.search import SearchIndex
from bibgraph.graph.site.searchbuild import build_search_index, store_documents, write_index
from bibgraph.graph.sparql.queries import integer, named_query
from bibgraph.graph.stores.store import GraphStore, OxigraphGraphStore
from tests.networks.test_incidence import PEOPLE, built, records_of

# one person under several spellings (joined by identity: the others are its skos:altLabel), and two persons
SPELLED = [*PEOPLE, "ANN ALPHA", "A. Alpha", "Alpha Ann", "Bob  Beta", "B. Beta"]
TABLES = ("meta", "items", "spellings", "names")
QUERIES = ("ann", "alpha", "beta", "a", "problem number 3", "state art", "vision", "detection", "lang", "b", "zzz")


def store_facts(store: GraphStore) -> Iterator[tuple[str, str | None, int]]:
    """Every author's papers per area as the store counts them (the build's former source)."""
    for r in store.iter_select(named_query("search_authors").text):
        yield str(r["author"]), None if r["areaLabel"] is None else str(r["areaLabel"]), integer(r["papers"])


def store_names(store: GraphStore) -> Iterator[str]:
    """The names of every author with a paper, as the store lists them (the build's former source)."""
    return (str(r["name"]) for r in store.iter_select(named_query("author_names").text))


def rows(path: Path) -> dict[str, list[tuple]]:
    with closing(sqlite3.connect(path)) as db:
        return {table: db.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall() for table in TABLES}


def answers(path: Path) -> list:
    index = SearchIndex(path)
    found = [(index.search(query, 0, 50), index.counts(query)) for query in QUERIES]
    return found + [index.author_names(typed, 20) for typed in ("a", "al", "b", "beta", "ann alpha")]


def same_index(store: GraphStore, directory: Path) -> None:
    expected, found = directory / "store.sqlite", directory / "incidence.sqlite"
    write_index(expected, store_documents(store), store_facts(store), store_names(store))
    build_search_index(store, found)
    assert rows(found) == rows(expected)
    assert answers(found) == answers(expected)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records_of(SPELLED), st.sets(st.sampled_from(PEOPLE), max_size=2))
def test_the_index_from_the_incidence_equals_the_index_from_the_stores_queries(generated, nameless) -> None:
    store = built(generated)
    for person in nameless:  # data loaded from elsewhere: a person with no name is no author of the index
        store.store.update(f'DELETE WHERE {{ ?author <http://xmlns.com/foaf/0.1/name> "{person}" }}')
    with tempfile.TemporaryDirectory() as directory:
        same_index(store, Path(directory))


def test_the_seeds_index_from_the_incidence_equals_the_index_from_the_stores_queries(
    seed_store: OxigraphGraphStore, tmp_path: Path
) -> None:
    same_index(seed_store, tmp_path)
    with closing(sqlite3.connect(tmp_path / "incidence.sqlite")) as db:  # the seeds do hold what is compared
        assert db.execute("SELECT count(*) FROM spellings").fetchone()[0] > 0
        assert db.execute("SELECT count(*) FROM items WHERE areas != '[]'").fetchone()[0] > 0
