"""What the pages show of identity: the persons of a shared name, the name a person shares, a retired IRI."""

from collections.abc import Callable
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


def holders(
    store: GraphStore,
    shared: str,
    top_coauthors: Callable[[str, int], list[str] | None] | None = None,
    kept_areas: Callable[[str], list[str] | None] | None = None,
) -> list[Holder]:
    """The persons of a shared name, most papers first, each with its areas and top co-authors: from
    ``kept_areas`` and ``top_coauthors`` (a dataset's kept incidence; None: the person is not in it) or else the
    store's (its whole co-author list of each, ``author_coauthors.rq``: 10 s at 1M papers for the most prolific)."""
    found = []
    for row in store.select(bind(named_query("shared_name_persons").text, shared=shared)):
        person = str(row["person"])
        found.append(Holder(person, str(row["name"]), integer(row["papers"]), []))
    known = {holder.iri: kept_areas(holder.iri) if kept_areas is not None else None for holder in found}
    areas: dict[str, list[str]] = {}
    if any(value is None for value in known.values()):
        for row in store.select(bind(named_query("shared_name_areas").text, shared=shared)):
            areas.setdefault(str(row["person"]), []).append(str(row["areaLabel"]))
    for holder in found:
        kept_ones = known[holder.iri]
        holder.areas = kept_ones if kept_ones is not None else sorted(areas.get(holder.iri, []))
    for holder in found:
        kept = top_coauthors(holder.iri, TOP_COAUTHORS) if top_coauthors is not None else None
        if kept is None:
            rows = store.select(bind(named_query("author_coauthors").text, author=holder.iri))
            kept = [str(row["name"]) for row in rows[:TOP_COAUTHORS]]
        holder.coauthors = kept
    return found
