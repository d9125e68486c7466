"""The paper-author incidence of the whole graph as compact arrays: the one representation every network is made from.

A view draws a capped number of authors, but the whole-network networkx objects it could be cut
from (the paper-author bipartite graph, the co-author network) cost about a kilobyte per node and
edge: at a million papers they do not fit. The store's authorship triples are read once
(:func:`incidence_of`, streamed, the same queries for an embedded and a remote store) into integer arrays
(a few bytes per authorship: tens of MB at a million papers); :mod:`.coauthor`, :mod:`.topic` and :mod:`.ego`
answer each view from them with vectorised passes plus work bounded by what is drawn.

Authors and papers are numbered in IRI order, so every result is the same whatever order a store
lists its rows in.
"""

import bisect
from array import array
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, fields
from itertools import pairwise
from typing import Any

import numpy as np
import pyoxigraph as ox

from bibgraph.graph.arrays.sets import distinct
from bibgraph.graph.networks.filters import Filters
from bibgraph.graph.rdf.vocab import BG, DCTERMS, FOAF
from bibgraph.graph.sparql.queries import named_query
from bibgraph.graph.stores.store import GraphStore


class Strings(Sequence[str]):
    """Many strings in one UTF-8 buffer with offsets: ~1 byte per character instead of ~60 bytes per object.

    The prefix they all share (an IRI's base and kind: ~29 bytes of each at a million papers) is held once."""

    prefix = ""  # a value kept before prefixes were held apart has none

    def __init__(self, blob: np.ndarray, offsets: np.ndarray, prefix: str = "") -> None:
        self.blob = blob
        self.offsets = offsets
        self.prefix = prefix

    @classmethod
    def of(cls, strings: Iterable[str]) -> "Strings":
        return cls.joined("", list(strings))

    @classmethod
    def joined(cls, head: str, tails: Sequence[str]) -> "Strings":
        """The strings ``head + tail``, one of each of ``tails``, as :meth:`of` holds them, none of them made (a
        build's IRIs from its ids and keys). Encoded into one growing buffer, not a bytes object each joined at the
        end: at a million authors those were ~300 MB at once, at the build's peak."""
        shared = shared_prefix(tails)
        cut, blob, ends = len(shared), bytearray(), array("q", [0])
        for tail in tails:
            blob += tail[cut:].encode("utf-8")
            ends.append(len(blob))
        offsets = np.frombuffer(ends, dtype=np.int64).copy()
        return cls(np.frombuffer(blob, dtype=np.uint8), offsets, head + shared if tails else "")

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, index: int) -> str:  # type: ignore[override]
        return self.prefix + self.blob[self.offsets[index] : self.offsets[index + 1]].tobytes().decode("utf-8")

    def __iter__(self) -> Iterator[str]:
        for index in range(len(self)):
            yield self[index]

    def take(self, indices: np.ndarray) -> list[str]:
        """The strings at ``indices``, their bytes gathered and decoded at once (an item at a time cost ~2-5 us
        each: the most prolific author at a million papers names 13,342 co-authors)."""
        starts, ends = self.offsets[indices], self.offsets[indices + 1]
        data = self.blob[ranges(starts, ends - starts)].tobytes()
        bounds = np.concatenate(([0], np.cumsum(ends - starts))).tolist()
        prefix = self.prefix
        return [prefix + data[a:b].decode("utf-8") for a, b in pairwise(bounds)]

    def find(self, text: str) -> int | None:
        """The index of ``text`` in these strings, which must be sorted (binary search), or None."""
        index = bisect.bisect_left(self, text)
        return index if index < len(self) and self[index] == text else None


def shared_prefix(texts: Sequence[str]) -> str:
    """The longest prefix of every text: that of the least and the greatest, which share the least."""
    if not texts:
        return ""
    least, greatest = min(texts), max(texts)
    size = next(
        (i for i, (a, b) in enumerate(zip(least, greatest, strict=False)) if a != b), min(len(least), len(greatest))
    )
    return least[:size]


@dataclass(frozen=True)
class Concept:
    concept: str
    label: str
    area: str
    area_label: str


