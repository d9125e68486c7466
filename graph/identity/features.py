"""What the records say about who wrote them, kept small, and the pairwise evidence read from it.

Per record the identity step keeps the author names (each distinct string once), its area and subarea, and its
abstract as the indices of its hashed words (scikit-learn's ``HashingVectorizer``): never the abstract itself, so a
build still holds no abstracts. Only the indices are kept (the words' weights are all one) with each word's document
count: a record's TF-IDF row is made when asked for (:class:`Terms`), so the whole weighted matrix is never held
(at a million records, three copies of it were over a gigabyte). Evidence between two authorships of one name:
co-authors they share, co-authors' co-authors they share (two hops), the same area and subarea, and the
TF-IDF cosine of their abstracts (``TfidfTransformer`` over the kept word indices).
"""

import re
from array import array
from bisect import bisect_left
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import overload

import numpy as np
from scipy import sparse
from sklearn.feature_extraction.text import HashingVectorizer
from sklearn.preprocessing import normalize

from bibgraph.graph.arrays.sets import distinct
from bibgraph.graph.ingest.names import normalise

HASH_FEATURES = 1 << 20
_BATCH = 2048
_KEPT_COAUTHORS = 100_000  # names whose co-authors are kept once found
# scikit-learn's default words (its ``token_pattern`` over the lower-cased text)
_WORD = re.compile(r"(?u)\b\w\w+\b")


def _distinct_words(text: str) -> set[str]:
    """The words scikit-learn's default analyzer finds, each once: the counts are binary, so a word hashed again
    changes nothing (a fifth of the hashing's CPU, 1 CPU-s at 100,000 papers)."""
    return set(_WORD.findall(text.lower()))


# No stop-word list: IDF weighs common words down anyway, and filtering them in Python doubled the hashing's cost.
_VECTORISER = HashingVectorizer(
    n_features=HASH_FEATURES, alternate_sign=False, norm=None, binary=True, dtype=np.float32, analyzer=_distinct_words
)


class Rows(Sequence[tuple[str, ...]]):
    """Each record's strings, held as ids into one table (``flat``, cut at ``starts``): a tuple per record cost
    56 bytes and 8 a name, and the co-author index needs the ids anyway."""

    def __init__(self, table: list[str], flat: "array[int]", starts: "array[int]") -> None:
        self.table, self.flat, self.starts = table, flat, starts

    def __len__(self) -> int:
        return len(self.starts) - 1

    @overload
    def __getitem__(self, index: int) -> tuple[str, ...]: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[tuple[str, ...]]: ...
    def __getitem__(self, index: int | slice) -> tuple[str, ...] | Sequence[tuple[str, ...]]:
        if isinstance(index, slice):
            return [self[i] for i in range(len(self))[index]]
        if not -len(self) <= index < len(self):
            raise IndexError(index)
        index %= len(self)
        return tuple(map(self.table.__getitem__, self.flat[self.starts[index] : self.starts[index + 1]]))

    def __iter__(self) -> Iterator[tuple[str, ...]]:
        table, flat, starts = self.table, self.flat, self.starts
        for index in range(len(starts) - 1):
            yield tuple(map(table.__getitem__, flat[starts[index] : starts[index + 1]]))

    def entry(self, number: int) -> str:
        """The string of entry ``number`` of the rows end to end (row ``r``'s ``p``-th is ``starts[r] + p``: an
        authorship's number), without making its row's tuple."""
        return self.table[self.flat[number]]


class Pairs(Sequence[tuple[str, str]]):
    """Each record's two strings (area, subarea), held as ids into one table, two a record."""

    def __init__(self, table: list[str], flat: "array[int]") -> None:
        self.table, self.flat = table, flat

    def __len__(self) -> int:
        return len(self.flat) // 2

    @overload
    def __getitem__(self, index: int) -> tuple[str, str]: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[tuple[str, str]]: ...
    def __getitem__(self, index: int | slice) -> tuple[str, str] | Sequence[tuple[str, str]]:
        if isinstance(index, slice):
            return [self[i] for i in range(len(self))[index]]
        if not -len(self) <= index < len(self):
            raise IndexError(index)
        index %= len(self)
        return self.table[self.flat[2 * index]], self.table[self.flat[2 * index + 1]]


