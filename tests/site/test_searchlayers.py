"""The search index in layers (one file per add over the build's): the same answers as one index of the same items,
BM25 scores to the bit, and its layers' files never written again."""

import sqlite3
from pathlib import Path
from unittest.mock import patch

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bibgraph.graph.dataset import directory
from bibgraph.graph.dataset.directory import DERIVED, KEPT_VERSIONS, current_version, read_manifest, verify
from bibgraph.graph.identity import numbering
from bibgraph.graph.ingest.names import normalise
from bibgraph.graph.site import search
from bibgraph.graph.site.search import Hit, SearchIndex, SearchIndexError, fts_query, query_terms, words
from bibgraph.graph.site.searchbuild import write_index, write_layer
from bibgraph.graph.site.searchlayers import LayeredIndex, layer_name, layers, open_search
from bibgraph.graph.site.searchupdate import merge_layers
from bibgraph.seeds import seed_directory
from bibgraph.web.commands.cli import main
from tests.conftest import BASE, make_app
from tests.site.test_search import corpora, name, queries, text

Documents = list[tuple[str, str, str, str]]
Facts = list[tuple[str, str | None, int]]


@st.composite
def additions(draw: st.DrawFn, documents: Documents, start: int) -> tuple[Documents, Facts, list[str], list[str]]:
    """What one add indexes: new papers and areas, and authors (known ones among them) indexed again with their
    spellings, facts and names; the known authors it replaces."""
    known = sorted({iri for iri, kind, _, _ in documents if kind == "author"})
    touched = draw(st.lists(st.sampled_from(known), unique=True, max_size=4)) if known else []
    touched += [f"a:{start + i}" for i in range(draw(st.integers(0, 2)))]
    rows: Documents = []
    for iri in touched:
        spellings = draw(st.lists(name, min_size=1, max_size=3))
        rows += [(iri, "author", spelling, spellings[0]) for spelling in spellings]
    rows += [
        (f"c:{start + i}", "area", label, f"Area · {label}") for i, label in enumerate(draw(st.lists(name, max_size=1)))
    ]
    rows += [(f"p:{start + i}", "paper", t, f"Paper {t[:10]}") for i, t in enumerate(draw(st.lists(text, max_size=6)))]
    labels = st.one_of(st.none(), st.sampled_from(["Deep Learning", "Vision", "Theory"]))
    facts = [(iri, draw(labels), draw(st.integers(1, 5))) for iri in touched for _ in range(draw(st.integers(0, 2)))]
    names = [title for iri, kind, _, title in rows if kind == "author"]
    return rows, facts, names, [iri for iri in touched if iri in known]


def _layered(directory: Path, documents: Documents, facts: Facts, names: list[str], adds: list) -> list[Path]:
    directory.mkdir()
    paths = [directory / layer_name(0)]
    write_index(paths[0], documents, facts, names)
    for number, (rows, more_facts, more_names, replaced) in enumerate(adds, 1):
        path = directory / layer_name(number)
        write_layer(paths, path, replaced, rows, more_facts, more_names)
        paths.append(path)
    return paths


def _whole(documents: Documents, facts: Facts, names: list[str], adds: list) -> tuple[Documents, Facts, list[str]]:
    """The items, facts and names one index of everything added holds: an author's latest entry."""
    for rows, more_facts, more_names, _ in adds:
        again = {iri for iri, kind, _, _ in rows if kind == "author"}
        documents = [row for row in documents if row[0] not in again] + rows
        facts = [fact for fact in facts if fact[0] not in again] + more_facts
        names = names + more_names
    return documents, facts, names


@st.composite
def histories(draw: st.DrawFn, least: int = 1) -> tuple[Documents, Facts, list[str], list]:
    documents, facts = draw(corpora())
    names = [title for _, kind, _, title in documents if kind == "author"]
    adds: list = []
    seen = documents
    for number in range(draw(st.integers(least, 3))):
        added = draw(additions(seen, 100 * (number + 1)))
        adds.append(added)
        seen = seen + added[0]
    return documents, facts, names, adds


