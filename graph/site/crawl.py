"""What crawlers are given: the resource pages of the graph, a chunk at a time, for sitemaps.

A sitemap file may hold 50,000 URLs (sitemaps.org); bibgraph lists the resources per kind in chunks of
10,000, in the order the store lists them: the same on every request while the served
store is unchanged, so the chunks are disjoint. Not in IRI order: Oxigraph sorts IRIs by reading each
one's text (2.3 s for 10,000 papers on disk; 0.1 s unsorted), which at a million papers no request can wait for.
A chunk's OFFSET still walks every resource before it: on a 1M-paper disk store the last of 20 chunks of 50,000
took 2.3 s to list, the last of 100 chunks of 10,000 1.5 s (load 5 on 2 cores), so files stay under 3 s cold.
"""

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from rdflib import FOAF, SKOS

from bibgraph.graph.rdf.vocab import SCHEMA
from bibgraph.graph.site.roles import Roles, papers_window, window
from bibgraph.graph.sparql.queries import bind, named_query
from bibgraph.graph.stores.store import GraphStore

if TYPE_CHECKING:
    from bibgraph.graph.networks.incidence import Incidence

SITEMAP_LIMIT = 10_000  # URLs per sitemap file (see above; the protocol allows 50,000)
# The kinds of resource that have a page, by the name used in sitemap URLs.
PAGE_CLASSES: dict[str, str] = {
    "papers": str(SCHEMA.ScholarlyArticle),
    "authors": str(FOAF.Person),
    "areas": str(SKOS.Concept),
}


# Each kind's count in the dataset's summary (``dataset_summary.rq``: resources of the kind's class, each once).
SUMMARY_KEYS = {"papers": "papers", "authors": "authors", "areas": "concepts"}


def resource_counts(summary: Mapping[str, int]) -> dict[str, int]:
    """How many resources of each page kind the store holds, read from its summary (a dataset keeps it with the
    home page's figures): counting them for each sitemap took seconds cold at a million papers (two million
    persons)."""
    return {kind: int(summary[key]) for kind, key in SUMMARY_KEYS.items()}


def resources(store: GraphStore, kind: str, chunk: int) -> Iterator[str]:
    """IRIs of chunk ``chunk`` (0-based) of the resources of ``kind``."""
    query = bind(named_query("sitemap_resources").text, **{"class": PAGE_CLASSES[kind]})
    query += f"\nLIMIT {SITEMAP_LIMIT} OFFSET {SITEMAP_LIMIT * chunk}"
    for row in store.iter_select(query):
        yield str(row["resource"])


def kept_resources(
    incidence: "Incidence", kind: str, chunk: int, count: int, roles: Roles | None = None
) -> list[str] | None:
    """IRIs of chunk ``chunk`` of ``kind`` from a dataset's kept incidence (in IRI order), when it numbers all
    ``count`` of them (its authors are the store's named creators, its papers those with an author, and with the
    ``roles`` kept beside it every other paper too: a store with a person or paper beyond those is read instead);
    else None. At a million papers the last authors chunk's OFFSET walked 1.78 million persons in the store (2.2 s
    cold), the last papers chunk's 1.1-1.7 s."""
    start, stop = chunk * SITEMAP_LIMIT, min(count, (chunk + 1) * SITEMAP_LIMIT)
    if kind == "papers" and roles is not None and len(incidence.papers) + len(roles.others) == count:
        return papers_window(incidence, roles, start, stop)
    listed = {"authors": incidence.authors, "papers": incidence.papers}.get(kind)
    if listed is None or len(listed) != count:
        return None
    return window(listed, start, stop)
