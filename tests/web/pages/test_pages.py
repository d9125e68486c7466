"""The pages people come for, through Flask's test client: profiles, areas, search, citations, errors."""

import re
from collections import Counter, defaultdict
from html.parser import HTMLParser
from urllib.parse import parse_qs, urlsplit

import bibtexparser
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bibgraph.graph.ingest.names import person_key
from bibgraph.graph.ingest.parse import parse_file
from bibgraph.graph.ingest.plaintext import plain_text
from bibgraph.graph.ingest.records import paper_id
from bibgraph.graph.rdf.vocab import sparql_prologue
from bibgraph.graph.site.pagedata import histogram_bins
from bibgraph.graph.site.profile import author_profile
from bibgraph.seeds import seed_directory
from tests.conftest import BASE

HTML = {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
PAPER = "paper/4924f090328d8ff5"


def source_roles() -> tuple[dict[str, Counter], dict[str, list[str]]]:
    """Roles per author key counted from the source lists (one count per distinct paper), and each paper's authors."""
    roles: dict[str, Counter] = defaultdict(Counter)
    authors: dict[str, list[str]] = {}
    for path in sorted(seed_directory().glob("*.txt")):
        for record in parse_file(path)[0]:
            pid = paper_id(record)
            if pid in authors:
                continue
            authors[pid] = list(record.authors)
            n = len(record.authors)
            for position, name in enumerate(record.authors, 1):
                counts = roles[person_key(name)]
                counts["papers"] += 1
                if n == 1 and not record.truncated:
                    counts["sole"] += 1
                elif position == 1:
                    counts["first"] += 1
                elif position == n and not record.truncated:
                    counts["last"] += 1
    return roles, authors


def test_profile_counts_agree_with_the_source_lists(seed_store) -> None:
    roles, _ = source_roles()
    assert len(roles) > 100
    for key, counts in roles.items():
        profile = author_profile(seed_store, f"{BASE}author/{key}")
        assert profile is not None, key
        got = {"papers": len(profile.papers), **{r: profile.count(r) for r in ("first", "last", "sole")}}
        assert got == {"papers": counts["papers"], **{r: counts[r] for r in ("first", "last", "sole")}}, key
        assert sum(area.papers for area in profile.areas) == sum(1 for p in profile.papers if p.top)
        assert sum(len(papers) for _, papers in profile.by_area) == len(profile.papers)


def test_profile_page_shows_the_counts(client) -> None:
    roles, _ = source_roles()
    for key, counts in sorted(roles.items(), key=lambda item: -item[1]["papers"])[:15]:
        html = client.get(f"/author/{key}").get_data(as_text=True)
        shown = dict(re.findall(r'data-count="(\w+)">(\d+)<', html))
        for role in ("papers", "first", "last", "sole"):
            assert int(shown[role]) == counts[role], (key, role)
        assert f'href="/graph/ego/author/{key}"' in html
        assert 'action="/graph/path"' in html and f'value="author/{key}"' in html
        assert "/graph/coauthors?area=area%2F" in html or "/graph/coauthors?area=area/" in html


def test_areas_is_a_tree_with_counts(client, seed_store) -> None:
    html = client.get("/areas", headers=HTML).get_data(as_text=True)
    rows = seed_store.select(
        sparql_prologue()
        + """SELECT ?area (COUNT(DISTINCT ?paper) AS ?n) WHERE {
             ?area a skos:Concept FILTER NOT EXISTS { ?area skos:broader ?x }
             ?paper dcterms:subject ?s . ?s skos:broader? ?area } GROUP BY ?area"""
    )
    assert rows
    for row in rows:
        path = str(row["area"])[len(BASE) :]
        found = re.search(rf'href="/{re.escape(path)}">[^<]*</a>\s*<span class="counts">(\d+) papers', html)
        assert found and int(found.group(1)) == row["n"], path
    assert "<table" not in html


def test_area_page_counts_and_numbered_pages(client, seed_store) -> None:
    html = client.get("/area/deep-learning", headers=HTML).get_data(as_text=True)
    total = seed_store.select(
        sparql_prologue()
        + "SELECT (COUNT(DISTINCT ?p) AS ?n) WHERE { ?p dcterms:subject ?s . "
        + f"?s skos:broader? <{BASE}area/deep-learning> }}"
    )[0]["n"]
    assert re.search(rf'id="concept-papers">{total}<', html)
    assert "Co-author map of Deep Learning" in html and "/graph/coauthors?area=area/deep-learning" in html


def test_search_shows_snippets_counts_areas_and_range(client) -> None:
    html = client.get("/search", query_string={"q": "reinforcement"}, headers=HTML).get_data(as_text=True)
    assert re.search(r'class="snippet"[^>]*>.*<mark>[Rr]einforcement</mark>', html)
    areas = client.get("/search", query_string={"q": "fairness"}, headers=HTML).get_data(as_text=True)
    assert 'href="/area/social-aspects/fairness"' in areas
    authors = client.get("/search", query_string={"q": "wang"}, headers=HTML).get_data(as_text=True)
    assert re.search(r'<p class="meta">\d+ papers? · Deep Learning', authors)
    many = client.get("/search", query_string={"q": "model"}, headers=HTML).get_data(as_text=True)
    total = int(re.search(r"of (\d+) for", many).group(1))
    assert total > 20
    last_page = -(-total // 20)
    beyond = client.get("/search", query_string={"q": "model", "page": 999}, headers=HTML).get_data(as_text=True)
    assert f"Results {(last_page - 1) * 20 + 1}\u2013{total} of {total}" in beyond
    assert 'aria-current="page"' in beyond


def test_labels_are_plain_text(seed_store) -> None:
    rows = seed_store.select(
        sparql_prologue() + "SELECT ?label WHERE { ?p a schema:ScholarlyArticle ; rdfs:label ?label }"
    )
    for row in rows:
        label = str(row["label"])
        assert "$" not in label and "\\" not in label and "**" not in label, label
    assert plain_text(r"pruning 70\% when $d \gg n$ and *fast*") == "pruning 70% when d ≫ n and fast"
    assert plain_text("a 45.2% gain, 2*3 and $x$") == "a 45.2% gain, 2*3 and x"


PIECES = [
    ("*word*", "word"),
    ("**bold**", "bold"),
    (r"$\alpha$", "\u03b1"),
    (r"70\%", "70%"),
    (r"$d \gg n$", "d ≫ n"),
    ("45%", "45%"),
    ("plain", "plain"),
    (r"$O(n^2)$", "O(n²)"),
    (r"$\pi_\theta$", "πθ"),
    (r"$y_{ij}$", "yᵢⱼ"),
    (r"$\mathrm{ESS}_{\min}$", "ESSₘᵢₙ"),
    (r"$\pi_{\text{roll}}$", "πᵣₒₗₗ"),
    (r"$T^{3/2}$", "T^(3/2)"),
    (r"$10^{-3}$", "10⁻³"),
    ("``quoted''", "\u201cquoted\u201d"),
    (r"a\_b", "a_b"),
]


@settings(deadline=None)  # pylatexenc's first call builds its tables
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=12), st.sampled_from([" ", "\n", "  "]))
def test_plain_text_turns_markup_into_what_it_stands_for(pieces, gap) -> None:
    text = gap.join(source for source, _ in pieces)
    assert plain_text(text) == " ".join(shown for _, shown in pieces)


