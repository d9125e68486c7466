"""The query page: YASGUI over this endpoint, and what a browser gets when it opens ``/sparql?query=…``
(the query in the editor, its answer as a table under it). SPARQL clients never see this page: it is chosen
only for a GET whose ``Accept`` prefers HTML (:func:`bibgraph.web.errors.prefers_html`) and names no ``format``.
"""

import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from flask import Response, render_template, url_for
from pyoxigraph import BlankNode, Literal, NamedNode, RdfFormat, parse

from bibgraph.graph.rdf.vocab import PREFIXES
from bibgraph.graph.sparql.queries import examples
from bibgraph.graph.stores.store import Answer
from bibgraph.web.links import app_iris, content_security_policy, public_root, site_url
from bibgraph.web.pages import concept_figures

SHOWN_ROWS = 500  # rows drawn in the page; the rest are in the downloads the page links to


@dataclass(frozen=True)
class Cell:
    text: str
    href: str | None = None
    note: str = ""  # a literal's language or datatype, shortened


@dataclass
class Table:
    head: list[str]
    rows: list[list[Cell | None]] = field(default_factory=list)
    total: int = 0
    boolean: bool | None = None  # an ASK's answer


def shown_prefixes() -> dict[str, str]:
    """Prefixes the query page shortens result IRIs with: the graph's own, and one per kind of minted IRI."""
    return {**PREFIXES, **app_iris().kinds()}


def _short(iri: str, prefixes: dict[str, str]) -> str:
    best = max((ns for ns in prefixes.values() if iri.startswith(ns)), key=len, default=None)
    if best is None:
        return iri
    name = next(prefix for prefix, ns in prefixes.items() if ns == best)
    return f"{name}:{iri[len(best) :]}"


def _iri_cell(iri: str, prefixes: dict[str, str]) -> Cell:
    local = site_url(iri)
    href = local or (iri if iri.startswith(("http://", "https://")) else None)
    return Cell(_short(iri, prefixes), href)


def _json_cell(binding: dict[str, str] | None, prefixes: dict[str, str]) -> Cell | None:
    if binding is None:
        return None
    if binding["type"] == "uri":
        return _iri_cell(binding["value"], prefixes)
    if binding["type"] == "bnode":
        return Cell("_:" + binding["value"])
    note = "@" + binding["xml:lang"] if "xml:lang" in binding else ""
    if "datatype" in binding and not binding["datatype"].endswith("#string"):
        note = _short(binding["datatype"], prefixes)
    return Cell(binding["value"], note=note)


def _term_cell(term: Any, prefixes: dict[str, str]) -> Cell:
    if isinstance(term, NamedNode):
        return _iri_cell(term.value, prefixes)
    if isinstance(term, BlankNode):
        return Cell("_:" + term.value)
    if isinstance(term, Literal):
        note = "@" + term.language if term.language else ""
        if not note and not term.datatype.value.endswith("#string"):
            note = _short(term.datatype.value, prefixes)
        return Cell(term.value, note=note)
    return Cell(str(term))


def table(answer: Answer) -> Table:
    """The answer (SELECT or ASK as SPARQL JSON results, a graph as N-Triples) as rows of cells."""
    prefixes = shown_prefixes()
    with answer.open() as raw:
        if answer.form == "graph":
            result = Table(["subject", "predicate", "object"])
            for triple in parse(raw, RdfFormat.N_TRIPLES):
                result.total += 1
                if len(result.rows) < SHOWN_ROWS:
                    result.rows.append(
                        [_term_cell(t, prefixes) for t in (triple.subject, triple.predicate, triple.object)]
                    )
            return result
        data = json.load(raw)
    if "boolean" in data:
        return Table([], boolean=bool(data["boolean"]))
    head = list(data["head"].get("vars", []))
    bindings = data["results"]["bindings"]
    rows = [[_json_cell(row.get(name), prefixes) for name in head] for row in bindings[:SHOWN_ROWS]]
    return Table(head, rows, len(bindings))


def named_in_examples() -> dict[str, str]:
    """The resources the examples name: the largest area's most prolific author and its smallest subarea (the area
    itself when it has none), from the concepts' figures a dataset keeps; none when the graph has no areas."""
    areas = [figures for figures in concept_figures().values() if figures.broader is None and figures.papers]
    if not areas:
        return {}
    area = max(areas, key=lambda figures: (figures.papers, figures.iri))
    subareas = [(papers, iri) for iri, _, papers in area.subareas if papers]
    named = {"concept": min(subareas)[1] if subareas else area.iri}
    return named | ({"author": area.top_authors[0][0]} if area.top_authors else {})


def query_page(query: str | None = None, answer: Answer | None = None) -> Response:
    """The query page; with a query, that query in the editor and, with its answer, the answer as a table."""
    formats = ["json", "xml", "csv", "tsv"] if answer is None or answer.form != "graph" else ["turtle", "nt", "jsonld"]
    page = Response(
        render_template(
            "sparql.html",
            examples=examples(named_in_examples()),
            prefixes=shown_prefixes(),
            endpoint_url=url_for("sparql.endpoint"),
            public_root=public_root(),
            query=query,
            results=table(answer) if answer is not None else None,
            shown_rows=SHOWN_ROWS,
            downloads={
                name: url_for("sparql.endpoint") + "?" + urlencode({"query": query, "format": name}) for name in formats
            }
            if query
            else {},
        ),
        content_type="text/html; charset=utf-8",
    )
    page.headers["Content-Security-Policy"] = content_security_policy(handler_attributes=True)
    return page
