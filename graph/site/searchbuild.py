"""Writing the search index of a store (read by :mod:`.search`): its texts from SPARQL rows streamed from the store
in batches, its authors' names and papers per area from the store's incidence (arrays); after ``add``, a layer of
what the added lists brought over the previous version's files (:func:`write_layer`, placed by :mod:`.searchupdate`).

Only rows flow through here, never a whole list of documents: the build's memory does not grow with the
corpus (the texts wait in a temporary SQLite table, on disk, to be grouped per item and numbered in IRI order)."""

import json
import os
import re
import sqlite3
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from contextlib import closing
from itertools import groupby
from pathlib import Path
from typing import TypeVar

from bibgraph.graph.ingest.names import normalise
from bibgraph.graph.networks.incidence import Incidence, incidence_of
from bibgraph.graph.site.authorcounts import every_area_count
from bibgraph.graph.site.search import AUTHORS_END, FORMAT, KINDS, SearchIndexError, kind_range, open_index, words
from bibgraph.graph.site.searchlayers import masked_numbers
from bibgraph.graph.sparql.queries import Term, bind, named_query
from bibgraph.graph.stores.atomic import remove_stale_temporaries, temporary_name
from bibgraph.graph.stores.store import GraphStore

T = TypeVar("T")
R = TypeVar("R", bound=tuple)
BATCH = 5000  # rows per executemany
VALUES_BATCH = 500  # IRIs per VALUES block of a query
TEMPORARY_PREFIX = "bibgraph-search-"  # a temporary index: PREFIX + its process's id and start time + random
TEMPORARY_INDEX = re.compile(re.escape(TEMPORARY_PREFIX) + r"(?P<pid>[0-9]+)-(?P<start>-?[0-9]+)-.+\.sqlite")
# The texts to search, one kind per query (``graph/sparql/queries/search_papers.rq`` says why not one UNION)
DOCUMENT_QUERIES = ("search_author_names", "search_author_spellings", "search_areas", "search_papers")
# Bytes of words FTS5 holds in memory before writing them as a segment (its default: 1 MB): fewer, larger segments
# merged as the rows come (c10k's texts ten times over: the full-text table 4.7-5.3 CPU-s with 1 MB, 3.2 with 32 MB;
# 16 MB left a 10% larger file at 100,000 papers)
FULL_TEXT_BUFFER = 32 << 20
# FTS5's settings while the rows come: no merge of its segments (``automerge`` 0; ``crisismerge`` as high as FTS5
# allows a level, 1999 segments), since the writers merge them all once at the end (``optimize``): merged 4 at a time
# as they came, the paper texts of 100,000 papers ten times over took 30.3 CPU-s and read 3.53 GB, unmerged 19.1 and
# nothing, the final optimize the same 6 CPU-s either way
WRITE_SETTINGS = {"hashsize": FULL_TEXT_BUFFER, "automerge": 0, "crisismerge": 1999}

SCHEMA = f"""
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE items (id INTEGER PRIMARY KEY, iri TEXT NOT NULL UNIQUE, title TEXT NOT NULL, title_key TEXT NOT NULL,
                    papers INTEGER, areas TEXT NOT NULL DEFAULT '[]', body TEXT);
CREATE TABLE spellings (id INTEGER PRIMARY KEY, item INTEGER NOT NULL, name TEXT NOT NULL);
CREATE TABLE names (key TEXT NOT NULL, name TEXT NOT NULL, PRIMARY KEY (key, name)) WITHOUT ROWID;
CREATE VIRTUAL TABLE words USING fts5 (body, content='', tokenize="ascii tokenchars '_'", prefix='1 2 3');
CREATE VIRTUAL TABLE spelling_words USING fts5 (name, content='', tokenize="ascii tokenchars '_'", detail=none);
{"".join(f"INSERT INTO words (words, rank) VALUES ('{key}', {value});" for key, value in WRITE_SETTINGS.items())}
INSERT INTO meta VALUES ('format', '{FORMAT}');
"""
# The readers' indexes, made once every row is in (:func:`create_indexes`): filled row by row, they were rewritten as
# the rows came, and the authors' facts moved every author in ``authors_by_papers``
INDEXES = (
    "CREATE INDEX spellings_by_name ON spellings (name)",
    "CREATE INDEX spellings_by_item ON spellings (item)",
    f"CREATE INDEX authors_by_papers ON items (papers DESC, title_key, iri) WHERE id < {AUTHORS_END}",
)


Document = tuple[str, str, str, str]  # (IRI, kind, searchable text, title); an IRI may come with several texts
Fact = tuple[str, str | None, int]  # (author IRI, area label or None, papers of the author in that area)


