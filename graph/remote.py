"""A remote SPARQL 1.1 server (Virtuoso, QLever, GraphDB, Fuseki...) as a :class:`GraphStore`.

bibgraph then stays the front end (pages, networks, the guarded endpoint) of a store that has
outgrown one machine. Queries are sent with the SPARQL 1.1 Protocol (POST, form-encoded).
"""

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import BinaryIO

from rdflib import Graph

from .formats import RDF_SYNTAXES, RdfSyntax, rdf_syntax, result_syntax
from .store import _FLOAT_TYPES, _INTEGER_TYPES, _XSD, Answer, GraphStore, QueryError, Row, Value
from .vocab import PREFIXES


def _value(binding: dict[str, str] | None) -> Value:
    if binding is None:
        return None
    datatype = binding.get("datatype", "")
    value = binding["value"]
    if datatype in _INTEGER_TYPES:
        return int(value)
    if datatype in _FLOAT_TYPES:
        return float(value)
    if datatype == f"{_XSD}boolean":
        return value in ("true", "1")
    return value


class RemoteGraphStore(GraphStore):
    """Sends every query to ``endpoint``; read-only from bibgraph's side."""

    kind = "sparql"

    def __init__(self, endpoint: str, timeout: float = 60.0) -> None:
        if not endpoint.startswith(("http://", "https://")):
            raise ValueError(f"remote store needs an http(s) SPARQL endpoint URL, not {endpoint!r}")
        self.endpoint = endpoint
        self.timeout = timeout

    def _post(self, query: str, accept: str) -> tuple[bytes, str]:
        data = urllib.parse.urlencode({"query": query}).encode()
        request = urllib.request.Request(
            self.endpoint,
            data=data,
            headers={"Accept": accept, "Content-Type": "application/x-www-form-urlencoded"},
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return response.read(), response.headers.get_content_type()
        except urllib.error.HTTPError as error:
            message = error.read().decode("utf-8", "replace").strip()
            if 400 <= error.code < 500:
                raise QueryError(message or str(error)) from error
            raise OSError(f"remote SPARQL store answered {error.code}: {message[:500]}") from error

    def select(self, query: str) -> list[Row]:
        body, _ = self._post(query, "application/sparql-results+json")
        results = json.loads(body)
        names = results["head"]["vars"]
        return [{name: _value(binding.get(name)) for name in names} for binding in results["results"]["bindings"]]

    def ask(self, query: str) -> bool:
        body, _ = self._post(query, "application/sparql-results+json")
        return bool(json.loads(body)["boolean"])

    def answer(self, query: str, results: str, graphs: str) -> Answer:
        result_format, graph_format = result_syntax(results), rdf_syntax(graphs)
        body, media_type = self._post(query, f"{result_format.media_type}, {graph_format.media_type};q=0.9")
        form = "graph" if media_type in {s.media_type for s in RDF_SYNTAXES} else "select"
        return Answer(form, body, media_type)

    def construct(self, query: str) -> Graph:
        body, media_type = self._post(query, "application/n-triples, text/turtle;q=0.9")
        graph = Graph()
        for prefix, iri in PREFIXES.items():
            graph.bind(prefix, iri, override=True)
        graph.parse(data=body, format="nt" if media_type == "application/n-triples" else "turtle")
        return graph

    def dump(self, out: BinaryIO, syntax: RdfSyntax) -> None:
        graph = self.construct("CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }")
        out.write(
            graph.serialize(
                format={"nt": "nt", "jsonld": "json-ld", "xml": "xml"}.get(syntax.name, "turtle"), encoding="utf-8"
            )
        )
