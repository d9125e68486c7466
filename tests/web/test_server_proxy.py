"""Behind a reverse proxy: every absolute URL follows the trusted proxy's headers (scheme, host, port,
path prefix) and nothing else; untrusted ``X-Forwarded-*`` and ``Host`` headers change nothing; minted
IRIs stay the dataset's base IRI in both modes."""

import json
import re
import urllib.request
import xml.etree.ElementTree as ET

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rdflib import Graph, Namespace, URIRef

from bibgraph.web.server import waitress_options
from tests.conftest import BASE
from tests.loopback import waitress_serving

SD = Namespace("http://www.w3.org/ns/sparql-service-description#")
VOID = Namespace("http://rdfs.org/ns/void#")
SITEMAP = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
PUBLIC = "https://example.org/bib/"
PROXY = {"X-Forwarded-Proto": "https", "X-Forwarded-Host": "example.org", "X-Forwarded-Prefix": "/bib"}
SPOOF = {
    "Host": "evil.example:666",
    "X-Forwarded-Host": "evil.example",
    "X-Forwarded-Proto": "https",
    "X-Forwarded-Port": "666",
    "X-Forwarded-Prefix": "/evil",
    "X-Forwarded-For": "203.0.113.9",
}


def _paper_path(client, headers) -> str:
    urlset = ET.fromstring(client.get("/sitemap-papers-1.xml", headers=headers).data)
    location = next(urlset.iter(f"{SITEMAP}loc")).text or ""
    return "/paper/" + location.rsplit("/paper/", 1)[1]


def _absolute_urls(client, headers) -> dict[str, list[str]]:
    """Every kind of absolute URL the site gives out, as seen through ``headers``."""
    found: dict[str, list[str]] = {}
    description = Graph().parse(data=client.get("/sparql", headers={**headers, "Accept": "text/turtle"}).data)
    found["service description"] = [str(s) for s in description.subjects(SD.endpoint, None)]
    void = Graph().parse(data=client.get("/dataset.ttl", headers=headers).data, format="turtle")
    found["VoID endpoint"] = [str(o) for o in void.objects(None, VOID.sparqlEndpoint)]
    found["VoID dumps"] = [str(o) for o in void.objects(None, VOID.dataDump)]
    index = ET.fromstring(client.get("/sitemap.xml", headers=headers).data)
    found["sitemap index"] = [e.text or "" for e in index.iter(f"{SITEMAP}loc")]
    urlset = ET.fromstring(client.get("/sitemap-authors-1.xml", headers=headers).data)
    found["sitemap"] = [e.text or "" for e in urlset.iter(f"{SITEMAP}loc")]
    robots = client.get("/robots.txt", headers=headers).get_data(as_text=True)
    found["robots.txt"] = re.findall(r"^Sitemap: (\S+)$", robots, re.M)
    paper = _paper_path(client, headers)
    response = client.get(paper, headers=headers)
    found["Link header"] = re.findall(r"<([^>]+)>", response.headers["Link"])
    html = response.get_data(as_text=True)
    found["canonical link"] = re.findall(r'<link rel="canonical" href="([^"]+)">', html)
    found["citation meta tags"] = re.findall(r'name="citation_(?:public|abstract_html)_url" content="([^"]+)"', html)
    json_ld = json.loads(re.search(r'<script type="application/ld\+json">(.*?)</script>', html, re.S).group(1))
    found["JSON-LD url"] = [json_ld["url"]]
    found["cite box"] = re.findall(r"(https?://\S+?)(?:[}\s<]|$)", _between(html, 'id="cite-plain"', "</pre>"))
    found["BibTeX"] = re.findall(r"url = \{([^}]+)\}", _between(html, 'id="cite-bibtex"', "</pre>"))
    sparql_page = client.get("/sparql", headers={**headers, "Accept": "text/html"}).get_data(as_text=True)
    found["SPARQL page"] = re.findall(r"Protocol at <code>([^<]+)</code>", sparql_page)
    dataset_page = client.get("/dataset", headers={**headers, "Accept": "text/html"}).get_data(as_text=True)
    found["dataset page dumps"] = re.findall(r'<li><a href="[^"]*">(https?://[^<]+)</a>', dataset_page)
    for author_like in ("/author/", "/area/"):
        path = next(p for p in _site_links(html) if p.split("?")[0].find(author_like) >= 0)
        page = client.get(_app_path(path), headers=headers).get_data(as_text=True)
        found[f"canonical link {author_like}"] = re.findall(r'<link rel="canonical" href="([^"]+)">', page)
    assert all(found.values()), {kind: urls for kind, urls in found.items() if not urls}
    return found


def _between(text: str, start: str, end: str) -> str:
    return text.split(start, 1)[1].split(end, 1)[0]


def _site_links(html: str) -> list[str]:
    """Every root-relative link of a page: href, src, action, and the app root the scripts read."""
    links = re.findall(r'(?:href|src|action)="(/[^"]*)"', html)
    return links + re.findall(r'<meta name="bibgraph-root" content="([^"]*)">', html)


def _app_path(link: str) -> str:
    return link.removeprefix("/bib") if link.startswith("/bib/") else link


def test_without_a_trusted_proxy_every_absolute_url_is_under_the_base_iri(client):
    for kind, urls in _absolute_urls(client, {}).items():
        assert all(url.startswith(BASE) for url in urls), (kind, urls)