class Table:
    """Distinct strings numbered in the order first met: each held once, whatever the number of records."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.strings: list[str] = []

    def id(self, text: str) -> int:
        found = self.ids.get(text)
        if found is None:
            found = self.ids[text] = len(self.strings)
            self.strings.append(text)
        return found


@dataclass
class Collected:
    """The records' identity evidence, in the order they were added (one entry per distinct paper).

    Names, written forms and concepts are ids into string tables (``names``, ``written`` and ``concepts`` read
    them as tuples); :meth:`release` lets go of all but the paper ids once the persons are decided.
    """

    order: list[str] = field(default_factory=list)  # the paper id: what persons are numbered by
    where: "Places" = field(default_factory=lambda: Places())  # (file, line) -> record (for curation)
    words: list[np.ndarray] = field(default_factory=list)  # hashed word indices of each batch's records, end to end
    starts: list[np.ndarray] = field(default_factory=list)  # each batch's row starts into its ``words`` (CSR indptr)
    documents: np.ndarray = field(default_factory=lambda: np.zeros(HASH_FEATURES, dtype=np.int64))  # df per word
    name_table: Table = field(default_factory=Table)  # normalised author names
    written_table: Table = field(default_factory=Table)  # cleaned names as the list gives them
    concept_table: Table = field(default_factory=Table)  # area and subarea keys, "" when absent
    name_ids: "array[int]" = field(default_factory=lambda: array("i"))  # each authorship's normalised name
    written_ids: "array[int]" = field(default_factory=lambda: array("i"))  # each authorship's written form
    concept_ids: "array[int]" = field(default_factory=lambda: array("i"))  # each record's area, then subarea
    row_starts: "array[int]" = field(default_factory=lambda: array("q", [0]))  # each record's first authorship
    _pending: list[str] = field(default_factory=list)
    closed: bool = False  # no record comes after (:meth:`close`)

    def add(
        self, authors: tuple[str, ...], area: str, subarea: str, abstract: str, paper: str, where: tuple[str, int]
    ) -> int:
        """Keep one record's evidence; its index."""
        record = len(self.order)
        self.where.add(where, record)
        written, named = self.written_table.id, self.name_table.id
        self.written_ids.extend(map(written, authors))
        self.name_ids.extend(named(normalise(name)) for name in authors)
        self.row_starts.append(len(self.name_ids))
        concept = self.concept_table.id
        self.concept_ids.extend((concept(normalise(area)), concept(normalise(subarea))))
        self.order.append(paper)
        self._pending.append(abstract)
        if len(self._pending) >= _BATCH:
            self._flush()
        return record

    @property
    def names(self) -> Rows:
        """Each record's normalised author names."""
        return Rows(self.name_table.strings, self.name_ids, self.row_starts)

    @property
    def written(self) -> Rows:
        """Each record's author names as the list gives them (cleaned)."""
        return Rows(self.written_table.strings, self.written_ids, self.row_starts)

    @property
    def concepts(self) -> Pairs:
        """Each record's (area, subarea) keys, "" when absent."""
        return Pairs(self.concept_table.strings, self.concept_ids)

    def _flush(self) -> None:
        if self._pending:
            counts = _VECTORISER.transform(self._pending).tocsr()
            self.words.append(counts.indices.astype(np.int32, copy=False))
            self.starts.append(counts.indptr.astype(np.int64, copy=False))
            self.documents += np.bincount(counts.indices, minlength=HASH_FEATURES)
            self._pending = []

    def term_matrix(self, rows: Sequence[int]) -> "Terms":
        """TF-IDF rows (L2-normalised) of the given records, the IDF taken over every record: row ``i`` is record
        ``rows[i]``'s, made when indexed."""
        self._flush()
        return Terms(self, rows)

    def coauthors(self) -> "Coauthors":
        """Each name's co-author names over the whole dataset (the two-hop evidence reads it), found when asked."""
        found = Coauthors(self.name_table, self.name_ids, self.row_starts)
        if self.closed:  # no record comes after: the names' lookup (1.5M names at a million papers) is the index's
            self.name_table.ids = {}
        return found

    def close(self) -> None:
        """No record comes after: the written forms' lookup goes (nothing asks a form's id; a form added after
        would be held again, read back the same), and the names' goes to the co-author index (:meth:`coauthors`),
        which lets it go once the rules are done with it."""
        self._flush()
        self.written_table.ids = {}
        self.closed = True

    def release(self) -> None:
        """Let go of the evidence once the persons are decided: writing them reads the paper ids alone."""
        self.where, self.words, self.starts, self._pending = Places(), [], [], []
        self.documents = np.zeros(0, dtype=np.int64)
        self.name_table, self.written_table, self.concept_table = Table(), Table(), Table()
        self.name_ids, self.written_ids, self.concept_ids = array("i"), array("i"), array("i")
        self.row_starts = array("q", [0] * (len(self.order) + 1))  # every record's names gone, the count kept


