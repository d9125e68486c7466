"""Red team: a search query's work is bounded by its distinct words, not by how many times it repeats them.

``/search`` keeps 200 characters of ``q``: a hundred one- or two-letter words. Each word was a pass of
FTS5 over its prefix matches and a BM25 term per hit, so ``q=th th th …`` cost about fifty times ``q=th``
(1.57 s against 0.03 s for a page at 10k papers); a query is now matched with its distinct words, the
first :data:`~bibgraph.graph.site.search.MAX_QUERY_WORDS`.
"""

import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bibgraph.graph.site.search import FILE_NAME, MAX_QUERY_WORDS, SearchIndex, SearchIndexError, query_terms, words
from tests.search_oracle import OracleIndex, author_facts
from tests.site.test_search import assert_ranked_as_oracle, corpora, index_of, queries


def _steps(path: Path, query: str) -> int:
    """SQLite virtual-machine steps (in thousands) of one page of ``query``: its work, whatever the machine's load.
    Asked of an index opened for it, so that no query it kept answers for another (Hypothesis found 'w w' doing
    the work after which 'w' was answered from what the index kept)."""
    index = SearchIndex(path)
    steps = 0

    def count() -> int:
        nonlocal steps
        steps += 1
        return 0

    connection = index._connection()
    connection.set_progress_handler(count, 1000)
    try:
        index.search(query, 0, 20)
    finally:
        connection.set_progress_handler(None, 0)
        index.close()
    return steps


@settings(deadline=None, max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data(), st.integers(2, 100))
def test_repeating_the_words_of_a_query_finds_the_same_with_the_same_work(
    tmp_path: Path, data: st.DataObject, times: int
) -> None:
    documents, facts = data.draw(corpora())
    # many papers: enough rows for a pass over the matches to count
    documents += [
        (f"{iri}/{k}", kind, t, title) for k in range(40) for iri, kind, t, title in documents if kind == "paper"
    ]
    index = index_of(tmp_path / FILE_NAME, documents, facts)
    query = data.draw(queries(documents))
    repeated = " ".join([query] * times)
    oracle = OracleIndex(documents, author_facts(facts))
    once = index.search(query, 0, 1000)
    again = index.search(repeated, 0, 1000)
    assert again.total == once.total
    assert_ranked_as_oracle(again.hits, oracle, oracle.search(repeated))
    assert _steps(tmp_path / FILE_NAME, repeated) <= _steps(tmp_path / FILE_NAME, query) + 2
    index.close()


def test_a_repeated_one_letter_prefix_costs_what_it_costs_once(tmp_path: Path) -> None:
    """The case Hypothesis found when the two were measured on one index (the second answered from the first)."""
    documents = [(f"a:{n}", "author", "wang", "wang") for n in range(7)] + [("c:0", "area", "wang", "Area · wang")]
    documents += [(f"p:{n}/{k}", "paper", "wang", "Paper wang") for n in range(2) for k in range(41)]
    index_of(tmp_path / FILE_NAME, documents, []).close()
    assert _steps(tmp_path / FILE_NAME, "w w") <= _steps(tmp_path / FILE_NAME, "w") + 2


@given(st.lists(st.sampled_from(["a", "th", "陈", "li", "b1", "é"]), max_size=40))
def test_query_terms_are_the_first_distinct_words(terms: list[str]) -> None:
    kept = query_terms(terms)
    assert len(kept) == len(set(kept)) <= MAX_QUERY_WORDS
    assert kept == [term for i, term in enumerate(terms) if term not in terms[:i]][:MAX_QUERY_WORDS]


def test_a_query_of_many_distinct_words_is_matched_with_the_first(tmp_path: Path) -> None:
    """Past MAX_QUERY_WORDS distinct words the rest are not matched: the hits are those of the first ones."""
    text = " ".join(f"w{number}" for number in range(MAX_QUERY_WORDS + 5))
    documents = [("p:1", "paper", text, "one"), ("p:2", "paper", text.rsplit(" ", 1)[0], "two")]
    index = index_of(tmp_path / FILE_NAME, documents, [])
    assert index.search(text, 0, 10).total == 2  # the last word, missing from urn:p2, is past the limit
    assert len(words(text)) > MAX_QUERY_WORDS
    index.close()


def test_a_damaged_table_of_names_is_told_with_its_file(tmp_path: Path) -> None:
    """The autocomplete's names table damaged (the rest readable): the error names the file, as a search's does."""
    path = tmp_path / FILE_NAME
    names = [f"Name{number} Family" for number in range(3000)]
    index_of(path, [("p:1", "paper", "words", "one")], [], names).close()
    with sqlite3.connect(path) as connection:
        page_size = connection.execute("PRAGMA page_size").fetchone()[0]
        (root,) = connection.execute("SELECT rootpage FROM sqlite_master WHERE name = 'names'").fetchone()
    connection.close()
    with open(path, "r+b") as file:
        file.seek((root - 1) * page_size)
        file.write(b"\xff" * page_size)
    index = SearchIndex(path)  # opens: the words table is whole
    with pytest.raises(SearchIndexError, match=str(path)):
        index.author_names("name1", 20)
    index.close()
