"""The IRI module: what is minted reads back as what was minted, whatever names and slugs hold."""

import pyoxigraph as ox
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from bibgraph.graph.ingest.names import concept_key, person_key, short_hash
from bibgraph.graph.rdf.formats import RDF_SYNTAXES
from bibgraph.graph.rdf.iris import AREA, AUTHOR, DATASET, DUMP, PAPER, SCHEME, SUBAREA, Iris, Minted
from bibgraph.graph.sparql.queries import bind

# Names and labels as lists hold them, and worse: any Unicode, controls, slashes, '#', '?', spaces.
hostile = st.text(min_size=1, max_size=40)
bases = st.builds(
    lambda host, port, path: f"http://{host}{port}/{path}",
    st.sampled_from(["127.0.0.1", "example.org", "xn--bcher-kva.example", "[::1]"]),
    st.sampled_from(["", ":5000", ":80"]),
    st.sampled_from(["", "data/", "a/b/", "~user/kg/", "%C3%A9/"]),
)


@given(bases, hostile)
def test_people_read_back(base: str, name: str) -> None:
    iris = Iris(base)
    key = person_key(name)
    assert iris.parse(iris.person(key)) == Minted(AUTHOR, (key,))


@given(bases, hostile, hostile)
def test_areas_and_subareas_read_back(base: str, area: str, subarea: str) -> None:
    iris = Iris(base)
    a, s = concept_key(area), concept_key(subarea)
    assert iris.parse(iris.area(a)) == Minted(AREA, (a,))
    assert iris.parse(iris.subarea(a, s)) == Minted(SUBAREA, (a, s))


@given(bases, hostile)
def test_papers_read_back(base: str, text: str) -> None:
    iris = Iris(base)
    paper_id = short_hash(text, 16)
    assert iris.parse(iris.paper(paper_id)) == Minted(PAPER, (paper_id,))


@given(bases)
def test_fixed_resources_read_back(base: str) -> None:
    iris = Iris(base)
    assert iris.parse(iris.scheme) == Minted(SCHEME)
    assert iris.parse(iris.dataset) == Minted(DATASET)
    for syntax in RDF_SYNTAXES:
        assert iris.parse(iris.dump(syntax.suffix)) == Minted(DUMP, (syntax.suffix,))


@given(bases, hostile, hostile)
def test_minted_iris_are_served_at_their_path(base: str, area: str, name: str) -> None:
    """An IRI's URL path names it again (what the site does with every link it draws)."""
    iris = Iris(base)
    for iri in (iris.person(person_key(name)), iris.subarea(concept_key(area), concept_key(name)), iris.dataset):
        path = iris.path(iri)
        assert path is not None and iris.at_path("/" + path) == iri
        assert ox.NamedNode(iri).value == iri  # every minted IRI is an IRI


@given(bases, hostile, hostile)
@example(base="http://127.0.0.1/", area="AREA", subarea="0")  # an area keyed "area": found by CI's Hypothesis run
def test_a_concept_by_path_or_slug_is_the_minted_one(base: str, area: str, subarea: str) -> None:
    """The map filters' ways of naming an area (slug, path, with slashes) all give the IRI the build minted."""
    iris = Iris(base)
    a, s = concept_key(area), concept_key(subarea)
    for value in (a, f"area/{a}", f"/area/{a}/", f" {a} "):
        assert iris.concept(value) == iris.area(a)
    # a value starting with ``area/`` is read as a path: an area keyed "area" names its subareas by path only
    for value in ([] if a == AREA else [f"{a}/{s}"]) + [f"area/{a}/{s}", f"/area/{a}/{s}"]:
        assert iris.concept(value) == iris.subarea(a, s)
    if a == AREA:
        assert iris.concept(f"{a}/{s}") in (iris.area(s), None)


@given(bases, hostile, hostile, st.randoms(use_true_random=False))
def test_a_concept_in_any_case_is_the_minted_one(base: str, area: str, subarea: str, random) -> None:  # type: ignore[no-untyped-def]
    """Keys are minted in lower case: ``area=Deep-Learning`` named another (empty) area, a map and download of its own
    (and one more per spelling), where it is the same area in another case."""
    iris = Iris(base)
    a, s = concept_key(area), concept_key(subarea)

    def spelled(text: str) -> str:
        return "".join(c.upper() if random.random() < 0.5 else c for c in text)

    assert iris.concept(spelled(a)) == iris.area(a)
    assert iris.concept(spelled(f"area/{a}/{s}")) == iris.subarea(a, s)


@given(bases, hostile)
def test_any_concept_value_names_an_area_or_nothing(base: str, value: str) -> None:
    iris = Iris(base)
    iri = iris.concept(value)
    if iri is not None:
        minted = iris.parse(iri)
        assert minted is not None and minted.kind in (AREA, SUBAREA)
        assert ox.NamedNode(iri).value == iri


@given(hostile)
def test_foreign_and_malformed_iris_name_nothing(tail: str) -> None:
    iris = Iris("http://example.org/kg/")
    assert iris.parse("http://example.org/other/" + tail) is None
    assert iris.parse(iris.paper("a/b")) is None
    assert iris.parse(iris.subarea("a", "b") + "/c") is None


def test_a_base_must_be_an_http_iri_ending_in_a_slash() -> None:
    for bad in ("http://example.org", "ftp://example.org/", "http://exa mple.org/", "example.org/"):
        with pytest.raises(ValueError):
            Iris(bad)


@given(st.text(max_size=30))
def test_bound_values_reach_the_query_exactly_or_are_refused(text: str) -> None:
    """A value bound into a query is that value (never query text): differential against the engine."""
    query = "SELECT ?x ?y WHERE { BIND(1 AS ?y) }"
    try:
        bound = bind(query, x=text)
    except ValueError:
        with pytest.raises(ValueError):
            ox.NamedNode(text)  # refused exactly when it is no IRI
        return
    rows = list(ox.Store().query(bound))
    assert [row["x"] for row in rows] == [ox.NamedNode(text)]


def test_several_values_bind_a_row_each() -> None:
    iris = ["http://example.org/a", "http://example.org/b"]
    rows = ox.Store().query(bind("select ?x where { }", x=iris))
    assert sorted(row["x"].value for row in rows) == iris
    with pytest.raises(ValueError):
        bind("SELECT * { }", x=iris[0])  # no WHERE keyword: nowhere said to bind
    with pytest.raises(ValueError):
        bind("SELECT * WHERE { }", **{"x }": iris[0]})


@given(st.text(max_size=30))
def test_bound_literals_reach_the_query_exactly(text: str) -> None:
    """Any text bound as a literal (quotes, braces, newlines, ``}`` ``#``) is that literal in the query."""
    try:
        literal = ox.Literal(text)
    except ValueError:  # lone surrogates: not RDF text at all
        return
    rows = list(ox.Store().query(bind("SELECT ?x WHERE { }", x=literal)))
    assert [row["x"] for row in rows] == [literal]