class Meta(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, str]] = []
        self.json_ld: list[str] = []
        self._in_ld = False

    def handle_starttag(self, tag, attrs):
        found = dict(attrs)
        if tag == "meta" and "name" in found:
            self.tags.append((found["name"], found.get("content") or ""))
        self._in_ld = tag == "script" and found.get("type") == "application/ld+json"

    def handle_data(self, data):
        if self._in_ld:
            self.json_ld.append(data)

    def handle_endtag(self, tag):
        self._in_ld = False


def _paper_authors(seed_store, iri: str) -> list[str]:
    rows = seed_store.select(
        sparql_prologue()
        + f"""SELECT ?name WHERE {{ <{iri}> bg:authorship ?a . ?a bg:authorPosition ?n ; prov:agent/foaf:name ?name }}
             ORDER BY ?n"""
    )
    return [str(r["name"]) for r in rows]


def test_citation_meta_tags_and_json_ld(client, seed_store) -> None:
    import json

    parser = Meta()
    parser.feed(client.get(f"/{PAPER}", headers=HTML).get_data(as_text=True))
    tags = parser.tags
    authors = _paper_authors(seed_store, BASE + PAPER)
    assert [v for k, v in tags if k == "citation_author"] == authors
    title = [v for k, v in tags if k == "citation_title"]
    assert len(title) == 1 and title[0] and "$" not in title[0]
    assert ("citation_public_url", BASE + PAPER) in tags
    data = json.loads(parser.json_ld[0])
    assert data["@type"] == "ScholarlyArticle" and data["@id"] == BASE + PAPER
    assert [a["name"] for a in data["author"]] == authors


