"""Serving the app with waitress, a production WSGI server (never Flask's development server)."""

import resource
import threading
from collections.abc import Mapping
from typing import Any

from flask import Flask
from waitress import serve as waitress_serve

from bibgraph.graph.memory import release_free_memory

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


def serve(app: Flask, host: str, port: int) -> None:
    """Block serving ``app``; waitress buffers and limits requests before Flask sees them."""
    print(f"bibgraph: {app.config.get('BIBGRAPH_SUMMARY', '')}", flush=True)
    warm_up(app)
    print(f"bibgraph: serving on http://{host}:{port}/ (SPARQL endpoint http://{host}:{port}/sparql)", flush=True)
    options = waitress_options(app.config)
    _allow_descriptors(options["connection_limit"] + options["threads"] + 64)
    waitress_serve(app, host=host, port=port, **options)


def waitress_options(config: Mapping[str, Any]) -> dict[str, Any]:
    """Waitress's limits, set deliberately: idle connections must not lock others out (slow-loris).

    poll() rather than select(), which fails past 1024 descriptors; a stalled connection is checked
    a few times per ``CHANNEL_TIMEOUT``. Behind a reverse proxy at ``TRUSTED_PROXY``, the client is
    the last address of its X-Forwarded-For (from anyone else, the header is dropped).
    """
    options: dict[str, Any] = {
        "threads": int(config["WEB_THREADS"]),
        "connection_limit": int(config["CONNECTION_LIMIT"]),
        "channel_timeout": int(config["CHANNEL_TIMEOUT"]),
        "cleanup_interval": max(1, int(config["CHANNEL_TIMEOUT"]) // 3),
        "backlog": int(config["BACKLOG"]),
        "asyncore_use_poll": True,
        "max_request_body_size": config["MAX_CONTENT_LENGTH"],
        "ident": "bibgraph",
    }
    if config["TRUSTED_PROXY"]:
        options |= {
            "trusted_proxy": config["TRUSTED_PROXY"],
            "trusted_proxy_count": 1,
            "trusted_proxy_headers": {"x-forwarded-for"},
            "clear_untrusted_proxy_headers": True,
        }
    return options


def _allow_descriptors(needed: int) -> None:
    """Raise the soft limit of open files towards ``needed`` (as far as the hard limit allows)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
    if wanted > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
