"""Differential: the search index built with its authors' names and papers per area read from the incidence holds the
same rows and gives the same answers as the index built from the store's queries for them (``author_names.rq``,
``search_authors.rq``, what the build read before), on generated lists (authors under several spellings, papers
with no area, a subarea, a cut author list, persons whose name is missing) and on the seeds. The texts a build's load
spools (:mod:`bibgraph.graph.dataset.searchspool`) are the rows the store's queries give (as a multiset), and the index
written from them is the index written from the store."""

import sqlite3
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bibgraph.graph.dataset import build, searchspool
from bibgraph.graph.dataset.build import build_graph
from bibgraph.graph.networks.incidence import incidence_of
from bibgraph.graph.site.search import SearchIndex
from bibgraph.graph.site.searchbuild import build_search_index, store_documents, write_index
from bibgraph.graph.sparql.queries import integer, named_query
from bibgraph.graph.stores.store import GraphStore, OxigraphGraphStore
from tests.conftest import BASE
from tests.dataset.test_voidtally import ABSTRACTS, AREAS, STUDY, _lists
from tests.networks.test_incidence import PEOPLE, built, records_of
from tests.site.test_searchbuild_bulk import contents

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


# Names written in capitals too (one person, its other spelling an skos:altLabel), shared by several papers (persons
# merged, or split by their co-authors), an area named like a person.
WORDS = ["Wei", "WEI", "Zhang", "ZHANG", "Li", "Anna", "Models"]
NAMES = st.lists(st.sampled_from(WORDS), min_size=2, max_size=2).map(" ".join)
AUTHORS = st.one_of(  # short lists often, long ones sometimes (over ten: a cut list)
    st.lists(NAMES, min_size=1, max_size=3, unique_by=str.casefold),
    st.lists(NAMES, min_size=1, max_size=12, unique_by=str.casefold),
)
RECORDS = st.tuples(AREAS, AUTHORS, ABSTRACTS)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(RECORDS, min_size=1, max_size=8),
    st.integers(min_value=1, max_value=3),
    st.one_of(st.none(), st.tuples(NAMES, NAMES)),
)
@example([(("Models", "li"), ["Wei Zhang", "Li Anna"], STUDY), (("Models", None), ["WEI ZHANG"], STUDY)], 2, None)
def test_the_spooled_texts_are_the_stores_and_index_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, records: list, copies: int, curated: tuple[str, str] | None
) -> None:
    """Duplicate records (a list in several files), other spellings, areas with and without subareas, cut author
    lists, curated joins: the spool's rows are the queries' (each once: no text twice where a store holds a triple
    once), and the index written from them is the one written from the queries, row for row."""
    monkeypatch.setattr(build, "CHUNK_CHARS", 300)
    case = tmp_path / f"case-{len(list(tmp_path.iterdir()))}"
    case.mkdir()
    _lists(case / "lists", records, copies, curated)
    store = OxigraphGraphStore.disk(case / "store")
    with searchspool.spooling(case) as spool:
        store, _ = build_graph([case / "lists"], base=BASE, store=store, progress=False, describe=False, search=spool)
    spooled = list(searchspool.documents(case / searchspool.SPOOL))
    assert Counter(spooled) == Counter(store_documents(store))
    incidence = incidence_of(store)
    build_search_index(store, case / "queried.sqlite", incidence)
    build_search_index(store, case / "spooled.sqlite", incidence, iter(spooled))
    assert contents(case / "spooled.sqlite") == contents(case / "queried.sqlite")


def test_a_spool_keeps_any_text_on_one_line(tmp_path: Path) -> None:
    """Line breaks, quotes, backslashes, tabs and separators in a text: each row read back as written."""
    texts = ["a\nb", 'q"uo\\te', "tab\there\r", "line\u2028sep\u0085", "数据 Über"]
    with searchspool.spooling(tmp_path) as spool:
        for number, text in enumerate(texts):
            spool.paper(f"{BASE}p{number}", text, text)
    read = list(searchspool.documents(tmp_path / searchspool.SPOOL))
    assert read == [(f"{BASE}p{number}", "paper", text, text) for number, text in enumerate(texts)]
