"""What a query may do before any store sees it: read-only, no outbound requests, not too deep.

Both rdflib and pyoxigraph federate ``SERVICE`` by default, and rdflib dereferences ``FROM``.
Rather than trusting every backend's settings, the query is split into SPARQL 1.1's own
terminals (grammar §19.8: IRIREF, PNAME_LN with its ``\\#``-style escapes, the four string
forms, comments that end at CR *or* LF, ...) by :data:`_TOKEN`, and its bare keywords checked.
The lexer is exact and fails closed: a character that starts no terminal (a stray ``\\``, an
unterminated string) refuses the query, so nothing can hide behind a fake comment or string.

It is a lexer rather than a full parser because SERVICE, FROM and the update operations are
keywords: a token can be one only where the lexer sees a bare word. rdflib's parser would
give the algebra, but it costs 50-300 ms per README query and 10 s for a 39 KB ``VALUES``
query (on the web process's GIL), and overflows Python's recursion at ~30 nested groups; see
tests/sparql/test_guard.py for the differential test against Oxigraph and rdflib that proves the
lexer right on generated queries.

SPARQL §19.2 decodes ``\\uXXXX`` escapes before parsing, Oxigraph only inside strings and IRIs.
The query is checked in both readings (a remote store may follow the spec) and run as sent.

The same tokens measure how deep the engine would recurse (on a default 8 MiB thread stack
Oxigraph overflows at about 2,190 nested ``{``, 2,615 ``BIND``s or 6,890 ``1+1+...``): over-deep
queries are refused before any store sees them, see :func:`structural_cost`.
"""

import functools
import re
from dataclasses import dataclass
from typing import NamedTuple

_BASE = (
    "A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u02ff\u0370-\u037d\u037f-\u1fff\u200c-\u200d\u2070-\u218f"
    "\u2c00-\u2fef\u3001-\ud7ff\uf900-\ufdcf\ufdf0-\ufffd\U00010000-\U000effff"
)
_U = _BASE + "_"
_CHARS = _U + r"\-0-9\u00b7\u0300-\u036f\u203f-\u2040"
_VARNAME = f"[{_U}0-9][{_U}0-9\u00b7\u0300-\u036f\u203f-\u2040]*"
_PN_PREFIX = f"[{_BASE}](?:[{_CHARS}.]*[{_CHARS}])?"
_PLX = r"%[0-9A-Fa-f]{2}|\\[_~.\-!$&'()*+,;=/?#@%]"
_PN_LOCAL = f"(?:[{_U}:0-9]|{_PLX})(?:(?:[{_CHARS}.:]|{_PLX})*(?:[{_CHARS}:]|{_PLX}))?"
_ECHAR = r"\\(?:[tbnrf\\\"']|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8})"  # Oxigraph also reads \u inside strings
_EXPONENT = r"[eE][+-]?[0-9]+"

_TOKEN = re.compile(
    rf"""
    (?P<ws>[\x20\t\r\n]+)
  | (?P<comment>\#[^\r\n]*)
  | (?P<string>'''(?:(?:'|'')?(?:[^'\\]|{_ECHAR}))*'''|\"\"\"(?:(?:"|"")?(?:[^"\\]|{_ECHAR}))*\"\"\"
              |'(?:[^'\\\n\r]|{_ECHAR})*'|"(?:[^"\\\n\r]|{_ECHAR})*")
  | (?P<iri><(?:[^<>"{{}}|^`\\\x00-\x20]|\\u[0-9A-Fa-f]{{4}}|\\U[0-9A-Fa-f]{{8}})*>)
  | (?P<var>[?$]{_VARNAME})
  | (?P<blank>_:[{_U}0-9](?:[{_CHARS}.]*[{_CHARS}])?)
  | (?P<pname>(?:{_PN_PREFIX})?:(?:{_PN_LOCAL})?)
  | (?P<langtag>@[a-zA-Z]+(?:-[a-zA-Z0-9]+)*)
  | (?P<number>[0-9]+\.[0-9]*{_EXPONENT}|\.?[0-9]+{_EXPONENT}|[0-9]*\.[0-9]+|[0-9]+)
  | (?P<word>[A-Za-z][A-Za-z0-9_]*)
  | (?P<open>[{{(\[])
  | (?P<close>[}})\]])
  | (?P<punct>\^\^|&&|\|\||!=|<=|>=|[.,;*+\-/|^?!=<>])
  | (?P<error>.)
    """,
    re.VERBOSE | re.DOTALL,
)

UPDATE_KEYWORDS = frozenset({"INSERT", "DELETE", "LOAD", "CLEAR", "CREATE", "DROP", "COPY", "MOVE", "ADD", "WITH"})
FORMS = ("SELECT", "ASK", "CONSTRUCT", "DESCRIBE")
FLAT_WORDS = frozenset({"A", "TRUE", "FALSE", "UNDEF"})  # terms, not operators: they deepen nothing

