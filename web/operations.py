"""What operators and crawlers need: ``robots.txt``, sitemaps, ``/.well-known/void``, ``/metrics``
and one access-log line per request.

Metrics use the Prometheus client library with one registry per app (two apps in one process,
as in the tests, never share counters).
"""

import json
import logging
import time
from collections.abc import Iterator
from xml.sax.saxutils import escape

from flask import Blueprint, Flask, Response, abort, current_app, g, redirect, request, url_for
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from werkzeug.wrappers import Response as WerkzeugResponse

from bibgraph.graph.dataset.derived import DamagedFile
from bibgraph.graph.rdf.vocab import PREFIXES
from bibgraph.graph.serving.pool import QueryPool
from bibgraph.graph.serving.pooled import PooledStore
from bibgraph.graph.site.crawl import PAGE_CLASSES, SITEMAP_LIMIT, kept_resources, resource_counts, resources
from bibgraph.web.graphstore import EXTENSION, get_store
from bibgraph.web.links import app_root, base_iri, public_root
from bibgraph.web.maps.cache import networks
from bibgraph.web.pages import summary

blueprint = Blueprint("operations", __name__)
access_log = logging.getLogger("bibgraph.access")
SITEMAP_TYPE = "application/xml; charset=utf-8"
# Crawlers get resource pages; query links, searches and filter combinations are endless, so not those.
ROBOTS = """User-agent: *
Disallow: {root}sparql
Disallow: {root}search
Disallow: {root}graph/
Disallow: {root}*?
Allow: {root}

Sitemap: {sitemap}
"""


@blueprint.route("/robots.txt")
def robots() -> Response:
    text = ROBOTS.format(root=app_root(), sitemap=public_root() + "sitemap.xml")
    return Response(text, mimetype="text/plain")


def _sitemap_document(root: str, items: list[str]) -> Response:
    xml = '<?xml version="1.0" encoding="UTF-8"?>\n'
    body = f'{xml}<{root} xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n' + "\n".join(items) + f"\n</{root}>\n"
    return Response(body, content_type=SITEMAP_TYPE)


