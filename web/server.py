"""Serving the app with waitress, a production WSGI server (never Flask's development server)."""

from flask import Flask
from waitress import serve as waitress_serve


def serve(app: Flask, host: str, port: int, threads: int = 8) -> None:
    """Block serving ``app``; waitress buffers and limits requests before Flask sees them."""
    print(f"bibgraph: {app.config.get('BIBGRAPH_SUMMARY', '')}", flush=True)
    print(f"bibgraph: serving on http://{host}:{port}/ (SPARQL endpoint http://{host}:{port}/sparql)", flush=True)
    waitress_serve(
        app,
        host=host,
        port=port,
        threads=threads,
        max_request_body_size=app.config["MAX_CONTENT_LENGTH"],
        ident="bibgraph",
    )
