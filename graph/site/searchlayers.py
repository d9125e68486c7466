"""A search index in layers: a build's index file and one small file per ``add`` after it, read as one index.

An add writes only what it adds (:func:`~.searchbuild.write_layer`): its new papers and areas, the authors it touched
(indexed again, with their new spellings, paper counts and areas), and the numbers of the earlier items those
replace (``removed``). Earlier files are never written again, so versions share them as hard links: a version's own
disk is its layer, not a copy of the whole index (202 MB at 100,000 papers). At :data:`MAX_LAYERS` files the next add
merges the newest add layers into one first (:mod:`.searchupdate`), never the build's file.

Answers equal those of one index of the same items (:class:`~.search.SearchIndex`), the BM25 scores included: each
layer's FTS5 ``bm25()`` uses that layer's statistics, so a layer's score of one query word is turned back into what
it counts (the word's matches in the item: FTS5's formula solved for them, given the layer's row count, token total
and the item's size, all read from FTS5's own tables), and the score is made again with the statistics of all layers
together, as FTS5 computes it (the same operations in the same order: the same double). Item numbers go on from
layer to layer, so an item's number is what an index updated in place gives it."""

import functools
import json
import math
import re
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import closing
from itertools import chain
from pathlib import Path

from bibgraph.graph.site.search import (
    AUTHORS_END,
    KIND_BITS,
    RANK_SCORE,
    RANKED,
    TITLES_AT_ONCE,
    WHOLE,
    Hit,
    SearchIndex,
    SearchIndexError,
    check,
    fts_query,
    kind_range,
    open_index,
    query_terms,
    tiers,
)

LAYER = re.compile(r"search(?:-(?P<number>[0-9]{6}))?\.sqlite")  # search.sqlite, then search-000001.sqlite, ...
MAX_LAYERS = 10  # SQLite attaches at most 10 files to a connection: the next add merges add layers (.searchupdate)
K1, B = 1.2, 0.75  # FTS5's bm25() constants


def layer_name(number: int) -> str:
    return "search.sqlite" if number == 0 else f"search-{number:06d}.sqlite"


def layers(directory: Path) -> list[Path]:
    """The index files of a version's ``derived/``, in order (the build's first)."""
    found = [(int(m["number"] or 0), p) for p in directory.glob("search*.sqlite") if (m := LAYER.fullmatch(p.name))]
    return [path for _, path in sorted(found)]


def open_search(paths: Sequence[Path]) -> SearchIndex:
    """The index of these layer files (one file: :class:`~.search.SearchIndex` itself)."""
    if not paths:
        raise SearchIndexError("no search index file (build the dataset again)")
    return SearchIndex(paths[0]) if len(paths) == 1 else LayeredIndex(paths)


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """SQLite's variable-length integer at ``at`` (FTS5 stores its sizes with it): the value and the next offset."""
    value = 0
    for i in range(8):
        byte = data[at + i]
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at + i + 1
    return (value << 8) | data[at + 8], at + 9


