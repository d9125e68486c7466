"""What the records say about who wrote them, kept small, and the pairwise evidence read from it.

Per record the identity step keeps the author names (each distinct string once), its area and subarea, and its
abstract as the indices of its hashed words (scikit-learn's ``HashingVectorizer``): never the abstract itself, so a
build still holds no abstracts. Only the indices are kept (the words' weights are all one) with each word's document
count: a record's TF-IDF row is made when asked for (:class:`Terms`), so the whole weighted matrix is never held
(at a million records, three copies of it were over a gigabyte). Evidence between two authorships of one name:
co-authors they share, co-authors' co-authors they share (two hops), the same area and subarea, and the
TF-IDF cosine of their abstracts (``TfidfTransformer`` over the kept word indices).
"""

from array import array
from bisect import bisect_left
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse
from sklearn.feature_extraction.text import HashingVectorizer
from sklearn.preprocessing import normalize

from bibgraph.graph.ingest.names import normalise

HASH_FEATURES = 1 << 20
_BATCH = 2048
_KEPT_COAUTHORS = 100_000  # names whose co-authors are kept once found
# No stop-word list: IDF weighs common words down anyway, and filtering them in Python doubled the hashing's cost.
_VECTORISER = HashingVectorizer(
    n_features=HASH_FEATURES, alternate_sign=False, norm=None, binary=True, dtype=np.float32
)


@dataclass
class Collected:
    """The records' identity evidence, in the order they were added (one entry per distinct paper)."""

    names: list[tuple[str, ...]] = field(default_factory=list)  # normalised author names
    written: list[tuple[str, ...]] = field(default_factory=list)  # cleaned names as the list gives them
    concepts: list[tuple[str, str]] = field(default_factory=list)  # (area, subarea) keys, "" when absent
    order: list[str] = field(default_factory=list)  # the paper id: what persons are numbered by
    where: "Places" = field(default_factory=lambda: Places())  # (file, line) -> record (for curation)
    words: list[np.ndarray] = field(default_factory=list)  # hashed word indices of each batch's records, end to end
    starts: list[np.ndarray] = field(default_factory=list)  # each batch's row starts into its ``words`` (CSR indptr)
    documents: np.ndarray = field(default_factory=lambda: np.zeros(HASH_FEATURES, dtype=np.int64))  # df per word
    _pending: list[str] = field(default_factory=list)
    _strings: dict[str, str] = field(default_factory=dict)  # one object per distinct name or concept

    def add(
        self, authors: tuple[str, ...], area: str, subarea: str, abstract: str, paper: str, where: tuple[str, int]
    ) -> int:
        """Keep one record's evidence; its index."""
        one = self._strings.setdefault
        self.where.add(where, len(self.names))
        self.written.append(tuple(one(name, name) for name in authors))
        self.names.append(tuple(one(key, key) for key in map(normalise, authors)))
        self.concepts.append((one(key := normalise(area), key), one(key := normalise(subarea), key)))
        self.order.append(paper)
        self._pending.append(abstract)
        if len(self._pending) >= _BATCH:
            self._flush()
        return len(self.names) - 1

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
        return Coauthors(self.names)


class Coauthors(Mapping[str, set[str]]):
    """Each name's co-author names, found when asked from integer arrays (records -> names, names -> records).

    A set per name of the dataset held as many strings again as the names themselves (1.6 KB a record); the
    two-hop evidence asks for the co-authors of the names in ambiguous blocks only. Answers are kept a while
    (a block's mentions share co-authors).
    """

    def __init__(self, names: Sequence[tuple[str, ...]]) -> None:
        ids: dict[str, int] = {}
        flat = np.fromiter((ids.setdefault(name, len(ids)) for row in names for name in row), dtype=np.int32)
        self.strings = list(ids)
        self.ids = ids
        self.starts = np.zeros(len(names) + 1, dtype=np.int64)
        np.cumsum(np.fromiter((len(row) for row in names), dtype=np.int64, count=len(names)), out=self.starts[1:])
        self.flat = flat
        by_name = np.argsort(flat, kind="stable")
        self.records_of = np.searchsorted(self.starts, by_name, side="right").astype(np.int32) - 1  # per authorship
        self.name_starts = np.zeros(len(ids) + 1, dtype=np.int64)
        np.cumsum(np.bincount(flat, minlength=len(ids)), out=self.name_starts[1:])
        self._kept: dict[str, set[str]] = {}

    def __getitem__(self, name: str) -> set[str]:
        found = self._kept.get(name)
        if found is not None:
            return found
        index = self.ids[name]
        records = np.unique(self.records_of[self.name_starts[index] : self.name_starts[index + 1]])
        others = np.unique(np.concatenate([self.flat[self.starts[r] : self.starts[r + 1]] for r in records]))
        found = {self.strings[other] for other in others.tolist() if other != index}
        if len(self._kept) >= _KEPT_COAUTHORS:
            self._kept.clear()
        self._kept[name] = found
        return found

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