def test_cite_box_is_valid_bibtex_built_from_the_data(client, seed_store) -> None:
    html = client.get(f"/{PAPER}", headers=HTML).get_data(as_text=True)
    import html as html_lib

    source = html_lib.unescape(re.search(r'<pre id="cite-bibtex">(.*?)</pre>', html, re.S).group(1))
    entries = bibtexparser.loads(source).entries
    assert len(entries) == 1
    entry = entries[0]
    authors = _paper_authors(seed_store, BASE + PAPER)
    listed = [a.strip().strip("{}") for a in entry["author"].split(" and ")]
    assert listed == [*authors, "others"]  # this paper's list was cut (等)
    assert "derived" in entry["note"] and entry["url"] == BASE + PAPER
    plain = html_lib.unescape(re.search(r'<pre id="cite-plain">(.*?)</pre>', html, re.S).group(1))
    assert plain.startswith(", ".join(authors)) and "et al." in plain and BASE + PAPER in plain


def test_related_papers_share_authors(client, seed_store) -> None:
    key = person_key("Ke Wang")
    papers = [p.iri for p in author_profile(seed_store, f"{BASE}author/{key}").papers]
    assert len(papers) >= 2
    html = client.get(papers[0][len(BASE) - 1 :], headers=HTML).get_data(as_text=True)
    section = html.split('id="related-authors"', 1)[1].split("</section>", 1)[0]
    assert papers[1][len(BASE) - 1 :] in section


def test_query_link_opens_the_editor(client) -> None:
    html = client.get(f"/{PAPER}", headers=HTML).get_data(as_text=True)
    href = re.search(r'<a href="([^"]+)" id="query-link">', html).group(1)
    parts = urlsplit(href.replace("&amp;", "&"))
    assert parts.path == "/sparql" and not parts.query
    assert f"<{BASE}{PAPER}>" in parse_qs(parts.fragment)["query"][0]


@pytest.mark.parametrize("path", ["/paper/0000000000000000", "/author/nobody-00000000", "/no/such/page"])
def test_404_is_a_styled_page_for_browsers_and_text_for_clients(client, path: str) -> None:
    page = client.get(path, headers=HTML)
    assert page.status_code == 404 and page.mimetype == "text/html"
    html = page.get_data(as_text=True)
    assert 'class="site"' in html and 'role="search"' in html and "site.css" in html
    plain = client.get(path, headers={"Accept": "*/*"})
    assert plain.status_code == 404 and plain.mimetype == "text/plain"


BROKEN = "SELECT ?s WHERE {\n  ?s ?p ?o .\n  FILTER (?s = )\n}"


