"""Every setting of the web app, declared once: name, default and what it does.

``create_app`` fills defaults from here, then from ``BIBGRAPH_…`` environment variables; ``bibgraph
serve`` has one option per setting (it wins over the environment); ``tests/test_readme.py`` checks
that the README's table documents each one with its option and variable.
"""

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

ENV_PREFIX = "BIBGRAPH_"


@dataclass(frozen=True)
class Setting:
    name: str
    default: Any
    help: str
    kind: type = str  # the value's type when the default (None) does not tell
    choices: tuple[str, ...] = ()

    @property
    def type(self) -> type:
        return self.kind if self.default is None else type(self.default)

    @property
    def env(self) -> str:
        """The environment variable: the name itself when it already carries the prefix."""
        return self.name if self.name.startswith(ENV_PREFIX) else ENV_PREFIX + self.name

    @property
    def option(self) -> str:
        """The ``serve`` option: ``QUERY_TIMEOUT`` is ``--query-timeout``, ``BIBGRAPH_STORE`` ``--store``."""
        return "--" + self.name.removeprefix(ENV_PREFIX).lower().replace("_", "-")

    def parse(self, text: str) -> Any:
        """The value of an option or variable given as text (``BIBGRAPH_INPUTS`` is a JSON list or one path)."""
        if self.type is list:
            return json.loads(text) if text.startswith("[") else [text]
        if self.type is bool:
            return text.strip().lower() in ("1", "true", "yes", "on")
        if self.choices and text not in self.choices:
            raise ValueError(f"{text!r} is not one of {', '.join(self.choices)}")
        return self.type(text)


