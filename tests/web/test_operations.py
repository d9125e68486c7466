"""Crawlers and operators: robots.txt, sitemaps, /.well-known/void, /metrics, access and JSON logs."""

import io
import json
import logging
import os
import signal
import xml.etree.ElementTree as ET

import pytest

from bibgraph.graph.serving.pooled import LOGGED_QUERY_CHARACTERS
from bibgraph.graph.site.pagedata import dataset_summary
from bibgraph.web import logs
from bibgraph.web.commands.cli import main
from tests.conftest import BASE, RUNAWAY, make_app
from tests.storespy import record_queries

SITEMAP = "{http://www.sitemaps.org/schemas/sitemap/0.9}"


def test_robots_keeps_crawlers_off_queries_and_names_the_sitemap(client):
    response = client.get("/robots.txt")
    assert response.status_code == 200 and response.mimetype == "text/plain"
    lines = response.get_data(as_text=True).splitlines()
    for path in ("/sparql", "/search", "/graph/", "/*?"):
        assert f"Disallow: {path}" in lines
    assert f"Sitemap: {BASE}sitemap.xml" in lines


def test_sitemaps_list_every_resource_page_once(client, seed_store):
    index = ET.fromstring(client.get("/sitemap.xml").data)
    locations = [element.text for element in index.iter(f"{SITEMAP}loc")]
    assert locations and all(location.startswith(BASE) for location in locations)
    pages: list[str] = []
    for location in locations:
        response = client.get(location.removeprefix(BASE.rstrip("/")))
        assert response.status_code == 200, location
        pages += [element.text for element in ET.fromstring(response.data).iter(f"{SITEMAP}loc")]
    summary = dataset_summary(seed_store)
    assert len(pages) == len(set(pages)) == summary["papers"] + summary["authors"] + summary["concepts"]
    for page in pages[:: max(1, len(pages) // 25)]:  # a sample of them really are pages
        assert client.get(page.removeprefix(BASE.rstrip("/"))).status_code == 200, page


def test_the_sitemaps_counts_are_each_class_counted_in_the_store(seed_store) -> None:
    """The sitemaps count each kind from the dataset summary (``dataset_summary.rq``, which a dataset keeps with the
    home page's figures): each kind's count is its class counted in the store."""
    from bibgraph.graph.site.crawl import PAGE_CLASSES, resource_counts

    counted = {
        kind: int(seed_store.select(f"SELECT (COUNT(?r) AS ?n) WHERE {{ ?r a <{iri}> }}")[0]["n"])
        for kind, iri in PAGE_CLASSES.items()
    }
    assert resource_counts(dataset_summary(seed_store)) == counted and all(counted.values())


def test_sitemap_past_the_last_chunk_is_404(client):
    assert client.get("/sitemap-papers-2.xml").status_code == 404
    assert client.get("/sitemap-nothing-1.xml").status_code == 404


def test_well_known_void_sends_to_the_dataset_description(client):
    response = client.get("/.well-known/void")
    assert response.status_code == 303 and response.location.endswith("/dataset")


def _sample(text: str, name: str, labels: str) -> float:
    for line in text.splitlines():
        if line.startswith(f"{name}{{{labels}}} " if labels else f"{name} "):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_metrics_count_requests_by_status_and_time_them(client):
    before = client.get("/metrics").get_data(as_text=True)
    client.get("/no/such/page")
    client.get("/sparql?query=ASK%7B%7D", headers={"Accept": "application/sparql-results+json"})
    after = client.get("/metrics").get_data(as_text=True)
    assert _sample(after, "bibgraph_http_requests_total", 'status="404"') == (
        _sample(before, "bibgraph_http_requests_total", 'status="404"') + 1
    )
    sparql_before = _sample(before, "bibgraph_http_request_seconds_count", 'route="sparql"')
    assert _sample(after, "bibgraph_http_request_seconds_count", 'route="sparql"') == sparql_before + 1


def test_metrics_show_the_query_pool(client, app):
    """Cache hits, worker replacements and the queue, read from the pool at each scrape."""
    query = {"query": "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o . FILTER(?o != 'metrics') }", "format": "json"}
    before = client.get("/metrics").get_data(as_text=True)
    assert client.get("/sparql", query_string=query).status_code == 200
    assert client.get("/sparql", query_string=query).status_code == 200  # the second from the cache
    pool = app.extensions["bibgraph"].pool
    os.kill(pool.worker_pid, signal.SIGKILL)  # a worker lost from outside is replaced at the next query
    assert client.get("/sparql", query_string=query, headers={"Cache-Control": "no-cache"}).status_code == 200
    after = client.get("/metrics").get_data(as_text=True)
    assert (
        _sample(after, "bibgraph_answer_cache_hits_total", "")
        >= _sample(before, "bibgraph_answer_cache_hits_total", "") + 1
    )
    restarts = 'process="worker"'
    assert _sample(after, "bibgraph_query_process_restarts_total", restarts) >= (
        _sample(before, "bibgraph_query_process_restarts_total", restarts) + 1
    )
    assert "bibgraph_query_queue_length 0.0" in after


def test_one_access_log_line_per_request(client, caplog):
    with caplog.at_level(logging.INFO, logger="bibgraph.access"):
        client.get("/robots.txt?x=1")
    records = [r for r in caplog.records if r.name == "bibgraph.access"]
    assert len(records) == 1
    record = records[0]
    assert (record.method, record.path, record.status) == ("GET", "/robots.txt?x=1", 200)  # type: ignore[attr-defined]
    assert record.bytes > 0 and record.ms >= 0  # type: ignore[attr-defined]


def test_json_log_lines_are_json(monkeypatch, restored_loggers):
    stream = io.StringIO()
    monkeypatch.setattr("sys.stderr", stream)
    logs.configure("json")
    logging.getLogger("bibgraph.access").info("GET / 200", extra={"status": 200, "path": "/"})
    line = json.loads(stream.getvalue().strip())
    assert (line["message"], line["status"], line["path"], line["name"]) == ("GET / 200", 200, "/", "bibgraph.access")


def test_version(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.startswith("bibgraph ")


def test_no_progress_bar_when_standard_error_is_not_a_terminal(tmp_path, capsys):
    """In a log file tqdm would write hundreds of carriage-return updates."""
    from bibgraph.graph.dataset import build
    from bibgraph.seeds import seed_directory

    big = tmp_path / "big.txt"
    text = "".join(path.read_text(encoding="utf-8") for path in sorted(seed_directory().glob("*.txt")))
    big.write_text(text * (build.PROGRESS_MIN_BYTES // len(text.encode()) + 1), encoding="utf-8")
    build.build_graph([big], base=BASE, progress=True)
    assert "\r" not in capsys.readouterr().err


def test_json_ld_is_compact_with_the_published_context(client):
    """Linked-data clients get prefixed keys; the context is also served at /context.jsonld."""
    from rdflib import Graph
    from rdflib.compare import isomorphic

    context = client.get("/context.jsonld")
    assert context.mimetype == "application/ld+json"
    sitemap = ET.fromstring(client.get("/sitemap-papers-1.xml").data)
    paper = next(sitemap.iter(f"{SITEMAP}loc")).text.removeprefix(BASE.rstrip("/"))
    document = client.get(f"{paper}.jsonld")
    body = json.loads(document.data)
    assert body["@context"] == json.loads(context.data)["@context"]
    keys = {key for node in body["@graph"] for key in node}
    assert "bg:authorPosition" in keys and not any(key.startswith("http") for key in keys)
    compacted = Graph().parse(data=document.data, format="json-ld")
    turtle = Graph().parse(data=client.get(f"{paper}.ttl").data, format="turtle")
    assert len(turtle) > 0 and isomorphic(compacted, turtle)


def test_python_dash_m_bibgraph_is_the_command():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "bibgraph", "--version"], capture_output=True, text=True, check=True)
    assert done.stdout.startswith("bibgraph ")


def test_sitemap_chunks_are_disjoint_and_cover_every_resource(client, seed_store, monkeypatch):
    """Chunks read in the store's own order, several per kind: each resource in exactly one, on every request."""
    from bibgraph.graph.site import crawl

    monkeypatch.setattr(crawl, "SITEMAP_LIMIT", 7)
    monkeypatch.setattr("bibgraph.web.operations.SITEMAP_LIMIT", 7)
    index = ET.fromstring(client.get("/sitemap.xml", headers={"Cache-Control": "no-cache"}).data)
    locations = [element.text or "" for element in index.iter(f"{SITEMAP}loc")]
    pages: list[str] = []
    for location in locations:
        path = location.removeprefix(BASE.rstrip("/"))
        chunk = [element.text for element in ET.fromstring(client.get(path).data).iter(f"{SITEMAP}loc")]
        assert 0 < len(chunk) <= 7 and chunk == [
            e.text for e in ET.fromstring(client.get(path).data).iter(f"{SITEMAP}loc")
        ]
        pages += chunk
    summary = dataset_summary(seed_store)
    assert len(pages) == len(set(pages)) == summary["papers"] + summary["authors"] + summary["concepts"]


@pytest.fixture(scope="module")
def logging_app():
    """The app with every query logged as slow (``SLOW_QUERY_SECONDS`` 0) and a one-second deadline."""
    application = make_app(SLOW_QUERY_SECONDS=0.0, QUERY_TIMEOUT=1.0, QUERY_THREADS=1)
    yield application
    application.extensions["bibgraph"].close()


def _logged(caplog: pytest.LogCaptureFixture, start: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "bibgraph.queries" and r.getMessage().startswith(start)]


def test_slow_queries_are_logged_with_text_and_client_from_the_endpoint_and_from_pages(
    logging_app, caplog, seed_store
) -> None:
    client = logging_app.test_client()
    query = "SELECT  ?p\n WHERE { ?p a <https://schema.org/ScholarlyArticle> } LIMIT 3"
    with caplog.at_level(logging.WARNING, logger="bibgraph.queries"):
        assert (
            client.get("/sparql", query_string={"query": query}, headers={"Cache-Control": "no-cache"}).status_code
            == 200
        )
    endpoint = _logged(caplog, "slow query")
    assert len(endpoint) == 1
    assert endpoint[0].endswith(" for 127.0.0.1: " + " ".join(query.split()))
    caplog.clear()
    author = "/" + seed_store.select("SELECT ?a WHERE { ?p <http://purl.org/dc/terms/creator> ?a } LIMIT 1")[0][
        "a"
    ].removeprefix(BASE)
    with caplog.at_level(logging.WARNING, logger="bibgraph.queries"):
        assert client.get(author).status_code == 200
    pages = _logged(caplog, "slow query")
    assert pages and all(" for 127.0.0.1: " in line and ("SELECT" in line or "ASK" in line) for line in pages)


def test_a_long_query_is_logged_on_one_line_cut_and_marked(logging_app, caplog) -> None:
    text = "A" * 5000
    query = f'ASK {{ FILTER(STRLEN("{text}") > 0) }}'
    with caplog.at_level(logging.WARNING, logger="bibgraph.queries"):
        response = logging_app.test_client().get(
            "/sparql", query_string={"query": query}, headers={"Cache-Control": "no-cache"}
        )
    assert response.status_code == 200
    (line,) = _logged(caplog, "slow query")
    logged = line.split(": ", 1)[1]
    assert logged.endswith("…") and len(logged) == LOGGED_QUERY_CHARACTERS and query.startswith(logged[:-1])


def test_a_query_stopped_at_its_deadline_is_logged_with_its_text(logging_app, caplog) -> None:
    with caplog.at_level(logging.WARNING, logger="bibgraph.queries"):
        response = logging_app.test_client().get(
            "/sparql", query_string={"query": RUNAWAY}, headers={"Cache-Control": "no-cache"}
        )
    assert response.status_code == 503
    (line,) = _logged(caplog, "query stopped")
    assert line.endswith(f" for 127.0.0.1: {RUNAWAY}")
    assert not _logged(caplog, "slow query")


def test_a_json_log_gives_a_slow_querys_text_and_client_as_fields(logging_app, monkeypatch, restored_loggers):
    stream = io.StringIO()
    monkeypatch.setattr("sys.stderr", stream)
    logs.configure("json")
    query = "ASK { ?s ?p ?o }"
    logging_app.test_client().get("/sparql", query_string={"query": query}, headers={"Cache-Control": "no-cache"})
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    (slow,) = [line for line in lines if line["name"] == "bibgraph.queries"]
    assert (slow["query"], slow["client"], slow["levelname"]) == (query, "127.0.0.1", "WARNING")
    assert slow["seconds"] >= 0 and slow["message"].startswith("slow query (")


def test_a_datasets_sitemaps_list_the_stores_resources_and_read_authors_from_its_incidence(
    seed_dataset, monkeypatch
) -> None:
    """Served from a dataset, the chunks of each kind hold exactly the store's resources of its class, each once;
    the counts are the summary the dataset keeps (never counted in the store) and the authors' chunks are read from
    the incidence it keeps (it names every person of the seeds), so no authors chunk asks the store (at a million
    papers the last one's OFFSET walked 1.78 million persons: 2.2 s cold)."""
    from bibgraph.graph.site import crawl
    from bibgraph.graph.site.crawl import PAGE_CLASSES
    from bibgraph.web import operations, pages

    monkeypatch.setattr(crawl, "SITEMAP_LIMIT", 7)
    monkeypatch.setattr(operations, "SITEMAP_LIMIT", 7)
    app = make_app(BIBGRAPH_STORE=f"dataset:{seed_dataset}")
    try:
        client = app.test_client()
        with app.app_context():
            store = operations.get_store()
            expected = {
                kind: {str(r["r"]) for r in store.select(f"SELECT ?r WHERE {{ ?r a <{iri}> }}")}
                for kind, iri in PAGE_CLASSES.items()
            }

        def refused(*args):  # type: ignore[no-untyped-def]
            raise AssertionError("the store was asked for the summary the dataset keeps")

        monkeypatch.setattr(pages, "dataset_summary", refused)
        counting = record_queries(monkeypatch, operations)
        index = ET.fromstring(client.get("/sitemap.xml").data)
        paths = [(e.text or "").removeprefix(BASE.rstrip("/")) for e in index.iter(f"{SITEMAP}loc")]
        asked: list[str] = []
        real = operations.resources
        monkeypatch.setattr(
            operations, "resources", lambda store, kind, chunk: asked.append(kind) or real(store, kind, chunk)
        )
        for kind in PAGE_CLASSES:
            listed: list[str] = []
            for path in [p for p in paths if p.startswith(f"/sitemap-{kind}-")]:
                listed += [e.text or "" for e in ET.fromstring(client.get(path).data).iter(f"{SITEMAP}loc")]
            assert len(listed) == len(set(listed)) and set(listed) == expected[kind], kind
        assert "authors" not in asked and "areas" in asked  # areas are not in the incidence: the store lists them
        assert counting and not [query for query in counting if "COUNT" in query.upper()]  # (11 s cold at 1M)
    finally:
        app.extensions["bibgraph"].close()
