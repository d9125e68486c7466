"""What a query may do before any store sees it: read-only, no outbound requests.

Both rdflib and pyoxigraph federate ``SERVICE`` by default, and rdflib dereferences ``FROM``.
Rather than trusting every backend's settings, the query text is tokenised (comments, strings
and IRIs removed, so a keyword inside a literal does not count) and its keywords checked.
"""

import re
from dataclasses import dataclass

_TOKENS = re.compile(
    r"""
    (?P<comment>\#[^\n]*)
  | (?P<string>'''(?:[^'\\]|\\.|'(?!''))*'''|\"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\"
              |'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")
  | (?P<iri><[^<>"{}|^`\\\x00-\x20]*>)
  | (?P<variable>[?$][\w\u00b7\u0300-\u036f\u203f-\u2040]+)
  | (?P<prefixed>[^\W\d][\w.-]*:[\w.:%\\-]*|:[\w.:%\\-]*|_:[\w.-]+)
  | (?P<word>[^\W\d]\w*)
  | (?P<other>\S)
    """,
    re.VERBOSE | re.DOTALL,
)

UPDATE_KEYWORDS = frozenset({"INSERT", "DELETE", "LOAD", "CLEAR", "CREATE", "DROP", "COPY", "MOVE", "ADD", "WITH"})
FORMS = ("SELECT", "ASK", "CONSTRUCT", "DESCRIBE")


class QueryRefused(Exception):
    """The query is not allowed here; ``status`` is the HTTP status that says why."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class CheckedQuery:
    text: str
    form: str  # "select", "ask", "construct" or "describe"

    @property
    def returns_graph(self) -> bool:
        return self.form in ("construct", "describe")


def keywords(query: str) -> list[str]:
    """Bare words of the query, upper-cased, outside comments, strings, IRIs and prefixed names."""
    return [match.group("word").upper() for match in _TOKENS.finditer(query) if match.lastgroup == "word"]


_CODEPOINT_ESCAPE = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")


def decode_codepoint_escapes(query: str) -> str:
    """SPARQL processes ``\\uXXXX`` escapes before parsing, so ``\\u0053ERVICE`` is ``SERVICE``."""
    return _CODEPOINT_ESCAPE.sub(lambda m: chr(int(m.group(1) or m.group(2), 16)), query)


def check_query(query: str) -> CheckedQuery:
    """Refuse updates, federation and dataset clauses; tell the query form (for content negotiation).

    The returned text has its codepoint escapes decoded: that is the text that was checked, so it
    is the text to run.
    """
    query = decode_codepoint_escapes(query)
    words = keywords(query)
    updates = sorted(UPDATE_KEYWORDS.intersection(words))
    if updates:
        raise QueryRefused(f"this endpoint is read-only: SPARQL Update ({', '.join(updates)}) is refused", 403)
    if "SERVICE" in words:
        raise QueryRefused("SERVICE is disabled: this endpoint never makes outbound requests", 403)
    if "FROM" in words:
        raise QueryRefused(
            "FROM and FROM NAMED are not supported: the endpoint queries its one default graph"
            " and never fetches graphs from elsewhere",
            400,
        )
    form = next((word for word in words if word in FORMS), None)
    if form is None:
        raise QueryRefused("not a query: expected SELECT, ASK, CONSTRUCT or DESCRIBE", 400)
    return CheckedQuery(query, form.lower())
