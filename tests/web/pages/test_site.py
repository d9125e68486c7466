"""The linked-data site: dereferenceable IRIs, pages, search, downloads, links, escaping, command line."""

import gzip
import re
import shutil
from collections import deque
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
from rdflib import Graph, URIRef

from bibgraph.graph.ingest.names import person_key
from bibgraph.seeds import seed_directory
from bibgraph.web.commands.cli import main
from tests.conftest import BASE, make_app

PAPER = "paper/4924f090328d8ff5"  # the truncated list (周欣 among the authors)
RESOURCES = {
    "paper": PAPER,
    "author": f"author/{person_key('Ziniu Li')}",
    "area": "area/deep-learning",
    "subarea": "area/deep-learning/large-language-models",
    "scheme": "areas",
    "dataset": "dataset",
}
RDF_TYPES = {
    "text/turtle": ("turtle", "ttl"),
    "application/n-triples": ("nt", "nt"),
    "application/ld+json": ("json-ld", "jsonld"),
    "application/rdf+xml": ("xml", "rdf"),
}


@pytest.mark.parametrize("kind", list(RESOURCES))
def test_html_for_browsers(client, kind: str) -> None:
    response = client.get("/" + RESOURCES[kind], headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
    assert response.status_code == 200
    assert response.mimetype == "text/html"
    assert "Accept" in response.headers["Vary"]
    assert response.headers["Link"].count('rel="alternate"') == 4


@pytest.mark.parametrize("kind", list(RESOURCES))
@pytest.mark.parametrize("media_type", list(RDF_TYPES))
def test_rdf_by_accept_and_by_suffix(client, kind: str, media_type: str) -> None:
    rdflib_format, suffix = RDF_TYPES[media_type]
    path = "/" + RESOURCES[kind]
    negotiated = client.get(path, headers={"Accept": media_type})
    suffixed = client.get(f"{path}.{suffix}")
    for response in (negotiated, suffixed):
        assert response.status_code == 200
        assert response.mimetype == media_type
        graph = Graph().parse(data=response.data, format=rdflib_format)
        assert (URIRef(BASE + RESOURCES[kind]), None, None) in graph
    assert "Accept" in negotiated.headers["Vary"]
    assert len(Graph().parse(data=negotiated.data, format=rdflib_format)) == len(
        Graph().parse(data=suffixed.data, format=rdflib_format)
    )


def test_paper_rdf_carries_ordered_authorships(client) -> None:
    graph = Graph().parse(data=client.get(f"/{PAPER}.ttl").data, format="turtle")
    positions = sorted(int(o) for o in graph.objects(None, URIRef("https://w3id.org/bibgraph/ontology#authorPosition")))
    assert positions == list(range(1, 11))


@pytest.mark.parametrize(
    "path",
    [
        "/paper/0000000000000000",
        "/author/nobody-00000000",
        "/area/nowhere",
        "/area/deep-learning/nothing",
        "/paper/0000000000000000.ttl",
        f"/{PAPER}.docx",
    ],
)
def test_unknown_iris_are_404(client, path: str) -> None:
    assert client.get(path).status_code == 404
    assert client.get(path, headers={"Accept": "text/turtle"}).status_code == 404


def test_not_acceptable(client) -> None:
    assert client.get(f"/{PAPER}", headers={"Accept": "image/png"}).status_code == 406


def test_paper_page(client) -> None:
    html = client.get(f"/{PAPER}").get_data(as_text=True)
    names = re.findall(r'<ol class="authors">(.*?)</ol>', html, re.S)[0]
    assert names.index("Yizhi Li") < names.index("周欣") < names.index("Xingwei Qu")
    assert "cut this list after 10 names" in html
    assert "000_d76ea8ef0d7929c9.txt:103" in html
    assert (
        'href="/area/reinforcement-learning"' in html and 'href="/area/reinforcement-learning/everything-else"' in html
    )
    assert "katex.min.js" in html
    assert "the SPARQL query behind this page" in html


def test_void_dumps_and_endpoint_resolve(client) -> None:
    void = Graph().parse(data=client.get("/dataset.ttl").data, format="turtle")
    dumps = [str(o) for o in void.objects(None, URIRef("http://rdfs.org/ns/void#dataDump"))]
    assert len(dumps) == 4
    for dump in dumps:
        response = client.get(urlsplit(dump).path)
        assert response.status_code == 200, dump
    endpoint = next(void.objects(None, URIRef("http://rdfs.org/ns/void#sparqlEndpoint")))
    assert client.get(urlsplit(str(endpoint)).path, query_string={"query": "ASK {}"}).status_code == 200


def test_downloads(client) -> None:
    turtle = client.get("/download/bibgraph.ttl")
    assert turtle.mimetype == "text/turtle"
    assert turtle.headers["Content-Disposition"] == "attachment; filename=bibgraph.ttl"
    assert int(turtle.headers["Content-Length"]) == len(turtle.data)
    assert len(Graph().parse(data=turtle.data, format="turtle")) > 2000
    again = client.get("/download/bibgraph.ttl", headers={"If-None-Match": turtle.headers["ETag"]})
    assert again.status_code == 304
    since = client.get("/download/bibgraph.ttl", headers={"If-Modified-Since": turtle.headers["Last-Modified"]})
    assert since.status_code == 304
    head = client.head("/download/bibgraph.ttl")
    assert head.status_code == 200 and head.data == b"" and head.headers["Content-Length"] == str(len(turtle.data))
    packed = client.get("/download/bibgraph.ttl.gz")
    assert packed.mimetype == "application/gzip"
    assert gzip.decompress(packed.data) == turtle.data
    assert client.get("/download/secrets.txt").status_code == 404
    page = client.get("/download/").get_data(as_text=True)
    for name in ("bibgraph.ttl", "bibgraph.nt", "bibgraph.jsonld", "bibgraph.ttl.gz", "coauthors.graphml"):
        assert name in page


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("yuksel", "Oğuz Yüksel"),
        ("OĞUZ", "Oğuz Yüksel"),
        ("yük", "Oğuz Yüksel"),
        ("欣", "周欣"),
        ("zhang ke", "zhang keli"),
    ],
)
def test_search_is_case_and_accent_insensitive_by_prefix(client, query: str, expected: str) -> None:
    html = client.get("/search", query_string={"q": query}).get_data(as_text=True)
    assert expected in html