def concept_order(concept: Concept) -> tuple[str, str, str, str]:
    """Where a concept's entry comes in an incidence: by IRI, then area, then labels (a concept with two labels or
    areas has an entry each: one order whatever order the store lists them in)."""
    return concept.concept, concept.area, concept.label, concept.area_label


@dataclass
class Incidence:
    """Papers, authors and subjects as arrays; ``ap_*`` are the (paper, author) pairs sorted by paper,
    ``author_papers`` the same pairs' papers sorted by author, ``pc_*`` the (paper, concept) pairs by paper."""

    authors: Strings  # author IRIs, sorted
    names: Strings  # each author's name
    papers: Strings  # paper IRIs, sorted
    truncated: np.ndarray  # bool per paper: its author list was cut
    ap_paper: np.ndarray
    ap_author: np.ndarray
    paper_ptr: np.ndarray  # the authors of paper p are ap_author[paper_ptr[p]:paper_ptr[p + 1]]
    author_ptr: np.ndarray  # the papers of author a are author_papers[author_ptr[a]:author_ptr[a + 1]]
    author_papers: np.ndarray
    pc_paper: np.ndarray
    pc_concept: np.ndarray
    concepts: list[Concept]

    # --- scope -------------------------------------------------------------------------------------

    def concepts_in(self, filters: Filters) -> np.ndarray:
        """Bool per concept: under the area and subarea of ``filters`` (every concept when there is none)."""
        return np.array(
            [
                (not filters.subarea or c.concept == filters.subarea) and (not filters.area or c.area == filters.area)
                for c in self.concepts
            ],
            dtype=bool,
        )

    def scope(self, filters: Filters) -> np.ndarray | None:
        """Bool per paper: under the area/subarea of ``filters``; None when every paper is (no such filter)."""
        if not (filters.area or filters.subarea):
            return None
        inside = np.zeros(len(self.papers), dtype=bool)
        matched = self.concepts_in(filters)
        if len(matched):
            inside[self.pc_paper[matched[self.pc_concept]]] = True
        return inside

    def paper_counts(self, inside: np.ndarray | None) -> np.ndarray:
        """Papers of every author under the scope ``inside``."""
        authors = self.ap_author if inside is None else self.ap_author[inside[self.ap_paper]]
        return np.bincount(authors, minlength=len(self.authors))

    def author_id(self, iri: str) -> int | None:
        return self.authors.find(iri)

    def papers_of(self, authors: np.ndarray) -> np.ndarray:
        """The papers of each of ``authors`` (numbers), laid end to end in that order: one row per (author, paper),
        so a paper two of them wrote is there twice (a profile, a paper page's close papers, the authors' counts)."""
        starts = self.author_ptr[authors]
        return self.author_papers[ranges(starts, self.author_ptr[authors + 1] - starts)]


def incidence_of(store: GraphStore) -> Incidence:
    """The incidence of ``store``'s papers and authors, read in streamed passes (no row list is kept).

    Each part is one triple pattern (``incidence_*.rq``), joined here by IRI: on a large store a query
    joining them all costs ~20x more per row (0.57 ms vs 14-48 us a row at a million papers).
    An author without a name is left out, and so is a paper left without authors.
    """
    reader = _Reader()
    reader.read(store, store)
    return reader.incidence()


# The predicates the ``incidence_*.rq`` patterns read from the data (concepts' labels are read from the whole store):
# an add keeps only the added triples with these, for :func:`~.incidencemerge.merged`.
READ_PREDICATES = frozenset(str(term) for term in (DCTERMS.creator, DCTERMS.subject, FOAF.name, BG.authorListTruncated))


def ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The indices ``starts[i] .. starts[i] + lengths[i] - 1`` of every ``i``, laid end to end: the rows of many
    slices of one of the incidence's arrays (a paper's authors, an author's papers) in one gather."""
    return np.arange(lengths.sum()) + np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)


def incidence_part(quads: Iterable[ox.Quad]) -> list[ox.Quad]:
    """The triples among ``quads`` that :func:`~.incidencemerge.merged` reads."""
    return [quad for quad in quads if quad.predicate.value in READ_PREDICATES]


