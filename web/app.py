"""The Flask application factory (no module-level app, as in Flask's tutorial)."""

from typing import Any

from flask import Flask, Response, request
from flask_cors import CORS

from . import downloads, errors, graphstore, graphviews, pages, resources, sparql
from .settings import defaults


def create_app(config: dict[str, Any] | None = None) -> Flask:
    """Build the app; ``config`` overrides the defaults declared in :mod:`bibgraph.web.settings`."""
    app = Flask(__name__)
    app.config.from_mapping(defaults())
    if config:
        app.config.from_mapping(config)
    app.json.ensure_ascii = False  # type: ignore[attr-defined]
    graphstore.init_app(app)
    errors.init_app(app)
    app.register_blueprint(sparql.blueprint)
    app.register_blueprint(graphviews.blueprint)
    app.register_blueprint(pages.blueprint)
    app.register_blueprint(resources.blueprint)
    app.register_blueprint(downloads.blueprint)
    CORS(app, resources={r"/sparql": {"origins": "*"}}, send_wildcard=True, expose_headers=["Content-Type", "Vary"])

    @app.before_request
    def limit_url_length() -> Response | None:
        if len(request.full_path.encode()) > app.config["MAX_URL_LENGTH"]:
            return Response("request URL too long; send the query with POST\n", 414, mimetype="text/plain")
        return None

    @app.errorhandler(413)
    def too_large(_: Exception) -> Response:
        limit = app.config["MAX_CONTENT_LENGTH"]
        return Response(f"request body over the {limit}-byte limit\n", 413, mimetype="text/plain")

    return app