@settings(deadline=None, max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_layers_answer_as_one_index_of_the_same_items(tmp_path: Path, data: st.DataObject) -> None:
    """Differential: a build then adds (each a layer) against one index of the final items: every search's hits
    (kinds, order, papers, areas, tiers: BM25 made again from all layers' statistics), counts and autocomplete."""
    documents, facts, names, adds = data.draw(histories())
    case = tmp_path / f"case{len(list(tmp_path.iterdir()))}"
    paths = _layered(case, documents, facts, names, adds)
    assert layers(case) == paths
    _answers_as_whole(data, paths, case / "whole.sqlite", documents, facts, names, adds)


@settings(deadline=None, max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_merged_add_layers_answer_as_one_index_of_the_same_items(tmp_path: Path, data: st.DataObject) -> None:
    """Differential: the newest add layers (any number of them, two or more adds) merged into one file answer as
    the layers they replace, so as one index of the final items: hits, counts, scores to the bit, autocomplete."""
    documents, facts, names, adds = data.draw(histories(least=2))
    case = tmp_path / f"case{len(list(tmp_path.iterdir()))}"
    paths = _layered(case, documents, facts, names, adds)
    start = data.draw(st.integers(1, len(paths) - 2))
    merged = case / "merged" / layer_name(start)
    merged.parent.mkdir()
    merge_layers(paths[start:], merged)
    assert layer_name(start) != paths[-1].name  # replaced two files or more by one
    _answers_as_whole(data, [*paths[:start], merged], case / "whole.sqlite", documents, facts, names, adds)


def _answers_as_whole(
    data: st.DataObject,
    paths: list[Path],
    whole_path: Path,
    documents: Documents,
    facts: Facts,
    names: list,
    adds: list,
) -> None:
    """The index of the files ``paths`` answers as one index of everything added (written at ``whole_path``)."""
    write_index(whole_path, *_whole(documents, facts, names, adds))
    layered, whole = open_search(paths), SearchIndex(whole_path)
    assert isinstance(layered, LayeredIndex)
    vocabulary = documents + [row for add in adds for row in add[0]]
    iris = [*sorted({row[0] for row in vocabulary}), "p:never-indexed"]
    assert layered.titles(iris) == whole.titles(iris)  # a profile's labels: an added paper's, a renamed author's
    for _ in range(4):
        query = data.draw(queries(vocabulary))
        assert layered.counts(query) == whole.counts(query), query
        assert layered.search(query, 0, 1000) == whole.search(query, 0, 1000), query
        offset, limit = data.draw(st.integers(0, 8)), data.draw(st.integers(0, 5))
        assert layered.search(query, offset, limit) == whole.search(query, offset, limit), query
        assert _layered_scores(layered, query) == _scores(whole_path, query), query  # to the bit
        typed = normalise(query)[:2]
        assert layered.author_names(typed, 3) == whole.author_names(typed, 3), typed
    layered.close()
    whole.close()


def _scores(path: Path, query: str) -> dict[str, float]:
    """FTS5's own BM25 of each match of ``query`` in one index file."""
    with sqlite3.connect(path) as db:
        sql = "SELECT i.iri, bm25(words) FROM words JOIN items i ON i.id = words.rowid WHERE words MATCH ?"
        return dict(db.execute(sql, (fts_query(words(query)),))) if words(query) else {}


def _layered_scores(index: LayeredIndex, query: str) -> dict[str, float]:
    if not words(query):
        return {}
    sql = "SELECT w.rowid, i.iri FROM {s}.words w JOIN {s}.items i ON i.id = w.rowid WHERE words MATCH ?"
    iris = dict(index._each(sql + " AND w.rowid NOT IN temp.masked", (fts_query(words(query)),)))
    return {iris[rowid]: score for rowid, score in index._scores(list(iris), query_terms(words(query))).items()}


@settings(deadline=None, max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data(), st.integers(0, 3), st.integers(1, 4))
def test_a_broad_query_over_layers_is_ordered_as_in_one_index(
    tmp_path: Path, data: st.DataObject, ranked: int, size: int
) -> None:
    """Past RANKED matches of a kind: authors by (tier, papers, name); areas and papers the RANKED numbered last
    (over all layers) ranked, then the others from the last numbered on; every page agrees with the whole."""
    documents, facts, names, adds = data.draw(histories())
    case = tmp_path / f"case{len(list(tmp_path.iterdir()))}"
    layered = open_search(_layered(case, documents, facts, names, adds))
    query = data.draw(queries(documents + [row for add in adds for row in add[0]]))
    full = layered.search(query, 0, 1000).hits
    numbers: dict[str, int] = {}
    for path in layers(case):
        with sqlite3.connect(path) as db:
            numbers.update(db.execute("SELECT iri, id FROM items"))
    wanted: list[Hit] = []
    for kind in ("author", "area", "paper"):
        hits = [hit for hit in full if hit.kind == kind]
        if len(hits) <= ranked:
            wanted += hits
        elif kind == "author":
            wanted += sorted(hits, key=lambda h: (h.tier, -(h.papers or 0), h.title.casefold(), h.iri))
        else:
            latest = sorted(hits, key=lambda h: -numbers[h.iri])
            window = {hit.iri for hit in latest[:ranked]}
            wanted += [hit for hit in hits if hit.iri in window] + latest[ranked:]
    with patch.object(search, "RANKED", ranked), patch("bibgraph.graph.site.searchlayers.RANKED", ranked):
        fresh = open_search(layers(case))
        pages = [fresh.search(query, start, size).hits for start in range(0, len(full) + size, size)]
        fresh.close()
    assert [hit for page in pages for hit in page] == wanted
    layered.close()


def test_an_add_writes_only_its_layer_and_never_an_earlier_file(tmp_path: Path) -> None:
    """The earlier layers are read, never written: their bytes and times are unchanged by a later layer."""
    base = tmp_path / layer_name(0)
    write_index(
        base, [("a:1", "author", "wang wei", "wang wei"), ("p:1", "paper", "deep wang", "P1")], [], ["wang wei"]
    )
    before = (base.read_bytes(), base.stat().st_mtime_ns)
    again = [("a:1", "author", "wei wang", "wei wang"), ("p:2", "paper", "wang graphs", "P2")]
    write_layer([base], tmp_path / layer_name(1), ["a:1"], again, [("a:1", None, 2)], ["wei wang"])
    assert (base.read_bytes(), base.stat().st_mtime_ns) == before
    index = open_search(layers(tmp_path))
    assert [(hit.title, hit.papers) for hit in index.search("wang").hits] == [
        ("wei wang", 2),
        ("P1", None),
        ("P2", None),
    ]  # the papers' scores tie (two words each): by title
    assert index.counts("wang") == (1, 0, 2) and index.author_names("we") == ["wei wang", "wang wei"]
    index.close()


def _more(directory: Path, number: int, area: str) -> Path:
    """A small list of new papers (one author known from the list before, one new), named after ``number``."""
    path = directory / f"zz_more{number}.txt"
    records = [f"{area}\n\nQuorra Vexley{number}, Tamsin Oduya\n\nGlimmerfen{number} estimates of quorbal {number}."]
    path.write_text("论文检索\n\n" + "\n\n".join(records) + "\n", encoding="utf-8")
    return path


def test_adds_share_the_earlier_layers_and_pruning_keeps_every_file_a_kept_version_reads(tmp_path: Path) -> None:
    """Three adds: each version's index is the build's file and one layer per add, the earlier ones hard links of
    the version before's (no copy); the versions pruned take none of the kept versions' files; the kept version
    checks against its manifest and answers as a build of all the lists."""
    first = sorted(seed_directory().glob("*.txt"))[0]
    area = [line for line in first.read_text(encoding="utf-8").splitlines() if line.strip()][1]
    root, lists = tmp_path / "dataset", tmp_path / "lists"
    lists.mkdir()
    assert main(["build", str(first), "--dataset", str(root), "--base", BASE, "--quiet"]) == 0
    added = [_more(lists, number, area) for number in (1, 2, 3)]
    for number, path in enumerate(added, 1):
        before = current_version(root)
        assert main(["add", str(root), str(path)]) == 0
        version = current_version(root)
        kept = layers(version / DERIVED)
        assert [p.name for p in kept] == [layer_name(n) for n in range(number + 1)]
        for earlier in layers(before / DERIVED):
            assert (version / DERIVED / earlier.name).stat().st_ino == earlier.stat().st_ino  # shared, not copied
    assert len([p for p in root.iterdir() if p.name.startswith("v-")]) == KEPT_VERSIONS
    assert verify(version) == []  # every layer still there, as its manifest records it
    whole = tmp_path / "whole"
    assert main(["build", str(first), *map(str, added), "--dataset", str(whole), "--base", BASE, "--quiet"]) == 0
    layered = open_search(layers(current_version(root) / DERIVED))
    rebuilt = SearchIndex(current_version(whole) / DERIVED / layer_name(0))
    for query in ("glimmerfen", "quorra", "tamsin oduya", "estimates", "learning", "a", "e", "qu"):
        assert layered.search(query, 0, 10_000) == rebuilt.search(query, 0, 10_000), query
    layered.close()
    rebuilt.close()


def test_a_damaged_layer_is_refused_by_its_checksum(tmp_path: Path) -> None:
    first = sorted(seed_directory().glob("*.txt"))[0]
    area = [line for line in first.read_text(encoding="utf-8").splitlines() if line.strip()][1]
    root = tmp_path / "dataset"
    assert main(["build", str(first), "--dataset", str(root), "--base", BASE, "--quiet"]) == 0
    assert main(["add", str(root), str(_more(tmp_path, 1, area))]) == 0
    layer = current_version(root) / DERIVED / layer_name(1)
    data = bytearray(layer.read_bytes())
    data[-100] ^= 1  # one bit of a page SQLite may never read for a given search
    layer.write_bytes(bytes(data))
    app = make_app(BIBGRAPH_STORE=f"dataset:{root}")
    try:
        with app.app_context(), pytest.raises(SearchIndexError, match=f"{layer}: differs from the checksum"):
            from bibgraph.web.maps.cache import networks

            networks().search_index()
    finally:
        app.extensions["bibgraph"].close()


def test_statistics_past_one_byte_are_read_as_fts5_wrote_them(tmp_path: Path) -> None:
    """Row counts and token totals of several bytes (FTS5's variable-length integers: 300 rows, 30,000 tokens,
    a document of 200 words): the layers' scores still equal one index's to the bit."""
    vocabulary = [f"w{i}" for i in range(40)]
    papers = [
        (f"p:{i}", "paper", " ".join(vocabulary[(i * j) % 40] for j in range(200 if i == 7 else 100)), f"P{i}")
        for i in range(300)
    ]
    authors = [(f"a:{i}", "author", f"wang w{i}", f"wang w{i}") for i in range(3)]
    adds = [([*authors[:1], ("p:300", "paper", "w1 w2 w3", "P300")], [], [], ["a:0"])]
    paths = _layered(tmp_path / "layers", authors + papers, [], [], adds)
    write_index(tmp_path / "whole.sqlite", *_whole(authors + papers, [], [], adds))
    layered = open_search(paths)
    assert isinstance(layered, LayeredIndex) and layered._n_tokens > 1 << 14
    for query in ("w1", "w1 w2", "w3 w17 w2", "wang w0"):
        assert _layered_scores(layered, query) == _scores(tmp_path / "whole.sqlite", query), query
        assert layered.search(query, 0, 500) == SearchIndex(tmp_path / "whole.sqlite").search(query, 0, 500)
    layered.close()


def test_adds_past_the_attach_limit_merge_their_layers_never_the_builds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At MAX_LAYERS files an add merges the newest add layers into one (the build's file stays a hard link, never
    written again) instead of writing the whole index again from the store; the answers are a build of all lists'."""
    monkeypatch.setattr("bibgraph.graph.site.searchupdate.MAX_LAYERS", 3)
    first = sorted(seed_directory().glob("*.txt"))[0]
    area = [line for line in first.read_text(encoding="utf-8").splitlines() if line.strip()][1]
    root, lists = tmp_path / "dataset", tmp_path / "lists"
    lists.mkdir()
    assert main(["build", str(first), "--dataset", str(root), "--base", BASE, "--quiet"]) == 0
    monkeypatch.setattr("bibgraph.graph.site.searchupdate.build_search_index", None)  # no add writes it whole
    built = (current_version(root) / DERIVED / layer_name(0)).stat().st_ino
    added = [_more(lists, number, area) for number in range(1, 6)]
    for path in added:
        assert main(["add", str(root), str(path)]) == 0
        kept = layers(current_version(root) / DERIVED)
        assert len(kept) <= 3 and kept[0].stat().st_ino == built
    assert len(kept) == 3 and verify(current_version(root)) == []
    whole = tmp_path / "whole"
    assert main(["build", str(first), *map(str, added), "--dataset", str(whole), "--base", BASE, "--quiet"]) == 0
    layered = open_search(kept)
    rebuilt = SearchIndex(current_version(whole) / DERIVED / layer_name(0))
    for query in ("glimmerfen", "quorra", "tamsin oduya", "estimates", "learning", "a", "e", "qu"):
        assert layered.search(query, 0, 10_000) == rebuilt.search(query, 0, 10_000), query
        assert layered.counts(query) == rebuilt.counts(query), query
    assert layered.author_names("qu", 10) == rebuilt.author_names("qu", 10)
    layered.close()
    rebuilt.close()


def test_an_add_hashes_no_layer_hashed_before_and_not_written_since(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The layers an add reads are checked against their checksums unless the manifest records them as they were
    when hashed (inode, size, time): the build's file and each add's layer are hashed when written, never again by
    a later add (the whole 2 GB index at a million papers was hashed at every add). One written in place since (a
    flipped bit) has another time: hashed, and the add refused."""
    first = sorted(seed_directory().glob("*.txt"))[0]
    area = [line for line in first.read_text(encoding="utf-8").splitlines() if line.strip()][1]
    root = tmp_path / "dataset"
    assert main(["build", str(first), "--dataset", str(root), "--base", BASE, "--quiet"]) == 0
    hashed: list[Path] = []
    digest = directory.file_digest

    def spied(path: Path) -> str:
        hashed.append(path)
        return digest(path)

    monkeypatch.setattr(directory, "file_digest", spied)
    for number in (1, 2):
        served = current_version(root)
        hashed.clear()
        assert main(["add", str(root), str(_more(tmp_path, number, area))]) == 0
        assert [p for p in hashed if served in p.parents] == []  # the layers and the person map read unhashed
        version = current_version(root)
        read_once = {f"{DERIVED}/{p.name}" for p in layers(version / DERIVED)} | set(numbering.files(version))
        assert set(read_manifest(version)["stats"]) == read_once  # the person map's files too
    layer = current_version(root) / DERIVED / layer_name(1)
    data = bytearray(layer.read_bytes())
    data[-100] ^= 1
    layer.write_bytes(bytes(data))
    assert main(["add", str(root), str(_more(tmp_path, 3, area))]) == 1
    assert layer in hashed
