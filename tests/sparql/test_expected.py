"""A malformed query's error: the first token the engine cannot read and all it accepts there.

Generated valid queries with one token deleted: the error is never before the deletion (what
precedes it is the start of a valid query), and when it is at the deletion, the deleted token is
among the expected ones (putting it back makes the query valid again). Every query is checked
against Oxigraph itself, so the generator cannot drift from the engine.
"""

import pyoxigraph as ox
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from bibgraph.graph.sparql.expected import KEYWORDS, explain
from bibgraph.graph.sparql.guard import tokens

PROLOGUE = "PREFIX ex: <http://example.org/> "
PROJECTIONS = ["*", "?s", "?s ?o", "DISTINCT ?s", "(STR(?s) AS ?label)"]
PATTERNS = [
    "?s ?p ?o .",
    '?s ex:p "x" .',
    "?s a ex:C .",
    "?s ex:p ?o ; ex:q 1 .",
    "OPTIONAL { ?s ex:q ?x }",
    "?s ex:p/ex:q ?o .",
    '?s ex:r ?o , "y"@en .',
]
FILTERS = ["", "FILTER(?o > 1 && ?o < 3)", 'FILTER(STRSTARTS(STR(?s), "h"))', "BIND(1 + 2 AS ?z)", "FILTER(?o <= 2)"]
MODIFIERS = ["", "ORDER BY DESC(?s)", "LIMIT 5 OFFSET 1", "ORDER BY ?s LIMIT 3"]
_CLASSES = {
    "var": "a variable",
    "iri": "an IRI",
    "pname": "a prefixed name",
    "string": "a literal",
    "number": "a number",
    "blank": "a blank node",
    "langtag": "a language tag",
}


@st.composite
def valid_queries(draw) -> str:
    patterns = draw(st.lists(st.sampled_from(PATTERNS), min_size=1, max_size=3))
    where = " ".join(patterns) + " " + draw(st.sampled_from(FILTERS))
    projection, modifiers = draw(st.sampled_from(PROJECTIONS)), draw(st.sampled_from(MODIFIERS))
    return f"{PROLOGUE}SELECT {projection} WHERE {{ {where} }} {modifiers}"


def _shown(token) -> str:
    if token.kind in _CLASSES:
        return _CLASSES[token.kind]
    if token.kind == "word":
        keyword = next(k for k in KEYWORDS if k.upper() == token.text.upper())
        return "a (rdf:type)" if keyword == "a" else keyword
    return token.text


def _parses(query: str) -> bool:
    try:
        ox.Store().query(query)
    except SyntaxError:
        return False
    return True


def _position(query: str, line: int, column: int) -> int:
    return sum(len(part) + 1 for part in query.split("\n")[: line - 1]) + column - 1


@settings(deadline=None, max_examples=150)
@given(valid_queries(), st.data())
def test_the_deleted_token_is_expected_where_the_error_is(query, data) -> None:
    assert _parses(query) and explain(query) is None
    found = tokens(query)
    index = data.draw(st.integers(min_value=0, max_value=len(found) - 1))
    removed = found[index]
    broken = query[: removed.position] + query[removed.position + len(removed.text) :]
    assume(not _parses(broken))  # deleting e.g. DISTINCT leaves a valid query
    assume(len(tokens(broken)) == len(found) - 1)  # STRSTARTS(STR → STRSTARTSSTR: two tokens glued
    problem = explain(broken)
    assert problem is not None, broken
    at = _position(broken, problem.line, problem.column)
    read = sum(1 for token in tokens(broken) if token.position < at)  # tokens the engine read
    assert read >= index, (broken, problem)  # what came before the deletion reads
    if read == index:
        assert _shown(removed) in problem.expected, (broken, problem)
    if problem.found:
        assert broken[at : at + len(problem.found)] == problem.found


def test_oxigraphs_one_keyword_becomes_the_whole_choice() -> None:
    # Oxigraph says "expected DISTINCT" here, and "error at 4:2" (past the end) for the second.
    problem = explain("SELECT (COUNT(?x) ?c) WHERE {}")
    assert problem is not None and (problem.line, problem.column, problem.found) == (1, 19, "?c")
    assert {"AS", "+", "=", "<", "&&", "IN"} <= set(problem.expected) and "DISTINCT" not in problem.expected
    problem = explain("SELECT ?s WHERE {\n  ?s ?p ?o .\n  FILTER (?s = )\n}")
    assert problem is not None and (problem.line, problem.column, problem.found) == (3, 16, ")")
    assert {"a variable", "an IRI", "a literal", "(", "STR", "ABS"} <= set(problem.expected)


def test_nothing_to_explain_in_a_valid_or_unreadable_query() -> None:
    assert explain("SELECT * WHERE { ?s ?p ?o }") is None
    assert explain("SELECT * WHERE { ?s ?p ?o } \x01") is None  # no SPARQL terminal: the guard's lexer says
    assert explain("SELECT " + "?x " * 5000) is None  # too long to probe