class Coauthors(Mapping[str, set[str]]):
    """Each name's co-author names, found when asked from integer arrays (records -> names, names -> records).

    A set per name of the dataset held as many strings again as the names themselves (1.6 KB a record); the
    two-hop evidence asks for the co-authors of the names in ambiguous blocks only. Answers are kept a while
    (a block's mentions share co-authors).
    """

    def __init__(self, table: Table, flat: "array[int]", starts: "array[int]") -> None:
        self.strings, self.ids = table.strings, table.ids
        self.flat = np.array(flat, dtype=np.int32)
        self.starts = np.array(starts, dtype=np.int64)
        by_name = np.argsort(self.flat, kind="stable")
        self.records_of = np.searchsorted(self.starts, by_name, side="right").astype(np.int32) - 1  # per authorship
        self.name_starts = np.zeros(len(self.ids) + 1, dtype=np.int64)
        np.cumsum(np.bincount(self.flat, minlength=len(self.ids)), out=self.name_starts[1:])
        self._kept: dict[str, set[str]] = {}

    def __getitem__(self, name: str) -> set[str]:
        found = self._kept.get(name)
        if found is not None:
            return found
        index = self.ids[name]
        records = distinct(self.records_of[self.name_starts[index] : self.name_starts[index + 1]])
        others = distinct(np.concatenate([self.flat[self.starts[r] : self.starts[r + 1]] for r in records]))
        found = {self.strings[other] for other in others.tolist() if other != index}
        if len(self._kept) >= _KEPT_COAUTHORS:
            self._kept.clear()
        self._kept[name] = found
        return found

    def forget(self) -> None:
        """No more questions: let go of the answers kept (at a million papers, up to a hundred thousand names'
        sets) and of the names' lookup when it is this index's alone (a closed :class:`Collected`'s)."""
        self._kept, self.ids = {}, {}

    def __iter__(self) -> Iterator[str]:
        return iter(self.strings)

    def __len__(self) -> int:
        return len(self.strings)


class Places(Mapping[tuple[str, int], int]):
    """(file, line) -> record, as two integer arrays per file: a dict of tuples cost 150 bytes a record.

    Records are added in reading order, so a file's lines rise; one that does not (a file read twice) is kept aside.
    """

    def __init__(self) -> None:
        self.files: dict[str, tuple[array[int], array[int]]] = {}
        self.aside: dict[tuple[str, int], int] = {}

    def add(self, where: tuple[str, int], record: int) -> None:
        lines, records = self.files.setdefault(where[0], (array("q"), array("q")))
        if lines and where[1] <= lines[-1]:
            self.aside[where] = record
            return
        lines.append(where[1])
        records.append(record)

    def __getitem__(self, where: tuple[str, int]) -> int:
        if where in self.aside:
            return self.aside[where]
        lines, records = self.files.get(where[0], ((), ()))
        at = bisect_left(lines, where[1])
        if at < len(lines) and lines[at] == where[1]:
            return records[at]
        raise KeyError(where)

    def __iter__(self) -> Iterator[tuple[str, int]]:
        for source, (lines, _) in self.files.items():
            yield from ((source, line) for line in lines)
        yield from self.aside

    def __len__(self) -> int:
        return sum(len(lines) for lines, _ in self.files.values()) + len(self.aside)


