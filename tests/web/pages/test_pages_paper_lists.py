"""An author's, an area's and a search's papers as BibTeX, RIS and CSV: each BibTeX entry is the paper page's own
cite box, and every format reads back (bibtexparser, rispy, csv) to the papers and authors the store holds."""

import csv
import html
import io
import re

import bibtexparser
import pytest
import rispy

from bibgraph.graph.site import cite
from bibgraph.graph.site.pagedata import paper_page
from bibgraph.graph.site.profile import author_profile
from tests.conftest import BASE

AUTHOR = "author/ke-wang-88ba8dc3"


def download(client, fmt: str, **which: str) -> str:
    response = client.get(f"/papers.{fmt}", query_string=which)
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.headers["Content-Disposition"].startswith("attachment; filename=")
    return response.get_data(as_text=True)


def test_an_authors_bibtex_is_the_cite_box_of_each_of_their_papers(client, seed_store) -> None:
    profile = author_profile(seed_store, BASE + AUTHOR)
    assert profile is not None and len(profile.papers) >= 2
    pages = [paper_page(seed_store, paper.iri) for paper in profile.papers]
    expected = "\n".join(cite.bibtex(page, page.iri) for page in pages if page)
    assert download(client, "bibtex", author=AUTHOR) == expected
    entries = bibtexparser.loads(expected).entries
    assert [entry["ID"] for entry in entries] == [cite.cite_key(page) for page in pages if page]


def test_ris_and_csv_read_back_to_the_papers_and_their_authors(client, seed_store) -> None:
    profile = author_profile(seed_store, BASE + AUTHOR)
    assert profile is not None
    pages = [page for paper in profile.papers if (page := paper_page(seed_store, paper.iri))]
    records = rispy.loads(download(client, "ris", author=AUTHOR))
    assert [r["urls"] for r in records] == [[page.iri] for page in pages]
    for record, page in zip(records, pages, strict=True):
        names = [a.name for a in page.authors] + (["et al."] if page.truncated else [])
        assert record["authors"] == names and record["type_of_reference"] == "GEN"
        assert record["title"] == cite.title_words(page)
    rows = list(csv.DictReader(io.StringIO(download(client, "csv", author=AUTHOR))))
    assert [row["iri"] for row in rows] == [page.iri for page in pages]
    assert [row["authors"].split("; ") for row in rows] == [[a.name for a in page.authors] for page in pages]
    assert [row["area"] for row in rows] == [page.area_label or page.subject_label or "" for page in pages]


def test_an_areas_and_a_searchs_papers_are_all_there(client) -> None:
    areas = client.get("/areas").get_data(as_text=True)
    area = re.search(r'href="/(area/[^"#?]+)"', areas)
    assert area is not None
    page = client.get("/" + area.group(1)).get_data(as_text=True)
    count = int(re.search(r'id="concept-papers">([\d,]+)<', page).group(1).replace(",", ""))
    assert len(rispy.loads(download(client, "ris", area=area.group(1)))) == count
    assert f"papers.csv?area={area.group(1)}" in html.unescape(page).replace("%2F", "/")
    search = client.get("/search", query_string={"q": "graph"}).get_data(as_text=True)
    found = int(re.search(r"of ([\d,]+) for", search).group(1).replace(",", ""))
    listed = rispy.loads(download(client, "ris", q="graph"))
    assert 0 < len(listed) <= found  # the search's papers (its authors and areas are not papers)


@pytest.mark.parametrize("which", [{}, {"author": "author/nobody-here"}, {"area": "area/nothing"}])
def test_a_list_that_names_nothing_is_refused(client, which: dict[str, str]) -> None:
    assert client.get("/papers.ris", query_string=which).status_code in (400, 404)
    assert client.get("/papers.doc", query_string={"author": AUTHOR}).status_code == 404