class _Reader:
    """Papers, authors and their pairs as they are read, numbered in the order first seen."""

    def __init__(self) -> None:
        self.paper_ids: dict[str, int] = {}
        self.author_ids: dict[str, int] = {}
        self.names: list[str | None] = []
        self.truncated: set[int] = set()
        self.concept_ids: dict[Concept, int] = {}
        self.ap = array("q")  # (paper, author) numbers laid flat: 8 bytes each, not a Python int object
        self.pc = array("q")

    def read(self, store: GraphStore, labels: GraphStore) -> None:
        """Add the papers of ``store``; concepts are labelled from ``labels``."""
        paper_ids, author_ids, names, ap = self.paper_ids, self.author_ids, self.names, self.ap
        for row in named_rows(store, "incidence_creators"):
            ap.append(paper_ids.setdefault(str(row["paper"]), len(paper_ids)))
            ap.append(author_ids.setdefault(str(row["author"]), len(author_ids)))
        names += [None] * (len(author_ids) - len(names))
        for row in named_rows(store, "incidence_names"):
            a = author_ids.get(str(row["author"]))
            if a is not None and names[a] is None:
                names[a] = str(row["name"])
        for row in named_rows(store, "incidence_truncated"):
            p = paper_ids.get(str(row["paper"]))
            if p is not None:
                self.truncated.add(p)
        labelled: defaultdict[str, list[Concept]] = defaultdict(list)
        for row in named_rows(labels, "incidence_concepts"):
            concept = str(row["concept"])
            labelled[concept].append(
                Concept(concept, str(row["conceptLabel"]), str(row["area"]), str(row["areaLabel"]))
            )
        for row in named_rows(store, "incidence_subjects"):
            p = paper_ids.get(str(row["paper"]))
            if p is None:
                continue
            for subject in labelled.get(str(row["concept"]), ()):
                self.pc.append(p)
                self.pc.append(self.concept_ids.setdefault(subject, len(self.concept_ids)))

    def incidence(self) -> Incidence:
        truncated = np.zeros(len(self.paper_ids), dtype=bool)
        truncated[sorted(self.truncated)] = True
        return _arrays(self.author_ids, self.names, self.paper_ids, truncated, self.concept_ids, self.ap, self.pc)


def named_rows(store: GraphStore, name: str) -> Iterator[dict]:
    return store.iter_select(named_query(name).text)


def _renumbered(ids: dict[str, int], used: np.ndarray) -> tuple[list[str], np.ndarray]:
    """The keys of ``ids`` whose number is ``used``, sorted, and each old number's new one (-1 when unused)."""
    keys = sorted(key for key, number in ids.items() if used[number])
    new = np.full(len(ids), -1, dtype=np.int64)
    new[[ids[key] for key in keys]] = np.arange(len(keys), dtype=np.int64)
    return keys, new


