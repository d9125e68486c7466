"""The search index (SQLite FTS5): the same hits and order as the former pure-Python index on generated
documents and queries, paging without materialising every hit, the autocomplete, and the index of a
dataset (built, added to, damaged)."""

import itertools
import json
import math
import shutil
import sqlite3
import unicodedata
from pathlib import Path
from unittest.mock import patch

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bibgraph.graph.dataset.directory import DERIVED, current_version
from bibgraph.graph.ingest.names import normalise
from bibgraph.graph.site import search, searchbuild, searchupdate
from bibgraph.graph.site.search import FILE_NAME, SCORE_DIGITS, Hit, SearchIndex, SearchIndexError, fold, words
from bibgraph.graph.site.searchbuild import write_index
from bibgraph.graph.site.searchlayers import layers, open_search
from bibgraph.seeds import seed_directory
from bibgraph.web.commands.cli import main
from tests.conftest import BASE, make_app
from tests.search_oracle import OracleIndex, author_facts, fts5_idf, lucene_idf

# Word material that folds in every way fold() must: accents, ß, compatibility forms, Turkish İ, CJK, _ and digits.
PIECES = ["wang", "wei", "li", "lim", "ana", "Oğuz", "oguz", "Öz", "straße", "STRASSE", "\u210cilbert", "İz", "ﬁne"]
PIECES += ["周", "欣", "周欣", "x_y", "e\u0301te", "été", "12", "a1", "ДИМА", "дима", "ᴬb", "Ab"]
word = st.one_of(st.sampled_from(PIECES), st.text(st.sampled_from("abwéß周_1 "), min_size=1, max_size=4))
text = st.lists(word, min_size=0, max_size=7).map(lambda parts: " ".join(parts)) | st.lists(word, max_size=4).map(
    lambda parts: "-".join(parts) + ", …"
)
name = st.lists(word, min_size=1, max_size=3).map(" ".join)


@st.composite
def corpora(draw: st.DrawFn) -> tuple[list[tuple[str, str, str, str]], list[tuple[str, str | None, int]]]:
    """Documents as the store lists them (authors' spellings scattered, a paper's rows together) and facts."""
    authors = draw(st.lists(st.lists(name, min_size=1, max_size=3), min_size=0, max_size=8))
    areas = draw(st.lists(name, max_size=3))
    papers = draw(st.lists(text, max_size=10))
    rows = [
        (f"a:{i}", "author", spelling, spellings[0]) for i, spellings in enumerate(authors) for spelling in spellings
    ]
    rows += [(f"c:{i}", "area", label, f"Area · {label}") for i, label in enumerate(areas)]
    rows = draw(st.permutations(rows))
    rows += [(f"p:{i}", "paper", abstract, f"Paper {abstract[:10]}") for i, abstract in enumerate(papers)]
    labels = st.one_of(st.none(), st.sampled_from(["Deep Learning", "Vision", "Theory"]))
    facts = [
        (f"a:{i}", draw(labels), draw(st.integers(1, 5)))
        for i in range(len(authors))
        for _ in range(draw(st.integers(0, 3)))
    ]
    return rows, facts


def queries(documents: list[tuple[str, str, str, str]]) -> st.SearchStrategy[str]:
    vocabulary = sorted({w for _, _, t, _ in documents for w in t.split()}) or ["wang"]
    prefix = st.sampled_from(vocabulary).flatmap(lambda w: st.integers(1, max(1, len(w))).map(lambda n: w[:n]))
    return st.one_of(prefix, st.lists(prefix, min_size=2, max_size=3).map(" ".join), word, name)


def index_of(path: Path, documents: list, facts: list, names: list[str] | None = None) -> SearchIndex:
    path.unlink(missing_ok=True)
    write_index(path, documents, facts, names or [])
    return SearchIndex(path)


