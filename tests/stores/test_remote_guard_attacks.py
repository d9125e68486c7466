"""Red team: a query the guard passes must not be read differently by a ``sparql:`` store's engine.

Virtuoso ends a ``#`` comment only at a line feed; SPARQL, Oxigraph and the guard also at a lone
carriage return. So ``{ #<CR> BIND(<long string> <LF> SERVICE <url> { } #<CR> <end> AS ?x) <LF> }`` was a string
literal to the guard and a SERVICE clause to Virtuoso: through ``--store sparql:URL`` it connected to
the URL (measured with a listener, once the SPARQL user may federate; by default Virtuoso only refuses
it for want of a privilege on DB.DBA.SPARQL_SINV_2, i.e. after reading the SERVICE).
"""

import urllib.parse
import urllib.request

import pytest

from bibgraph.graph.sparql.guard import QueryRefused, check_query

SEPARATORS = ["\n", "\r\n", "\r", "\r \n", "\x0b", "\x0c", "\x85", "\u2028"]


def smuggled(url: str) -> str:
    return f'SELECT ?x WHERE {{ #\r BIND("""\nSERVICE <{url}> {{ ?a ?b ?c }} #\r """ AS ?x)\n}}'


def test_a_service_hidden_from_the_guard_by_a_lone_carriage_return_is_refused() -> None:
    with pytest.raises(QueryRefused, match="carriage return"):
        check_query(smuggled("http://127.0.0.1:9/sparql"))


def test_queries_with_crlf_line_ends_still_pass() -> None:
    assert check_query("# a comment\r\nSELECT * WHERE { ?s ?p ?o } # another\r\n").form == "select"


def _virtuoso_rows(endpoint: str, query: str) -> int | None:
    """Rows Virtuoso answers (None when it refuses the query)."""
    url = endpoint.split("?", 1)[0] + "?" + urllib.parse.urlencode({"query": query, "format": "text/csv"})
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return len(response.read().decode().splitlines()) - 1
    except urllib.error.HTTPError:
        return None


@pytest.mark.parametrize("separator", SEPARATORS)
def test_where_a_comment_ends_the_guard_and_virtuoso_agree(virtuoso_endpoint, separator: str) -> None:
    """A query the guard passes is answered by Virtuoso as Oxigraph reads it (the FILTER is code to
    both, or comment to both), or refused by Virtuoso."""
    query = f'SELECT ?x WHERE {{ BIND("a" AS ?x) #c{separator} FILTER(false)\n}}'
    try:
        check_query(query)
    except QueryRefused:
        return
    import pyoxigraph as ox

    try:
        oxigraph = len(list(ox.Store().query(query)))  # type: ignore[arg-type]
    except SyntaxError:
        oxigraph = None
    assert _virtuoso_rows(virtuoso_endpoint, query) in (oxigraph, None)