def _pairs(values: np.ndarray, first: np.ndarray, second: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct (first, second) rows of ``values``, renumbered, sorted by first then second."""
    return distinct_pairs(first[values[:, 0]], second[values[:, 1]], width)


def distinct_pairs(first: np.ndarray, second: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct pairs (``first[i]``, ``second[i]``), sorted by first then second (``width``: above any second)."""
    keys = distinct(first * width + second)
    return (keys // width).astype(np.int32), (keys % width).astype(np.int32)


def _arrays(
    author_ids: dict[str, int],
    names: list[str | None],
    paper_ids: dict[str, int],
    truncated: np.ndarray,
    concept_ids: dict[Concept, int],
    ap: array,
    pc: array,
) -> Incidence:
    """The incidence of numbered rows; ``author_ids`` and ``paper_ids`` are consumed (left empty)."""
    named = np.array([name is not None for name in names], dtype=bool)
    pairs = np.frombuffer(ap, dtype=np.int64).reshape(-1, 2)
    pairs = pairs[named[pairs[:, 1]]]
    used_papers = np.zeros(len(paper_ids), dtype=bool)
    used_papers[pairs[:, 0]] = True
    authors, author_new = _renumbered(author_ids, named)
    papers, paper_new = _renumbered(paper_ids, used_papers)
    author_ids.clear()  # consumed: at a million papers these dicts are ~0.6 GB, and the arrays are built next
    paper_ids.clear()
    subjects = np.frombuffer(pc, dtype=np.int64).reshape(-1, 2)
    subjects = subjects[used_papers[subjects[:, 0]]]
    used_concepts = np.zeros(len(concept_ids), dtype=bool)
    used_concepts[subjects[:, 1]] = True  # a concept only of papers left out is left out too
    concepts = sorted((c for c, number in concept_ids.items() if used_concepts[number]), key=concept_order)
    concept_new = np.full(len(concept_ids), -1, dtype=np.int64)
    concept_new[[concept_ids[c] for c in concepts]] = np.arange(len(concepts), dtype=np.int64)
    order = np.argsort(author_new[named])  # the named authors' old numbers, in new order
    kept_names = [name for name in names if name is not None]
    flags = np.zeros(len(papers), dtype=bool)
    flags[paper_new[used_papers]] = truncated[used_papers]
    return assembled(
        Strings.of(authors),
        Strings.of(kept_names[i] for i in order),
        Strings.of(papers),
        flags,
        _pairs(pairs, paper_new, author_new, max(len(authors), 1)),
        _pairs(subjects, paper_new, concept_new, max(len(concepts), 1)),
        concepts,
    )


def assembled(
    authors: Strings,
    names: Strings,
    papers: Strings,
    truncated: np.ndarray,
    authorships: tuple[np.ndarray, np.ndarray],
    subjects: tuple[np.ndarray, np.ndarray],
    concepts: list[Concept],
) -> Incidence:
    """The incidence of numbered, sorted, distinct pairs (``authorships``: papers and authors, ``subjects``: papers
    and concepts, each by paper then by the other), read from a store or made by a build's pass
    (:mod:`.incidencebuild`): its pointers and by-author order made here, the same for both."""
    ap_paper, ap_author = authorships
    by_author = np.lexsort((ap_paper, ap_author))
    return Incidence(
        authors=authors,
        names=names,
        papers=papers,
        truncated=truncated,
        ap_paper=ap_paper,
        ap_author=ap_author,
        paper_ptr=np.searchsorted(ap_paper, np.arange(len(papers) + 1)).astype(np.int64),
        author_ptr=np.searchsorted(ap_author[by_author], np.arange(len(authors) + 1)).astype(np.int64),
        author_papers=ap_paper[by_author],
        pc_paper=subjects[0],
        pc_concept=subjects[1],
        concepts=concepts,
    )


def to_arrays(incidence: Incidence) -> dict[str, np.ndarray]:
    """``incidence`` as named arrays of numbers and text, for ``numpy.savez`` (data only: read back running nothing)."""
    arrays = {name: value for name, value in vars(incidence).items() if isinstance(value, np.ndarray)}
    for name in ("authors", "names", "papers"):
        strings: Strings = getattr(incidence, name)
        arrays |= {f"{name}_blob": strings.blob, f"{name}_offsets": strings.offsets}
        arrays[f"{name}_prefix"] = np.array(strings.prefix)
    fields = [[c.concept, c.label, c.area, c.area_label] for c in incidence.concepts]
    arrays["concepts"] = np.array(fields, dtype=str).reshape(len(fields), 4)
    return arrays


def of_arrays(arrays: Any) -> Incidence:
    """The incidence :func:`to_arrays` gave (``arrays``: a mapping of names to arrays, as ``numpy.load`` reads)."""

    def strings(name: str) -> Strings:
        return Strings(arrays[f"{name}_blob"], arrays[f"{name}_offsets"], str(arrays[f"{name}_prefix"]))

    numbers = {f.name: arrays[f.name] for f in fields(Incidence) if f.name not in ("authors", "names", "papers")}
    numbers.pop("concepts")
    concepts = [Concept(*map(str, row)) for row in arrays["concepts"].tolist()]
    return Incidence(
        authors=strings("authors"), names=strings("names"), papers=strings("papers"), concepts=concepts, **numbers
    )
