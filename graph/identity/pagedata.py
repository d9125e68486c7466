"""What the pages show of identity: the persons of a shared name, the name a person shares, a retired IRI."""

from dataclasses import dataclass, field

from bibgraph.graph.sparql.queries import bind, integer, named_query
from bibgraph.graph.stores.store import GraphStore

TOP_COAUTHORS = 3


@dataclass
class Holder:
    """One person holding a shared name, as its disambiguation page lists it."""

    iri: str
    name: str
    papers: int
    areas: list[str]
    coauthors: list[str] = field(default_factory=list)


@dataclass
class Identity:
    """For one IRI: the shared name it holds (``None`` when its name is its own) or the person it now is."""

    shared: str | None = None
    survivor: str | None = None


def identity_of(store: GraphStore, iri: str) -> Identity:
    found = Identity()
    for row in store.select(bind(named_query("person_shared_name").text, person=iri)):
        found.shared = found.shared or (str(row["shared"]) if row.get("shared") else None)
        found.survivor = found.survivor or (str(row["survivor"]) if row.get("survivor") else None)
    return found


def holders(store: GraphStore, shared: str) -> list[Holder]:
    """The persons of a shared name, most papers first, each with its areas and top co-authors."""
    found = []
    for row in store.select(bind(named_query("shared_name_persons").text, shared=shared)):
        areas = sorted(a for a in str(row.get("areas") or "").split("\x1f") if a)
        found.append(Holder(str(row["person"]), str(row["name"]), integer(row["papers"]), areas))
    for holder in found:
        rows = store.select(bind(named_query("author_coauthors").text, author=holder.iri))
        holder.coauthors = [str(row["name"]) for row in rows[:TOP_COAUTHORS]]
    return found
