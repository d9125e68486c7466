"""Choosing a response syntax from a ``format`` parameter or the ``Accept`` header (with q-values)."""

from collections.abc import Iterable
from typing import TypeVar

from flask import Request

from bibgraph.graph.formats import RDF_SYNTAXES, RESULT_SYNTAXES, RdfSyntax, ResultSyntax

Syntax = TypeVar("Syntax", bound=RdfSyntax | ResultSyntax)
HTML = "text/html"


class NotAcceptable(Exception):
    """Nothing the client accepts can be produced (HTTP 406)."""


def _media_types(syntax: RdfSyntax | ResultSyntax) -> list[str]:
    return [syntax.media_type, *(alias for alias in syntax.aliases if "/" in alias)]


def choose(request: Request, syntaxes: Iterable[Syntax], default_html: bool = False) -> Syntax | None:
    """The syntax to answer in; ``None`` means HTML (only when ``default_html`` and the client prefers it)."""
    options = list(syntaxes)
    wanted = request.values.get("format")
    if wanted:
        key = wanted.lower()
        if default_html and key == "html":
            return None
        for syntax in options:
            if key in (syntax.name, syntax.suffix, *_media_types(syntax), *syntax.aliases):
                return syntax
        raise NotAcceptable(f"unknown format {wanted!r}; use one of {', '.join(s.name for s in options)}")
    candidates = ([HTML] if default_html else []) + [t for syntax in options for t in _media_types(syntax)]
    if not request.accept_mimetypes:
        return None if default_html else options[0]
    best = request.accept_mimetypes.best_match(candidates)
    if best is None:
        raise NotAcceptable("none of the accepted media types can be produced; available: " + ", ".join(candidates))
    if best == HTML:
        return None
    return next(syntax for syntax in options if best in _media_types(syntax))


def choose_results(request: Request) -> ResultSyntax:
    syntax = choose(request, RESULT_SYNTAXES)
    assert syntax is not None
    return syntax


def choose_graph(request: Request, default_html: bool = False) -> RdfSyntax | None:
    return choose(request, RDF_SYNTAXES, default_html)
