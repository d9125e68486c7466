"""Search over author names, area labels and abstract words: case- and accent-insensitive, by word prefix.

The index is one SQLite file with an FTS5 full-text table (Python's ``sqlite3``; FTS5 is compiled into
the SQLite of CPython's builds and of Debian's; without it opening an index fails with "no such
module: fts5"), written at build time from SPARQL rows streamed in batches and opened read-only by the
server, one connection per thread. Nothing is held in memory but a page of hits, and the work of a
request is bounded whatever the size of the corpus: counts in one pass over the matches, and a query
matching more than :data:`RANKED` items of a kind ranks them as :meth:`SearchIndex._page` says.

Words are made in Python, not by a SQLite tokenizer: :func:`fold` (Unicode compatibility caseless
match, accents dropped) and :func:`words` (runs of ``\\w``, and every CJK character on its own, so "欣"
finds "周欣"); the text is stored as those words joined by spaces, and FTS5's ``ascii`` tokenizer
with ``_`` as a word character splits it exactly there. Each query word matches a word beginning
(an FTS5 prefix query ``"word"*``, served by prefix indexes of 1 to 3 characters).

Ranking, as dblp does for people: authors whose name is the query first, then those with every query
word as a whole word of one spelling of their name (a family name), then the others, each group by
papers; then areas; then papers by relevance: FTS5's ``bm25()`` over all items (k1 1.2, b 0.75,
each query word counting its prefix matches; scores equal to :data:`SCORE_DIGITS` significant digits are a tie,
so two items whose scores differ only by floating-point rounding come by title). Its idf is
``log((N - n + 0.5) / (n + 0.5))``, floored at 1e-6 for a word in more than half the items, where Lucene's
variant adds 1 inside the logarithm; so for several query words a frequent one weighs less than it would
there (one word: the same order).
"""

import functools
import json
import re
import sqlite3
import threading
import unicodedata
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from markupsafe import Markup, escape

from bibgraph.graph.ingest.plaintext import plain_text

T = TypeVar("T")
_WORD = re.compile(r"\w+")
_ASCII_WORD = re.compile(r"\w+", re.ASCII)  # the same runs in ASCII text, found sooner (most abstracts)
KIND_ORDER = {"author": 0, "area": 1, "paper": 2}
KINDS = tuple(KIND_ORDER)
FILE_NAME = "search.sqlite"  # in a dataset version's ``derived/``
FORMAT = "bibgraph-search 1"
RANKED = 20_000  # matches of one kind ranked in full; a broader query's work is bounded (see SearchIndex._page)
KIND_BITS = 40  # an item's rowid is its kind's number << 40 | its number: a kind is one rowid range
AUTHORS_END = 1 << KIND_BITS  # authors' rowids are below
KEPT_QUERIES = 512  # recent queries whose counts and result pages an open index keeps
SCORE_DIGITS = 9  # BM25 scores equal to this many significant digits tie (then: by title)
# BM25 sums made in different orders (a long item with many matches, a short one with few) can be equal but for
# the last bit; such a tie must not decide the order before the title does
RANK_SCORE = f"CAST(printf('%.{SCORE_DIGITS - 1}e', m.score) AS REAL)"
MAX_QUERY_WORDS = 10  # distinct words a query is matched with: the work of a search grows with their number


class SearchIndexError(RuntimeError):
    """The search index file is missing, damaged or of another format; the message names the file."""


