"""The SPARQL 1.1 Protocol endpoint at ``/sparql``: query, content negotiation, service description.

Read-only and closed to the outside: the query text is checked by :mod:`bibgraph.graph.sparql.guard`
before a worker runs it under the deadline (:mod:`bibgraph.graph.serving`).
"""

import contextlib
import logging
import re
import threading
from urllib.parse import parse_qsl, urlencode

from flask import Blueprint, Response, request, url_for
from rdflib import RDF, VOID, BNode, Graph, Literal, Namespace, URIRef
from werkzeug.wsgi import wrap_file

from bibgraph.graph.rdf.formats import ANSWER_FORMAT_IRIS, RDF_SYNTAXES, RESULT_SYNTAXES
from bibgraph.graph.serving.fairshare import RETRY_AFTER
from bibgraph.graph.serving.pool import OverShare, QueryCrashed, QueryTimeout, ResultTooLarge, ServerBusy, WorkerFailed
from bibgraph.graph.serving.pooled import PooledStore
from bibgraph.graph.sparql.expected import MAX_QUERY, SyntaxProblem, explain_call
from bibgraph.graph.sparql.guard import CACHE_MAX_TEXT, CheckedQuery, QueryRefused, check_query
from bibgraph.graph.stores.store import Answer, QueryError
from bibgraph.web.errors import (
    answer_exception,
    error_page,
    error_position,
    error_response,
    marked_query,
    prefers_html,
    status_of,
)
from bibgraph.web.graphstore import get_store, sandbox_refusal
from bibgraph.web.links import public_root
from bibgraph.web.negotiation import NotAcceptable, choose_graph, choose_results
from bibgraph.web.sparql.page import query_page

SD = Namespace("http://www.w3.org/ns/sparql-service-description#")
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")

blueprint = Blueprint("sparql", __name__)
log = logging.getLogger("bibgraph.sparql")


def plain(message: str, status: int) -> Response:
    """An error as plain text, whoever asks: SPARQL clients parse it."""
    return error_response(message, status, page=False)


XML_TYPES = frozenset({"application/sparql-results+xml", "application/rdf+xml"})
# Characters XML 1.0 cannot carry at all, not even as character references (UTF-8 bytes).
_NOT_XML = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f]|\xef\xbf[\xbe\xbf]")


def _body_is_utf8() -> bool:
    """Whether a POST body is UTF-8, and a form's ``%``-escapes too (SPARQL 1.1 Protocol §2.1.2-3). Werkzeug
    would read undecodable bytes as U+FFFD and keep an undecodable escape as the text ``%FF``: a query
    other than the one sent would run. Read before the form, which werkzeug then parses from the cached body."""
    try:
        body = request.get_data(cache=True).decode("utf-8")
        if request.mimetype == "application/x-www-form-urlencoded":
            parse_qsl(body, keep_blank_values=True, encoding="utf-8", errors="strict")
    except UnicodeError:
        return False
    return True


# The guard reads a query in this process, before any fair share: a 1 MB query costs it 1-4 s of CPU under
# the GIL and ~54 MB (its tokens). Sixteen clients sending such queries delayed /health to 1.4 s and left
# this process at 970 MB. So at most LARGE_AT_ONCE texts the guard does not keep verdicts for (longer than
# CACHE_MAX_TEXT) are read at once; one more waits LARGE_WAIT seconds, then gets 503 with Retry-After.
LARGE_AT_ONCE = 2
LARGE_WAIT = 1.0
_large_checks = threading.BoundedSemaphore(LARGE_AT_ONCE)


def _checked(text: str) -> CheckedQuery | Response:
    """:func:`check_query`, a long text only when one of the :data:`LARGE_AT_ONCE` turns is free."""
    if len(text) <= CACHE_MAX_TEXT:
        return check_query(text)
    if not _large_checks.acquire(timeout=LARGE_WAIT):
        log.info("long query refused as busy (%d characters) from %s", len(text), request.remote_addr)
        message = f"too many long queries being read at once (at most {LARGE_AT_ONCE}); retry later"
        return error_response(message, 503, RETRY_AFTER, page=False)
    try:
        return check_query(text)
    finally:
        _large_checks.release()


