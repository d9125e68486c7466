"""One table of RDF and SPARQL-results formats: names, media types, file suffixes.

Everything that picks a format (the CLI, the dump, the SPARQL endpoint, the IRIs' content
negotiation) reads this table, so a format is added in one place.
"""

from dataclasses import dataclass
from typing import TypeVar

from pyoxigraph import QueryResultsFormat, RdfFormat


@dataclass(frozen=True)
class RdfSyntax:
    name: str
    media_type: str
    suffix: str
    oxigraph: RdfFormat
    label: str
    aliases: tuple[str, ...] = ()
    rdflib: str = ""  # rdflib's serializer name, for the small graphs rdflib serialises

    @property
    def rdflib_format(self) -> str:
        return self.rdflib or self.name


@dataclass(frozen=True)
class ResultSyntax:
    name: str
    media_type: str
    suffix: str
    oxigraph: QueryResultsFormat
    label: str
    aliases: tuple[str, ...] = ()


RDF_SYNTAXES: tuple[RdfSyntax, ...] = (
    RdfSyntax("turtle", "text/turtle", "ttl", RdfFormat.TURTLE, "Turtle", ("application/x-turtle", "ttl")),
    RdfSyntax("nt", "application/n-triples", "nt", RdfFormat.N_TRIPLES, "N-Triples", ("ntriples",)),
    RdfSyntax("jsonld", "application/ld+json", "jsonld", RdfFormat.JSON_LD, "JSON-LD", ("json-ld",), "json-ld"),
    RdfSyntax("xml", "application/rdf+xml", "rdf", RdfFormat.RDF_XML, "RDF/XML", ("rdfxml", "rdf"), "pretty-xml"),
)

RESULT_SYNTAXES: tuple[ResultSyntax, ...] = (
    ResultSyntax(
        "json", "application/sparql-results+json", "srj", QueryResultsFormat.JSON, "JSON", ("application/json",)
    ),
    ResultSyntax("xml", "application/sparql-results+xml", "srx", QueryResultsFormat.XML, "XML", ("application/xml",)),
    ResultSyntax("csv", "text/csv", "csv", QueryResultsFormat.CSV, "CSV"),
    ResultSyntax("tsv", "text/tab-separated-values", "tsv", QueryResultsFormat.TSV, "TSV"),
)


Syntax = TypeVar("Syntax", RdfSyntax, ResultSyntax)


def _lookup(name: str, table: tuple[Syntax, ...], what: str) -> Syntax:
    key = name.lower()
    for syntax in table:
        if key in (syntax.name, syntax.suffix, syntax.media_type, *syntax.aliases):
            return syntax
    raise KeyError(f"unknown {what} {name!r}; use one of {', '.join(s.name for s in table)}")


def rdf_syntax(name: str) -> RdfSyntax:
    """Look an RDF syntax up by name, alias, suffix or media type."""
    return _lookup(name, RDF_SYNTAXES, "RDF format")


def result_syntax(name: str) -> ResultSyntax:
    """Look a SPARQL results syntax up by name, suffix or media type."""
    return _lookup(name, RESULT_SYNTAXES, "results format")
