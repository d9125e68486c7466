"""Between the graph's IRIs and this app's URLs: an IRI under the base IRI is served at its path.

The IRI shapes themselves are :mod:`bibgraph.graph.rdf.iris`; this module adds the app's base, its public
root and HTTP errors.

Two roots: the dataset's base IRI (``BIBGRAPH_BASE``), which every minted IRI starts with, and the
site's public root, which every absolute URL of a page, dump, endpoint or sitemap starts with. They
are the same unless ``PROXY_HOPS`` trusts a reverse proxy's ``X-Forwarded-*`` headers: then the
public root is what the proxy says (scheme, host, port and ``X-Forwarded-Prefix``; the ``Host`` it
forwards when it sends no ``X-Forwarded-Host``). With no proxy trusted, never the ``Host`` header: an
untrusted client must not be able to choose the URLs others are sent to.
"""

import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from flask import abort, current_app, has_request_context, request

from bibgraph.graph.rdf.iris import Iris, iris

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment


def base_iri() -> str:
    return str(current_app.config["BIBGRAPH_BASE"])


def app_iris() -> Iris:
    """The IRIs this app serves (under its base IRI)."""
    return iris(base_iri())


def public_root() -> str:
    """The site's public URL ending in ``/``: from a trusted proxy's headers, else the base IRI."""
    if current_app.config["PROXY_HOPS"] and has_request_context():
        return request.url_root  # scheme://host[:port]/prefix/ as ProxyFix set them
    return base_iri()


def app_root() -> str:
    """The path the app is mounted at, ending in ``/`` (``/bib/`` behind a proxy's prefix, else ``/``)."""
    return (request.script_root if has_request_context() else "") + "/"


def local_url(iri: str) -> str | None:
    """The app path of an IRI minted under the base (``None`` for foreign IRIs); cacheable, as it
    never holds the proxy's prefix (links in pages use :func:`site_url`)."""
    return local_urls()(iri)


def local_urls() -> Callable[[str], str | None]:
    """:func:`local_url` with the base read once: a map asks it for each of its thousand nodes."""
    from bibgraph.graph.site.mapview import site_paths

    return site_paths(base_iri())


def site_url(iri: str) -> str | None:
    """The link to an IRI minted under the base, under the app's prefix (``None`` for foreign IRIs)."""
    path = local_url(iri)
    return None if path is None else app_root() + path[1:]


def public_url(iri: str) -> str:
    """The absolute public URL of an IRI minted under the base (foreign IRIs as they are)."""
    base = base_iri()
    return public_root() + iri[len(base) :] if iri.startswith(base) else iri


def iri_of(path: str, status: int = 404) -> str:
    """The IRI that the app path ``path`` (without leading slash) names.

    A path that makes no IRI (control characters, spaces, ``<>"{}|^`\\``, undecodable bytes, which
    arrive as U+FFFD) names nothing here: ``status`` (404 for a URL path, 400 for a query parameter).
    """
    iri = app_iris().at_path(path)
    if iri is None:
        abort(status, "not a key of this dataset")
    return iri


def concept_iri(value: str, status: int = 400) -> str:
    """The area or subarea ``value`` names, by path or slug (:meth:`Iris.concept`); else ``status``."""
    iri = app_iris().concept(value)
    if iri is None:
        abort(status, "not an area of this dataset")
    return iri


class AtBase:
    """WSGI middleware for ``PROXY_HOPS=0``: every request is seen at the base IRI's scheme and host.

    Werkzeug makes some absolute URLs itself from the request (the redirect of a URL missing its
    trailing slash: ``/download`` to ``http://HOST/download/``, in ``Location`` and in the body), so a
    forged ``Host`` would otherwise choose them; with this, they name the public root like every other.
    """

    def __init__(self, app: "WSGIApplication", base: str) -> None:
        self.app = app
        parts = urlsplit(base)
        self.scheme, self.host = parts.scheme, parts.netloc

    def __call__(self, environ: "WSGIEnvironment", start_response: "StartResponse") -> Iterable[bytes]:
        environ["HTTP_HOST"], environ["wsgi.url_scheme"] = self.host, self.scheme
        result: Iterable[bytes] = self.app(environ, start_response)
        return result


# What a trusted proxy may say the public root is. A proxy that does not set X-Forwarded-Prefix (or -Host)
# passes the client's own on: ``X-Forwarded-Prefix: //evil.example`` made every page load its scripts from
# evil.example, ``javascript:alert(1)`` made every link a script; and a shared cache keeps such a page.
_PREFIX = re.compile(r"(?:/[A-Za-z0-9\-._~!$&'()*+,;=:@%]+)*/?")
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?"
_HOST = re.compile(rf"(?:{_LABEL}(?:\.{_LABEL})*\.?|\[[0-9A-Fa-f:.]+\])(?::[0-9]{{1,5}})?")


class ForwardedChecked:
    """WSGI middleware under werkzeug's ``ProxyFix``: the root it read from the forwarded headers must be a
    root (scheme http or https, a host name or address with an optional port, a path prefix), else 400."""

    def __init__(self, app: "WSGIApplication") -> None:
        self.app = app

    def __call__(self, environ: "WSGIEnvironment", start_response: "StartResponse") -> Iterable[bytes]:
        prefix, host = environ.get("SCRIPT_NAME", ""), environ.get("HTTP_HOST", "")
        if (
            environ.get("wsgi.url_scheme") not in ("http", "https")
            or not _PREFIX.fullmatch(prefix)
            or prefix.startswith("//")
            or (host and not _HOST.fullmatch(host))
        ):
            body = b"the forwarded scheme, host or prefix is not a URL root\n"
            start_response(
                "400 BAD REQUEST", [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(body)))]
            )
            return [body]
        result: Iterable[bytes] = self.app(environ, start_response)
        return result


# The second layer under the escaping of every page: the site runs no inline script and loads nothing from
# elsewhere, so a name or abstract that ever slipped through as markup could run nothing and send nothing
# out. Styles may be inline (the charts' bars, KaTeX's and vis-network's own); pages frame only their own
# maps (the ego map in an author page) and are framed by nobody else.
_POLICY = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self' 'unsafe-inline'",
    "img-src": "'self' data: blob:",
    "font-src": "'self' data:",
    "connect-src": "'self'",
    "frame-src": "'self'",
    "frame-ancestors": "'self'",
    "object-src": "'none'",
    "base-uri": "'self'",
    "form-action": "'self'",
}


def content_security_policy(handler_attributes: bool = False) -> str:
    """The policy of every answer; ``handler_attributes`` (the query page only) lets YASGUI's sanitiser
    (DOMPurify) parse the HTML it cleans, whose event-handler attributes the policy would report as blocked."""
    policy = _POLICY | ({"script-src-attr": "'unsafe-inline'"} if handler_attributes else {})
    return "; ".join(f"{name} {value}" for name, value in policy.items())


CONTENT_SECURITY_POLICY = content_security_policy()