SETTINGS: tuple[Setting, ...] = (
    Setting("HOST", "127.0.0.1", "address `serve` listens on"),
    Setting("PORT", 5000, "port `serve` listens on"),
    Setting("LOG_FORMAT", "text", "`text` or `json` (one object a line, for log shippers)", choices=("text", "json")),
    Setting("BIBGRAPH_INPUTS", None, "paper lists, directories or RDF dumps to load (default: the seeds)", list),
    Setting("BIBGRAPH_STORE", "memory", "`memory`, `disk:PATH` (kept), `dataset:DIR` or `sparql:URL` (remote)"),
    Setting("BIBGRAPH_BASE", None, "base IRI of minted IRIs, the public URL (default: `http://HOST:PORT/`)"),
    Setting(
        "DOWNLOAD_DIR",
        None,
        "where dump downloads are written once (default: a temporary directory, removed when the server stops)",
    ),
    Setting(
        "PUBLISHED",
        None,
        "for a `sparql:` store: the dataset that was published; its search index and derived figures answer while"
        " it is the version the engine's pointer names",
    ),
    Setting("QUERY_TIMEOUT", 10.0, "seconds a query may run before it is stopped (HTTP 503)"),
    Setting("NETWORK_TIMEOUT", 300.0, "seconds the app's own network derivation may query (large graphs)"),
    Setting(
        "DUMP_TIMEOUT",
        6 * 3600.0,
        "for a `sparql:` store: seconds a dump download may take to be made from the engine, in the background"
        " (its child process is killed then; the next `GET` after a minute tries again)",
    ),
    Setting("MAX_VIEW_NODES", 1000, "most authors a co-author view draws (the most prolific; a note says so)"),
    Setting("QUERY_THREADS", 4, "queries the worker process answers at the same time"),
    Setting("MAX_CONTENT_LENGTH", 1024 * 1024, "largest request body in bytes (HTTP 413 above)"),
    Setting("MAX_URL_LENGTH", 16 * 1024, "longest request URL in bytes (HTTP 414 above)"),
    Setting("MAX_RESULT_BYTES", 256 * 1024 * 1024, "largest answer in bytes (HTTP 422 above; over 64 KiB: on disk)"),
    Setting("RESULT_CACHE_BYTES", 32 * 1024 * 1024, "answers kept for repeated queries, bytes (0: none)"),
    Setting(
        "WORKER_MEMORY_LIMIT",
        None,
        "address-space limit of the query worker in bytes (default: half this machine's memory; 0: none)",
        int,
    ),
    Setting("CLIENT_QUERIES", 2, "queries one client may have running or waiting at once (429 above; 0: no limit)"),
    Setting(
        "WAITING_QUERIES",
        24,
        "queries waiting for a query thread at most, all clients together (503 above; keep below WEB_THREADS; 0: none)",
    ),
    Setting("WEB_THREADS", 48, "requests waitress handles at once (keep above clients x CLIENT_QUERIES)"),
    Setting("CONNECTION_LIMIT", 1000, "open client connections waitress accepts (more wait in the backlog)"),
    Setting("CHANNEL_TIMEOUT", 30, "seconds an idle or stalled client connection is kept open"),
    Setting("BACKLOG", 1024, "connections the kernel queues before waitress accepts them"),
    Setting("TRUSTED_PROXY", None, "address of a reverse proxy whose X-Forwarded-For names the client"),
    Setting(
        "PROXY_HOPS",
        0,
        "reverse proxies in front whose X-Forwarded-For/-Proto/-Host/-Port/-Prefix are trusted (0: none)",
    ),
    Setting(
        "SLOW_QUERY_SECONDS",
        1.0,
        "a SPARQL query that takes this long (the endpoint's or a page's) is logged with its text",
    ),
    Setting("SPARQL_UNSANDBOXED", False, "serve SPARQL even when the query worker cannot be cut off from the network"),
    Setting("MAP_DERIVATIONS", 2, "maps, ego networks, exports and paths computed at once (0: no limit)"),
    Setting("MAP_WAITING", 8, "map computations waiting for a turn at most; one more gets 503 (0: no cap)"),
    Setting("MAP_WAIT", 30.0, "seconds a map computation waits for its turn before 503 with Retry-After"),
    Setting(
        "DOWNLOAD_IN_PROCESS_AUTHORS",
        1000,
        "a network download of at most this many authors (and 20 author pairs each) is computed in the web process;"
        " a larger one in a child process that exits (0: every one with an author)",
    ),
    Setting("MAP_CACHE_BYTES", 128 * 1024 * 1024, "derived maps kept in memory, estimated bytes (the incidence apart)"),
    Setting(
        "MEMORY_BUDGET",
        None,
        "bytes of PSS the server's process tree may hold before new map computations get 503"
        " (default: half the machine's memory; 0: no budget)",
        int,
    ),
)


def defaults() -> dict[str, Any]:
    return {setting.name: setting.default for setting in SETTINGS}


def from_environment(environ: Mapping[str, str] = os.environ) -> dict[str, Any]:
    """The settings given as ``BIBGRAPH_…`` environment variables; a bad value names its variable."""
    found = {}
    for setting in SETTINGS:
        if setting.env in environ:
            try:
                found[setting.name] = setting.parse(environ[setting.env])
            except ValueError as error:
                raise ValueError(f"{setting.env}: {error}") from error
    return found


def resolve(config: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Every setting's value: ``config`` (options, or a test's) over the environment over the defaults."""
    values = {**defaults(), **from_environment(), **(config or {})}
    if not values["BIBGRAPH_BASE"]:
        values["BIBGRAPH_BASE"] = f"http://{values['HOST']}:{values['PORT']}/"
    return values


def worker_memory_limit(configured: int | None) -> int | None:
    """The query worker's address-space limit: as configured (0: none), else half the machine's memory,
    so that a client's runaway query (a string doubled thirty times) costs its worker, never the host."""
    if configured is not None:
        return configured or None
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2


def memory_budget(configured: int | None) -> int:
    """The server's memory budget in bytes: as configured (0: none), else half the machine's memory (the
    query worker's own limit is as large, so the tree is refused new maps before a worker nears its limit)."""
    if configured is not None:
        return int(configured)
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
