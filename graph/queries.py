"""Named SPARQL queries, one ``.rq`` file each in ``queries/`` (as Scholia keeps one per panel).

A file starts with ``# title: ...``; the prologue of :data:`~bibgraph.graph.vocab.PREFIXES` is
prepended when it is loaded, so files stay short and agree on prefixes.
"""

from dataclasses import dataclass
from functools import cache
from importlib.resources import files

from .vocab import sparql_prologue


@dataclass(frozen=True)
class NamedQuery:
    name: str
    title: str
    body: str  # without the prologue

    @property
    def text(self) -> str:
        return sparql_prologue() + self.body


@cache
def named_query(name: str) -> NamedQuery:
    raw = (files(__package__) / "queries" / f"{name}.rq").read_text(encoding="utf-8")
    first, _, body = raw.partition("\n")
    return NamedQuery(name, first.removeprefix("# title:").strip(), body)


EXAMPLE_NAMES = ("ordered_authors", "coauthors", "papers_per_area", "top_authors", "abstract_search")


def examples() -> list[NamedQuery]:
    """The example queries of the query page, taken from the data model."""
    return [named_query(name) for name in EXAMPLE_NAMES]
