"""Red team: every answer chosen by the ``Accept`` header says ``Vary: Accept``.

A 404 came as an HTML page to browsers and as plain text to curl, ``/sparql`` without a query as the
query page or as a Turtle service description, an IRI as a 406 or as a page: the HTML page of
``/sparql``, the 404s and the 406s had no ``Vary``, so a shared cache (404s are cacheable by default,
RFC 9111 §4.2.2) could keep one and hand it to every client, whatever it asked for.
"""

import flask
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bibgraph.web import negotiation

PATHS = [
    "/nowhere",
    "/paper/nowhere",
    "/paper/nowhere.ttl",
    "/author/nowhere.xyz",
    "/areas",
    "/dataset",
    "/sparql",
    "/sparql?query=SELECT%20*%20%7B%20%3Fs%20%3Fp%20%3Fo%20%7D%20LIMIT%201",
    "/sparql?query=SELECT%20%3Fx%20%7B",
    "/graph/coauthors?top=x",
    "/search?q=learning",
    "/robots.txt",
]
ACCEPTS = st.one_of(
    st.sampled_from(
        [
            "text/html",
            "text/plain",
            "*/*",
            "text/turtle",
            "application/ld+json",
            "application/sparql-results+json",
            "text/csv",
            "text/html;q=0.1, text/plain",
            "image/png",
        ]
    ),
    st.none(),
)


def _get(client, path: str, accept: str | None):
    return client.get(path, headers={} if accept is None else {"Accept": accept})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(PATHS), ACCEPTS, ACCEPTS)
def test_answers_that_differ_by_accept_say_vary_accept(client, path: str, one: str | None, other: str | None) -> None:
    first, second = _get(client, path, one), _get(client, path, other)
    if (first.status_code, first.content_type) != (second.status_code, second.content_type):
        for response in (first, second):
            assert "accept" in {value.lower() for value in response.vary}, (path, one, other, response.status)


def test_an_answer_chosen_by_format_alone_does_not_vary(client) -> None:
    response = client.get("/areas?format=ttl", headers={"Accept": "text/html"})
    assert response.status_code == 200
    assert response.content_type.startswith("text/turtle")
    assert "Accept" not in response.vary


RANGE = st.sampled_from(
    ["text/html", "text/plain;q=0.9", "text/turtle;q=0.5", "application/ld+json", "*/*;q=0.1", "image/png", "a/b;x=y"]
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(RANGE, min_size=1, max_size=80), st.integers(0, 6000))
def test_a_long_accept_header_is_read_for_its_first_ranges(app, ranges: list[str], padding: int) -> None:
    """Werkzeug's reading of 10,000 media ranges (180 KB: waitress lets headers reach 256 KB) cost ~1 s of the
    web process's CPU per request, a 404 included; only the first ranges of the first 2 KB are read now."""
    header = ", ".join(ranges) + ";p=" + "x" * padding
    with app.test_request_context("/areas", headers={"Accept": header}):
        read = negotiation.accepted(flask.request)
        assert len(read) <= negotiation.ACCEPT_RANGES
        assert (
            sum(len(value) for value, _ in read) <= 2 * negotiation.ACCEPT_BYTES
        )  # werkzeug adds a space per parameter
    if len(header) <= negotiation.ACCEPT_BYTES and len(ranges) < negotiation.ACCEPT_RANGES:
        with app.test_request_context("/areas", headers={"Accept": header}):
            assert list(negotiation.accepted(flask.request)) == list(flask.request.accept_mimetypes)
