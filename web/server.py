"""Serving the app with waitress, a production WSGI server (never Flask's development server)."""

import errno
import socket
import threading

from flask import Flask
from waitress.server import create_server

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


class AddressUnusable(Exception):
    """The address to serve on cannot be listened on (in use, not this machine's, no permission)."""


def _unusable(host: str, port: int, error: OSError) -> AddressUnusable:
    reason = "already in use" if error.errno == errno.EADDRINUSE else (error.strerror or str(error))
    return AddressUnusable(f"cannot listen on {host}:{port}: {reason}")


def check_address(host: str, port: int) -> None:
    """Bind (and release) every address ``host:port`` names, as waitress will: before a long build,
    so that a port in use is one line at once rather than a traceback after the build."""
    try:
        addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as error:
        raise AddressUnusable(f"cannot listen on {host}:{port}: unknown host") from error
    for family, kind, protocol, _, address in addresses:
        with socket.socket(family, kind, protocol) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as waitress does
            try:
                probe.bind(address)
            except OSError as error:
                raise _unusable(host, port, error) from error


def serve(app: Flask, host: str, port: int, threads: int = 8) -> None:
    """Block serving ``app``; waitress buffers and limits requests before Flask sees them.

    Raises :class:`AddressUnusable` when the address cannot be listened on; "serving on" is
    printed only once it is.
    """
    print(f"bibgraph: {app.config.get('BIBGRAPH_SUMMARY', '')}", flush=True)
    try:
        server = create_server(
            app,
            host=host,
            port=port,
            threads=threads,
            max_request_body_size=app.config["MAX_CONTENT_LENGTH"],
            ident="bibgraph",
        )
    except OSError as error:
        raise _unusable(host, port, error) from error
    warm_up(app)
    print(f"bibgraph: serving on http://{host}:{port}/ (SPARQL endpoint http://{host}:{port}/sparql)", flush=True)
    server.run()