def _query_text() -> str | Response | None:
    """The query of the request per the protocol, ``None`` when there is none, or an error response."""
    if request.method == "POST" and not _body_is_utf8():
        return plain("the request body is not valid UTF-8 (nor, in a form, once percent-decoded)", 400)
    sent = len(request.args.getlist("query"))
    if request.method == "POST" and request.mimetype in FORM_TYPES:
        sent += len(request.form.getlist("query"))
    elif request.method == "POST" and request.mimetype == "application/sparql-query":
        sent += 1
    if sent > 1:  # SPARQL 1.1 Protocol §2.1.4: exactly one query string
        return plain("send exactly one query: this request has several (in the URL, the form or the body)", 400)
    if request.method in ("GET", "HEAD"):  # HEAD: the GET's answer without its body (RFC 9110 §9.3.2)
        if "update" in request.args:
            return plain("this endpoint is read-only: SPARQL Update is refused", 403)
        return request.args.get("query")
    content_type = request.mimetype
    if content_type == "application/sparql-update":
        return plain("this endpoint is read-only: SPARQL Update is refused", 403)
    if content_type == "application/sparql-query":
        return request.get_data(as_text=True)
    if content_type in FORM_TYPES:
        if "update" in request.form:
            return plain("this endpoint is read-only: SPARQL Update is refused", 403)
        if "query" not in request.form:
            return plain("missing 'query' parameter", 400)
        return request.form["query"]
    return plain(
        f"unsupported content type {content_type or '(none)'}: send application/sparql-query"
        " or application/x-www-form-urlencoded",
        415,
    )


@blueprint.route("/sparql", methods=["GET", "POST"])
def endpoint() -> Response | str:
    text = _query_text()
    if isinstance(text, Response):
        return text
    for parameter in ("default-graph-uri", "named-graph-uri"):
        if parameter in request.values:
            return plain(
                f"{parameter} is not supported: the endpoint queries its one default graph"
                " and never fetches graphs from elsewhere",
                400,
            )
    if text is None:
        return _describe_service()
    if not text.strip():
        return plain("empty query", 400)
    refusal = sandbox_refusal()
    if refusal:
        return plain(refusal, 503)
    try:
        checked = _checked(text)
        if isinstance(checked, Response):
            return checked
        if request.method == "GET" and prefers_html(request):  # a browser opened the link: the query page
            graph_name = "nt" if checked.returns_graph else RDF_SYNTAXES[0].name
            return query_page(checked.text, _store().answer(checked.text, "json", graph_name))
        if checked.returns_graph:
            graphs, results = choose_graph(request) or RDF_SYNTAXES[0], RESULT_SYNTAXES[0]
        else:
            graphs, results = RDF_SYNTAXES[0], choose_results(request)
        answer = _store().answer(checked.text, results.name, graphs.name)  # logged there when slow
    except QueryRefused as refused:
        log.info("query refused (%d) from %s: %s", status_of(refused).code, request.remote_addr, refused)
        if type(refused) is QueryRefused and status_of(refused).code == 400 and prefers_html(request):
            return _syntax_error_page(text, str(refused), "the query check")  # a misspelt keyword: marked
        return answer_exception(refused, page=False)
    except NotAcceptable as error:
        return plain(str(error), 406)
    except QueryError as error:
        if prefers_html(request):
            return _syntax_error_page(text, str(error))
        return error_response(_syntax_message(text, str(error)), status_of(error).code, page=False)
    except ResultTooLarge as error:
        return answer_exception(error, page=False)
    if answer.media_type in XML_TYPES and _not_xml(answer):
        if answer.spooled is not None:
            answer.spooled.close()
        return plain(
            "the answer holds a character that XML 1.0 cannot carry (a control character such as U+0000,"
            " or U+FFFE/U+FFFF): ask for JSON, CSV or TSV results (Turtle or N-Triples for graphs)",
            406,
        )
    return _answer_response(answer)


PLAIN_EXPLAIN_MAX = 2 * 1024  # explaining costs ~100 parses: ~30 ms at 2 KB, 0.2 s at 6 KB


def _explain(query: str, longest: int) -> SyntaxProblem | None:
    """Where the query goes wrong, worked out in the query worker: the probes are queries the engine
    evaluates when they parse, so they get the deadline, memory limit and fair share of one (None
    when the query is longer than ``longest`` or the worker could not explain it in time)."""
    if len(query) > longest:
        return None
    try:
        problem: SyntaxProblem | None = get_store().run(explain_call, query)
    except (QueryTimeout, ServerBusy, WorkerFailed, OverShare, QueryCrashed):
        return None
    return problem


