"""What the records say about who wrote them, kept small, and the pairwise evidence read from it.

Per record the identity step keeps the author names, its area and subarea, and its abstract as the
indices of its hashed words (scikit-learn's ``HashingVectorizer``, a sparse matrix per batch): never the
abstract itself, so a build still holds no abstracts. Evidence between two authorships of one name:
co-authors they share, co-authors' co-authors they share (two hops), the same area and subarea, and the
TF-IDF cosine of their abstracts (``TfidfTransformer`` over the kept word indices).
"""

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse
from sklearn.feature_extraction.text import HashingVectorizer, TfidfTransformer

from bibgraph.graph.ingest.names import normalise

HASH_FEATURES = 1 << 20
_BATCH = 2048
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
    where: dict[tuple[str, int], int] = field(default_factory=dict)  # (file, line) -> record (for curation)
    terms: list[sparse.csr_matrix] = field(default_factory=list)  # one binary matrix per batch of records
    _pending: list[str] = field(default_factory=list)

    def add(
        self, authors: tuple[str, ...], area: str, subarea: str, abstract: str, paper: str, where: tuple[str, int]
    ) -> int:
        """Keep one record's evidence; its index."""
        self.where[where] = len(self.names)
        self.written.append(authors)
        self.names.append(tuple(normalise(name) for name in authors))
        self.concepts.append((normalise(area), normalise(subarea)))
        self.order.append(paper)
        self._pending.append(abstract)
        if len(self._pending) >= _BATCH:
            self._flush()
        return len(self.names) - 1

    def _flush(self) -> None:
        if self._pending:
            self.terms.append(_VECTORISER.transform(self._pending).tocsr())
            self._pending = []

    def term_matrix(self, rows: list[int]) -> sparse.csr_matrix:
        """TF-IDF rows (L2-normalised) of the given records, the IDF taken over every record."""
        self._flush()
        return _tfidf(self)[rows]

    def coauthors(self) -> dict[str, set[str]]:
        """Each name's co-author names over the whole dataset (the two-hop evidence reads it)."""
        found: dict[str, set[str]] = defaultdict(set)
        for names in self.names:
            for name in names:
                found[name].update(other for other in names if other != name)
        return found


def _tfidf(collected: Collected) -> sparse.csr_matrix:
    collected._flush()
    if not collected.terms:
        return sparse.csr_matrix((0, HASH_FEATURES), dtype=np.float32)
    counts = sparse.vstack(collected.terms, format="csr")
    return TfidfTransformer(sublinear_tf=True).fit_transform(counts).tocsr()


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
    record: int, position: int, collected: Collected, coauthors: dict[str, set[str]], vector: sparse.csr_matrix
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