class Terms:
    """The records' TF-IDF rows, as ``TfidfTransformer(sublinear_tf=True).fit_transform`` of every record's binary
    word counts gives them (to the bit), made only for the rows indexed (``terms[r]``, ``terms[[r, s]]``)."""

    def __init__(self, collected: Collected, rows: Sequence[int]) -> None:
        self.words, self.starts, self.rows = collected.words, collected.starts, rows
        self.first = np.cumsum([0] + [len(starts) - 1 for starts in self.starts])  # each batch's first record
        self.idf = _idf(collected.documents, int(self.first[-1]))

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, index: int | Sequence[int]) -> sparse.csr_matrix:
        picked = [index] if isinstance(index, (int, np.integer)) else list(index)
        pieces: list[np.ndarray] = []
        indptr = [0]
        for at_row in picked:
            row = self.rows[at_row]
            batch = int(np.searchsorted(self.first, row, side="right")) - 1
            starts = self.starts[batch]
            at = row - int(self.first[batch])
            pieces.append(self.words[batch][starts[at] : starts[at + 1]])
            indptr.append(indptr[-1] + len(pieces[-1]))
        indices = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int32)
        # sublinear tf of a binary count is 1 + log(1) = 1: each weight is its word's IDF, then the row's L2 norm
        weights = sparse.csr_matrix((self.idf[indices], indices, indptr), shape=(len(picked), HASH_FEATURES))
        return normalize(weights, norm="l2", copy=False)


def _idf(documents: np.ndarray, records: int) -> np.ndarray:
    """scikit-learn's smoothed IDF, ``log((1 + n) / (1 + df)) + 1``, computed in float32 as ``TfidfTransformer`` does
    for float32 counts (the same operations in the same order: the same bits)."""
    df = documents.astype(np.float32)
    df += 1.0
    idf = np.full_like(df, fill_value=records + 1, dtype=np.float32)
    idf /= df
    np.log(idf, out=idf)
    idf += 1.0
    return idf


@dataclass(frozen=True)
class View:
    """One authorship as evidence: its co-authors, their co-authors, its concepts and its TF-IDF row."""

    record: int
    position: int
    coauthors: frozenset[str]
    reach: frozenset[str]  # co-authors' co-authors, the name itself left out
    area: str
    subarea: str
    vector: sparse.csr_matrix


def view(
    record: int, position: int, collected: Collected, coauthors: Mapping[str, set[str]], vector: sparse.csr_matrix
) -> View:
    names = collected.names[record]
    name = names[position]
    mine = frozenset(names) - {name}
    reach: set[str] = set()
    for other in mine:
        reach |= coauthors.get(other, set())
    reach.discard(name)
    area, subarea = collected.concepts[record]
    return View(record, position, mine, frozenset(reach), area, subarea, vector)


def pair_features(a: View, b: View) -> tuple[float, float, float, float, float]:
    """The evidence that two authorships of one name are one person: shared co-authors, shared at two hops (log),
    same area, same subarea, abstract cosine."""
    shared = len(a.coauthors & b.coauthors)
    two_hop = len(a.reach & b.coauthors) + len(b.reach & a.coauthors) + len(a.reach & b.reach)
    cosine = float(a.vector.multiply(b.vector).sum())
    same_area = bool(a.area) and a.area == b.area
    return (
        float(shared),
        float(np.log1p(two_hop)),
        float(same_area),
        float(same_area and bool(a.subarea) and a.subarea == b.subarea),
        cosine,
    )
