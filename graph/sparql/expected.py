"""Where a malformed SPARQL query goes wrong and everything the engine would accept there.

Oxigraph's parser reports the furthest point it reached and, for keywords, only the last one it
tried (``SELECT (COUNT(?x) ?c)`` says "expected DISTINCT"; ``FILTER (?s = )`` says "error at 4:2",
past the end). Its keywords are read as "any N characters, then compare", so the position it
names is the real one plus the length of the longest keyword tried there (or the end).

So the engine is asked directly: the longest run of the query's tokens it can read as the start
of a query is found, the token after it is the error, and each SPARQL terminal is tried in its
place: those the engine reads on with are what it expects. A text "reads" when, followed by a line
break and more spaces than any keyword is long, the engine's furthest position is the very end:
it skipped the spaces wanting more (a failure inside the text stops at most a keyword's length on).
One rule reads further: an IRI is read as ``<``, anything up to ``>``, ``>``; so a comparison ``<``
would read to the end. The probes therefore compare with ``>`` and ``>=`` where the query has ``<``
and ``<=`` (the same length, the same place in the grammar); ``>`` accepted means all four are.

Probes are prefixes of a query the guard accepted plus one listed terminal (never a forbidden
keyword), on an empty in-memory store whose answers are never read. A probe that parses is also
*evaluated*, and VALUES need no data (a 675-byte ``ASK`` over five VALUES ran 51 s; a GROUP BY over
them took 0.9 GB): so a server explains through :func:`explain_call`, in its query worker, under
the deadline, memory limit and fair share of any query.
"""

import re
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise

import pyoxigraph as ox

from bibgraph.graph.sparql.guard import QueryRefused, Token, tokens

MAX_QUERY = 8 * 1024  # each probe parses the query again (~100 of them)
_POSITION = re.compile(r"\bat (\d+):(\d+)")
_PAD = "\n" + " " * 40  # longer than any keyword (ENCODE_FOR_URI: 14)

PUNCTUATION = (
    "{", "}", "(", ")", "[", "]", ".", ",", ";", "*", "=", "!=", ">", "&&", "||", "!", "+", "-", "/", "|", "^", "^^",
    "?",
)  # fmt: skip
_COMPARISONS = ("<", ">", "<=", ">=")  # shown when ">" is accepted (see the module's note)
_SHOWN = {"a": "a (rdf:type)"}
TERMS = (
    ("?x", "a variable"),
    ("<http://example.org/x>", "an IRI"),
    ('"text"', "a literal"),
    ("1", "a number"),
    ("_:b", "a blank node"),
    ("@en", "a language tag"),
)
KEYWORDS = (
    "BASE PREFIX SELECT CONSTRUCT DESCRIBE ASK DISTINCT REDUCED AS WHERE GROUP BY HAVING ORDER ASC DESC LIMIT"
    " OFFSET VALUES UNDEF OPTIONAL GRAPH MINUS UNION FILTER BIND NOT IN EXISTS LATERAL a true false"
    " STR LANG LANGMATCHES LANGDIR DATATYPE BOUND IRI URI BNODE RAND ABS CEIL FLOOR ROUND CONCAT STRLEN UCASE"
    " LCASE ENCODE_FOR_URI CONTAINS STRSTARTS STRENDS STRBEFORE STRAFTER YEAR MONTH DAY HOURS MINUTES SECONDS"
    " TIMEZONE TZ NOW UUID STRUUID MD5 SHA1 SHA256 SHA384 SHA512 COALESCE IF STRLANG STRLANGDIR STRDT sameTerm"
    " isIRI isURI isBLANK isLITERAL isNUMERIC isTRIPLE hasLANG hasLANGDIR TRIPLE SUBJECT PREDICATE OBJECT REGEX"
    " SUBSTR REPLACE COUNT SUM MIN MAX AVG SAMPLE GROUP_CONCAT SEPARATOR"
).split()