def test_behind_a_trusted_proxy_every_absolute_url_follows_its_headers(proxied):
    client = proxied.test_client()
    for kind, urls in _absolute_urls(client, PROXY).items():
        assert all(url.startswith(PUBLIC) for url in urls), (kind, urls)
    direct = _absolute_urls(client, {})  # no proxy headers: the host and path the app was reached at
    assert all(url.startswith("http://localhost/") for urls in direct.values() for url in urls), direct


def test_minted_iris_stay_the_datasets_behind_a_proxy(proxied):
    client = proxied.test_client()
    paper = _paper_path(client, PROXY)
    html = client.get(paper, headers=PROXY).get_data(as_text=True)
    json_ld = json.loads(re.search(r'<script type="application/ld\+json">(.*?)</script>', html, re.S).group(1))
    assert json_ld["@id"] == BASE + paper.lstrip("/")
    assert all(author["@id"].startswith(BASE + "author/") for author in json_ld["author"])
    assert f'name="DC.identifier" content="{BASE}{paper.lstrip("/")}"' in html
    rdf = Graph().parse(data=client.get(paper + ".ttl", headers=PROXY).data, format="turtle")
    assert (URIRef(BASE + paper.lstrip("/")), None, None) in rdf
    assert not [t for t in rdf if any(str(term).startswith(PUBLIC) for term in t)]
    void = Graph().parse(data=client.get("/dataset.ttl", headers=PROXY).data, format="turtle")
    assert (URIRef(BASE + "dataset"), VOID.sparqlEndpoint, URIRef(PUBLIC + "sparql")) in void
    assert {str(o) for o in void.objects(None, VOID.uriSpace)} == {BASE}


@pytest.mark.parametrize("kind", ["paper", "author", "area", "home", "coauthors", "ego", "sparql", "downloads"])
def test_every_link_of_a_page_stays_under_the_proxys_prefix(proxied, kind):
    client = proxied.test_client()
    paper = _paper_path(client, PROXY)
    paper_html = client.get(paper, headers=PROXY).get_data(as_text=True)
    author = next(link for link in _site_links(paper_html) if "/author/" in link)
    area = next(link for link in _site_links(paper_html) if "/area/" in link)
    path = {
        "paper": paper,
        "author": _app_path(author),
        "area": _app_path(area),
        "home": "/",
        "coauthors": "/graph/coauthors",
        "ego": "/graph/ego" + _app_path(author),
        "sparql": "/sparql",
        "downloads": "/download/",
    }[kind]
    response = client.get(path, headers={**PROXY, "Accept": "text/html"})
    assert response.status_code == 200
    links = _site_links(response.get_data(as_text=True))
    assert links and all(link.startswith("/bib/") for link in links), [x for x in links if not x.startswith("/bib/")]
    for link in {_app_path(x).split("#")[0] for x in links if "/static/" not in x}:  # and they are pages here
        assert client.get(link, headers=PROXY).status_code in (200, 303), link


def test_untrusted_proxy_headers_change_nothing(client):
    """A spoofed Host or X-Forwarded-* cannot poison the absolute URLs others are sent (PROXY_HOPS=0)."""
    plain = _absolute_urls(client, {})
    assert _absolute_urls(client, SPOOF) == plain


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    host=st.from_regex(r"[a-z0-9]{1,10}(\.[a-z0-9-]{1,10}){0,2}(:[0-9]{1,5})?", fullmatch=True),
    prefix=st.from_regex(r"(/[a-z0-9%._-]{1,8}){0,3}", fullmatch=True),
    proto=st.sampled_from(["http", "https"]),
    path=st.sampled_from(["/robots.txt", "/sitemap.xml", "/dataset.ttl", "/sparql", "/dataset", "/"]),
)
def test_untrusted_headers_leave_every_answer_byte_for_byte(client, host, prefix, proto, path):
    headers = {"Host": host, "X-Forwarded-Host": host, "X-Forwarded-Prefix": prefix, "X-Forwarded-Proto": proto}
    accept = {"Accept": "text/turtle"} if path == "/sparql" else {}
    spoofed = client.get(path, headers={**headers, **accept})
    honest = client.get(path, headers=accept)
    assert (spoofed.status_code, spoofed.data, spoofed.headers.get("Link")) == (
        honest.status_code,
        honest.data,
        honest.headers.get("Link"),
    )


def test_waitress_keeps_the_headers_proxyfix_reads(proxied):
    """Waitress clears X-Forwarded-* it does not trust; with PROXY_HOPS it must leave them to ProxyFix."""
    with waitress_serving(proxied, **waitress_options(proxied.config)) as server:
        request = urllib.request.Request(f"http://127.0.0.1:{server.effective_port}/robots.txt", headers=PROXY)
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read().decode()
    assert f"Sitemap: {PUBLIC}sitemap.xml" in text and "Disallow: /bib/sparql" in text


def test_waitress_options_with_a_trusted_proxy_address_and_hops():
    settings_ = {
        "WEB_THREADS": 4,
        "CONNECTION_LIMIT": 10,
        "CHANNEL_TIMEOUT": 30,
        "BACKLOG": 8,
        "MAX_CONTENT_LENGTH": 1024,
        "TRUSTED_PROXY": "10.0.0.1",
        "PROXY_HOPS": 2,
    }
    options = waitress_options(settings_)
    assert options["trusted_proxy_count"] == 2
    assert {"x-forwarded-for", "x-forwarded-host", "x-forwarded-proto"} <= options["trusted_proxy_headers"]
    assert waitress_options({**settings_, "TRUSTED_PROXY": None, "PROXY_HOPS": 0}).get(
        "clear_untrusted_proxy_headers", True
    )
