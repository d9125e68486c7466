"""Queries that hide a ``SERVICE`` call every way SPARQL and Oxigraph allow, for the query guard.

Shared by the guard's differential test (tests/sparql/test_guard.py) and its benchmark (bench/serving/guard.py):
a Hypothesis strategy of query pieces, each known by construction to hold a live ``SERVICE`` per
the SPARQL grammar or not, and whether Oxigraph would run it; Oxigraph itself is the ground truth.
"""

import contextlib

import pyoxigraph as ox
from hypothesis import strategies as st


def oxigraph_runs(query: str) -> bool:
    """Run ``query`` on an empty Oxigraph store; False when Oxigraph refuses its syntax."""
    try:
        result = ox.Store().query(query)
    except SyntaxError:
        return False
    except (OSError, RuntimeError):  # evaluation errors (a refused connection, an unbound SERVICE name)
        return True
    with contextlib.suppress(OSError, RuntimeError):
        if not isinstance(result, ox.QueryBoolean):
            list(result)
    del result  # in this thread: pyoxigraph's results may not be dropped in another
    return True


# Pieces of a group graph pattern: (text, live SERVICE per SPARQL, live SERVICE that Oxigraph runs).
NOISE = [
    r"ex:a\#b",
    r"ex:a\'b",
    r"ex:a\"b",
    r"ex:a\(b",
    "ex:SERVICE",
    "?SERVICE",
    "<http://e/#SERVICE>",
    '"a # SERVICE <{url}> { }"',
    "'it # is'",
    '"""long \' " # SERVICE <{url}> { }"""',
    "'''long ' \" # SERVICE'''",
    '"\\" # SERVICE"',
]
SERVICE_FORMS = [
    ("SERVICE <{url}> { ?x ?y ?z }", True, True),
    ("SERVICE SILENT <{url}> { ?x ?y ?z }", True, True),
    ("service silent <{url}> { ?x ?y ?z }", True, True),
    ("SERVICE svc:x { ?x ?y ?z }", True, True),
    # Oxigraph reads keywords with no word boundary: these are SERVICE to it, though a lexer by the
    # grammar sees one prefixed name or one word
    ("SERVICEsvc:x { ?x ?y ?z }", True, True),
    ("sErViCe:x { ?x ?y ?z }", True, True),
    ("SERVICESILENT<{url}> { ?x ?y ?z }", True, True),
    ("OPTIONAL { ?s ?p trueSERVICE<{url}> { ?x ?y ?z } }", True, False),
    (r"\u0053ERVICE <{url}> { ?x ?y ?z }", True, False),
    (r"SERVIC\u0045 SILENT <{url}> { ?x ?y ?z }", True, False),
    ("BIND(<{url}> AS ?svc) SERVICE ?svc { ?x ?y ?z }", True, False),
    # Oxigraph reads a string here, SPARQL §19.2 a bare SERVICE after an empty string: refused too
    (r'OPTIONAL { ?s ?p "\u0022 SERVICE" }', True, False),
]
COMMENT_ENDS = ["\r", "\n", "\r\n"]


@st.composite
def pieces(draw: st.DrawFn, depth: int = 0) -> tuple[str, bool, bool]:
    kind = draw(st.sampled_from(["noise", "service", "comment", "string", "group", "optional", "operator"]))
    if kind == "noise":
        return f"OPTIONAL {{ ?s ?p {draw(st.sampled_from(NOISE))} }}", False, False
    if kind == "service":
        return draw(st.sampled_from(SERVICE_FORMS))
    if kind == "comment":
        hidden = draw(st.sampled_from(["", "SERVICE <{url}> { }", r"ex:a\#b", "'", '"""']))
        return f"# {hidden}{draw(st.sampled_from(COMMENT_ENDS))}", False, False
    if kind == "string":
        return 'OPTIONAL { ?s ?p "SERVICE <{url}> #" }', False, False
    if kind == "operator":
        return "OPTIONAL { ?s ?p ?o FILTER(?o<2&&3>?o || ?o<(?o)>?o) }", False, False
    if depth > 3:
        return "FILTER(true)", False, False
    inner = draw(st.lists(pieces(depth + 1), min_size=1, max_size=3))
    text = " ".join(piece for piece, _, _ in inner)
    live = any(spec for _, spec, _ in inner)
    runs = any(ox_live for _, _, ox_live in inner)
    return (f"{{ {text} }}" if kind == "group" else f"OPTIONAL {{ {text} }}"), live, runs


def assemble(parts: list[tuple[str, bool, bool]], url: str) -> tuple[str, bool, bool]:
    body = " ".join(text for text, _, _ in parts).replace("{url}", url)
    query = f"PREFIX ex: <http://e/> PREFIX svc: <{url}> PREFIX : <{url}> SELECT * WHERE {{ BIND(1 AS ?one) {body} }}"
    return query, any(live for _, live, _ in parts), any(runs for _, _, runs in parts)