def _syntax_message(query: str, message: str) -> str:
    """The plain-text 400 (YASGUI shows it): for a short query, where it goes wrong and all that the
    engine accepts there; Oxigraph's own message names one keyword at a point past the error."""
    problem = _explain(query, PLAIN_EXPLAIN_MAX)
    if problem is None:
        return f"query syntax error: {message}"
    return f"query syntax error at {problem.describe()} (Oxigraph: {message})"


def _syntax_error_page(query: str, message: str, engine_name: str = "Oxigraph") -> Response:
    """A browser sent a malformed query: show it with the error's position marked, everything the engine
    accepts there (:mod:`bibgraph.graph.sparql.expected`), and a way back to the editor."""
    problem = _explain(query, MAX_QUERY)
    position = (problem.line, problem.column) if problem else error_position(query, message)
    found = (f"found “{problem.found}”" if problem.found else "the query ends") if problem else None
    return error_page(
        400,
        f"The query cannot be read at line {problem.line}, column {problem.column}: {found}."
        if problem
        else f"The parser says: {message}",
        title="Syntax error in the query",
        query_html=marked_query(query, position),
        position=f"line {position[0]}, column {position[1]}" if position else None,
        expected=problem.expected if problem else None,
        engine_message=message if problem else None,
        engine_name=engine_name,
        editor_link=url_for("sparql.endpoint") + "#" + urlencode({"query": query}),
    )


def _not_xml(answer: Answer) -> bool:
    """Whether the serialised XML holds a character XML 1.0 forbids (the engine writes them raw)."""
    if answer.spooled is None:
        return _NOT_XML.search(answer.body) is not None
    tail = b""
    try:
        while chunk := answer.spooled.read(1024 * 1024):
            if _NOT_XML.search(tail + chunk):
                return True
            tail = chunk[-2:]  # U+FFFE and U+FFFF are three bytes: one may straddle two chunks
        return False
    finally:
        answer.spooled.seek(0)


def _answer_response(answer: Answer) -> Response:
    """The answer as it is; a spooled one is streamed from its file (waitress sends a file wrapper unbuffered)."""
    content_type = _content_type(answer.media_type)
    if answer.spooled is None:
        return Response(answer.body, status=200, content_type=content_type)
    response = Response(
        wrap_file(request.environ, answer.spooled), status=200, content_type=content_type, direct_passthrough=True
    )
    response.content_length = answer.size
    return response


def _store() -> PooledStore:
    """The store, evaluating again when the client asks not to be answered from a cache (RFC 9111)."""
    store = get_store()
    no_cache = bool(request.cache_control.no_cache) or "no-cache" in request.pragma
    return store.uncached() if no_cache else store


def _content_type(media_type: str) -> str:
    textual = media_type.startswith("text/") or media_type.endswith(("json", "xml", "n-triples"))
    return f"{media_type}; charset=utf-8" if textual else media_type


def _describe_service() -> Response | str:
    try:
        syntax = choose_graph(request, default_html=True)
    except NotAcceptable as error:
        return plain(str(error), 406)
    if syntax is None:
        return query_page()
    body = service_description(public_root() + "sparql").serialize(format=syntax.rdflib_format, encoding="utf-8")
    return Response(body, content_type=_content_type(syntax.media_type))


def service_description(endpoint_url: str) -> Graph:
    """SPARQL 1.1 Service Description of this endpoint."""
    graph = Graph()
    graph.bind("sd", SD)
    graph.bind("void", VOID)
    service = URIRef(endpoint_url)
    graph.add((service, RDF.type, SD.Service))
    graph.add((service, SD.endpoint, service))
    graph.add((service, SD.supportedLanguage, SD.SPARQL11Query))
    for iri in ANSWER_FORMAT_IRIS:
        graph.add((service, SD.resultFormat, URIRef(iri)))
    dataset, default_graph = BNode("dataset"), BNode("default")
    graph.add((service, SD.defaultDataset, dataset))
    graph.add((dataset, RDF.type, SD.Dataset))
    graph.add((dataset, SD.defaultGraph, default_graph))
    graph.add((default_graph, RDF.type, SD.Graph))
    graph.add((default_graph, RDF.type, VOID.Dataset))
    with contextlib.suppress(QueryTimeout, ServerBusy, WorkerFailed, OverShare, QueryCrashed):
        graph.add((default_graph, VOID.triples, Literal(get_store().triple_count())))
    return graph
