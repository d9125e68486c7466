"""Every setting of the web app, declared once: name, default and what it does.

``create_app`` fills defaults from here, the CLI maps its options onto these names, and
``tests/test_settings.py`` checks that the README documents each one.
"""

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Setting:
    name: str
    default: Any
    help: str


SETTINGS: tuple[Setting, ...] = (
    Setting("BIBGRAPH_INPUTS", None, "paper lists, directories or RDF dumps to load (default: the seeds)"),
    Setting("BIBGRAPH_STORE", "memory", "`memory`, `disk:PATH` (kept between starts) or `sparql:URL` (remote)"),
    Setting("BIBGRAPH_BASE", "http://127.0.0.1:5000/", "base IRI of the IRIs minted when building"),
    Setting("DOWNLOAD_DIR", None, "where dump downloads are written once (default: a new temporary directory)"),
    Setting("QUERY_TIMEOUT", 10.0, "seconds a query may run before it is stopped (HTTP 503)"),
    Setting("NETWORK_TIMEOUT", 300.0, "seconds the app's own network derivation may query (large graphs)"),
    Setting("MAX_VIEW_NODES", 1000, "most authors a co-author view draws (the most prolific; a note says so)"),
    Setting("QUERY_THREADS", 4, "queries the worker process answers at the same time"),
    Setting("MAX_CONTENT_LENGTH", 1024 * 1024, "largest request body in bytes (HTTP 413 above)"),
    Setting("MAX_URL_LENGTH", 16 * 1024, "longest request URL in bytes (HTTP 414 above)"),
    Setting("MAX_RESULT_BYTES", 256 * 1024 * 1024, "largest answer in bytes (HTTP 422 above; over 1 MiB: on disk)"),
    Setting("RESULT_CACHE_BYTES", 32 * 1024 * 1024, "answers kept for repeated queries, bytes (0: none)"),
    Setting("WORKER_MEMORY_LIMIT", None, "address-space limit of the query worker in bytes (none by default)"),
    Setting("SPARQL_UNSANDBOXED", False, "serve SPARQL even when the query worker cannot be cut off from the network"),
)


def defaults() -> dict[str, Any]:
    return {setting.name: setting.default for setting in SETTINGS}