def write_index(path: Path, documents: Iterable[Document], facts: Iterable[Fact], names: Iterable[str]) -> None:
    """Write a new index file at ``path`` (atomically: a temporary file renamed when complete).

    ``facts`` give authors' papers and areas (most papers first) shown beside them; ``names`` are the
    names the author autocomplete searches. Everything is streamed in batches through a temporary table
    (an author's spellings come in several rows; items are numbered in IRI order, whatever the store's)."""
    temporary = temporary_path(path)
    try:
        with closing(open_for_writing(temporary)) as db:
            db.executescript(SCHEMA)
            db.execute("INSERT INTO meta VALUES ('numbers', ?)", (json.dumps(dict.fromkeys(KINDS, 0)),))
            _fill(db, documents, facts, names)
            db.execute("INSERT INTO words (words) VALUES ('optimize')")  # one b-tree: the fastest to read
            db.commit()
        publish_file(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def temporary_index() -> Path:
    """A fresh file for the index of a store served without a dataset, named after this process (its id and start
    time), removed when it ends; those of processes that died without removing theirs (killed: ``atexit`` never
    ran) are removed here first, as :mod:`.atomic` does for its temporaries."""
    directory = Path(tempfile.gettempdir())
    for stale in directory.glob(f"{TEMPORARY_PREFIX}*"):
        owner = TEMPORARY_INDEX.fullmatch(stale.name)
        if owner and not _running(int(owner["pid"]), int(owner["start"])):
            stale.unlink(missing_ok=True)
    this = f"{os.getpid()}-{_started(os.getpid())}"
    handle, name = tempfile.mkstemp(prefix=f"{TEMPORARY_PREFIX}{this}-", suffix=".sqlite")
    os.close(handle)
    return Path(name)


def _started(pid: int) -> int:
    """When process ``pid`` started (clock ticks after boot; -1: no such process), telling a reused id apart."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return -1
    return int(stat.rsplit(")", 1)[1].split()[19])  # field 22, after the command name (which may hold spaces)


def _running(pid: int, start: int) -> bool:
    """Whether the process that named a temporary index still runs (an id reused since is another process)."""
    return pid == os.getpid() or _started(pid) == start


def open_for_writing(temporary: Path) -> sqlite3.Connection:
    """A connection to write a temporary index file: no journal (a failed write leaves only a temporary
    file, removed), a 16 MB page cache (64 MB took as many CPU-s at 100,000 papers and 29 MB more memory: FTS5's
    buffer, :data:`FULL_TEXT_BUFFER`, is what spares its merges)."""
    db = sqlite3.connect(temporary)
    db.execute("PRAGMA journal_mode = OFF")
    db.execute("PRAGMA synchronous = OFF")
    db.execute("PRAGMA cache_size = -16384")
    return db


def temporary_path(path: Path) -> Path:
    """A temporary name beside ``path``, as :mod:`.atomic` names them (a killed writer's is removed later)."""
    remove_stale_temporaries(path.parent)
    return temporary_name(path)


def publish_file(temporary: Path, path: Path) -> None:
    """Move the complete index file into place, durably (SQLite wrote it without syncing)."""
    with temporary.open("rb") as written:
        os.fsync(written.fileno())
    os.replace(temporary, path)


def _batches(rows: Iterable[T], size: int = BATCH) -> Iterator[list[T]]:
    batch: list[T] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def _add_documents(
    db: sqlite3.Connection, documents: Iterable[Document], numbers: dict[str, int], bodies: bool = False
) -> None:
    """Index ``documents`` once all their rows are in, each kind in IRI order: an item's number (its rowid) must not
    depend on the order a store lists its rows in, since a broad query's bounded ranking reads papers by number
    (:meth:`~.search.SearchIndex._page`): Virtuoso lists them in another order than the embedded store did, and an
    index built through it answered such a query with other papers.

    The rows are read back sorted (SQLite's sorter: sequential runs), an item's texts in the order they came, and
    grouped here: grouped through an index on the IRI, every row was a random read of the temporary table (at a
    million papers two passes of its 1.5 GB a 4 kB page per row, most of the index's 51.8 GB read)."""
    for rows in _batches((iri, kind, " ".join(words(text)), title) for iri, kind, text, title in documents):
        db.executemany("INSERT INTO texts VALUES (?, ?, ?, ?)", [row for row in rows if row[1] != "paper"])
        db.executemany("INSERT INTO paper_texts VALUES (?, ?, ?)", [(i, b, t) for i, k, b, t in rows if k == "paper"])
    # an IRI given several kinds (not papers) is indexed under the first: its texts sorted by that kind, then IRI
    grouped = db.execute(
        "SELECT iri, min(kind) OVER (PARTITION BY iri) AS first, body, title FROM texts ORDER BY first, iri, rowid"
    )
    for kind, same_kind in groupby(grouped, key=lambda row: row[1]):
        items = ((iri, *_joined(texts), [body for _, _, body, _ in texts]) for iri, texts in _by_iri(same_kind))
        for batch in _batches(items):
            _insert_items(db, kind, batch, numbers, bodies)
    papers = db.execute("SELECT iri, 'paper', body, title FROM paper_texts ORDER BY iri, rowid")
    no_spellings: list[str] | None = None
    for in_order in _batches((iri, *_joined(texts), no_spellings) for iri, texts in _by_iri(papers)):
        _insert_items(db, "paper", in_order, numbers, bodies)


def _by_iri(rows: Iterable[R]) -> Iterator[tuple[str, list[R]]]:
    """Rows sorted by IRI (their first column), grouped: (IRI, its rows)."""
    for iri, texts in groupby(rows, key=lambda row: row[0]):
        yield iri, list(texts)


def _joined(texts: list[tuple[str, str, str, str]]) -> tuple[str, str]:
    """An item's words (its texts' in their order, as SQLite's ``group_concat``) and title (the least, as ``min``:
    UTF-8's byte order is its code points')."""
    return " ".join(body for _, _, body, _ in texts), min(title for _, _, _, title in texts)


def _insert_items(
    db: sqlite3.Connection,
    kind: str,
    items: Sequence[tuple[str, str, str, list[str] | None]],
    numbers: dict[str, int],
    bodies: bool = False,
) -> None:
    """Insert items of ``kind``: (IRI, words, title, an author's spellings); authors and areas keep their
    words (``body``), and so do the papers of an add's layer (``bodies``): the full-text table holds no text, and
    layers are merged from what they keep (:mod:`.searchupdate`; a build's papers are never merged, and their words
    would double its file)."""
    if not items:
        return
    low, _ = kind_range(kind)
    rows = []
    for iri, body, title, spellings in items:
        numbers[kind] += 1
        rows.append((low + numbers[kind], iri, body, title, spellings))
    try:
        db.executemany(
            "INSERT INTO items (id, iri, title, title_key, body) VALUES (?, ?, ?, ?, ?)",
            [
                (rowid, iri, title, title.casefold(), None if kind == "paper" and not bodies else body)
                for rowid, iri, body, title, _ in rows
            ],
        )
    except sqlite3.IntegrityError as error:
        raise SearchIndexError(f"an item is indexed twice (under two kinds, or again): {error}") from error
    db.executemany("INSERT INTO words (rowid, body) VALUES (?, ?)", [(rowid, body) for rowid, _, body, _, _ in rows])
    if kind == "author":
        last = db.execute("SELECT coalesce(max(id), 0) FROM spellings").fetchone()[0]
        named = [(rowid, name) for rowid, _, _, _, names in rows for name in sorted(set(names or []))]
        spelled = [(last + number, rowid, name) for number, (rowid, name) in enumerate(named, 1)]
        db.executemany("INSERT INTO spellings (id, item, name) VALUES (?, ?, ?)", spelled)
        db.executemany("INSERT INTO spelling_words (rowid, name) VALUES (?, ?)", [(i, name) for i, _, name in spelled])


def _add_facts(db: sqlite3.Connection, facts: Iterable[Fact]) -> None:
    """Each author's papers and areas (most papers first, then by label), from its facts summed per area in one sorted
    pass: a query per author through an index on the facts read their rows at random (3.6 CPU-s at 100,000 papers on
    a loaded machine)."""
    for batch in _batches(facts):
        db.executemany("INSERT INTO facts VALUES (?, ?, ?)", batch)
    sums = db.execute("SELECT author, area, sum(papers) FROM facts GROUP BY author, area ORDER BY author, area")
    totals = ((sum(n for _, _, n in rows), _areas(rows), author) for author, rows in _by_iri(sums))
    for updates in _batches(totals):
        db.executemany("UPDATE items SET papers = ?, areas = ? WHERE iri = ?", updates)


def _areas(rows: list[tuple[str, str | None, int]]) -> str:
    """An author's areas as SQLite's ``json_group_array`` wrote them (compact, UTF-8, control characters escaped)."""
    ranked = sorted(((-n, area) for _, area, n in rows if area is not None))
    return json.dumps([area for _, area in ranked], ensure_ascii=False, separators=(",", ":"))


def _add_names(db: sqlite3.Connection, names: Iterable[str]) -> None:
    for batch in _batches((normalise(name), name) for name in names):
        db.executemany("INSERT OR IGNORE INTO names VALUES (?, ?)", batch)


def _fill(
    db: sqlite3.Connection,
    documents: Iterable[Document],
    facts: Iterable[Fact],
    names: Iterable[str],
    bodies: bool = False,
) -> None:
    """Add items, authors' facts and autocomplete names to an open index (new items numbered after its last);
    ``bodies``: every item keeps its words (an add's layer)."""
    db.execute("CREATE TEMP TABLE texts (iri TEXT, kind TEXT, body TEXT, title TEXT)")
    db.execute("CREATE TEMP TABLE paper_texts (iri TEXT, body TEXT, title TEXT)")
    db.execute("CREATE TEMP TABLE facts (author TEXT, area TEXT, papers INTEGER)")
    numbers = json.loads(db.execute("SELECT value FROM meta WHERE key = 'numbers'").fetchone()[0])
    _add_documents(db, documents, numbers, bodies)
    _add_facts(db, facts)
    _add_names(db, names)
    db.execute("UPDATE meta SET value = ? WHERE key = 'numbers'", (json.dumps(numbers),))
    create_indexes(db)


def create_indexes(db: sqlite3.Connection) -> None:
    """The readers' indexes over the rows an index file now holds (:data:`INDEXES`)."""
    for statement in INDEXES:
        db.execute(statement)


def _blocks(values: Sequence[T]) -> Iterator[Sequence[T]]:
    for start in range(0, len(values), VALUES_BATCH):
        yield values[start : start + VALUES_BATCH]


def bound_rows(store: GraphStore, name: str, variable: str, values: Sequence[Term] | None) -> Iterator[dict]:
    """The rows of the named query, for all items or (``values``) bound to some, a block at a time."""
    query = named_query(name).text
    for block in [query] if values is None else (bind(query, **{variable: b}) for b in _blocks(values)):
        yield from store.iter_select(block)


def store_documents(store: GraphStore, items: Sequence[str] | None = None) -> Iterator[Document]:
    """(IRI, kind, text, title) of everything the search box looks in (or of ``items`` only)."""
    for name in DOCUMENT_QUERIES:
        for r in bound_rows(store, name, "item", items):
            yield str(r["item"]), str(r["kind"]), str(r["text"]), str(r["title"])


def store_names(store: GraphStore, authors: Sequence[str]) -> Iterator[str]:
    """The names of ``authors`` (creators of papers): what the autocomplete searches. Each author's name is looked up
    alone: the query of every author (``author_names.rq``) walked each given author's authorships and their papers
    (1.7 of an add's 28.5 CPU-s at 100,000 papers, for 1,839 authors)."""
    for r in bound_rows(store, "named_authors", "author", authors):
        yield str(r["name"])


def build_search_index(
    store: GraphStore, path: Path, incidence: Incidence | None = None, documents: Iterable[Document] | None = None
) -> None:
    """Write the search index of ``store`` at ``path`` (a site over an engine with ``--published`` reads the
    dataset's own index instead, never building one). Its authors' names and papers per area are read from
    ``incidence``, the store's (read here when None): the store's queries for them (``author_names.rq``,
    ``search_authors.rq``) took 31 of the index's 43 CPU-s at 100,000 papers, and more than ten minutes at a
    million; the incidence holds every creator with a name, as they did, and a dataset's build has it already.
    ``documents``: the store's texts (:func:`store_documents`) as its build spooled them (:mod:`~..dataset.searchspool`:
    the queries read 1.2 GB back at 100,000 papers, 13 GB at a million)."""
    if incidence is None:
        incidence = incidence_of(store)
    texts = store_documents(store) if documents is None else documents
    write_index(path, texts, every_area_count(incidence), incidence.names)


def write_layer(
    previous: Sequence[Path],
    path: Path,
    replaced: Sequence[str],
    documents: Iterable[Document],
    facts: Iterable[Fact],
    names: Iterable[str],
) -> None:
    """Write at ``path`` (atomically) a layer over the index files ``previous`` (:mod:`.searchlayers`): ``documents``
    (new items, and those of ``replaced``, indexed again) numbered after the last layer's, their facts and names, and
    the numbers of the earlier entries of ``replaced`` (``removed``: a reader leaves them out)."""
    with closing(open_index(previous[-1])) as last:
        numbers = last.execute("SELECT value FROM meta WHERE key = 'numbers'").fetchone()[0]
    removed = [(rowid,) for rowid, _ in masked_numbers(previous, sorted(set(replaced)))]
    temporary = temporary_path(path)
    try:
        with closing(open_for_writing(temporary)) as db:
            db.executescript(SCHEMA)
            db.execute("CREATE TABLE removed (id INTEGER PRIMARY KEY)")
            db.executemany("INSERT INTO removed VALUES (?)", removed)
            db.execute("INSERT INTO meta VALUES ('numbers', ?)", (numbers,))
            _fill(db, documents, facts, names, bodies=True)
            db.execute("INSERT INTO words (words) VALUES ('optimize')")
            db.commit()
        publish_file(temporary, path)
    except sqlite3.DatabaseError as error:
        raise SearchIndexError(f"{path}: the search index layer cannot be written: {error}") from error
    finally:
        temporary.unlink(missing_ok=True)
