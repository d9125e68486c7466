"""Serving the app with waitress, a production WSGI server (never Flask's development server)."""

import errno
import gc
import importlib
import logging
import resource
import socket
import threading
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from flask import Flask
from waitress.server import create_server

from bibgraph.graph.dataset.derived import DamagedFile
from bibgraph.graph.serving.memory import release_free_memory
from bibgraph.web.graphstore import get_store, sandbox_refusal
from bibgraph.web.maps.cache import networks
from bibgraph.web.maps.valuecache import OWN_REQUEST
from bibgraph.web.versionswitch import VIEW_IMPORTS

WARM_PATHS = ("/graph/coauthors", "/graph/topics")
# Requests read ahead on a busy connection: more than 0, else a closed connection goes unseen. Needs waitress >= 3.0.1
# (pyproject): before, with a lookahead, a pipelined request could follow an invalid first one (CVE-2024-49768).
LOOKAHEAD = 1


def warm_up(app: Flask) -> threading.Thread:
    """Derive and lay out the default network views in the background, then load the modules the other views
    import on first use: the first visitor waits less, and ``serve`` listens before any of it (a filtered map's
    first request at a million papers spent 0.8 of its 3.4 s importing numpy, scipy and pyvis, which maps no
    longer use)."""

    def run() -> None:
        search = threading.Thread(target=warm_kept, args=(app,), name="bibgraph-warm-up-kept", daemon=True)
        search.start()
        for name in app.jinja_env.list_templates():  # compiled now, not by each page's first visitor (0.2 s each)
            app.jinja_env.get_template(name)
        client = app.test_client()
        for path in WARM_PATHS:
            client.get(path, environ_base={OWN_REQUEST: True})
        for module in VIEW_IMPORTS:  # all in FIRST_USE_IMPORTS: a version switch waits for these imports to end
            importlib.import_module(module)
        search.join()
        release_free_memory()  # the derivation's intermediate graphs are garbage now
        # What the start and the warm-up made (modules, the app, the default maps) lives as long as the server:
        # out of the collector's generations, so that a full collection (when a first map reads its files) does
        # not walk it again. At 10k papers one took ~0.35 s of a first area map's 0.5 s, under load.
        gc.freeze()

    thread = threading.Thread(target=run, name="bibgraph-warm-up", daemon=True)
    thread.start()
    return thread


def warm_kept(app: Flask) -> None:
    """Read the incidence a dataset keeps (served, or published into the engine), which a paper's and an author's
    page read their co-authors from (203 MB at a million papers), then open and check its search index before the
    first search (its checksum reads the whole file: 2 GB at a million papers; pages label from the store
    meanwhile)."""
    with app.app_context():
        try:
            networks().kept_incidence()
        except DamagedFile as error:  # told again to the first request that reads it
            logging.getLogger("bibgraph.maps").error("%s", error)
        networks().warm_search_index()


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


def serve(app: Flask, host: str, port: int) -> None:
    """Block serving ``app``; waitress buffers and limits requests before Flask sees them.

    Raises :class:`AddressUnusable` when the address cannot be listened on; "serving on" is
    printed only once it is.
    """
    print(f"bibgraph: {app.config.get('BIBGRAPH_SUMMARY', '')}", flush=True)
    print(f"bibgraph: {base_notice(app.config, host, port)}", flush=True)
    with app.app_context():
        refusal = sandbox_refusal()
        unsandboxed = get_store().pool.sandbox_error
    if refusal:
        print(f"bibgraph: warning: {refusal}", flush=True)
    elif unsandboxed:
        print(f"bibgraph: warning: SPARQL served unsandboxed (--unsandboxed): {unsandboxed}", flush=True)
    options = waitress_options(app.config)
    _allow_descriptors(options["connection_limit"] + options["threads"] + 64)
    try:
        server = create_server(app, host=host, port=port, **options)
    except OSError as error:
        raise _unusable(host, port, error) from error
    warm_up(app)
    print(f"bibgraph: serving on http://{host}:{port}/ (SPARQL endpoint http://{host}:{port}/sparql)", flush=True)
    server.run()


WILDCARDS = ("0.0.0.0", "::", "")  # listening on every interface: any host name may reach it


def base_is_served(base: str, host: str, port: int) -> bool:
    """Whether the base IRI is this server's own address (its host, or any when it listens on all, and its port)."""
    parts = urlsplit(base)
    default = 443 if parts.scheme == "https" else 80
    return (parts.port or default) == port and (host in WILDCARDS or (parts.hostname or "") == host.strip("[]"))


def base_notice(config: Mapping[str, Any], host: str, port: int) -> str:
    """What the links of the pages name, said at start: the base IRI (a dataset keeps the one it was built
    with) is the site's address in canonical links and in what /dataset lists; a warning when it is not
    the address served, unless a trusted proxy's headers say the public address."""
    base = str(config["BIBGRAPH_BASE"])
    served = f"http://{host}:{port}/"
    if config.get("PROXY_HOPS"):
        return f"base IRI {base}; links follow the address the proxy's headers give"
    if base_is_served(base, host, port):
        return f"base IRI {base}: links, canonical links and /dataset name this address"
    return (
        f"warning: base IRI {base} is not this address ({served}): pages, canonical links and the addresses "
        f"/dataset lists name {base} (IRIs are the data's); serve on that address, or build with --base {served}"
    )


def waitress_options(config: Mapping[str, Any]) -> dict[str, Any]:
    """Waitress's limits, set deliberately: idle connections must not lock others out (slow-loris).

    poll() rather than select(), which fails past 1024 descriptors; a stalled connection is checked
    a few times per ``CHANNEL_TIMEOUT``. Behind a reverse proxy at ``TRUSTED_PROXY``, the client is
    the last address of its X-Forwarded-For (from anyone else, the header is dropped); with
    ``PROXY_HOPS`` its host, scheme and port headers are kept too, for ProxyFix to read. A connection stays
    read while its request runs (one request ahead, :data:`LOOKAHEAD`), so that a client that closes it is
    seen (``waitress.client_disconnected``) and its map computation stops (``web/maps/gate.py``).
    """
    options: dict[str, Any] = {
        "threads": int(config["WEB_THREADS"]),
        "connection_limit": int(config["CONNECTION_LIMIT"]),
        "channel_timeout": int(config["CHANNEL_TIMEOUT"]),
        "cleanup_interval": max(1, int(config["CHANNEL_TIMEOUT"]) // 3),
        "backlog": int(config["BACKLOG"]),
        "asyncore_use_poll": True,
        "max_request_body_size": config["MAX_CONTENT_LENGTH"],
        "channel_request_lookahead": LOOKAHEAD,
        "ident": "bibgraph",
    }
    hops = int(config.get("PROXY_HOPS") or 0)
    if config["TRUSTED_PROXY"]:
        forwarded = {"x-forwarded-for"} | (
            {"x-forwarded-host", "x-forwarded-proto", "x-forwarded-port"} if hops else set()
        )
        options |= {
            "trusted_proxy": config["TRUSTED_PROXY"],
            "trusted_proxy_count": max(1, hops),
            "trusted_proxy_headers": forwarded,
            "clear_untrusted_proxy_headers": True,
        }
    elif hops:
        # ProxyFix (create_app) reads the X-Forwarded-* headers: waitress must not clear them first.
        options["clear_untrusted_proxy_headers"] = False
    return options


def _allow_descriptors(needed: int) -> None:
    """Raise the soft limit of open files towards ``needed`` (as far as the hard limit allows)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
    if wanted > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
