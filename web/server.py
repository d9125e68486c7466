"""Serving the app with waitress, a production WSGI server (never Flask's development server)."""

import threading

from flask import Flask
from waitress import serve as waitress_serve

from bibgraph.graph.memory import release_free_memory

from .graphstore import get_store, sandbox_refusal

WARM_PATHS = ("/graph/coauthors", "/graph/topics")


def warm_up(app: Flask) -> threading.Thread:
    """Derive and lay out the default network views in the background, so the first visitor waits less."""

    def run() -> None:
        client = app.test_client()
        for path in WARM_PATHS:
            client.get(path)
        release_free_memory()  # the derivation's intermediate graphs are garbage now

    thread = threading.Thread(target=run, name="bibgraph-warm-up", daemon=True)
    thread.start()
    return thread


def serve(app: Flask, host: str, port: int, threads: int = 8) -> None:
    """Block serving ``app``; waitress buffers and limits requests before Flask sees them."""
    print(f"bibgraph: {app.config.get('BIBGRAPH_SUMMARY', '')}", flush=True)
    with app.app_context():
        refusal = sandbox_refusal()
        error = get_store().pool.sandbox_error
    if refusal:
        print(f"bibgraph: warning: {refusal}", flush=True)
    elif error:
        print(f"bibgraph: warning: SPARQL served unsandboxed (--unsandboxed): {error}", flush=True)
    warm_up(app)
    print(f"bibgraph: serving on http://{host}:{port}/ (SPARQL endpoint http://{host}:{port}/sparql)", flush=True)
    waitress_serve(
        app,
        host=host,
        port=port,
        threads=threads,
        max_request_body_size=app.config["MAX_CONTENT_LENGTH"],
        ident="bibgraph",
    )