@blueprint.route("/sitemap.xml")
def sitemap_index() -> Response:
    """A sitemap index naming one sitemap per ``SITEMAP_LIMIT`` (10,000) resources of each kind."""
    counts = resource_counts(summary())
    entries = [
        f"<sitemap><loc>{escape(public_root())}sitemap-{kind}-{chunk + 1}.xml</loc></sitemap>"
        for kind, count in counts.items()
        for chunk in range(max(1, -(-count // SITEMAP_LIMIT)))
    ]
    return _sitemap_document("sitemapindex", entries)


@blueprint.route("/sitemap-<kind>-<int:number>.xml")
def sitemap(kind: str, number: int) -> Response:
    """Chunk ``number`` of ``kind``, as the index names them: any other number is 404 before a query (past the last
    chunk, an OFFSET walked every resource for nothing; past 2**63, the engine refused it: a 500)."""
    counts = resource_counts(summary())
    if kind not in PAGE_CLASSES or not 1 <= number <= max(1, -(-counts[kind] // SITEMAP_LIMIT)):
        abort(404)
    base, public = base_iri(), public_root()
    try:
        incidence, roles = networks().kept_incidence(), networks().kept_roles()
    except DamagedFile:  # the store lists them (the incidence's damage is told by the pages that need it)
        incidence, roles = None, None
    kept = kept_resources(incidence, kind, number - 1, counts[kind], roles) if incidence is not None else None
    listed = kept if kept is not None else resources(get_store(), kind, number - 1)
    iris = [iri for iri in listed if iri.startswith(base)]
    if number > 1 and not iris:
        abort(404)
    # the pages' public URLs (the IRIs themselves when no proxy is trusted)
    locations = [public + iri[len(base) :] for iri in iris]
    return _sitemap_document("urlset", [f"<url><loc>{escape(url)}</loc></url>" for url in locations])


@blueprint.route("/context.jsonld")
def jsonld_context() -> Response:
    """The JSON-LD context that compacts this site's JSON-LD: the graph's prefixes."""
    return Response(json.dumps({"@context": PREFIXES}, indent=2), content_type="application/ld+json")


@blueprint.route("/.well-known/void")
def well_known_void() -> WerkzeugResponse:
    """RFC 8615 well-known location of the VoID description (VoID spec, section 7)."""
    return redirect(url_for("resources.dataset"), 303)


class PoolCollector(Collector):
    """The query pool's figures, read at each scrape: workers replaced, threads in use, queue, cache."""

    def __init__(self, pool: QueryPool) -> None:
        self.pool = pool

    def collect(self) -> Iterator[Metric]:
        stats = self.pool.stats()
        restarts = CounterMetricFamily(
            "bibgraph_query_process_restarts", "query processes replaced", labels=["process"]
        )
        restarts.add_metric(["worker"], stats["worker_restarts"])
        restarts.add_metric(["zygote"], stats["zygote_restarts"])
        yield restarts
        yield CounterMetricFamily(
            "bibgraph_queries_stopped_client_left",
            "queries stopped because their client closed its connection (their worker replaced)",
            stats["client_left_stops"],
        )
        yield CounterMetricFamily("bibgraph_answer_cache_hits", "answers served from the cache", stats["cache_hits"])
        yield CounterMetricFamily("bibgraph_answer_cache_misses", "answers not in the cache", stats["cache_misses"])
        yield GaugeMetricFamily("bibgraph_query_threads_busy", "query threads running a query", stats["running"])
        yield GaugeMetricFamily("bibgraph_query_queue_length", "queries waiting for a thread", stats["waiting"])
        yield GaugeMetricFamily("bibgraph_query_clients", "clients with queries running or waiting", stats["clients"])
        yield GaugeMetricFamily(
            "bibgraph_poisoned_queries", "queries refused for crashing the engine", stats["poisoned_queries"]
        )


class SwitchCollector(Collector):
    """A served dataset's version switches: those that failed, and whether the pointer names a refused version."""

    def __init__(self, app: Flask) -> None:
        self.app = app

    def collect(self) -> Iterator[Metric]:
        state = self.app.extensions["bibgraph-versions"].state()
        yield CounterMetricFamily("bibgraph_dataset_switches", "dataset versions switched to", state["switches"])
        yield CounterMetricFamily(
            "bibgraph_dataset_switch_failures", "dataset versions refused (see /health)", state["failed_switches"]
        )
        yield GaugeMetricFamily(
            "bibgraph_dataset_damaged_files",
            "files of the version served refused when first read",
            len(state["damaged_files"]),
        )
        yield GaugeMetricFamily(
            "bibgraph_dataset_version_refused",
            "1 while the version the pointer names is refused",
            int(bool(state["refused"])),
        )


class Metrics:
    """The app's Prometheus metrics, in a registry of its own."""

    def __init__(self, pool: QueryPool | None = None, app: Flask | None = None) -> None:
        self.registry = CollectorRegistry()
        if pool is not None:
            self.registry.register(PoolCollector(pool))
        if app is not None and "bibgraph-versions" in app.extensions:
            self.registry.register(SwitchCollector(app))
        self.requests = Counter(
            "bibgraph_http_requests", "HTTP requests answered, by status", ["status"], registry=self.registry
        )
        self.latency = Histogram(
            "bibgraph_http_request_seconds",
            "time to answer a request, by route kind",
            ["route"],
            registry=self.registry,
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
        )


@blueprint.route("/metrics")
def metrics() -> Response:
    registry = current_app.extensions["bibgraph-metrics"].registry
    return Response(generate_latest(registry), content_type=CONTENT_TYPE_LATEST)


def _route_kind() -> str:
    """The route family (``sparql``, ``paper``, ``graph`` ...): bounded label values, never raw paths."""
    rule = request.url_rule
    if rule is None:
        return "unmatched"
    first = rule.rule.strip("/").split("/", 1)[0]
    return first.split(".", 1)[0].split("<", 1)[0] or "home"


def init_app(app: Flask) -> None:
    """Register the blueprint, the metrics and the access log of ``app``."""
    app.register_blueprint(blueprint)
    store: PooledStore = app.extensions[EXTENSION]
    app.extensions["bibgraph-metrics"] = Metrics(store.pool, app)

    @app.before_request
    def start_clock() -> None:
        g.bibgraph_started = time.perf_counter()

    @app.after_request
    def log_request(response: Response) -> Response:
        started = g.get("bibgraph_started")
        elapsed = time.perf_counter() - started if started is not None else 0.0
        found = app.extensions["bibgraph-metrics"]
        found.requests.labels(str(response.status_code)).inc()
        found.latency.labels(_route_kind()).observe(elapsed)
        access_log.info(
            "%s %s %d %s %.1f",
            request.method,
            request.full_path.rstrip("?"),
            response.status_code,
            response.content_length if response.content_length is not None else "-",
            elapsed * 1000,
            extra={
                "method": request.method,
                "path": request.full_path.rstrip("?"),
                "status": response.status_code,
                "bytes": response.content_length,
                "ms": round(elapsed * 1000, 1),
                "remote": request.remote_addr,
            },
        )
        return response
