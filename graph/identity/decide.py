"""Which authorships are one person: the persons of the collected evidence, curated decisions applied."""

from collections.abc import Sequence

from bibgraph.graph.identity.cluster import METHOD
from bibgraph.graph.identity.curation import Applied, Curation
from bibgraph.graph.identity.features import Collected
from bibgraph.graph.identity.join import Persons, identify_collected
from bibgraph.graph.ingest.records import Record

__all__ = ["METHOD", "Collected", "Persons", "identify"]


def persons_of(collected: Collected, curation: Curation | None = None, applied: Applied | None = None) -> Persons:
    return identify_collected(collected, curation, applied)


def identify(records: Sequence[Record], curation: Curation | None = None) -> Persons:
    """The persons of ``records`` (each taken as a distinct paper), for tests and the bench."""
    collected = Collected()
    for record in records:
        where = (record.source, record.line)
        collected.add(record.authors, record.area or "", record.subarea or "", record.abstract, f"{where}", where)
    return persons_of(collected, curation)