def test_search_pages(client) -> None:
    first = client.get("/search", query_string={"q": "the"}).get_data(as_text=True)
    total = int(re.search(r"of (\d+) for", first).group(1))
    assert total > 20
    assert first.count('<span class="badge">') == 20
    second = client.get("/search", query_string={"q": "the", "page": 2}).get_data(as_text=True)
    assert second.count('<span class="badge">') == min(20, total - 20)
    assert re.findall(r'href="(/paper/[^"]+)"', first)[0] not in second


def test_home_has_charts(client) -> None:
    html = client.get("/").get_data(as_text=True)
    assert html.count("<svg") == 2  # the two histograms; papers per area is an HTML bar list
    assert html.count('class="bar-area"') == 8
    assert "40</strong> papers" in html
    assert "Large Language Models" in html


def test_crawl_finds_no_broken_link(client) -> None:
    seen: set[str] = set()
    queue = deque(["/"])
    while queue and len(seen) < 600:
        path = queue.popleft()
        if path in seen:
            continue
        seen.add(path)
        response = client.get(path)
        assert response.status_code < 400, path
        if response.mimetype != "text/html":
            continue
        for href in re.findall(r'(?:href|src)="([^"]+)"', response.get_data(as_text=True)):
            assert not href.lower().startswith("javascript:"), (path, href)
            url = urlsplit(urljoin("http://localhost" + path, href.replace("&amp;", "&")))
            if url.netloc in ("localhost", "") and not url.path.startswith("/sparql"):
                queue.append(url.path + (f"?{url.query}" if url.query else ""))
    assert len(seen) > 300


@pytest.fixture(scope="module")
def hostile_app(tmp_path_factory):
    directory = tmp_path_factory.mktemp("hostile")
    shutil.copy(seed_directory() / "000_d76ea8ef0d7929c9.txt", directory)
    (directory / "hostile.txt").write_text(
        "Social Aspects · Security\n\n<script>alert(1)</script> Name, Bob javascript:alert(2), עברית שם\n\n"
        "We show that <img src=x onerror=alert(3)> and [x](javascript:alert(4)) stay text in $a<b$ math.\n",
        encoding="utf-8",
    )
    app = make_app(BIBGRAPH_INPUTS=[str(directory)])
    yield app
    app.extensions["bibgraph"].close()


def test_hostile_text_is_escaped_everywhere(hostile_app) -> None:
    client = hostile_app.test_client()
    author = f"/author/{person_key('<script>alert(1)</script> Name')}"
    page = client.get(author).get_data(as_text=True)
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt; Name" in page
    paper = re.search(r'href="(/paper/[0-9a-f]+)"', page).group(1)
    html = client.get(paper).get_data(as_text=True)
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert(3)&gt;" in html
    assert 'href="javascript' not in html.lower()
    assert "עברית שם" in html
    results = client.get("/search", query_string={"q": "script"}).get_data(as_text=True)
    assert "<script>alert(1)" not in results and "&lt;script&gt;alert(1)" in results


def test_cli_query_stats_validate(capsys, tmp_path: Path) -> None:
    assert main(["query", "PREFIX foaf: <http://xmlns.com/foaf/0.1/> SELECT (COUNT(*) AS ?n) { ?a foaf:name ?x }"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].strip() == "203"
    assert main(["query", "--format", "csv", "SELECT ?x { BIND(1 AS ?x) }"]) == 0
    assert capsys.readouterr().out == "x\r\n1\r\n"
    assert main(["query", "DELETE WHERE { ?s ?p ?o }"]) == 1
    assert main(["stats"]) == 0
    assert "papers       40" in capsys.readouterr().out
    assert main(["validate"]) == 0
    broken = tmp_path / "broken.ttl"
    broken.write_text(
        "<http://x/p> a <https://schema.org/ScholarlyArticle> ; <http://purl.org/dc/terms/title> 'Made up' .\n",
        encoding="utf-8",
    )
    assert main(["validate", str(broken)]) == 1
