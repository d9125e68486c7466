"""Vocabularies: our own terms as an rdflib ``DefinedNamespace`` and the standard ones we reuse."""

from typing import Any

from rdflib import DCTERMS, FOAF, OWL, PROV, RDF, RDFS, SDO, SKOS, VOID, XSD, Graph, Namespace, URIRef
from rdflib.namespace import DefinedNamespace

BG_NAMESPACE = "https://w3id.org/bibgraph/ontology#"


class BG(DefinedNamespace):
    """Terms of the bibgraph ontology (``ontology/bibgraph.ttl`` defines and documents each one)."""

    _NS = Namespace(BG_NAMESPACE)
    _fail = True

    Authorship: URIRef  # one author's place on one paper
    SourceRecord: URIRef  # the record in an input file a paper was read from
    authorship: URIRef  # paper -> Authorship
    authorPosition: URIRef  # 1-based position in the author list
    nameAsWritten: URIRef  # the name exactly as this record wrote it
    authorList: URIRef  # the author names, in order, as one display literal
    listedAuthorCount: URIRef  # how many authors the record lists
    authorListTruncated: URIRef  # the list ended in 等 (more authors exist)
    authorListUnsplit: URIRef  # the author line had no separators: kept whole, no persons stated
    authorMarks: URIRef  # marks after a name as written (*, †, ✉...)
    equalContribution: URIRef  # the authorship carries an equal-contribution mark
    correspondingAuthor: URIRef  # the authorship carries a corresponding-author mark (✉)
    sourceFile: URIRef  # input file name
    sourceLine: URIRef  # 1-based line of the record in that file
    SharedName: URIRef  # a name several persons of the dataset share: the disambiguation resource
    nameOf: URIRef  # SharedName -> each Person holding it
    identityScore: URIRef  # how sure the identity step is that a person's authorships are one person
    curated: URIRef  # a curator's decision (people.curation) formed this person


SCHEMA = SDO

# Prefixes written in every dump and offered to SPARQL users; one table, used everywhere.
PREFIXES: dict[str, str] = {
    "bg": BG_NAMESPACE,
    "dcterms": str(DCTERMS),
    "foaf": str(FOAF),
    "owl": str(OWL),
    "prov": str(PROV),
    "rdf": str(RDF),
    "rdfs": str(RDFS),
    "schema": str(SDO),
    "skos": str(SKOS),
    "void": str(VOID),
    "xsd": str(XSD),
}


def sparql_prologue() -> str:
    """``PREFIX`` lines for every prefix in :data:`PREFIXES`."""
    return "".join(f"PREFIX {prefix}: <{iri}>\n" for prefix, iri in PREFIXES.items())


def prefixed_graph(**graph_args: Any) -> Graph:
    """An rdflib ``Graph`` (``graph_args`` as rdflib takes them) that writes the terms with :data:`PREFIXES`,
    so every graph the project serialises reads the same (``override``: ours win over rdflib's defaults)."""
    graph = Graph(**graph_args)
    for prefix, iri in PREFIXES.items():
        graph.bind(prefix, iri, override=True)
    return graph