def fold(text: str) -> str:
    """Lower-case, without accents: ``Oğuz Yüksel`` → ``oguz yuksel``; CJK is kept.

    Unicode's compatibility caseless match (``NFKD(casefold(NFKD(casefold(text))))``), combining marks
    dropped: folding twice changes nothing (black-letter H folds to ``h``, not ``H``)."""
    if text.isascii():  # most abstracts: the same, an order of magnitude sooner
        return text.lower()
    once = unicodedata.normalize("NFKD", text.casefold())
    if once.isascii():  # "…" or "ﬁ" in ASCII text (most labels end with "…"): no marks, only capitals to lower
        return once.lower()
    decomposed = unicodedata.normalize("NFKD", once.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def words(text: str) -> list[str]:
    folded = fold(text)
    if folded.isascii():
        return _ASCII_WORD.findall(folded)
    found = _WORD.findall(folded)
    # CJK has no spaces: index every character of a CJK run too, so "欣" finds "周欣".
    return found + [c for token in found for c in token if unicodedata.east_asian_width(c) == "W"]


@dataclass(frozen=True)
class Hit:
    iri: str
    kind: str  # "author", "area" or "paper"
    title: str  # what to show: the name, the area label, or the paper's label
    papers: int | None = None  # authors: how many papers
    areas: tuple[str, ...] = field(default=())  # authors: their areas
    exact: bool = False  # authors: a spelling of the name is the query
    tier: int = 2  # authors: 0 the name is the query, 1 every query word is a whole word of the name, 2 prefixes


@dataclass(frozen=True)
class Results:
    """One page of hits and how many there are in all."""

    hits: list[Hit]
    total: int


WHOLE = "WHERE spelling_words MATCH :whole"
_TIER = f"""CASE WHEN m.id IN (SELECT item FROM spellings WHERE name = :spelling) THEN 0
    WHEN m.id IN (SELECT s.item FROM spelling_words JOIN spellings s ON s.id = spelling_words.rowid {WHOLE})
    THEN 1 ELSE 2 END"""  # an author's tier: see the module's docstring


def query_terms(terms: list[str]) -> list[str]:
    """The words a query is matched and ranked with: each once, the first :data:`MAX_QUERY_WORDS`.

    Each word costs a pass over its matches (and a BM25 term per hit), and a repeated word selects
    nothing more: ``q=th th th …`` (a hundred times in 200 characters) cost 50 times one ``th``."""
    return list(dict.fromkeys(terms))[:MAX_QUERY_WORDS]


def tiers(terms: list[str]) -> dict[str, str]:
    """The values :data:`_TIER` reads: the query as a spelling, and its words as whole words."""
    return {"spelling": " ".join(terms), "whole": " ".join(f'"{term}"' for term in query_terms(terms))}


def fts_query(terms: list[str]) -> str:
    """The FTS5 query: every word a prefix (words are runs of ``\\w``: nothing to quote)."""
    return " ".join(f'"{term}"*' for term in query_terms(terms))


def kind_range(kind: str) -> tuple[int, int]:
    number = KIND_ORDER[kind]
    return number << KIND_BITS, ((number + 1) << KIND_BITS) - 1


TITLES_AT_ONCE = 500  # IRIs per query of :meth:`SearchIndex.titles` (SQLite allows 32,766 parameters)


class SearchIndex:
    """A search index file, opened read-only: one SQLite connection per thread."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        with closing(open_index(path)) as connection:  # a missing or damaged file is told now, not at a search
            check(connection, path)
        # The file never changes while open: the counts and result pages of recent queries are kept (a broad query's
        # count pass reads every match: 0.8 s for "learning" at a million papers), keyed by the words matched.
        self._counted = functools.lru_cache(maxsize=KEPT_QUERIES)(self._count)
        self._paged = functools.lru_cache(maxsize=KEPT_QUERIES)(self._search)

    def _connection(self) -> sqlite3.Connection:
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = self._local.connection = open_index(self.path)
        return connection

    def counts(self, query: str) -> tuple[int, ...]:
        """How many authors, areas and papers match ``query`` (one pass over the matches)."""
        return self._counted(tuple(words(query)))

    def _count(self, key: tuple[str, ...]) -> tuple[int, ...]:
        terms = list(key)
        found = dict.fromkeys(range(len(KINDS)), 0)
        if terms:
            rows = self._read(
                lambda: (
                    self._connection()
                    .execute(
                        f"SELECT rowid >> {KIND_BITS} AS kind, count(*) FROM words WHERE words MATCH ? GROUP BY kind",
                        (fts_query(terms),),
                    )
                    .fetchall()
                )
            )
            found.update(rows)
        return tuple(found[number] for number in range(len(KINDS)))

    def search(self, query: str, offset: int = 0, limit: int = 20, counts: tuple[int, ...] | None = None) -> Results:
        """Hits ``offset`` to ``offset + limit`` of the items with a word starting with every query word,
        ranked (see the module's docstring), and their number (``counts``: :meth:`counts`, if known)."""
        key = tuple(words(query))
        return self._paged(key, offset, limit, counts or self._counted(key))

    def _search(self, key: tuple[str, ...], offset: int, limit: int, counts: tuple[int, ...]) -> Results:
        terms = list(key)
        hits: list[Hit] = []
        start = offset
        for kind, count in zip(KINDS, counts, strict=True):
            wanted = min(count - start, limit - len(hits))
            if wanted > 0:
                hits += self._read(functools.partial(self._page, kind, terms, start, wanted, count))
            start = max(0, start - count)
        return Results(hits, sum(counts))

    def _read(self, read: Callable[[], T]) -> T:
        try:
            return read()
        except sqlite3.DatabaseError as error:
            raise SearchIndexError(f"{self.path}: the search index cannot be read: {error}") from error

    def _page(self, kind: str, terms: list[str], offset: int, limit: int, count: int) -> list[Hit]:
        """Hits of one kind. Past :data:`RANKED` matches (a broad query) the work stays bounded: authors
        are ordered without BM25 (after tier and papers, by name: read in that order from an index), and
        areas and papers are the :data:`RANKED` matches indexed last (the most recently added) ranked,
        then the others from the most recently added on."""
        if count <= RANKED:
            return self._ranked(kind, terms, offset, limit, "")
        if kind == "author":
            return self._authors_in_order(terms, offset, limit, count)
        hits = (
            self._ranked(kind, terms, offset, limit, f"ORDER BY rowid DESC LIMIT {RANKED}") if offset < RANKED else []
        )
        if len(hits) < limit:
            start = max(offset, RANKED)
            hits += self._rows(
                kind,
                """SELECT i.iri, i.title, i.papers, i.areas, 2 FROM items i WHERE i.id IN (
                SELECT rowid FROM words WHERE words MATCH :match AND rowid BETWEEN :low AND :high
                ORDER BY rowid DESC LIMIT :limit OFFSET :offset) ORDER BY i.id DESC""",
                {"match": fts_query(terms), "limit": limit - len(hits), "offset": start},
            )
        return hits

    def _ranked(self, kind: str, terms: list[str], offset: int, limit: int, window: str) -> list[Hit]:
        """Every match (or those of ``window``) in rank order, as the module's docstring says."""
        tier = _TIER if kind == "author" else "2"
        return self._rows(
            kind,
            f"""SELECT i.iri, i.title, i.papers, i.areas, {tier} AS tier
            FROM (SELECT rowid AS id, bm25(words) AS score FROM words
                  WHERE words MATCH :match AND rowid BETWEEN :low AND :high {window}) AS m
            JOIN items i ON i.id = m.id
            ORDER BY tier, coalesce(i.papers, 0) DESC, {RANK_SCORE}, i.title_key, i.iri
            LIMIT :limit OFFSET :offset""",
            {**tiers(terms), "match": fts_query(terms), "limit": limit, "offset": offset},
        )

    def _authors_in_order(self, terms: list[str], offset: int, limit: int, count: int) -> list[Hit]:
        """Matching authors by (tier, papers, name): each tier read in that order from the index of authors
        by papers, a row kept when it is in the tier (the set of matches made once), until the page is full."""
        db = self._connection()
        values = {**tiers(terms), "match": fts_query(terms)}
        exact = f"SELECT item FROM spellings WHERE name = :spelling AND item < {AUTHORS_END}"
        whole = f"SELECT s.item FROM spelling_words JOIN spellings s ON s.id = spelling_words.rowid {WHOLE}"
        first = db.execute(f"SELECT count(DISTINCT item) FROM ({exact})", values).fetchone()[0]
        second = db.execute(f"SELECT count(DISTINCT item) FROM ({whole}) WHERE item NOT IN ({exact})", values)
        sizes = (first, second.fetchone()[0])
        members = (
            f"i.id IN ({exact})",
            f"i.id IN ({whole}) AND i.id NOT IN ({exact})",
            f"i.id IN (SELECT rowid FROM words WHERE words MATCH :match AND rowid < {AUTHORS_END})"
            f" AND i.id NOT IN ({whole}) AND i.id NOT IN ({exact})",
        )
        hits: list[Hit] = []
        for tier, size in enumerate((*sizes, count - sum(sizes))):
            wanted = min(size - offset, limit - len(hits))
            if wanted > 0:
                hits += self._rows(
                    "author",
                    f"""SELECT i.iri, i.title, i.papers, i.areas, {tier} FROM items i INDEXED BY authors_by_papers
                    WHERE i.id < {AUTHORS_END} AND {members[tier]}
                    ORDER BY i.papers DESC, i.title_key, i.iri LIMIT :limit OFFSET :offset""",
                    {**values, "limit": wanted, "offset": offset},
                )
            offset = max(0, offset - size)
        return hits

    def _rows(self, kind: str, sql: str, values: dict[str, object]) -> list[Hit]:
        low, high = kind_range(kind)
        rows = self._connection().execute(sql, {"low": low, "high": high, **values})
        return [
            Hit(iri, kind, title, papers, tuple(json.loads(areas)), tier == 0, tier)
            for iri, title, papers, areas, tier in rows
        ]

    def titles(self, iris: list[str]) -> dict[str, str]:
        """The titles of the items ``iris`` the index holds (a paper's label, an author's name), by IRI: an author
        page served from an engine reads its papers' labels here, not from the engine's cold pages."""

        def read() -> dict[str, str]:
            db, found = self._connection(), dict[str, str]()
            for start in range(0, len(iris), TITLES_AT_ONCE):
                block = iris[start : start + TITLES_AT_ONCE]
                marks = ",".join("?" * len(block))
                found.update(db.execute(f"SELECT iri, title FROM items WHERE iri IN ({marks})", block))
            return found

        return self._read(read)

    def author_names(self, wanted: str, limit: int = 20) -> list[str]:
        """Up to ``limit`` author names whose normalised form (:func:`~.names.normalise`) starts with
        ``wanted``, then names containing it, each in the order of their normalised forms."""
        return self._read(functools.partial(self._author_names, wanted, limit))

    def _author_names(self, wanted: str, limit: int) -> list[str]:
        db = self._connection()
        found: list[str] = []
        for key, name in db.execute("SELECT key, name FROM names WHERE key >= ? ORDER BY key, name", (wanted,)):
            if not key.startswith(wanted) or len(found) == limit:
                break
            found.append(name)
        if len(found) < limit:
            rows = db.execute(
                "SELECT name FROM names WHERE instr(key, ?) > 1 ORDER BY key, name LIMIT ?",
                (wanted, limit - len(found)),
            )
            found += [name for (name,) in rows]
        return found

    def close(self) -> None:
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            connection.close()
            self._local.connection = None


def open_index(path: Path) -> sqlite3.Connection:
    """A read-only connection to the index file ``path`` (never written once built: ``immutable``)."""
    if not path.is_file():
        raise SearchIndexError(f"{path}: no search index file (build the dataset again)")
    try:
        return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True, check_same_thread=False)
    except sqlite3.Error as error:
        raise SearchIndexError(f"{path}: the search index cannot be opened: {error}") from error


def check(connection: sqlite3.Connection, path: Path) -> None:
    try:
        found = connection.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
        connection.execute("SELECT rowid FROM words WHERE words MATCH 'a*' LIMIT 1").fetchone()
    except sqlite3.DatabaseError as error:
        raise SearchIndexError(f"{path}: not a readable search index: {error}") from error
    if found is None or found[0] != FORMAT:
        raise SearchIndexError(f"{path}: search index format {found and found[0]!r}, expected {FORMAT!r}")


def snippet(text: str, query: str, width: int = 220) -> Markup:
    """A window of ``text`` (as plain text) around the first query word, each word matching one of the words the
    query is matched with (:func:`query_terms`) in ``<mark>``: a word of the text is compared with each of them,
    so ``q=a a a …`` (a hundred words in 200 characters) cost a page of snippets a hundred times ``q=a``."""
    plain = plain_text(text)
    terms = query_terms(words(query))
    spans = [(m.start(), m.end()) for m in _WORD.finditer(plain) if _matches(fold(m.group()), terms)]
    start = 0
    if spans and spans[0][0] > width // 3:
        start = plain.rfind(" ", 0, spans[0][0] - width // 3) + 1
    end = min(len(plain), start + width)
    if end < len(plain):
        end = max(plain.rfind(" ", start, end), spans[0][1] if spans else start + 1)
    html, cursor = [], start
    for a, b in spans:
        if a < start or b > end:
            continue
        html.append(str(escape(plain[cursor:a])) + f"<mark>{escape(plain[a:b])}</mark>")
        cursor = b
    html.append(str(escape(plain[cursor:end])))
    return Markup(("… " if start else "") + "".join(html) + (" …" if end < len(plain) else ""))


def _matches(word: str, terms: list[str]) -> bool:
    """A word of the text matches a query word by its beginning, or (CJK) by any of its characters."""
    return any(
        word.startswith(t) or (len(t) == 1 and unicodedata.east_asian_width(t) == "W" and t in word) for t in terms
    )
