"""What crawlers are given: the resource pages of the graph, a chunk at a time, for sitemaps.

A sitemap file holds at most 50,000 URLs (sitemaps.org), so the resources are listed per kind in
chunks of that size, in the order the store lists them: the same on every request while the served
store is unchanged, so the chunks are disjoint. Not in IRI order: Oxigraph sorts IRIs by reading each
one's text (2.3 s for 10,000 papers on disk; 0.1 s unsorted), which at a million papers no request can wait for.
"""

from collections.abc import Iterator

from rdflib import FOAF, SKOS

from .queries import bind, named_query
from .stores.store import GraphStore
from .vocab import SCHEMA

SITEMAP_LIMIT = 50_000
# The kinds of resource that have a page, by the name used in sitemap URLs.
PAGE_CLASSES: dict[str, str] = {
    "papers": str(SCHEMA.ScholarlyArticle),
    "authors": str(FOAF.Person),
    "areas": str(SKOS.Concept),
}


def resource_counts(store: GraphStore) -> dict[str, int]:
    """How many resources of each page kind the store holds."""
    counts = {}
    for kind, iri in PAGE_CLASSES.items():
        rows = store.select(bind(named_query("sitemap_count").text, **{"class": iri}))
        counts[kind] = int(rows[0]["count"] or 0)
    return counts


def resources(store: GraphStore, kind: str, chunk: int) -> Iterator[str]:
    """IRIs of chunk ``chunk`` (0-based) of the resources of ``kind``."""
    query = bind(named_query("sitemap_resources").text, **{"class": PAGE_CLASSES[kind]})
    query += f"\nLIMIT {SITEMAP_LIMIT} OFFSET {SITEMAP_LIMIT * chunk}"
    for row in store.iter_select(query):
        yield str(row["resource"])