def test_sparql_syntax_error_for_browsers_marks_the_position(client) -> None:
    page = client.get("/sparql", query_string={"query": BROKEN}, headers=HTML)
    assert page.status_code == 400 and page.mimetype == "text/html"
    html = page.get_data(as_text=True)
    marked = re.search(r'<span class="error-line">(.*?)<mark id="error-position">(.)', html)
    assert marked and marked.groups() == ("  FILTER (?s = ", ")")  # the first token the engine cannot read
    expected = re.findall(r"<li><code>([^<]+)</code></li>", html.split('id="expected"', 1)[1].split("</ul>", 1)[0])
    assert {"a variable", "an IRI", "(", "STR"} <= set(expected)  # all it accepts there
    assert "error at" in html  # and the engine's own message
    link = re.search(r'href="(/sparql#query=[^"]+)"', html).group(1).replace("&amp;", "&")
    assert parse_qs(urlsplit(link).fragment)["query"][0] == BROKEN
    for accept in ("application/sparql-results+json", "*/*", "text/csv"):
        client_answer = client.get("/sparql", query_string={"query": BROKEN}, headers={"Accept": accept})
        assert client_answer.status_code == 400 and client_answer.mimetype == "text/plain"
        assert client_answer.get_data(as_text=True).startswith("query syntax error")


def test_histogram_bins_keep_empty_bins() -> None:
    assert histogram_bins([(1, 5), (4, 2)]) == [("1", 5), ("2", 0), ("3", 0), ("4", 2)]
    wide = histogram_bins([(0, 1), (100, 3)], most=10)
    assert len(wide) <= 10 and sum(count for _, count in wide) == 4 and wide[-1][1] == 3


def test_500_is_a_styled_page_for_browsers_and_text_for_clients() -> None:
    from tests.conftest import make_app

    app = make_app(PROPAGATE_EXCEPTIONS=False, TESTING=False)
    app.add_url_rule("/boom", "boom", lambda: 1 // 0)
    try:
        client = app.test_client()
        page = client.get("/boom", headers=HTML)
        assert page.status_code == 500 and page.mimetype == "text/html"
        html = page.get_data(as_text=True)
        assert 'class="site"' in html and 'role="search"' in html and "Something went wrong" in html
        plain = client.get("/boom", headers={"Accept": "application/json"})
        assert plain.status_code == 500 and plain.mimetype == "text/plain"
    finally:
        app.extensions["bibgraph"].close()


def test_an_authors_page_counts_every_coauthor_and_lists_the_top_shown(client, seed_store, monkeypatch) -> None:
    """The page counts all of the author's co-authors (``author_coauthors.rq``) but lists only the first
    ``COAUTHORS_SHOWN`` (most joint papers, then by name), with the SPARQL query for the rest."""
    from bibgraph.graph.site import profile as profile_module
    from bibgraph.graph.sparql.queries import bind, named_query

    creators = "SELECT ?a WHERE { ?p <http://purl.org/dc/terms/creator> ?a }"
    counts = Counter(str(row["a"]) for row in seed_store.select(creators))

    def coauthors(author: str) -> list[dict[str, object]]:
        return seed_store.select(bind(named_query("author_coauthors").text, author=author))

    author = max(counts, key=lambda a: (len(coauthors(a)), a))
    whole = coauthors(author)
    assert len(whole) > 12  # enough to cut
    monkeypatch.setattr(profile_module, "COAUTHORS_SHOWN", 12)
    html = client.get(author.removeprefix(BASE.rstrip("/"))).get_data(as_text=True)
    assert f'<dd data-count="coauthors">{len(whole):,}</dd>' in html
    assert f"Show the top 12 of {len(whole):,} co-authors" in html and "All co-authors, as a SPARQL query" in html
    side = html.split('id="coauthors-heading"', 1)[1].split('id="maps-heading"', 1)[0]
    assert side.count("<tr><td>") == 12
