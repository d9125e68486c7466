"""Error answers: a styled page (navigation, search, what went wrong) for browsers, plain text for the rest.

Browsers are told apart by ``Accept``: ``text/html`` must be preferred over ``text/plain``, so curl
(``*/*``) and RDF or SPARQL clients keep the short plain-text body they parse.
"""

import re
from dataclasses import dataclass
from urllib.parse import urlencode

from flask import Flask, Request, Response, current_app, render_template, request, url_for
from markupsafe import Markup, escape
from werkzeug.exceptions import HTTPException

from bibgraph.graph.serving.fairshare import OverShare, ServerBusy
from bibgraph.graph.serving.pool import ClientLeft, QueryCrashed, QueryTimeout, ResultTooLarge, WorkerFailed
from bibgraph.graph.sparql.guard import QueryForbidden, QueryRefused
from bibgraph.graph.stores.store import QueryError
from bibgraph.web.negotiation import accepted

WORKER_FAILED = "bibgraph.worker_failed"  # app.extensions: callables told a failed query worker's message

TITLES = {
    400: "Bad request",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    406: "Not acceptable",
    422: "Answer too large",
    429: "Too many requests",
    500: "Something went wrong",
    503: "Busy",
}
_POSITION = re.compile(r"\b(?:at|line) (\d+):(\d+)")


def prefers_html(req: Request) -> bool:
    """The client would rather read HTML than plain text (a browser navigating), and named no ``format``."""
    if req.values.get("format"):
        return False
    accept = accepted(req)
    return accept.best_match(["text/plain", "text/html"]) == "text/html" and accept["text/html"] > accept["text/plain"]


def error_page(status: int, message: str, title: str | None = None, **extra: object) -> Response:
    title = title or TITLES.get(status, "Error")
    body = render_template("error.html", title=title, status=status, message=message, **extra)
    return Response(body, status=status, content_type="text/html; charset=utf-8")


def _back_to_the_editor() -> str | None:
    """A query sent from a browser that failed (past its deadline, a busy server): the page links back to the
    editor holding it, as a syntax error's page does, so that it can be changed and run again."""
    query = request.values.get("query") if request.endpoint == "sparql.endpoint" else None
    return url_for("sparql.endpoint") + "#" + urlencode({"query": query}) if query else None


def error_response(message: str, status: int, retry_after: int | None = None, page: bool | None = None) -> Response:
    """The one way to answer an error: the site's page for a browser (``page`` None: as the request
    prefers; False where clients parse the answer, as at ``/sparql``), else one line of plain text."""
    if page if page is not None else prefers_html(request):
        response = error_page(status, message, editor_link=_back_to_the_editor())
    else:
        response = Response(message.rstrip() + "\n", status=status, mimetype="text/plain")
    if retry_after is not None:
        response.headers["Retry-After"] = str(retry_after)
    return response


@dataclass(frozen=True)
class Status:
    """How an exception of the domain is answered over HTTP."""

    code: int
    retry_after: int | None = None  # seconds (OverShare says its own)
    prefix: str = ""  # put before the exception's message


BUSY = Status(503, 1, "the query could not be answered: ")
# The first entry an exception is an instance of answers it (subclasses before their bases).
STATUSES: dict[type[Exception], Status] = {
    QueryForbidden: Status(403),
    QueryRefused: Status(400),
    QueryError: Status(400, prefix="query syntax error: "),
    QueryCrashed: Status(400),
    ResultTooLarge: Status(422),
    OverShare: Status(429),
    QueryTimeout: BUSY,
    ClientLeft: Status(503, 1),  # the answer goes nowhere: its client has gone
    ServerBusy: BUSY,
    WorkerFailed: BUSY,
}


def status_of(error: Exception) -> Status:
    """The HTTP answer for one of the domain's exceptions (:data:`STATUSES`)."""
    return next(status for kind, status in STATUSES.items() if isinstance(error, kind))


def answer_exception(error: Exception, page: bool | None = None) -> Response:
    """A domain exception as an HTTP error (status, Retry-After, message)."""
    status = status_of(error)
    if isinstance(error, WorkerFailed):
        current_app.logger.error("query worker failed: %s", error)
        for listener in current_app.extensions.get(WORKER_FAILED, ()):
            listener(str(error))
    retry_after = error.retry_after if isinstance(error, OverShare) else status.retry_after
    return error_response(f"{status.prefix}{error}", status.code, retry_after, page)


def error_position(query: str, message: str) -> tuple[int, int] | None:
    """(line, column) of a syntax error, both from 1, as the engine's message names it (``at LINE:COLUMN``).

    Only a fallback: the query worker explains errors far better (:mod:`bibgraph.graph.sparql.expected`). It is
    used when that explanation ran out of time or share, which an attacker can arrange, so it must cost
    this process nothing: rdflib's parser (a better position) took 2-4 s of this process's CPU for an
    8 KB ``IN (1,1,...)`` list while holding the GIL for every other request.
    """
    found = _POSITION.search(message)
    return (int(found.group(1)), int(found.group(2))) if found else None


def marked_query(query: str, position: tuple[int, int] | None) -> Markup | None:
    """The query as HTML with the character at ``position`` (line, column) marked, or ``None``."""
    if position is None:
        return None
    line, column = position
    lines = query.split("\n")
    if not 1 <= line <= len(lines):
        return None
    out = []
    for number, text in enumerate(lines, 1):
        if number == line:
            at = max(0, min(column - 1, len(text)))
            here = text[at : at + 1] or " "
            text_html = f'{escape(text[:at])}<mark id="error-position">{escape(here)}</mark>{escape(text[at + 1 :])}'
            out.append(f'<span class="error-line">{text_html}</span>')
        else:
            out.append(str(escape(text)))
    return Markup("\n".join(out))


def init_app(app: Flask) -> None:
    # A page, a view or a download that ran out of time or share (the endpoint answers all of STATUSES itself);
    # the others, raised by a page's own query, are bugs: 500.
    for kind in (OverShare, QueryTimeout, ServerBusy, WorkerFailed, QueryCrashed, ClientLeft):
        app.register_error_handler(kind, answer_exception)
    app.register_error_handler(ResultTooLarge, _page_over_a_limit)

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException) -> Response | HTTPException:
        status = error.code or 500
        if not prefers_html(request):
            return Response(f"{status} {error.name}: {error.description}\n", status, mimetype="text/plain")
        if status not in TITLES:
            return error
        message = error.description if status in (400, 405, 406) else _DEFAULT.get(status, error.description)
        return error_page(status, message or "")

    @app.errorhandler(500)
    def server_error(error: Exception) -> Response:
        if prefers_html(request):
            return error_page(500, _DEFAULT[500])
        return Response("internal server error\n", 500, mimetype="text/plain")


def _page_over_a_limit(error: ResultTooLarge) -> Response:
    """A page whose own query passed a limit (the site's bound: its queries are not held to the clients'): the
    page cannot be made now, which is the server's state, not the client's request. A styled 503 with a retry
    hint, never a 500 with a traceback; the limit is logged for the operator."""
    current_app.logger.error("a page's query passed a limit at %s: %s", request.path, error)
    return error_response(_DEFAULT[503], 503, BUSY.retry_after)


_DEFAULT = {
    403: "This address is not open to requests.",
    404: "There is no page at this address. The paper, author or area may be spelled differently: try the search.",
    500: "The server could not answer this request. It has been logged; try again, or start from the home page.",
    503: "The server is busy; try again in a moment.",
}