# Structural cost (see structural_cost). Oxigraph overflows a thread's default 8 MiB stack at (in
# cost): ~2,190 nested { = 19,700; ~2,615 BINDs = 13,000; ~2,615 projections (i AS ?v) = 2,600;
# a ~6,890-term 1+1+... = 13,800; a ~6,550-branch UNION = 32,700. The query workers run on 64 MiB stacks
# (graph/serving/pool.py), where 15,000 projections pass: MAX_COST keeps a margin of at least 7.
BRACKET_WEIGHT = 8
WORD_WEIGHT = 4
MAX_COST = 2000
CACHE_MAX_TEXT = 16 * 1024  # only texts this short are cached, so the cache stays small


class QueryRefused(Exception):
    """The query is not allowed here: it is malformed, too deeply nested, or names a dataset."""


class QueryForbidden(QueryRefused):
    """The query asks for what this endpoint never does: an update, or a request to another server."""


@dataclass(frozen=True)
class CheckedQuery:
    text: str
    form: str  # "select", "ask", "construct" or "describe"

    @property
    def returns_graph(self) -> bool:
        return self.form in ("construct", "describe")


class Token(NamedTuple):
    kind: str
    text: str
    position: int


def tokens(query: str) -> list[Token]:
    """The query's terminals, whitespace and comments dropped; QueryRefused at the first
    character that starts none, with its line and column."""
    found, error = _lex(query)
    if error is not None:
        raise error
    return found


def _lex(query: str) -> tuple[list[Token], QueryRefused | None]:
    """The terminals up to the first character that starts none, and the error there (or None)."""
    found: list[Token] = []
    for match in _TOKEN.finditer(query):
        kind = match.lastgroup
        if kind == "error":
            line = query.count("\n", 0, match.start()) + 1
            column = match.start() - (query.rfind("\n", 0, match.start()) + 1) + 1
            message = f"query syntax error at line {line}, column {column}: unexpected {match.group()!r}"
            return found, QueryRefused(message)
        if kind not in ("ws", "comment"):
            found.append(Token(kind or "", match.group(), match.start()))
    return found, None


def keywords(query: str) -> list[str]:
    """Bare words of the query, upper-cased (outside comments, strings, IRIs and prefixed names)."""
    return [token.text.upper() for token in tokens(query) if token.kind == "word"]


_CODEPOINT_ESCAPE = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")


def decode_codepoint_escapes(query: str) -> str:
    """The query as SPARQL §19.2 reads it: ``\\uXXXX`` decoded once, before parsing."""
    try:
        return _CODEPOINT_ESCAPE.sub(lambda m: chr(int(m.group(1) or m.group(2), 16)), query)
    except ValueError as error:  # past U+10FFFF
        raise QueryRefused(f"query syntax error: invalid codepoint escape ({error})") from None


def structural_cost(found: list[Token]) -> int:
    """An upper bound, in cost units, of how deep the engine recurses on these tokens.

    The cost at a token is the sum, over the brackets open around it, of :data:`BRACKET_WEIGHT`
    and the weight of the tokens seen so far inside it (a word such as ``BIND``, ``OPTIONAL`` or
    ``UNION`` :data:`WORD_WEIGHT`, an operator, term or inner bracket 1): every element of a chain
    of joins, BINDs or operators nests the algebra one level deeper. The result is its maximum.
    Terms in the rows of ``VALUES`` and in the list after ``IN`` are flat lists and cost nothing
    (operators there still do). Brackets inside an IRI count as if they were code (``?a<((1))>?b``
    is an expression to Oxigraph): their peak is taken, openers left open stay open and closers
    are ignored, so that reading can only over-estimate.
    """
    levels: list[list[int]] = [[0, 0]]  # per open bracket: the weight inside it, flat (1) or not
    total = peak = 0
    flat_next = False
    previous = ""
    for token in found:
        if token.kind == "open":
            flat = levels[-1][1] or (token.text == "{" and flat_next) or previous == "IN"
            flat_next = flat_next and token.text != "{"
            if not levels[-1][1]:
                levels[-1][0] += 1
                total += 1
            levels.append([0, int(flat)])
            total += BRACKET_WEIGHT
        elif token.kind == "close":
            if len(levels) > 1:
                weight, _ = levels.pop()
                total -= BRACKET_WEIGHT + weight
        elif token.kind == "iri" and any(c in token.text for c in "()[]"):
            depth = inner_peak = 0
            for character in token.text:
                depth = depth + 1 if character in "([" else max(0, depth - 1) if character in ")]" else depth
                inner_peak = max(inner_peak, depth)
            peak = max(peak, total + BRACKET_WEIGHT * inner_peak)
            for _ in range(depth):
                levels.append([0, levels[-1][1]])
                total += BRACKET_WEIGHT
        else:
            weight = _weight(token, bool(levels[-1][1]))
            levels[-1][0] += weight
            total += weight
        if token.kind == "word":
            flat_next = flat_next or token.text.upper() == "VALUES"
        previous = token.text.upper() if token.kind == "word" else ""
        peak = max(peak, total)
        if peak > MAX_COST:
            break
    return peak


def _weight(token: Token, flat: bool) -> int:
    """A term in a flat list (or ``a``, ``true``...) deepens nothing; an operator in it still does."""
    if token.kind == "word":
        return 0 if token.text.upper() in FLAT_WORDS else WORD_WEIGHT
    return 0 if flat and (token.kind in _TERMS or token.text in (",", "^^")) else 1