class LayeredIndex(SearchIndex):
    """Several index files read as one (:mod:`this module <.searchlayers>`): one connection per thread with every
    layer attached read-only, the numbers later layers replaced (``masked``) in a temporary table."""

    def __init__(self, paths: Sequence[Path]) -> None:
        if len(paths) > MAX_LAYERS:
            raise SearchIndexError(f"{paths[-1]}: more than {MAX_LAYERS} search index layers")
        self.paths = list(paths)
        for path in self.paths:
            with closing(open_index(path)) as connection:
                check(connection, path)
        super().__init__(self.paths[0])
        db = self._connection()
        self._schemas = [f"l{i}" for i in range(len(self.paths))]
        self._rows_tokens = [self._read(functools.partial(self._totals, s)) for s in self._schemas]
        masked = self._read(lambda: db.execute("SELECT id FROM temp.masked").fetchall())
        sizes = self._sizes([rowid for (rowid,) in masked])
        self._n_rows = sum(rows for rows, _ in self._rows_tokens) - len(masked)
        self._n_tokens = sum(tokens for _, tokens in self._rows_tokens) - sum(sizes.values())

    def _connection(self) -> sqlite3.Connection:
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = sqlite3.connect("file::memory:", uri=True, check_same_thread=False)
            try:
                for i, path in enumerate(self.paths):
                    connection.execute(
                        f"ATTACH DATABASE ? AS l{i}", (f"{path.resolve().as_uri()}?mode=ro&immutable=1",)
                    )
                connection.execute("CREATE TEMP TABLE masked (id INTEGER PRIMARY KEY)")
                for i in range(1, len(self.paths)):
                    connection.execute(f"INSERT OR IGNORE INTO temp.masked SELECT id FROM l{i}.removed")
            except sqlite3.DatabaseError as error:
                connection.close()
                raise SearchIndexError(f"{self.paths[-1]}: the search index layers cannot be read: {error}") from error
            self._local.connection = connection
        return connection

    def _totals(self, schema: str) -> tuple[int, int]:
        """FTS5's row count and token total of one layer (its ``averages`` record: two variable-length integers)."""
        found = self._connection().execute(f"SELECT block FROM {schema}.words_data WHERE id = 1").fetchone()
        if found is None or not found[0]:  # nothing ever indexed
            return 0, 0
        rows, at = _varint(found[0], 0)
        return rows, _varint(found[0], at)[0]

    def _sizes(self, rowids: Sequence[int]) -> dict[int, int]:
        """Each item's size in tokens (FTS5's ``docsize``), whichever layer holds it."""
        db = self._connection()
        found: dict[int, int] = {}
        for start in range(0, len(rowids), 500):
            block = list(rowids[start : start + 500])
            marks = ",".join("?" * len(block))
            for schema in self._schemas:
                rows = db.execute(f"SELECT id, sz FROM {schema}.words_docsize WHERE id IN ({marks})", block)
                found.update((rowid, _varint(size, 0)[0]) for rowid, size in rows)
        return found

    def _each(self, sql: str, values: Sequence[object] | Mapping[str, object] = ()) -> Iterator[tuple]:
        """The rows of ``sql`` in every layer (``{s}`` is the layer's schema), the masked numbers left out."""
        db = self._connection()
        for schema in self._schemas:
            yield from db.execute(sql.format(s=schema), values)

    def titles(self, iris: list[str]) -> dict[str, str]:
        """:meth:`.SearchIndex.titles` over every layer: an added paper's label, an author's latest name."""

        def read() -> dict[str, str]:
            found = dict[str, str]()
            for start in range(0, len(iris), TITLES_AT_ONCE):
                block = iris[start : start + TITLES_AT_ONCE]
                sql = "SELECT iri, title FROM {s}.items WHERE iri IN (%s) AND id NOT IN temp.masked"
                found.update(self._each(sql % ",".join("?" * len(block)), block))
            return found

        return self._read(read)

    def _count(self, key: tuple[str, ...]) -> tuple[int, ...]:
        found = [0, 0, 0]
        if key:
            sql = (
                f"SELECT rowid >> {KIND_BITS} AS kind, count(*) FROM {{s}}.words WHERE words MATCH ?"
                " AND rowid NOT IN temp.masked GROUP BY kind"
            )
            for kind, count in self._read(lambda: list(self._each(sql, (fts_query(list(key)),)))):
                found[kind] += count
        return tuple(found)

    def _page(self, kind: str, terms: list[str], offset: int, limit: int, count: int) -> list[Hit]:
        if count > RANKED and kind == "author":
            return self._authors_in_order(terms, offset, limit, count)
        windowed = count > RANKED
        hits = self._ranked_page(kind, terms, offset, limit, windowed) if not windowed or offset < RANKED else []
        if windowed and len(hits) < limit:
            start = max(offset, RANKED)
            ids = self._newest(kind, terms, start + limit - len(hits))[start:]
            hits += self._items(kind, ids, "ORDER BY h.id DESC", {})
        return hits

    def _newest(self, kind: str, terms: list[str], limit: int) -> list[int]:
        """The numbers of the ``limit`` matching items indexed last (the highest), highest first."""
        low, high = kind_range(kind)
        sql = (
            "SELECT rowid FROM {s}.words WHERE words MATCH ? AND rowid BETWEEN ? AND ?"
            " AND rowid NOT IN temp.masked ORDER BY rowid DESC LIMIT ?"
        )
        rows = self._each(sql, (fts_query(terms), low, high, limit))
        return sorted((rowid for (rowid,) in rows), reverse=True)[:limit]

    def _ranked_page(self, kind: str, terms: list[str], offset: int, limit: int, windowed: bool) -> list[Hit]:
        """Every match (or the :data:`RANKED` indexed last) scored as one index would, a page of them in rank order."""
        low, high = kind_range(kind)
        sql = "SELECT rowid FROM {s}.words WHERE words MATCH ? AND rowid BETWEEN ? AND ? AND rowid NOT IN temp.masked"
        if windowed:
            ids = self._newest(kind, terms, RANKED)
        else:
            ids = [rowid for (rowid,) in self._each(sql, (fts_query(terms), low, high))]
        scores = self._scores(ids, query_terms(terms))
        return self._items(kind, list(scores), "", {**tiers(terms), "limit": limit, "offset": offset}, scores)

    def _scores(self, ids: list[int], terms: list[str]) -> dict[int, float]:
        """BM25 of each item over all layers, as FTS5 scores it in one index (see the module's docstring)."""
        db = self._connection()
        db.execute("CREATE TEMP TABLE IF NOT EXISTS wanted (id INTEGER PRIMARY KEY)")
        db.execute("DELETE FROM temp.wanted")
        db.executemany("INSERT INTO temp.wanted VALUES (?)", ((rowid,) for rowid in ids))
        sizes = self._sizes(ids)
        avgdl = self._n_tokens / max(self._n_rows, 1)
        scores = dict.fromkeys(ids, 0.0)
        # ``+rowid``: a filter on the matches, not a constraint handed to FTS5 (which ran the whole match again for
        # each number of the set: minutes for a broad query at 100,000 papers)
        for term in terms:
            phrase = f'"{term}"*'
            frequencies: dict[int, int] = {}
            hits = 0
            for schema, (rows, tokens) in zip(self._schemas, self._rows_tokens, strict=True):
                in_layer, masked = db.execute(  # one pass: the layer's matches, and those replaced since
                    f"SELECT count(*), coalesce(sum(rowid IN temp.masked), 0) FROM {schema}.words WHERE words MATCH ?",
                    (phrase,),
                ).fetchone()
                hits += in_layer - masked
                rows = max(rows, 1)
                idf = _idf(rows, in_layer)
                layer_avgdl = tokens / rows
                scored = db.execute(
                    f"SELECT rowid, bm25(words) FROM {schema}.words WHERE words MATCH ? AND +rowid IN temp.wanted",
                    (phrase,),
                )
                for rowid, score in scored:
                    part = -score / idf
                    k = K1 * (1 - B + B * sizes[rowid] / layer_avgdl)
                    frequencies[rowid] = round(part * k / (K1 + 1 - part))
            idf = _idf(max(self._n_rows, 1), hits)
            for rowid, f in frequencies.items():
                scores[rowid] += idf * ((f * (K1 + 1.0)) / (f + K1 * (1 - B + B * sizes[rowid] / avgdl)))
        return {rowid: -1.0 * score for rowid, score in scores.items()}

    def _items(
        self, kind: str, ids: list[int], order: str, values: dict[str, object], scores: dict[int, float] | None = None
    ) -> list[Hit]:
        """The hits of items ``ids`` (their rows gathered from every layer), ranked as one index ranks them (with
        ``scores``), or in ``order``."""
        db = self._connection()
        db.execute(
            "CREATE TEMP TABLE IF NOT EXISTS hits (id INTEGER PRIMARY KEY, score REAL, tier INTEGER, iri TEXT,"
            " title TEXT, title_key TEXT, papers INTEGER, areas TEXT)"
        )
        db.execute("DELETE FROM temp.hits")
        if scores is None:
            db.execute("CREATE TEMP TABLE IF NOT EXISTS wanted (id INTEGER PRIMARY KEY)")
            db.execute("DELETE FROM temp.wanted")
            db.executemany("INSERT INTO temp.wanted VALUES (?)", ((rowid,) for rowid in ids))
        tier = (
            f"CASE WHEN i.id IN (SELECT item FROM {{s}}.spellings WHERE name = :spelling) THEN 0 WHEN i.id IN"
            f" (SELECT t.item FROM {{s}}.spelling_words JOIN {{s}}.spellings t ON t.id = spelling_words.rowid {WHOLE})"
            " THEN 1 ELSE 2 END"
            if kind == "author" and scores is not None
            else "2"
        )
        for schema in self._schemas:
            db.execute(
                f"INSERT INTO temp.hits SELECT i.id, NULL, {tier.format(s=schema)}, i.iri, i.title, i.title_key,"
                f" i.papers, i.areas FROM {schema}.items i WHERE i.id IN temp.wanted AND i.id NOT IN temp.masked",
                {k: v for k, v in values.items() if k in ("spelling", "whole")},
            )
        if scores is not None:
            db.executemany("UPDATE temp.hits SET score = ? WHERE id = ?", ((s, rowid) for rowid, s in scores.items()))
            order = (
                f"ORDER BY h.tier, coalesce(h.papers, 0) DESC, {RANK_SCORE.replace('m.score', 'h.score')},"
                " h.title_key, h.iri LIMIT :limit OFFSET :offset"
            )
        rows = db.execute(f"SELECT h.iri, h.title, h.papers, h.areas, h.tier FROM temp.hits h {order}", values)
        return self._hits(kind, rows)

    def _hits(self, kind: str, rows: Iterator[tuple] | list[tuple]) -> list[Hit]:
        return [
            Hit(iri, kind, title, papers, tuple(json.loads(areas)), tier == 0, tier)
            for iri, title, papers, areas, tier in rows
        ]

    def _authors_in_order(self, terms: list[str], offset: int, limit: int, count: int) -> list[Hit]:
        """As :meth:`.SearchIndex._authors_in_order`, each tier's rows read in order from every layer and merged."""
        values = {**tiers(terms), "match": fts_query(terms)}
        exact = f"SELECT item FROM {{s}}.spellings WHERE name = :spelling AND item < {AUTHORS_END}"
        whole = f"SELECT t.item FROM {{s}}.spelling_words JOIN {{s}}.spellings t ON t.id = spelling_words.rowid {WHOLE}"
        members = (
            f"i.id IN ({exact})",
            f"i.id IN ({whole}) AND i.id NOT IN ({exact})",
            f"i.id IN (SELECT rowid FROM {{s}}.words WHERE words MATCH :match AND rowid < {AUTHORS_END})"
            f" AND i.id NOT IN ({whole}) AND i.id NOT IN ({exact})",
        )
        sizes = [
            sum(
                n
                for (n,) in self._each(
                    f"SELECT count(*) FROM {{s}}.items i WHERE {m} AND i.id NOT IN temp.masked", values
                )
            )
            for m in members[:2]
        ]
        hits: list[Hit] = []
        for tier, size in enumerate((*sizes, count - sum(sizes))):
            wanted = min(size - offset, limit - len(hits))
            if wanted > 0:
                sql = (
                    f"SELECT i.iri, i.title, i.papers, i.areas, {tier}, i.title_key FROM {{s}}.items i"
                    f" WHERE i.id < {AUTHORS_END} AND {members[tier]} AND i.id NOT IN temp.masked"
                    " ORDER BY i.papers DESC, i.title_key, i.iri LIMIT :limit"
                )
                rows = sorted(
                    self._each(sql, {**values, "limit": offset + wanted}),
                    key=lambda r: (r[2] is None, -(r[2] or 0), r[5], r[0]),
                )
                hits += self._hits("author", [row[:5] for row in rows[offset : offset + wanted]])
            offset = max(0, offset - size)
        return hits

    def _author_names(self, wanted: str, limit: int) -> list[str]:
        starting = self._each(
            "SELECT key, name FROM {s}.names WHERE key >= ? ORDER BY key, name LIMIT ?", (wanted, limit)
        )
        found = [name for key, name in sorted(set(starting)) if key.startswith(wanted)][:limit]
        if len(found) < limit:
            more = self._each(
                "SELECT key, name FROM {s}.names WHERE instr(key, ?) > 1 ORDER BY key, name LIMIT ?",
                (wanted, limit - len(found)),
            )
            found += [name for _, name in sorted(set(more))][: limit - len(found)]
        return found


def _idf(rows: int, hits: int) -> float:
    """FTS5's idf of a word in ``hits`` of ``rows`` items (floored for a word in more than half of them)."""
    idf = math.log((rows - hits + 0.5) / (hits + 0.5))
    return 1e-6 if idf <= 0.0 else idf


def masked_numbers(paths: Sequence[Path], iris: Sequence[str]) -> Iterator[tuple[int, str]]:
    """The numbers and IRIs of ``iris`` indexed in the layers ``paths`` (and not replaced by a later one)."""
    index = open_search(paths)
    try:
        db = index._connection()
        schemas = [f"l{i}" for i in range(len(paths))] if isinstance(index, LayeredIndex) else ["main"]
        masked = "AND id NOT IN temp.masked" if isinstance(index, LayeredIndex) else ""
        for start in range(0, len(iris), 500):
            block = list(iris[start : start + 500])
            marks = ",".join("?" * len(block))
            yield from chain.from_iterable(
                db.execute(f"SELECT id, iri FROM {s}.items WHERE iri IN ({marks}) {masked}", block).fetchall()
                for s in schemas
            )
    finally:
        index.close()
