"""SPARQL Protocol corner cases: one query per request, never malformed XML."""

import tempfile
import xml.etree.ElementTree as ET

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from bibgraph.graph.sparql.guard import FORMS, UPDATE_KEYWORDS
from bibgraph.graph.stores.store import Answer
from bibgraph.web.sparql.endpoint import _not_xml

ASK = "ASK { ?s ?p ?o }"


@pytest.mark.parametrize(
    "send",
    [
        lambda c: c.get("/sparql", query_string=[("query", ASK), ("query", "ASK {}")]),
        lambda c: c.post("/sparql", data={"query": [ASK, "ASK {}"]}),
        lambda c: c.post("/sparql?query=ASK%20%7B%7D", data={"query": ASK}),
        lambda c: c.post("/sparql?query=ASK%20%7B%7D", data=ASK, content_type="application/sparql-query"),
    ],
)
def test_two_queries_in_one_request_are_refused_400(client, send) -> None:
    response = send(client)
    assert response.status_code == 400
    assert "exactly one query" in response.get_data(as_text=True)


def test_one_query_per_request_is_still_answered(client) -> None:
    assert client.get("/sparql", query_string={"query": ASK}).status_code == 200
    assert client.post("/sparql", data={"query": ASK}).status_code == 200


def xml_1_0_allows(character: str) -> bool:
    code = ord(character)
    return code in (0x9, 0xA, 0xD) or 0x20 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD or code >= 0x10000


def escaped(text: str) -> str:
    return "".join(f"\\U{ord(c):08X}" for c in text)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=12) | st.text(alphabet=st.characters(max_codepoint=0x20), max_size=6))
def test_xml_results_are_well_formed_or_refused(client, text: str) -> None:
    words = text.upper()
    assume(not any(word in words for word in (*UPDATE_KEYWORDS, "SERVICE", "FROM", *FORMS)))
    query = f'SELECT ?x WHERE {{ BIND("{escaped(text)}" AS ?x) }}'
    response = client.get("/sparql", query_string={"query": query, "format": "xml"})
    if all(xml_1_0_allows(c) for c in text):
        assert response.status_code == 200, response.get_data(as_text=True)
        root = ET.fromstring(response.data)  # a real XML parser: raises on anything malformed
        literal = root.find(".//{http://www.w3.org/2005/sparql-results#}literal")
        normalised = text.replace("\r\n", "\n").replace("\r", "\n")  # the engine writes CR raw: XML reads LF
        assert (literal.text or "") in (text, normalised)
    else:
        assert response.status_code == 406
        assert "XML 1.0" in response.get_data(as_text=True)
        as_json = client.get("/sparql", query_string={"query": query, "format": "json"})
        assert as_json.get_json()["results"]["bindings"][0]["x"]["value"] == text


def test_graphs_in_rdf_xml_are_refused_too(client) -> None:
    query = 'CONSTRUCT { <http://e/s> <http://e/p> ?x } WHERE { BIND("a\\u0000b" AS ?x) }'
    response = client.get("/sparql", query_string={"query": query}, headers={"Accept": "application/rdf+xml"})
    assert response.status_code == 406


@pytest.mark.parametrize("offset", [0, 1, 2])
def test_a_spooled_answer_is_scanned_across_its_chunks(offset: int) -> None:
    with tempfile.TemporaryFile() as spooled:
        spooled.write(b"a" * (1024 * 1024 - offset) + "\uffff".encode() + b"z")
        spooled.seek(0)
        assert _not_xml(Answer("select", b"", "application/sparql-results+xml", spooled))
        assert spooled.tell() == 0
        spooled.seek(0)
        spooled.truncate(1024 * 1024 + 10)
        spooled.seek(0)
        spooled.write(b"a" * (1024 * 1024 + 10))
        spooled.seek(0)
        assert not _not_xml(Answer("select", b"", "application/sparql-results+xml", spooled))
