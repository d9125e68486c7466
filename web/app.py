"""The Flask application factory (no module-level app, as in Flask's tutorial)."""

from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from flask import Flask, Response, request
from flask.json.provider import DefaultJSONProvider
from flask_compress import Compress
from flask_cors import CORS
from werkzeug.middleware.proxy_fix import ProxyFix

from bibgraph.graph.networks.exports import NETWORK_SYNTAXES
from bibgraph.graph.rdf.formats import RDF_SYNTAXES, RESULT_SYNTAXES
from bibgraph.graph.site.cite import LIST_FORMATS
from bibgraph.web import downloads, errors, graphstore, negotiation, operations, pages, resources, versionswitch
from bibgraph.web.links import CONTENT_SECURITY_POLICY, AtBase, ForwardedChecked
from bibgraph.web.maps import cache, views
from bibgraph.web.settings import resolve
from bibgraph.web.sparql import endpoint


def create_app(config: dict[str, Any] | None = None) -> Flask:
    """Build the app; ``config`` overrides ``BIBGRAPH_…`` variables, which override the defaults
    declared in :mod:`bibgraph.web.settings`."""
    app = Flask(__name__)
    app.config.from_mapping(resolve(config))
    app.config.from_mapping(COMPRESSION)
    if isinstance(app.json, DefaultJSONProvider):  # the provider Flask makes; a custom one decides itself
        app.json.ensure_ascii = False
    if hops := int(app.config["PROXY_HOPS"]):
        # Behind that many reverse proxies, their X-Forwarded-* headers say the client, scheme, host and
        # path prefix; with none trusted (0) such headers change nothing (the base IRI stays the public URL).
        # Flask documents wrapping ``wsgi_app`` as the way to add middleware; mypy sees a method replaced
        # (hence the two ignores below).
        checked = ForwardedChecked(app.wsgi_app)  # what ProxyFix reads must be a URL root
        app.wsgi_app = ProxyFix(checked, x_for=hops, x_proto=hops, x_host=hops, x_port=hops, x_prefix=hops)  # type: ignore[method-assign]
    else:  # werkzeug's own absolute URLs (slash redirects) must not follow a client's Host either
        app.wsgi_app = AtBase(app.wsgi_app, app.config["BIBGRAPH_BASE"])  # type: ignore[method-assign]
    if app.config.get("PUBLISHED"):  # an engine's search and figures from the published dataset, checked now
        if not str(app.config["BIBGRAPH_STORE"]).startswith("sparql:"):
            raise ValueError("PUBLISHED (--published) names the dataset published into a sparql: store")
        cache.check_published(Path(app.config["PUBLISHED"]))
    versionswitch.init_app(app)  # a dataset: pin its version before the store opens
    graphstore.init_app(app)
    errors.init_app(app)
    negotiation.init_app(app)  # Vary: Accept on every answer chosen by Accept
    app.register_blueprint(endpoint.blueprint)
    app.register_blueprint(views.blueprint)
    app.register_blueprint(pages.blueprint)
    app.register_blueprint(resources.blueprint)
    app.register_blueprint(downloads.blueprint)
    operations.init_app(app)
    cache.init_app(app)  # after the metrics: its gate's figures join them
    CORS(
        app,
        resources={r"/sparql": {"origins": "*"}},
        send_wildcard=True,
        expose_headers=["Content-Type", "Vary"],
        methods=["GET", "HEAD", "POST", "OPTIONS"],  # what /sparql answers (the default names PUT, DELETE...)
    )

    if str(app.config["BIBGRAPH_STORE"]).startswith("sparql:"):

        @app.before_request
        def follow_the_pointer() -> None:
            """Every answer from the version the engine's pointer names: what was derived or written (figures,
            exports, dumps) from the one before is left once a publish switches it (checked every few seconds);
            ``/health`` answers even while the engine does not."""
            if request.endpoint not in ("health", "static"):
                cache.networks()

    @app.before_request
    def limit_url_length() -> Response | None:
        if len(request.full_path.encode()) > app.config["MAX_URL_LENGTH"]:
            return Response("request URL too long; send the query with POST\n", 414, mimetype="text/plain")
        return None

    @app.before_request
    def refuse_undecodable_urls() -> Response | None:
        if not url_is_utf8(request.environ):
            return Response("the URL is not valid UTF-8 once percent-decoded\n", 400, mimetype="text/plain")
        return None

    compress = Compress()
    compress.init_app(app)

    @app.after_request
    def compressed(response: Response) -> Response:
        """Flask-Compress (gzip or br as the client accepts) for text answers. Never a part (206) or a dump
        (resumable downloads: their Range offsets and ETag name the file's own bytes; gzip copies exist
        beside them); an encoded answer no longer offers ranges, which would count the encoded bytes."""
        if response.status_code == 206 or request.blueprint == downloads.blueprint.name:
            return response
        response = compress.after_request(response)
        if "Content-Encoding" in response.headers:
            response.headers.pop("Accept-Ranges", None)
        return response

    @app.after_request
    def security_headers(response: Response) -> Response:
        response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        return response

    @app.errorhandler(413)
    def too_large(_: Exception) -> Response:
        limit = app.config["MAX_CONTENT_LENGTH"]
        return Response(f"request body over the {limit}-byte limit\n", 413, mimetype="text/plain")

    return app


# Flask-Compress's settings: registered by :func:`create_app` (so that ranged files are left alone); brotli
# then gzip; streamed answers (spooled SPARQL results) are compressed chunk by chunk and still stream.
COMPRESSION: dict[str, Any] = {
    "COMPRESS_REGISTER": False,
    "COMPRESS_ALGORITHM": ["br", "gzip"],
    "COMPRESS_ALGORITHM_STREAMING": ["br", "gzip"],  # static files are streamed too: gzip-only clients get them packed
    "COMPRESS_MIMETYPES": sorted(
        {"text/html", "text/css", "text/plain", "text/javascript", "application/javascript", "application/json"}
        | {"image/svg+xml", "application/xml", "text/xml", "application/sparql-query"}
        | {syntax.media_type for syntax in RDF_SYNTAXES}
        | {syntax.media_type for syntax in RESULT_SYNTAXES}
        | {syntax.media_type for syntax in NETWORK_SYNTAXES}
        | {media_type for media_type, _, _ in LIST_FORMATS.values()}
    ),
}


def url_is_utf8(environ: dict[str, Any]) -> bool:
    """Whether the request's path and query string decode as UTF-8. Werkzeug would turn the bytes
    of ``%ff`` into U+FFFD in a path and keep them as ``%FF`` text in a query value, so a key that
    cannot be UTF-8 would otherwise reach the views as some other, valid-looking key."""
    try:
        environ.get("PATH_INFO", "").encode("latin-1").decode("utf-8")
        parse_qsl(environ.get("QUERY_STRING", ""), keep_blank_values=True, encoding="utf-8", errors="strict")
    except UnicodeError:
        return False
    return True