@dataclass(frozen=True)
class SyntaxProblem:
    line: int  # 1-based, of the first token the engine cannot read (or the end of the query)
    column: int
    found: str  # that token, or "" at the end of the query
    expected: tuple[str, ...]  # what the engine reads on with there: terminals, then kinds of term

    def describe(self) -> str:
        """``line 3, column 15: found ")", expected one of: ( ! … a variable, an IRI … or ABS, AVG …``."""
        where = f"line {self.line}, column {self.column}"
        found = f"found “{self.found}”" if self.found else "the query ends"
        if not self.expected:
            return f"{where}: {found}, where nothing can follow"
        listed = ", ".join(self.expected)
        return f"{where}: {found}, where the engine expects {'one of: ' if len(self.expected) > 1 else ''}{listed}"


def explain(query: str) -> SyntaxProblem | None:
    """The first token of ``query`` the engine cannot read and all it would accept there; ``None``
    when the query is too long to probe, does not split into SPARQL's terminals, or is not wrong."""
    if len(query) > MAX_QUERY:
        return None
    return _explain(query)


def explain_call(_store: object, query: str) -> SyntaxProblem | None:
    """:func:`explain` as a query pool call (``pool.call(explain_call, query)``; the store is not read)."""
    return explain(query)


@lru_cache(maxsize=64)
def _explain(query: str) -> SyntaxProblem | None:
    try:
        found = tokens(query)
    except QueryRefused:
        return None
    store = ox.Store()
    ends = [token.position + len(token.text) for token in found]
    shadow = list(query)  # comparisons as > and >= (see the module's note); positions unchanged
    for token in found:
        if token.kind == "punct" and token.text in ("<", "<="):
            shadow[token.position] = ">"
    query = "".join(shadow)
    if _parses(store, query):
        return None  # nothing to explain
    low, high = 0, len(found)  # the longest readable prefix has `low` tokens (0 tokens always reads)
    while low < high:
        middle = (low + high + 1) // 2
        if _reads_to_end(store, query[: ends[middle - 1]]):
            low = middle
        else:
            high = middle - 1
    prefix = query[: ends[low - 1]] if low else ""
    at = found[low].position if low < len(found) else len(query.rstrip())
    line = query.count("\n", 0, at) + 1
    column = at - (query.rfind("\n", 0, at) + 1) + 1
    accepted: list[str] = []
    for probe in PUNCTUATION:
        if _reads_to_end(store, f"{prefix} {probe}"):
            accepted += _COMPARISONS if probe == ">" else (probe,)
    accepted += [name for probe, name in _terms(found) if _reads_to_end(store, f"{prefix} {probe}")]
    accepted = list(dict.fromkeys(accepted))  # a prefixed name is probed twice
    accepted += [_SHOWN.get(k, k) for k in KEYWORDS if _reads_to_end(store, f"{prefix} {k}")]
    return SyntaxProblem(line, column, found[low].text if low < len(found) else "", tuple(accepted))


def _terms(found: list[Token]) -> tuple[tuple[str, str], ...]:
    """The term probes, with a prefixed name in a prefix the query declares (others are errors)."""
    declared = [b.text for a, b in pairwise(found) if a.text.upper() == "PREFIX"]
    pname = ((declared[0] + "x", "a prefixed name"),) if declared and declared[0].endswith(":") else ()
    return TERMS[:2] + pname + (("zz:", "a prefixed name"),) + TERMS[2:]  # zz: as a PREFIX declares it


def _parses(store: ox.Store, text: str) -> bool:
    try:
        store.query(text)
    except SyntaxError:
        return False
    except Exception:  # parsed; evaluating it on an empty store failed (e.g. a type error)
        return True
    return True


def _reads_to_end(store: ox.Store, text: str) -> bool:
    """Whether the engine reads all of ``text`` as (the start of) a query: it parses, or followed
    by :data:`_PAD` its parser stops at the very end, wanting more. Parsed probes are never read."""
    padded = text + _PAD
    try:
        store.query(padded)
    except SyntaxError as error:
        found = _POSITION.search(str(error))
        if found is None:
            return False
        line, column = int(found.group(1)), int(found.group(2))
        lines = padded.split("\n")
        offset = sum(len(part) + 1 for part in lines[: line - 1]) + column - 1
        return offset >= len(padded)
    except Exception:  # parsed; evaluating it on an empty store failed (e.g. a type error): it read
        return True
    return True
