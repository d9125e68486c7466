"""One table of formats for RDF, one for SPARQL results: names, media types, file suffixes.

Everything that picks a format (the CLI, the dump, the SPARQL endpoint and its service description,
the IRIs' content negotiation, the download pages) reads these tables by field name, so a format is added in
one place. The network exports' table lies beside their writers (:data:`bibgraph.graph.networks.exports.
NETWORK_SYNTAXES`) and is looked up by :func:`lookup` too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, TypeVar

from pyoxigraph import QueryResultsFormat, RdfFormat

W3C_FORMATS = "http://www.w3.org/ns/formats/"  # the W3C's IRIs of formats, for service descriptions


@dataclass(frozen=True)
class RdfSyntax:
    name: str
    media_type: str
    suffix: str
    oxigraph: RdfFormat
    label: str
    w3c: str  # its IRI under W3C_FORMATS (see :attr:`iri`)
    aliases: tuple[str, ...] = ()
    rdflib: str = ""  # rdflib's serializer name, for the small graphs rdflib serialises

    @property
    def iri(self) -> str:
        return W3C_FORMATS + self.w3c

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
    w3c: str
    aliases: tuple[str, ...] = ()

    @property
    def iri(self) -> str:
        return W3C_FORMATS + self.w3c


# Aliases: the names and media types clients use (SPARQLWrapper sends ``format=`` in its own words: json, xml,
# n3, turtle, rdf+xml, json-ld, csv, tsv). N3 is answered in Turtle, which every N3 reader reads; JSON for a
# graph is JSON-LD. Aliases with a slash are media types, matched against Accept too.
RDF_SYNTAXES: tuple[RdfSyntax, ...] = (
    RdfSyntax(
        "turtle",
        "text/turtle",
        "ttl",
        RdfFormat.TURTLE,
        "Turtle",
        "Turtle",
        ("application/x-turtle", "application/turtle", "ttl", "n3", "text/n3", "text/rdf+n3", "application/n3"),
    ),
    RdfSyntax(
        "nt", "application/n-triples", "nt", RdfFormat.N_TRIPLES, "N-Triples", "N-Triples", ("ntriples", "n-triples")
    ),
    RdfSyntax(
        "jsonld",
        "application/ld+json",
        "jsonld",
        RdfFormat.JSON_LD,
        "JSON-LD",
        "JSON-LD",
        ("json-ld", "json", "application/x-json+ld"),
        "json-ld",
    ),
    RdfSyntax(
        "xml",
        "application/rdf+xml",
        "rdf",
        RdfFormat.RDF_XML,
        "RDF/XML",
        "RDF_XML",
        ("rdfxml", "rdf", "rdf+xml"),
        "pretty-xml",
    ),
)

RESULT_SYNTAXES: tuple[ResultSyntax, ...] = (
    ResultSyntax(
        "json",
        "application/sparql-results+json",
        "srj",
        QueryResultsFormat.JSON,
        "JSON",
        "SPARQL_Results_JSON",
        ("application/json", "text/javascript", "application/javascript"),
    ),
    ResultSyntax(
        "xml",
        "application/sparql-results+xml",
        "srx",
        QueryResultsFormat.XML,
        "XML",
        "SPARQL_Results_XML",
        ("application/xml",),
    ),
    ResultSyntax("csv", "text/csv", "csv", QueryResultsFormat.CSV, "CSV", "SPARQL_Results_CSV"),
    ResultSyntax("tsv", "text/tab-separated-values", "tsv", QueryResultsFormat.TSV, "TSV", "SPARQL_Results_TSV"),
)

# Every format an endpoint answers in (its service description lists them): results, then graphs.
ANSWER_FORMAT_IRIS: tuple[str, ...] = tuple(s.iri for s in RESULT_SYNTAXES) + tuple(s.iri for s in RDF_SYNTAXES)


class Named(Protocol):
    """What a table's row is looked up by."""

    @property
    def name(self) -> str: ...
    @property
    def suffix(self) -> str: ...
    @property
    def media_type(self) -> str: ...
    @property
    def aliases(self) -> tuple[str, ...]: ...


Syntax = TypeVar("Syntax", bound=Named)


def lookup(name: str, table: tuple[Syntax, ...], what: str) -> Syntax:
    """The row of ``table`` that ``name`` names (its name, suffix, media type or an alias, in any case)."""
    key = name.lower()
    for syntax in table:
        if key in (syntax.name, syntax.suffix, syntax.media_type, *syntax.aliases):
            return syntax
    raise KeyError(f"unknown {what} {name!r}; use one of {', '.join(s.name for s in table)}")


def rdf_syntax(name: str) -> RdfSyntax:
    """Look an RDF syntax up by name, alias, suffix or media type."""
    return lookup(name, RDF_SYNTAXES, "RDF format")


def result_syntax(name: str) -> ResultSyntax:
    """Look a SPARQL results syntax up by name, suffix or media type."""
    return lookup(name, RESULT_SYNTAXES, "results format")
