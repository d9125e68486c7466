"""Named SPARQL queries, one ``.rq`` file each in ``queries/`` (as Scholia keeps one per panel).

A file starts with ``# title: ...``; the prologue of :data:`~bibgraph.graph.rdf.vocab.PREFIXES` is
prepended when it is loaded, so files stay short and agree on prefixes.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib.resources import files

import pyoxigraph as ox

from bibgraph.graph.rdf.ntriples import iri
from bibgraph.graph.rdf.vocab import sparql_prologue

_WHERE = re.compile(r"\bWHERE\s*\{", re.IGNORECASE)
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class NamedQuery:
    name: str
    title: str
    body: str  # without the prologue

    @property
    def text(self) -> str:
        return sparql_prologue() + self.body


Term = str | ox.NamedNode | ox.Literal  # a text is an IRI


def bind(query: str, **values: Term | Sequence[Term]) -> str:
    """``query`` with variables bound to values (one, or several: a row each) by a ``VALUES`` clause
    opening its first ``WHERE`` block, so the engine starts from them.

    The only way values enter a query: each is serialised by pyoxigraph (``ValueError`` for a text
    that is no IRI), so nothing a request holds can change the query's shape. It is plain SPARQL, so it
    works on every store, the remote ones too (pyoxigraph's ``substitutions=`` is local only).
    """
    where = _WHERE.search(query)
    if where is None:
        raise ValueError("the query has no WHERE block to bind values in")
    clauses = []
    for name, given in values.items():
        if not _VARIABLE.fullmatch(name):
            raise ValueError(f"not a SPARQL variable name: {name!r}")
        row = [given] if isinstance(given, str | ox.NamedNode | ox.Literal) else given
        terms = " ".join(iri(term) if isinstance(term, str) else str(term) for term in row)
        clauses.append(f" VALUES ?{name} {{ {terms} }}")
    return query[: where.end()] + "".join(clauses) + query[where.end() :]


def integer(value: object) -> int:
    """A count, position or line number from a query row (an ``xsd:integer`` arrives as ``int``); unbound is 0."""
    if value is None:
        return 0
    if isinstance(value, int | float | str):
        return int(value)
    raise TypeError(f"not a number in a query row: {value!r}")


@cache
def named_query(name: str) -> NamedQuery:
    raw = (files(__package__) / "queries" / f"{name}.rq").read_text(encoding="utf-8")
    first, _, body = raw.partition("\n")
    return NamedQuery(name, first.removeprefix("# title:").strip(), body)


# The query page's examples, each with the variable the page names a resource for (as Scholia's panels name an item):
# ?author the most prolific author of the largest area, ?concept a subarea of it. Naming one keeps every example
# to one resource's neighbourhood, under a second at 20,000 papers, where seeking it in the query grouped every creator.
EXAMPLES: dict[str, str | None] = {
    "ordered_authors": "author",
    "coauthors": "author",
    "papers_per_area": None,
    "top_authors": "concept",
    "abstract_search": None,
}


def examples(named: dict[str, str] | None = None) -> list[NamedQuery]:
    """The example queries of the query page, taken from the data model, with ``named`` (IRIs by variable) bound
    by :func:`bind`; an example whose variable is not named is left open (it then ranges over the whole graph)."""
    found = []
    for name, variable in EXAMPLES.items():
        query = named_query(name)
        if variable is not None and variable in (named or {}):
            query = NamedQuery(name, query.title, bind(query.body, **{variable: (named or {})[variable]}))
        found.append(query)
    return found
