"""Which authorships are one person: the persons of the collected evidence, curated decisions applied."""

from collections.abc import Sequence
from dataclasses import dataclass

from bibgraph.graph.identity.cluster import METHOD, Person, identify_collected
from bibgraph.graph.identity.curation import Applied, Curation
from bibgraph.graph.identity.features import Collected
from bibgraph.graph.ingest.records import Record

__all__ = ["METHOD", "Collected", "Person", "Persons", "identify"]


@dataclass
class Persons:
    """The persons found and, for each authorship, the index of its person."""

    persons: list[Person]
    of: dict[tuple[int, int], int]

    def person(self, record: int, position: int) -> str:
        return str(self.of[(record, position)])


def persons_of(collected: Collected, curation: Curation | None = None, applied: Applied | None = None) -> Persons:
    persons = identify_collected(collected, curation, applied)
    return Persons(persons, {m: i for i, p in enumerate(persons) for m in p.mentions})


def identify(records: Sequence[Record], curation: Curation | None = None) -> Persons:
    """The persons of ``records`` (each taken as a distinct paper), for tests and the bench."""
    collected = Collected()
    for record in records:
        where = (record.source, record.line)
        collected.add(record.authors, record.area or "", record.subarea or "", record.abstract, f"{where}", where)
    return persons_of(collected, curation)
