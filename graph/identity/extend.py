"""``add`` against the persons a dataset already has: which person a new authorship of a known name is.

A name whose IRI was retired (a form joined into another person: ``owl:sameAs``) is written under the
survivor. A name several persons share (``bg:SharedName``) goes to the holder whose co-authors the new paper
names most; with no co-author in common, to the holder with the most papers (the likeliest). Only the names
of the added records are looked up, so the cost follows what is added.
"""

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ..iris import Iris
from ..names import normalise, person_key
from ..queries import bind, integer, named_query
from ..records import Record
from ..stores.store import GraphStore


@dataclass
class _Known:
    survivor: str | None = None
    holders: list[tuple[str, int, frozenset[str]]] = field(default_factory=list)  # key, papers, co-author names


def resolver(store: GraphStore, iris: Iris, records: Iterable[Record]) -> Callable[[str, Record], str]:
    """The key each (name key, record) of the added records is written under."""
    keys = {person_key(name) for record in records for name in record.authors}
    known: dict[str, _Known] = {}
    nodes = [iris.person(key) for key in sorted(keys)]
    for start in range(0, len(nodes), 500):
        query = bind(named_query("added_name_persons").text, node=nodes[start : start + 500])
        for row in store.select(query):
            key = str(row["node"]).rsplit("/", 1)[1]
            entry = known.setdefault(key, _Known())
            if row.get("survivor"):
                entry.survivor = str(row["survivor"]).rsplit("/", 1)[1]
            elif row.get("holder"):
                names = frozenset(normalise(n) for n in str(row.get("conames") or "").split("\x1f") if n)
                entry.holders.append((str(row["holder"]).rsplit("/", 1)[1], integer(row["papers"]), names))

    def resolve(key: str, record: Record) -> str:
        entry = known.get(key)
        if entry is None:
            return key
        if entry.survivor is not None:
            return entry.survivor
        others = {normalise(name) for name in record.authors}
        ranked = sorted(entry.holders, key=lambda h: (-len(h[2] & others), -h[1], h[0]))
        return ranked[0][0] if ranked else key

    return resolve
