"""A prolific author's page is paged (``?page=N``) like an area's; counts and per-area groups stay whole."""

import re
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bibgraph.graph.site import profile as profile_module
from bibgraph.graph.site.profile import AuthorPaper, AuthorProfile, author_profile
from tests.conftest import BASE

AREAS = [(f"{BASE}area/a{i}", f"Area {i}") for i in range(4)]


@st.composite
def profiles(draw: st.DrawFn) -> AuthorProfile:
    """An author's profile with papers in random areas (or none), so the groups are of any sizes."""
    profile = AuthorProfile(f"{BASE}author/x", "X", [])
    for number, area in enumerate(draw(st.lists(st.sampled_from([None, *AREAS]), min_size=1, max_size=40))):
        iri, label = area or (None, None)
        profile.papers.append(AuthorPaper(f"{BASE}paper/p{number}", f"P{number}", 1, 1, False, label, None, iri))
    return profile


@given(profiles(), st.integers(1, 7))
def test_the_pages_hold_every_paper_once_in_area_order_with_whole_group_counts(profile: AuthorProfile, size) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(profile_module, "AUTHOR_PAGE_SIZE", size)
        shown = [profile.page_groups(page) for page in range(1, profile.pages + 1)]
        spans = [profile.page_span(page) for page in range(1, profile.pages + 1)]
        assert profile.pages == -(-len(profile.papers) // size)
    flat = [paper for page in shown for _, papers, _ in page for paper in papers]
    assert flat == [paper for _, papers in profile.by_area for paper in papers]
    whole = {area.iri if area else None: len(papers) for area, papers in profile.by_area}
    for page, (first, last) in zip(shown, spans, strict=True):
        assert 0 < sum(len(papers) for _, papers, _ in page) == last - first + 1 <= size
        for area, _, total in page:
            assert total == whole[area.iri if area else None]


def _listed(html: str) -> list[str]:
    section = html.split('id="papers-heading"', 1)[1].split("</section>\n</div>", 1)[0]
    return re.findall(r'<li><a href="(/paper/[^"]+)"', section)


def test_an_authors_page_lists_each_paper_on_one_page_and_keeps_the_counts(client, seed_store, monkeypatch) -> None:
    key, papers = Counter(
        str(row["a"]).removeprefix(f"{BASE}author/")
        for row in seed_store.select("SELECT ?a WHERE { ?p <http://purl.org/dc/terms/creator> ?a }")
    ).most_common(1)[0]
    assert papers >= 2  # the seeds' most prolific author has papers enough to page by one
    monkeypatch.setattr(profile_module, "AUTHOR_PAGE_SIZE", 1)
    profile = author_profile(seed_store, f"{BASE}author/{key}")
    assert profile is not None and profile.pages == papers
    seen: list[str] = []
    for page in range(1, profile.pages + 1):
        html = client.get(f"/author/{key}?page={page}").get_data(as_text=True)
        assert f'<dd data-count="papers">{papers}</dd>' in html  # the counts are the whole list's
        assert f"{page}\N{EN DASH}{page} of {papers}" in html
        assert 'aria-label="Pages of papers"' in html and f'aria-current="page" href="?page={page}"' in html
        assert len(_listed(html)) == 1
        seen += _listed(html)
    assert sorted(seen) == sorted(f"/{paper.iri.removeprefix(BASE)}" for paper in profile.papers)
    past = client.get(f"/author/{key}?page=999").get_data(as_text=True)
    assert _listed(past) == _listed(client.get(f"/author/{key}?page={profile.pages}").get_data(as_text=True))
    assert f'<link rel="canonical" href="{BASE}author/{key}?page={profile.pages}">' in past


def test_an_author_with_few_papers_has_no_pager(client, seed_store) -> None:
    row = seed_store.select("SELECT ?a WHERE { ?p <http://purl.org/dc/terms/creator> ?a } LIMIT 1")[0]
    html = client.get("/" + str(row["a"]).removeprefix(BASE)).get_data(as_text=True)
    assert 'aria-label="Pages of papers"' not in html