_TERMS = frozenset({"string", "number", "iri", "pname", "var", "blank", "langtag"})
_FORBIDDEN = UPDATE_KEYWORDS | {"SERVICE", "FROM"}


def _keywords_read(found: list[Token]) -> set[str]:
    """The bare words, and every forbidden keyword an engine could read inside a word or a prefix.

    Oxigraph matches keywords without a word boundary: ``SERVICEex:a`` is ``SERVICE ex:a``,
    ``SERVICE:a`` is ``SERVICE :a``, ``FROMex:g`` is ``FROM ex:g``, and a keyword may follow a
    term with no space (``?s ?p trueSERVICE<x> {}``). So a forbidden keyword anywhere inside a bare
    word or a prefixed name's prefix counts as that keyword. No SPARQL keyword or function holds
    one; a prefix that does (``PREFIX address:``) is refused too, and the README says so.
    """
    words = set()
    for token in found:
        if token.kind == "word":
            text = token.text.upper()
        elif token.kind == "pname":
            text = token.text.split(":", 1)[0].upper()
        else:
            continue
        words.add(text)
        words.update(keyword for keyword in _FORBIDDEN if keyword in text)
    return words


def check_query(query: str) -> CheckedQuery:
    """Refuse updates, federation, dataset clauses and over-deep queries; tell the query form.

    The returned text is the query as sent: that is what the store runs.
    """
    if len(query) > CACHE_MAX_TEXT:
        return _check(query)
    return _cached_check(query)


@functools.lru_cache(maxsize=1024)
def _cached_verdict(query: str) -> CheckedQuery | QueryRefused:
    try:
        return _check(query)
    except QueryRefused as refused:
        return refused


def _cached_check(query: str) -> CheckedQuery:
    verdict = _cached_verdict(query)
    if isinstance(verdict, QueryRefused):
        raise type(verdict)(*verdict.args)  # a fresh exception: a raised one keeps its traceback
    return verdict


def _check(query: str) -> CheckedQuery:
    readings = [_lex(query)]  # as Oxigraph reads it: the text that runs
    decoded = decode_codepoint_escapes(query)
    if decoded != query:  # as SPARQL §19.2 (and maybe a remote store) reads it
        readings.append(_lex(decoded))
    for found, _ in readings:  # a forbidden keyword in either reading (up to any error) is the answer
        _refuse_what_it_does(found)
    error = readings[0][1]
    if error is not None:  # an error only in the decoded reading: no engine that decodes can run it
        raise error
    for text in dict.fromkeys((query, decoded)):
        _refuse_comment_ending_at_bare_cr(text)
    if max(structural_cost(found) for found, _ in readings) > MAX_COST:
        raise QueryRefused(
            f"query too deeply nested: its structure (nested {{ ( [ and chains of patterns, BINDs or"
            f" operators) passes the limit of {MAX_COST} (see the README); split it, or pass long lists"
            " with VALUES"
        )
    found = readings[0][0]
    form = next((t.text.upper() for t in found if t.kind == "word" and t.text.upper() in FORMS), None)
    if form is None:
        raise QueryRefused("not a query: expected SELECT, ASK, CONSTRUCT or DESCRIBE")
    return CheckedQuery(query, form.lower())


def _refuse_comment_ending_at_bare_cr(query: str) -> None:
    """Refuse a comment ended by a CR with no LF after it: SPARQL (and Oxigraph) end it there,
    Virtuoso reads on to the next LF. Text between the two is code to one and comment to the other:
    ``{ # CR BIND(<long string opens> LF SERVICE <x> { } # CR <it closes> AS ?x) LF }`` is a string to the guard, a
    SERVICE clause to Virtuoso, which a ``sparql:`` store forwards it to. CRLF line ends are fine."""
    if "\r" not in query:
        return
    for match in _TOKEN.finditer(query):
        if match.lastgroup == "error":
            return  # refused for that already, in this reading or left to the engine in the decoded one
        end = match.end()
        if match.lastgroup == "comment" and query.startswith("\r", end) and not query.startswith("\r\n", end):
            line = query.count("\n", 0, end) + 1
            column = end - (query.rfind("\n", 0, end) + 1) + 1
            raise QueryRefused(
                f"query syntax error at line {line}, column {column}: a comment ends at a carriage return"
                " with no line feed after it, where engines disagree on its end; end lines with LF or CRLF"
            )


def _refuse_what_it_does(found: list[Token]) -> None:
    words = _keywords_read(found)
    updates = sorted(UPDATE_KEYWORDS & words)
    if updates:
        raise QueryForbidden(f"this endpoint is read-only: SPARQL Update ({', '.join(updates)}) is refused")
    if "SERVICE" in words:
        raise QueryForbidden("SERVICE is disabled: this endpoint never makes outbound requests")
    if "FROM" in words:
        raise QueryRefused(
            "FROM and FROM NAMED are not supported: the endpoint queries its one default graph"
            " and never fetches graphs from elsewhere"
        )
