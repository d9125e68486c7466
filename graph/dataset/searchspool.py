"""The search index's texts, written by a build's load as it writes their lines, read by the derive's index.

The derive read them back from the finished store by four SPARQL queries (``search_*.rq``): about 6 of the index's
18 CPU-s at 100,000 papers, 1.2 GB read, and 13 GB at a million. The load's child knows each text as it writes its
line (a new paper's abstract and label, a person's name and other spellings, a concept's label and its area's),
so it writes the rows those queries give (:data:`~bibgraph.graph.site.searchbuild.Document`, as a multiset) to a
spool in the version being built: JSON lines, streamed both ways, never held whole. The derive removes it once the
index is written (:func:`spooled`), and a version that fails is removed whole: no published version holds one.
An add asks its store (:func:`~bibgraph.graph.site.searchbuild.store_documents`): it writes no spool.
"""

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:  # numpy and the index's writer: a build's, not a served dataset's (sitedata imports this module)
    from bibgraph.graph.networks.incidence import Concept
    from bibgraph.graph.site.searchbuild import Document

SPOOL = "search-documents.jsonl"  # in a version being built, beside ``store/``; never published
# Every character but ASCII's printable ones escaped (a line each, whatever a text holds): 0.77 CPU-s for the 300,102
# rows of 100,000 papers (139 MB), 1.13 with UTF-8 written as it is
_ENCODE = json.JSONEncoder(separators=(",", ":")).encode


class DocumentSpool:
    """Rows as the four queries give them, one JSON array a line: an item's kind and title are stated here. Without
    ``out`` (a build that keeps no index, an add) nothing is written."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out

    def _write(self, row: "Document") -> None:
        if self.out is not None:
            self.out.write(_ENCODE(row) + "\n")

    def paper(self, iri: str, abstract: str, label: str) -> None:
        """A paper (``search_papers.rq``): its abstract, titled by its label."""
        self._write((iri, "paper", abstract, label))

    def person(self, iri: str, name: str, variants: Iterable[str]) -> None:
        """A person (``search_author_names.rq``, ``search_author_spellings.rq``): its name and each other spelling
        once (a store holds a triple once), titled by its name."""
        self._write((iri, "author", name, name))
        for variant in dict.fromkeys(variants):
            self._write((iri, "author", variant, name))

    def persons(self, names: Sequence[str], iris: Iterable[str], variants: Mapping[int, Iterable[str]]) -> None:
        """Every person (``names``, their ``iris`` in that order, ``variants`` by position)."""
        if self.out is not None:
            for index, (name, iri) in enumerate(zip(names, iris, strict=True)):
                self.person(iri, name, variants.get(index, ()))

    def concepts(self, concepts: "Iterable[Concept]") -> None:
        """Areas and subareas (``search_areas.rq``): a subarea is shown after its area."""
        for found in concepts:
            title = found.label if found.concept == found.area else f"{found.area_label} · {found.label}"
            self._write((found.concept, "area", found.label, title))


@contextmanager
def spooling(version: Path) -> Iterator[DocumentSpool]:
    """A spool written into ``version`` for the block."""
    with (version / SPOOL).open("w", encoding="utf-8", newline="\n") as out:
        yield DocumentSpool(out)


def documents(path: Path) -> "Iterator[Document]":
    """The rows of a spool, a line at a time."""
    with path.open(encoding="utf-8", newline="\n") as spooled:
        for line in spooled:
            iri, kind, text, title = json.loads(line)
            yield iri, kind, text, title


@contextmanager
def spooled(version: Path) -> "Iterator[Iterator[Document] | None]":
    """The rows ``version``'s load spooled (None: none was, the store is asked), the spool removed after the block
    whatever happens in it."""
    path = version / SPOOL
    try:
        yield documents(path) if path.exists() else None
    finally:
        path.unlink(missing_ok=True)
