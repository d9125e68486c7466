"""The persons identity found, held as integer arrays: authorships numbered in reading order (record by record,
``starts[record] + position``), each person a run of one array, ``of`` an array indexed by authorship: a
person object each cost more than the arrays hold at a million papers."""

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from bibgraph.graph.identity.features import Coauthors, Collected


@dataclass
class Authorships:
    """The records' authorships numbered in reading order, each with its normalised name's id."""

    collected: Collected
    names: Coauthors  # ids of the normalised names, the authorships' name ids (``flat``), record starts

    @cached_property
    def record(self) -> np.ndarray:
        lengths = np.diff(self.names.starts)
        return np.repeat(np.arange(len(lengths), dtype=np.int32), lengths)

    @cached_property
    def reading(self) -> np.ndarray:
        """Each authorship's place when sorted by its paper id (what persons are numbered by), then position."""
        order = self.collected.order
        rank = np.empty(len(order), dtype=np.int64)
        rank[np.array(sorted(range(len(order)), key=order.__getitem__), dtype=np.int64)] = np.arange(len(order))
        record = self.record
        position = np.arange(len(record), dtype=np.int64) - self.names.starts[record]
        width = int(position.max()) + 1 if len(position) else 1
        return rank[record] * width + position

    def mention(self, authorship: int) -> tuple[int, int]:
        record = int(self.record[authorship])
        return record, authorship - int(self.names.starts[record])

    def written(self, authorship: int) -> str:
        return self.collected.written.entry(authorship)


def written_forms(authorships: Authorships, members: np.ndarray, chunk: int = 1 << 16) -> Iterator[str]:
    """The written form of each authorship of ``members``, in that order (numpy to lists a chunk at a time)."""
    entry = authorships.collected.written.entry
    for start in range(0, len(members), chunk):
        yield from map(entry, members[start : start + chunk].tolist())


class Persons:
    """The persons found: each a run of ``members`` (its authorships in reading order), its name, variants and
    how it was formed as arrays; ``of`` maps an authorship ``(record, position)`` to its person's index."""

    def __init__(
        self,
        authorships: Authorships,
        members: np.ndarray,
        bounds: np.ndarray,
        names: list[str],
        variants: dict[int, tuple[str, ...]],
        scores: np.ndarray,
        split: np.ndarray,
        joined: np.ndarray,
        curated: np.ndarray,
        of: np.ndarray,
    ) -> None:
        # the record of each authorship and each record's first one, not the name ids: those hold a dict of every
        # name and co-author sets kept while deciding, which the writing of the persons does not read
        self.record, self.starts = authorships.record, authorships.names.starts
        self.members, self.bounds = members, bounds
        self.names, self.variants = names, variants
        self.scores, self.split, self.joined, self.curated = scores, split, joined, curated
        self.of = Of(authorships.names.starts, of)

    def person(self, record: int, position: int) -> str:
        return str(self.of[(record, position)])

    def mentions(self, index: int) -> list[tuple[int, int]]:
        run = self.members[self.bounds[index] : self.bounds[index + 1]]
        records = self.record[run]
        positions = run - self.starts[records]
        return list(zip(records.tolist(), positions.tolist(), strict=True))


class Of(Mapping[tuple[int, int], int]):
    """Authorship ``(record, position)`` -> person index, over an array indexed by authorship."""

    def __init__(self, starts: np.ndarray, array: np.ndarray) -> None:
        self.starts, self.array = starts, array

    def __getitem__(self, mention: tuple[int, int]) -> int:
        record, position = mention
        if not 0 <= position < self.starts[record + 1] - self.starts[record]:
            raise KeyError(mention)
        return int(self.array[self.starts[record] + position])

    def row(self, record: int) -> list[int]:
        """The persons of a record's authorships, in order."""
        return self.array[self.starts[record] : self.starts[record + 1]].tolist()

    def __iter__(self) -> Iterator[tuple[int, int]]:
        for record in range(len(self.starts) - 1):
            yield from ((record, p) for p in range(int(self.starts[record + 1] - self.starts[record])))

    def __len__(self) -> int:
        return len(self.array)
