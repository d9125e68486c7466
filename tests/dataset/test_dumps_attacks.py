"""Labels holding line breaks, quotes, backslashes, tabs and control characters survive every dump
format and the VoID description, read back by pyoxigraph and by rdflib; what cannot be published
is refused with its file and line."""

import io
from itertools import chain

import pyoxigraph as ox
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rdflib import Graph
from rdflib import Literal as RdfLiteral

from bibgraph.graph.dataset.build import build_graph
from bibgraph.graph.dataset.triples import Catalogue
from bibgraph.graph.dataset.void import engine_counts, void_lines
from bibgraph.graph.ingest.names import person_key
from bibgraph.graph.ingest.records import Record
from bibgraph.graph.rdf.formats import RDF_SYNTAXES
from bibgraph.graph.rdf.iris import Iris
from bibgraph.graph.rdf.ntriples import iri, literal, typed, unpublishable
from bibgraph.graph.stores.store import OxigraphGraphStore
from tests.conftest import BASE

VOID_TRIPLES = "http://rdfs.org/ns/void#triples"
XML_SAFE = ["\n", "\r", "\t", '"', "\\", "<", "&", "'", "\x7f", "\x85", "\u2028", "\ufeff", " ", "·"]
XML_FORBIDDEN = ["\x00", "\x01", "\x08", "\x0b", "\x0c", "\x1b", "\x1f", "\ufffe"]
_scalar = st.characters(exclude_categories=("Cs",))


@settings(max_examples=500)
@given(st.text(alphabet=st.one_of(st.sampled_from(XML_SAFE + XML_FORBIDDEN), _scalar)))
def test_literals_are_written_as_oxigraph_writes_them_and_read_back(text: str) -> None:
    written = literal(text)
    assert written == str(ox.Literal(text))
    line = f"<http://a.test/s> <http://a.test/p> {written} .\n"
    (triple,) = ox.parse(line.encode("utf-8"), format=ox.RdfFormat.N_TRIPLES)
    assert triple.object.value == text
    (value,) = Graph().parse(data=line, format="nt").objects()
    assert str(value) == text


@given(st.text(alphabet=_scalar), st.characters(categories=("Cs",)), st.text(alphabet=_scalar))
def test_lone_surrogates_are_refused(before: str, surrogate: str, after: str) -> None:
    with pytest.raises(ValueError, match="surrogate"):
        literal(before + surrogate + after)
    assert unpublishable(before + surrogate + after)


@given(st.one_of(st.integers(), st.booleans()))
def test_typed_literals(value: int | bool) -> None:
    datatype = "boolean" if isinstance(value, bool) else "integer"
    expected = ox.Literal(str(value).lower(), datatype=ox.NamedNode(f"http://www.w3.org/2001/XMLSchema#{datatype}"))
    assert typed(value) == str(expected)


def test_iris_are_checked() -> None:
    assert iri("http://a.test/x%20y") == "<http://a.test/x%20y>"
    for bad in ["http://a.test/x y", "http://a.test/\n", "http://a.test/>", "http://a.test/\ud800", "no-scheme"]:
        with pytest.raises(ValueError):
            iri(bad)
    for bad in ["http://a.test/\x00/", "http://a.test/\ufffd/"]:
        with pytest.raises(ValueError):
            Iris(bad)


def rdflib_parser(syntax) -> str:
    return "xml" if syntax.name == "xml" else syntax.rdflib_format


def build(records: list[Record]) -> OxigraphGraphStore:
    """The graph of ``records`` made through the model directly (paper lists cannot carry line breaks)."""
    iris, catalogue = Iris(BASE), Catalogue()
    store = OxigraphGraphStore.memory()
    store.load_ntriples(chain.from_iterable(catalogue.add(record, iris) for record in records))
    store.load_ntriples(catalogue.closing(iris))
    store.load_ntriples(void_lines(engine_counts(store.store, iris.base), iris))  # as build_graph counts them
    return store


def literals(graph: Graph) -> set[tuple[str, str]]:
    return {(str(p), str(o)) for _, p, o in graph if isinstance(o, RdfLiteral)}


def read_back(store: OxigraphGraphStore, syntax) -> tuple[set, set]:
    out = io.BytesIO()
    store.dump(out, syntax)
    data = out.getvalue()
    parsed = ox.parse(data, format=syntax.oxigraph)
    by_oxigraph = {(t.predicate.value, t.object.value) for t in parsed if isinstance(t.object, ox.Literal)}
    return by_oxigraph, literals(Graph().parse(data=data, format=rdflib_parser(syntax)))


_hostile = st.text(alphabet=st.one_of(st.sampled_from(XML_SAFE), st.sampled_from("abcXYZ数")), min_size=1, max_size=10)


@settings(max_examples=25, deadline=None)
@given(
    area=_hostile,
    subarea=_hostile,
    names=st.lists(_hostile, min_size=1, max_size=4, unique_by=person_key),
    source=_hostile,
    abstract=_hostile,
)
def test_hostile_labels_round_trip_through_every_dump_and_void(area, subarea, names, source, abstract) -> None:
    record = Record(source, 3, area, subarea, tuple(names), False, abstract)
    store = build([record])
    expected = {(str(t.predicate.value), t.object.value) for t in store.store if isinstance(t.object, ox.Literal)}
    assert {("http://www.w3.org/2004/02/skos/core#prefLabel", label) for label in (area, subarea)} <= expected
    assert {
        ("http://purl.org/dc/terms/abstract", abstract),
        ("https://w3id.org/bibgraph/ontology#sourceFile", source),
    } <= expected
    assert {("http://xmlns.com/foaf/0.1/name", name) for name in names} <= expected
    assert any(p == VOID_TRIPLES for p, _ in expected)
    for syntax in RDF_SYNTAXES:
        by_oxigraph, by_rdflib = read_back(store, syntax)
        assert by_oxigraph == expected, syntax.name
        assert by_rdflib == expected, syntax.name


def test_what_no_dump_can_carry_is_refused_with_its_line(write_list) -> None:
    path = write_list(
        "论文检索\n\nArea\x01 · Sub\n\nAnn Lee, Bob Ray\n\nFirst abstract.\n\n"
        "Area\n\nCyd\x1bNo, Dee Day\n\nSecond abstract.\n\nArea\n\nEve Ek\n\nThird abstract.\n"
    )
    store, report = build_graph([path], base=BASE, progress=False)
    assert [(p.line, p.message.split(":")[0]) for p in report.problems] == [(3, "area"), (9, "author 1")]
    assert report.papers == 1
    for control in XML_FORBIDDEN:
        assert unpublishable(f"a{control}b")
    for fine in XML_SAFE:
        assert unpublishable(f"a{fine}b") is None
    for syntax in RDF_SYNTAXES:
        out = io.BytesIO()
        store.dump(out, syntax)
        assert len(Graph().parse(data=out.getvalue(), format=rdflib_parser(syntax))) == store.triple_count()
