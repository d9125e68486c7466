"""Red team: a ``sparql:`` store's engine is a server on the network; what it answers is not trusted.

Its SPARQL XML results are read by pyoxigraph's parser, which knows no DTD entities: an entity-expansion
bomb ("billion laughs") or an external entity (XXE, a local file named in the DOCTYPE) is a syntax
error, never expanded and never read, and the store then asks for the same answer in JSON.

``bibgraph publish`` meets an engine the same way: tests/engines/test_publish_attacks.py.
"""

import json
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

from bibgraph.graph.stores.remote import RemoteGraphStore
from tests.loopback import Handler, serving

HEAD = b'<?xml version="1.0"?>\n'
RESULTS = b"""<sparql xmlns="http://www.w3.org/2005/sparql-results#"><head><variable name="x"/></head>
<results><result><binding name="x"><literal>%s</literal></binding></result></results></sparql>"""
LAUGHS = b"<!ENTITY l0 'ha'>" + b"".join(
    b"<!ENTITY l%d '%s'>" % (level, b"".join(b"&l%d;" % (level - 1) for _ in range(10))) for level in range(1, 10)
)
BOMB = HEAD + b"<!DOCTYPE sparql [" + LAUGHS + b"]>\n" + RESULTS % b"&l9;"  # 2 * 10**9 bytes if expanded
JSON_ANSWER = {"head": {"vars": ["x"]}, "results": {"bindings": [{"x": {"type": "literal", "value": "honest"}}]}}


class _Hostile(Handler):
    """Answers XML requests with ``xml`` and JSON requests with ``json_body``."""

    xml = b""
    json_body = json.dumps(JSON_ANSWER).encode()
    accepts: list[str]
    url: str

    def do_POST(self) -> None:
        self.request_body()
        accept = self.headers["Accept"]
        self.accepts.append(accept)
        self.reply(200, self.xml if "xml" in accept else self.json_body, accept)


@pytest.fixture
def hostile() -> Iterator[type[_Hostile]]:
    _Hostile.accepts = []
    _Hostile.json_body = json.dumps(JSON_ANSWER).encode()
    with serving(_Hostile) as address:
        _Hostile.url = f"{address}/sparql"
        yield _Hostile


def _values(hostile: type[_Hostile]) -> list[str]:
    store = RemoteGraphStore(hostile.url, timeout=10)
    return [str(row["x"]) for row in store.select("SELECT ?x WHERE { ?x ?p ?o }")]


def test_an_entity_expansion_bomb_is_not_expanded(hostile: type[_Hostile]) -> None:
    hostile.xml = BOMB
    assert _values(hostile) == ["honest"]  # the JSON answer: the XML was refused, not expanded
    assert [accept.split("+")[-1] for accept in hostile.accepts] == ["xml", "json"]


def test_an_external_entity_is_not_read(hostile: type[_Hostile], tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("the server's secret")
    hostile.xml = HEAD + b'<!DOCTYPE sparql [<!ENTITY x SYSTEM "%s">]>\n' % secret.as_uri().encode() + RESULTS % b"&x;"
    hostile.json_body = b"not json"  # no honest fallback either: the error must not carry the file
    with pytest.raises(SyntaxError) as refused:
        _values(hostile)
    assert "secret" not in str(refused.value)


def test_a_plain_answer_is_read(hostile: type[_Hostile]) -> None:
    """The fixture's honest XML is read as XML: the two refusals above are about the entities alone."""
    hostile.xml = HEAD + RESULTS % b"plain"
    assert _values(hostile) == ["plain"] and len(hostile.accepts) == 1


class _CuttingEngine(Handler):
    """Counts five triples of its one predicate, then answers the CONSTRUCT with three (a row limit)."""

    def do_POST(self) -> None:
        query = urllib.parse.parse_qs(self.request_body().decode())["query"][0]
        if query.startswith("SELECT"):
            self.reply(200, RESULTS_PN, "application/sparql-results+xml")
        else:
            lines = "".join(f"<http://x/s{i}> <http://x/p> <http://x/o> .\n" for i in range(3))
            self.reply(200, lines.encode(), "application/n-triples")


RESULTS_PN = b"""<?xml version="1.0"?><sparql xmlns="http://www.w3.org/2005/sparql-results#"><head><variable name="p"/>
<variable name="n"/></head><results><result><binding name="p"><uri>http://x/p</uri></binding><binding name="n">
<literal datatype="http://www.w3.org/2001/XMLSchema#integer">5</literal></binding></result></results></sparql>"""


def test_a_dump_the_engine_cuts_short_fails_and_nothing_is_kept(tmp_path: Path) -> None:
    from bibgraph.graph.dataset.dumps import write_dump
    from bibgraph.graph.rdf.formats import rdf_syntax

    with serving(_CuttingEngine) as address:
        store = RemoteGraphStore(f"{address}/sparql", timeout=10)
        with pytest.raises(OSError, match=r"gave 3 of the 5 triples of <http://x/p>.*ResultSetMaxRows"):
            write_dump(store, tmp_path / "dump.nt", rdf_syntax("nt"))
    assert list(tmp_path.iterdir()) == []
