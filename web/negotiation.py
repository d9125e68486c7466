"""Choosing a response syntax from a ``format`` parameter or the ``Accept`` header (with q-values).

Whatever reads ``Accept`` to shape an answer reads it through :func:`accepted`, which marks the
response ``Vary: Accept`` (:func:`init_app`): a shared cache must not hand one client's variant (an
HTML page, a 404 in plain text, a 406) to a client that asked for another. An answer chosen by
``format=`` alone does not vary: the parameter is part of its URL.
"""

from collections.abc import Iterable
from typing import TypeVar

from flask import Flask, Request, Response, g
from werkzeug.datastructures import MIMEAccept
from werkzeug.http import parse_accept_header

from bibgraph.graph.rdf.formats import RDF_SYNTAXES, RESULT_SYNTAXES, RdfSyntax, ResultSyntax

Syntax = TypeVar("Syntax", bound=RdfSyntax | ResultSyntax)
HTML = "text/html"


class NotAcceptable(Exception):
    """Nothing the client accepts can be produced (HTTP 406)."""


# What of an Accept header is read: browsers send ~100-300 bytes and RDF clients a dozen ranges, but waitress
# lets headers reach 256 KB, and werkzeug's parsing and matching of 10,000 ranges (180 KB) cost ~1 s of this
# process's CPU, under the GIL, per request (a 404 or a 406 too).
ACCEPT_BYTES = 2048
ACCEPT_RANGES = 32


def accepted(request: Request) -> MIMEAccept:
    """The request's ``Accept`` header, read to choose the answer: the answer will say ``Vary: Accept``.

    Only its first :data:`ACCEPT_RANGES` media ranges within :data:`ACCEPT_BYTES` bytes count."""
    g.varies_by_accept = True
    if "accept" not in g:
        header = request.headers.get("Accept", "")
        if len(header) > ACCEPT_BYTES or header.count(",") >= ACCEPT_RANGES:
            header = ",".join(header[:ACCEPT_BYTES].split(",")[:ACCEPT_RANGES])
        g.accept = parse_accept_header(header, MIMEAccept)
    accept: MIMEAccept = g.accept
    return accept


def init_app(app: Flask) -> None:
    @app.after_request  # also runs for the answers of error handlers
    def vary_by_accept(response: Response) -> Response:
        if g.get("varies_by_accept"):
            response.vary.add("Accept")
        return response


def _media_types(syntax: RdfSyntax | ResultSyntax) -> list[str]:
    return [syntax.media_type, *(alias for alias in syntax.aliases if "/" in alias)]


def choose(
    request: Request, syntaxes: Iterable[Syntax], default_html: bool = False, answer: str = "this answer"
) -> Syntax | None:
    """The syntax to answer in; ``None`` means HTML (only when ``default_html`` and the client prefers it).

    ``format=`` wins over Accept. It may come more than once (SPARQLWrapper sends ``format=tsv`` and
    ``format=text/tab-separated-values``): the first value naming a syntax of ``syntaxes`` is taken."""
    options = list(syntaxes)
    wanted = [value for value in request.values.getlist("format") if value]
    for value in wanted:
        key = value.lower().strip()
        if default_html and key == "html":
            return None
        for syntax in options:
            if key in (syntax.name, syntax.suffix, *_media_types(syntax), *syntax.aliases):
                return syntax
    if wanted:
        raise NotAcceptable(
            f"format {wanted[0]!r} does not fit {answer}: use one of {', '.join(s.name for s in options)}"
        )
    candidates = ([HTML] if default_html else []) + [t for syntax in options for t in _media_types(syntax)]
    accept = accepted(request)
    if not accept:
        return None if default_html else options[0]
    best = accept.best_match(candidates)
    if best is None:
        raise NotAcceptable("none of the accepted media types can be produced; available: " + ", ".join(candidates))
    if best == HTML:
        return None
    return next(syntax for syntax in options if best in _media_types(syntax))


def choose_results(request: Request) -> ResultSyntax:
    syntax = choose(request, RESULT_SYNTAXES, answer="a SELECT or ASK (its answer is a table of results)")
    assert syntax is not None
    return syntax


def choose_graph(request: Request, default_html: bool = False) -> RdfSyntax | None:
    return choose(request, RDF_SYNTAXES, default_html, answer="an RDF graph (a CONSTRUCT, a DESCRIBE, a resource)")