def assert_ranked_as_oracle(hits: list[Hit], oracle: OracleIndex, expected: list[Hit]) -> None:
    """The same hits (every field), in the oracle's order: by score to :data:`SCORE_DIGITS` digits, and a tie
    there by title. FTS5 and the oracle sum a score in their own orders, so their roundings of one score may
    fall either side of a last digit: scores one such step apart may come in either order."""
    assert {hit.iri: hit for hit in hits} == {hit.iri: hit for hit in expected}
    assert len(hits) == len(expected)
    for one, two in itertools.pairwise(hits):
        a, b = oracle.key(one), oracle.key(two)
        assert a[:3] <= b[:3]
        if a[:3] == b[:3]:
            assert a[3] <= b[3] + 2 * 10.0 ** (1 - SCORE_DIGITS) * max(1.0, abs(b[3]))
            if a[3] == b[3]:
                assert a[4:] <= b[4:]


@settings(deadline=None, max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_the_index_finds_and_ranks_as_the_pure_python_index(tmp_path: Path, data: st.DataObject) -> None:
    documents, facts = data.draw(corpora())
    index = index_of(tmp_path / FILE_NAME, documents, facts)
    oracle = OracleIndex(documents, author_facts(facts))
    for _ in range(4):
        query = data.draw(queries(documents))
        expected = oracle.search(query)
        results = index.search(query, 0, 1000)
        assert results.total == len(expected) == sum(index.counts(query))
        assert_ranked_as_oracle(results.hits, oracle, expected)
        offset, limit = data.draw(st.integers(0, len(expected) + 2)), data.draw(st.integers(0, 6))
        assert index.search(query, offset, limit).hits == results.hits[offset : offset + limit]
    index.close()


def test_scores_equal_but_for_rounding_are_a_tie_broken_by_title(tmp_path: Path) -> None:
    """Found by Hypothesis: with a mean length of 1.5, one match in "wang 11" (2 words) and three in
    "wang wang 12 wang 12 11 周" (7 words) score the same BM25, but the two sums differ in their last bit."""
    documents = [
        ("a:0", "author", "wang wang", "wang wang"),
        ("a:1", "author", "wang 11", "wang 11"),
        ("a:2", "author", "wang wang 周", "wang wang 周"),
        ("a:3", "author", "wang wang 12", "wang wang 12"),
        ("a:3", "author", "wang 12 11 周", "wang wang 12"),
        ("c:0", "area", "wang", "Area · wang"),
        ("c:1", "area", "wang", "Area · wang"),
    ]
    oracle = OracleIndex(documents, author_facts([]))
    oracle.search("1")
    assert oracle.scores["a:1"] != oracle.scores["a:3"]  # what makes this case: equal but for rounding
    assert math.isclose(oracle.scores["a:1"], oracle.scores["a:3"], rel_tol=1e-15)
    index = index_of(tmp_path / FILE_NAME, documents, [])
    assert [hit.title for hit in index.search("1", 0, 10).hits] == ["wang 11", "wang wang 12"]
    index.close()


@settings(deadline=None, max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data(), st.integers(1, 3))
def test_the_order_a_store_lists_its_rows_in_changes_no_answer(tmp_path: Path, data: st.DataObject, ranked: int):
    """Two stores list the same texts in their own orders (Virtuoso's is not the embedded store's): both indexes
    give the same hits in the same order, a broad query's bounded ranking (past RANKED matches) included."""
    documents, facts = data.draw(corpora())
    listed = data.draw(st.permutations(documents))
    first = index_of(tmp_path / "first.sqlite", documents, facts)
    second = index_of(tmp_path / "second.sqlite", listed, facts)
    with patch.object(search, "RANKED", ranked):
        for _ in range(3):
            query = data.draw(queries(documents))
            assert second.search(query, 0, 1000) == first.search(query, 0, 1000)
    first.close()
    second.close()


@settings(deadline=None, max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_with_one_query_word_papers_rank_as_with_the_former_idf(tmp_path: Path, data: st.DataObject) -> None:
    """FTS5's idf differs from the former (Lucene's), but with one query word every score is the same
    positive multiple of the term's weight, so papers come in the former order."""
    documents, facts = data.draw(corpora())
    index = index_of(tmp_path / FILE_NAME, documents, facts)
    oracle = OracleIndex(documents, author_facts(facts), lucene_idf)
    query = data.draw(queries(documents).filter(lambda q: len(set(words(q))) == 1 and len(words(q)) == 1))
    expected = [hit for hit in oracle.search(query) if hit.kind == "paper"]
    hits = [hit for hit in index.search(query, 0, 1000).hits if hit.kind == "paper"]
    assert_ranked_as_oracle(hits, oracle, expected)
    index.close()


@settings(deadline=None, max_examples=100, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data(), st.integers(0, 3), st.integers(1, 4))
def test_a_broad_query_is_ordered_with_bounded_work(
    tmp_path: Path, data: st.DataObject, ranked: int, size: int
) -> None:
    """Past RANKED matches of a kind: authors by (tier, papers, name) without BM25; areas and papers the
    RANKED indexed last ranked, then the others from the last indexed on; every page agrees with the whole."""
    documents, facts = data.draw(corpora())
    index = index_of(tmp_path / FILE_NAME, documents, facts)
    oracle = OracleIndex(documents, author_facts(facts))
    query = data.draw(queries(documents))
    expected = oracle.search(query)
    with sqlite3.connect(index.path) as db:
        rowid = dict(db.execute("SELECT iri, id FROM items"))
    wanted: list[Hit] = []
    for kind in ("author", "area", "paper"):
        hits = [hit for hit in expected if hit.kind == kind]
        if len(hits) <= ranked:
            wanted += hits
        elif kind == "author":
            wanted += sorted(hits, key=lambda h: (h.tier, -(h.papers or 0), h.title.casefold(), h.iri))
        else:
            latest = sorted(hits, key=lambda h: -rowid[h.iri])
            wanted += sorted(latest[:ranked], key=oracle.key) + latest[ranked:]
    with patch.object(search, "RANKED", ranked):
        pages = [index.search(query, start, size).hits for start in range(0, len(expected) + size, size)]
        found = [hit for page in pages for hit in page]
    assert {hit.iri: hit for hit in found} == {hit.iri: hit for hit in expected}
    by_iri = {hit.iri: hit for hit in found}
    for kind in ("author", "area", "paper"):
        mine = [hit for hit in found if hit.kind == kind]
        theirs = [by_iri[hit.iri] for hit in wanted if hit.kind == kind]
        if len(theirs) <= ranked:  # ranked in full
            assert_ranked_as_oracle(mine, oracle, theirs)
        elif kind == "author":
            assert mine == theirs
        else:
            assert_ranked_as_oracle(mine[:ranked], oracle, theirs[:ranked])
            assert mine[ranked:] == theirs[ranked:]
    index.close()


def test_the_idf_is_fts5s_where_the_former_differs(tmp_path: Path) -> None:
    """Documented difference: a word in more than half the items weighs (almost) nothing in FTS5."""
    documents = [("p:1", "paper", "common rare", "P1"), ("p:2", "paper", "common common", "P2")]
    documents += [(f"p:{i}", "paper", "common filler words", f"P{i}") for i in range(3, 6)]
    index = index_of(tmp_path / FILE_NAME, documents, [])
    assert [hit.iri for hit in index.search("common rare").hits] == ["p:1"]
    assert fts5_idf(5, 5) == 1e-6 < lucene_idf(5, 5)
    found = index.search("common", 0, 10).hits
    oracle = OracleIndex(documents, {})
    assert_ranked_as_oracle(found, oracle, oracle.search("common"))
    index.close()


def test_search_ranks_exact_authors_first_then_by_papers(tmp_path: Path) -> None:
    documents = [
        ("a:1", "author", "Wei Wangsky", "Wei Wangsky"),
        ("a:2", "author", "Wei Wang", "Wei Wang"),
        ("a:3", "author", "Wei Wangberg", "Wei Wangberg"),
        ("p:1", "paper", "wang once among many other words here", "P1"),
        ("p:2", "paper", "wang wang wang in a short text", "P2"),
    ]
    facts = [("a:1", "X", 9), ("a:2", "Y", 1), ("a:3", None, 4)]
    index = index_of(tmp_path / FILE_NAME, documents, facts)
    assert [hit.iri for hit in index.search("wei wang").hits] == ["a:2", "a:1", "a:3"]
    assert [hit.iri for hit in index.search("wang").hits] == ["a:2", "a:1", "a:3", "p:2", "p:1"]
    assert index.search("wang").hits[1].papers == 9
    assert index.search("欣").total == 0
    index.close()


def test_a_repeated_query_is_answered_without_reading_the_file_again(tmp_path: Path) -> None:
    """An open index never changes: the counts and pages of recent queries are kept, keyed by the words matched
    (so case and spacing do not matter), and are what reading the file gives."""
    documents = [("a:1", "author", "Wei Wang", "Wei Wang")] + [
        (f"p:{i}", "paper", f"wang number {i}", f"P{i}") for i in range(30)
    ]
    index = index_of(tmp_path / FILE_NAME, documents, [("a:1", "X", 3)])
    fresh = SearchIndex(tmp_path / FILE_NAME)
    with patch.object(index, "_read", wraps=index._read) as read:
        first = index.search("wang", 5, 10)
        reads = read.call_count
        assert reads > 0
        assert index.search("  WANG ", 5, 10) == first and index.counts("Wang") == (1, 0, 30)
        assert read.call_count == reads
        assert index.search("wang", 10, 10) != first and read.call_count > reads  # another page is read
    assert first == fresh.search("wang", 5, 10)
    index.close()
    fresh.close()


def test_cjk_characters_are_found_one_by_one(tmp_path: Path) -> None:
    index = index_of(tmp_path / FILE_NAME, [("a:1", "author", "周欣", "周欣"), ("p:1", "paper", "関連研究", "P")], [])
    assert [hit.iri for hit in index.search("欣").hits] == ["a:1"]
    assert [hit.iri for hit in index.search("研").hits] == ["p:1"]
    assert index.search("周欣").hits[0].exact
    index.close()


@given(st.text() | st.text(st.characters(max_codepoint=127)) | st.text(st.sampled_from("aZ .…ﬁℌ²Ⅳ㎏ｱé")))
def test_fold_is_the_compatibility_caseless_match_without_marks(value: str) -> None:
    """Also on its fast paths (ASCII text, and text that is ASCII once decomposed: an ellipsis, a ligature, a
    black-letter capital)."""
    decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", value.casefold()).casefold())
    assert fold(value) == "".join(c for c in decomposed if not unicodedata.combining(c))


@given(st.text())
def test_fold_is_idempotent_and_leaves_no_ascii_capital(value: str) -> None:
    folded = fold(value)
    assert fold(folded) == folded
    assert not any("A" <= c <= "Z" for c in folded)


@settings(deadline=None, max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(name, max_size=30), st.text(st.sampled_from("waliŞş周 "), min_size=2, max_size=4))
def test_author_names_start_then_contain_as_before(tmp_path: Path, names: list[str], typed: str) -> None:
    """The autocomplete's former rule over a sorted list of every (normalised, shown) name."""
    index = index_of(tmp_path / FILE_NAME, [], [], names)
    wanted = normalise(typed)
    listed = sorted({(normalise(n), n) for n in names})
    starts = [shown for key, shown in listed if key.startswith(wanted)]
    contains = [shown for key, shown in listed if wanted in key and not key.startswith(wanted)]
    assert index.author_names(wanted, 20) == (starts + contains)[:20]
    assert index.author_names(wanted, 3) == (starts + contains)[:3]
    index.close()


def test_a_missing_or_damaged_index_is_told_with_its_file(tmp_path: Path) -> None:
    missing = tmp_path / FILE_NAME
    with pytest.raises(SearchIndexError, match=rf"{missing}: no search index file"):
        SearchIndex(missing)
    missing.write_bytes(b"not a database" * 1000)
    with pytest.raises(SearchIndexError, match=rf"{missing}: not a readable search index"):
        SearchIndex(missing)
    with sqlite3.connect(missing.with_name("other.sqlite")) as other:
        other.execute("CREATE TABLE meta (key TEXT, value TEXT)")
    with pytest.raises(SearchIndexError, match="not a readable search index"):
        SearchIndex(missing.with_name("other.sqlite"))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A dataset built from the first seed list only, and the other lists to add to it."""
    lists = sorted(seed_directory().glob("*.txt"))
    root = tmp_path_factory.mktemp("search") / "dataset"
    assert main(["build", str(lists[0]), "--dataset", str(root), "--base", BASE, "--quiet"]) == 0
    return root


def _search(root: Path, query: str, page: int = 1) -> str:
    app = make_app(BIBGRAPH_STORE=f"dataset:{root}")
    try:
        response = app.test_client().get("/search", query_string={"q": query, "page": page})
        assert response.status_code == 200
        return response.get_data(as_text=True)
    finally:
        app.extensions["bibgraph"].close()


def test_a_dataset_keeps_its_index_as_one_file_and_the_server_reads_it(built: Path, monkeypatch) -> None:
    path = current_version(built) / DERIVED / FILE_NAME
    assert path.is_file()
    with sqlite3.connect(path) as db:
        papers = db.execute("SELECT count(*) FROM items WHERE iri LIKE ?", (f"{BASE}paper/%",)).fetchone()[0]
    assert papers > 0
    monkeypatch.setattr("bibgraph.graph.site.searchbuild.build_search_index", None)  # read, never built again
    html = _search(built, "learning")
    assert "Results 1\u2013" in html and 'class="hit hit-paper"' in html


def test_add_indexes_the_new_papers_and_updates_their_authors(built: Path, tmp_path: Path) -> None:
    """After ``add``: the new paper is found, its known authors count it and are found by their new
    spelling, and every search answers as the index of one build of all the lists."""
    first = sorted(seed_directory().glob("*.txt"))[0]
    area, authors, abstract = [line for line in first.read_text(encoding="utf-8").splitlines() if line.strip()][1:4]
    more = tmp_path / "lists" / "zz_more.txt"
    more.parent.mkdir()
    records = [f"{area}\n\n{authors}\n\n{abstract}", f"{area}\n\n{authors.upper()}\n\nZyxquux quorbal findings."]
    more.write_text("论文检索\n\n" + "\n\n".join(records) + "\n", encoding="utf-8")
    root = tmp_path / "dataset"
    shutil.copytree(built, root, symlinks=True)
    index = SearchIndex(current_version(root) / DERIVED / FILE_NAME)
    assert main(["add", str(root), str(more)]) == 0
    after = open_search(layers(current_version(root) / DERIVED))
    whole = tmp_path / "whole"
    assert main(["build", str(first), str(more), "--dataset", str(whole), "--base", BASE, "--quiet"]) == 0
    rebuilt = SearchIndex(current_version(whole) / DERIVED / FILE_NAME)
    author = authors.split(",")[0].strip()
    assert index.search("zyxquux").total == 0
    assert [hit.kind for hit in after.search("zyxquux").hits] == ["paper"]
    [was] = [hit for hit in index.search(author).hits if hit.exact]
    [now] = [hit for hit in after.search(author.upper()).hits if hit.exact]
    assert now.iri == was.iri and now.papers == was.papers + 1
    for query in ("zyxquux", author, author.upper(), "learning", "fair", "a", "e", "model", "ma"):
        assert after.search(query, 0, 10_000) == rebuilt.search(query, 0, 10_000), query
        assert after.author_names(normalise(query)) == rebuilt.author_names(normalise(query)), query
    for one in (index, after, rebuilt):
        one.close()


def test_add_indexes_only_what_it_wrote_even_from_a_list_named_like_an_older_one(built: Path, tmp_path: Path) -> None:
    """The papers to index are those the add wrote a source for, not those of every list with the same file name:
    a new list named like the one built first re-indexes its one new paper and that paper's authors only."""
    first = sorted(seed_directory().glob("*.txt"))[0]
    area = [line for line in first.read_text(encoding="utf-8").splitlines() if line.strip()][1]
    more = tmp_path / "elsewhere" / first.name
    more.parent.mkdir()
    more.write_text(f"论文检索\n\n{area}\n\nQuorra Vexley, Tamsin Oduya\n\nGlimmerfen estimates.\n", encoding="utf-8")
    root = tmp_path / "dataset"
    shutil.copytree(built, root, symlinks=True)
    asked: list[str] = []
    documents = searchbuild.store_documents

    def recorded(store, items=None):  # type: ignore[no-untyped-def]
        asked.extend(items or ["every item"])
        return documents(store, items)

    with patch.object(searchupdate, "store_documents", recorded):  # what an add's layer asks the store
        assert main(["add", str(root), str(more)]) == 0
    after = open_search(layers(current_version(root) / DERIVED))
    [paper] = [hit.iri for hit in after.search("glimmerfen").hits]
    authors = [hit.iri for name in ("quorra", "tamsin") for hit in after.search(name).hits if hit.kind == "author"]
    assert len(authors) == 2
    assert sorted(asked) == sorted([paper, *authors])  # the lists built before were not read again
    after.close()


def test_a_dataset_with_a_damaged_index_says_so(built: Path, tmp_path: Path) -> None:
    root = tmp_path / "dataset"
    shutil.copytree(built, root, symlinks=True)
    path = current_version(root) / DERIVED / FILE_NAME
    path.write_bytes(b"\0" * 4096)
    app = make_app(BIBGRAPH_STORE=f"dataset:{root}")
    try:
        with app.app_context(), pytest.raises(SearchIndexError, match=str(path)):
            from bibgraph.web.maps.cache import networks

            networks().search_index()
    finally:
        app.extensions["bibgraph"].close()


def test_the_start_opens_and_checks_a_kept_index_before_the_first_search(built: Path, monkeypatch) -> None:
    """``serve``'s warm-up reads the kept index's checksum (the whole file: 2 GB at a million papers), so a
    first search finds it open; a server without a kept index builds none at start (the first search does)."""
    from bibgraph.web import server
    from bibgraph.web.maps import cache

    checked: list[Path] = []
    digest = cache.file_digest
    monkeypatch.setattr(cache, "file_digest", lambda path: checked.append(path) or digest(path))
    for store, kept in ((f"dataset:{built}", True), ("memory", False)):
        app = make_app(BIBGRAPH_STORE=store)
        try:
            server.warm_kept(app)
            assert checked == ([current_version(built) / DERIVED / FILE_NAME] if kept else [])
            with app.app_context():
                assert (cache.networks()._search is not None) is kept
            assert app.test_client().get("/search?q=learning").status_code == 200
            assert len(checked) == kept  # the first search checked nothing again
            checked.clear()
        finally:
            app.extensions["bibgraph"].close()


def test_a_dataset_built_before_the_index_was_kept_is_searched_from_a_temporary_index(
    built: Path, tmp_path: Path
) -> None:
    root = tmp_path / "dataset"
    shutil.copytree(built, root, symlinks=True)
    kept = current_version(root) / DERIVED / FILE_NAME
    expected = SearchIndex(kept)
    wanted = expected.search("learning", 0, 50)
    expected.close()
    kept.unlink()
    manifest_path = current_version(root) / "manifest.json"  # as a dataset built then: no index in its manifest
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    del manifest["checksums"][f"{DERIVED}/{FILE_NAME}"]
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    app = make_app(BIBGRAPH_STORE=f"dataset:{root}")
    try:
        with app.app_context():
            from bibgraph.web.maps.cache import networks

            index = networks().search_index()
            assert index.search("learning", 0, 50) == wanted and wanted.hits
            assert not kept.exists()  # the published version is not written into
    finally:
        app.extensions["bibgraph"].close()


def test_a_killed_servers_temporary_index_is_removed_by_the_next_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed servers left their temporary index in /tmp (``atexit`` never runs on SIGKILL): 60 were found. The
    index is named after its process, and one whose process is gone is removed when the next index is made."""
    import os
    import signal
    import tempfile
    import urllib.request

    from bench.servers import bibgraph_process

    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setenv("TMPDIR", str(temporary))
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    with bibgraph_process([str(seed_directory())], tmp_path / "serve.log") as (base, server):
        with urllib.request.urlopen(f"{base}/search?q=learning", timeout=60) as answer:
            assert answer.status == 200
        left = sorted(temporary.glob("bibgraph-search-*"))
        assert [path.name.split("-")[2] for path in left] == [str(server.pid)]
        os.kill(server.pid, signal.SIGKILL)
        server.wait(30)
    assert all(path.exists() for path in left)  # what a killed server leaves
    mine = searchbuild.temporary_index()  # the next server's index
    assert sorted(temporary.glob("bibgraph-search-*")) == [mine]
    other = temporary / f"bibgraph-search-{os.getppid()}-{searchbuild._started(os.getppid())}-x.sqlite"
    other.touch()  # a running server's index is kept
    searchbuild.temporary_index().unlink()
    assert other.exists() and mine.exists()
