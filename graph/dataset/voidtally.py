"""The VoID statistics tallied as a build writes its lines, not counted by the engine over the filled store.

The engine's five scans cost a tenth of a build (146 CPU-s at a million papers) and a 1.4 GB hash set; a Python step
per line cost more still. Here a paper's lines are counted by their shape: the build knows what it writes, so a
record adds one to the count of its shape (authors, marks, subject...), whose predicates and classes are read once
from the first record of that shape. Distinct subjects and objects are 64-bit hashes of the terms' N-Triples text
(the writers give each term one text: canonical integers and booleans, one escaping; two terms of a million-paper
build share a hash with a chance of about 1 in 200,000), made distinct 131,072 at a time and kept in a file until
the end, so the load's peak (persons decided) holds none of them. The persons' and concepts' lines, written
elsewhere, are tallied a batch of lines at a time. :func:`~bibgraph.graph.dataset.void.engine_counts` stays the
reference the tests hold this to.
"""

import tempfile
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from itertools import compress, islice, repeat
from operator import itemgetter, methodcaller
from typing import IO

import numpy as np
from rdflib import RDF

from bibgraph.graph.arrays.sets import count_distinct, distinct
from bibgraph.graph.dataset.void import VoidCounts

_TYPE = f"<{RDF.type}>"
_CUT = itemgetter(slice(None, -3))  # a line's object: " .\n" cut
# Lines tallied together (and handed on as one text), and hashes held before they are made distinct and written out
# (1 MB): at 100k papers, 20,000 lines and 8 MB raised the load's peak by 70 MB, these by 29 MB (the heap's holes).
BATCH_LINES = 2_000
KEPT_HASHES = 1 << 17


class Distinct:
    """How many distinct values were added: hashes made distinct 131,072 at a time, written to a temporary
    file, and made distinct together at the end (one sort)."""

    def __init__(self) -> None:
        self.pending = array("q")
        self.spilled: IO[bytes] | None = None

    def extend(self, hashes: Iterable[int]) -> None:
        self.pending.extend(hashes)
        if len(self.pending) >= KEPT_HASHES:
            self._spill()

    def _spill(self) -> None:
        if self.spilled is None:
            self.spilled = tempfile.TemporaryFile()  # noqa: SIM115 (closed by ``count``)
        self.spilled.write(distinct(np.frombuffer(self.pending, dtype=np.int64)).tobytes())
        self.pending = array("q")

    def count(self) -> int:
        """The distinct values added (the file closed: call once)."""
        if self.spilled is None:
            return count_distinct(np.array(self.pending, dtype=np.int64))
        self._spill()
        self.spilled.seek(0)
        values = np.fromfile(self.spilled, dtype=np.int64)
        self.spilled.close()
        return count_distinct(values)  # sorted in place: the load's peak at a million papers is here


class VoidTally:
    """What a build's lines state, tallied as they are written: :meth:`counts` gives the VoID statistics of a store
    that holds those lines alone (each triple written once, as the build writes them)."""

    def __init__(self, base: str) -> None:
        self.base = f"<{base}"
        self.shapes: dict[tuple, tuple[Counter[str], Counter[str]]] = {}  # shape -> its predicates, its classes
        self.records: Counter[tuple] = Counter()  # shape -> records of that shape
        self.properties: Counter[str] = Counter()  # the lines tallied one by one (persons, concepts)
        self.classes: Counter[str] = Counter()
        self.subjects = Distinct()
        self.objects = Distinct()
        self.typed = Distinct()  # typed subjects under the base: the entities

    def record(
        self, shape: tuple, lines: Sequence[str], subjects: Sequence[str], typed: Sequence[str], objects: Sequence[str]
    ) -> None:
        """A record's ``lines``, all of them of ``shape`` (records of one shape have the same predicates and classes,
        as many times each); the terms of their subjects (``typed``: those with a type) and objects as written."""
        self.records[shape] += 1
        if shape not in self.shapes:
            parts = [line.split(" ", 2) for line in lines]
            self.shapes[shape] = (
                Counter(predicate for _, predicate, _ in parts),
                Counter(value[:-3] for _, predicate, value in parts if predicate == _TYPE),
            )
        self.subjects.extend(map(hash, subjects))
        self.typed.extend(hash(subject) for subject in typed if subject.startswith(self.base))
        self.objects.extend(map(hash, objects))

    def lines(self, lines: Iterable[str]) -> Iterator[str]:
        """``lines`` (one line each) tallied and handed on, a batch at a time as one text."""
        lines = iter(lines)
        while batch := list(islice(lines, BATCH_LINES)):
            self._count(batch)
            yield "".join(batch)

    def _count(self, batch: list[str]) -> None:
        """Each step over the whole batch in C (``map``, ``compress``): a Python step per line cost 8% more."""
        subjects, predicates, values = zip(*map(str.split, batch, repeat(" "), repeat(2)), strict=True)
        self.properties.update(predicates)
        self.subjects.extend(map(hash, subjects))
        objects = list(map(_CUT, values))
        self.objects.extend(map(hash, objects))
        types = list(map(_TYPE.__eq__, predicates))
        self.classes.update(compress(objects, types))
        self.typed.extend(map(hash, filter(methodcaller("startswith", self.base), compress(subjects, types))))

    def counts(self) -> VoidCounts:
        """The statistics of everything tallied (call once)."""
        properties = Counter(self.properties)
        classes = Counter(self.classes)
        for shape, records in self.records.items():
            predicates, types = self.shapes[shape]
            properties.update({term: count * records for term, count in predicates.items()})
            classes.update({term: count * records for term, count in types.items()})
        return VoidCounts(
            triples=sum(properties.values()),
            entities=self.typed.count(),
            subjects=self.subjects.count(),
            objects=self.objects.count(),
            classes={term[1:-1]: n for term, n in classes.items() if term.startswith("<")},
            properties={term[1:-1]: n for term, n in properties.items()},
        )
