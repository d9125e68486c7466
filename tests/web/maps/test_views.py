"""Network views and downloads through the app (in-process); the browser tests check the drawing."""

import io
import json
import re

import networkx as nx
import pytest

from bibgraph.graph.ingest.names import person_key


def embedded(response) -> dict:
    match = re.search(rb'<script type="application/json" id="graph-data">(.*?)</script>', response.data, re.S)
    return json.loads(match.group(1))


def test_views_answer(client) -> None:
    for url in ("/graph/coauthors", "/graph/topics", "/graph/path", f"/graph/ego/author/{person_key('Ke Wang')}"):
        response = client.get(url)
        assert response.status_code == 200, url
        assert (b"vendor/vis-network/vis-network.min.js" in response.data) == (url != "/graph/path")
        assert b"https://" not in re.sub(
            rb'<script type="application/json".*?</script>', b"", response.data, flags=re.S
        )


def test_coauthor_view_positions_everything_and_turns_physics_off(client) -> None:
    data = embedded(client.get("/graph/coauthors"))
    assert len(data["nodes"]) == 203 and len(data["edges"]) == 537
    assert data["options"]["physics"]["enabled"] is False
    assert all(isinstance(node["x"], float | int) and "title" in node for node in data["nodes"])


def test_large_views_are_capped_with_a_note(app) -> None:
    app.config["MAX_VIEW_NODES"] = 50
    try:
        response = app.test_client().get("/graph/coauthors?weighting=fractional")
    finally:
        app.config["MAX_VIEW_NODES"] = 1000
    assert len(embedded(response)["nodes"]) == 50
    assert b"Showing the 50 most prolific of 203 authors" in response.data


def test_the_capping_note_agrees_with_the_counts(app) -> None:
    app.config["MAX_VIEW_NODES"] = 3
    try:
        client = app.test_client()
        capped = client.get("/graph/coauthors?min_papers=2").get_data(as_text=True)
        one_community = client.get("/graph/coauthors?min_papers=2&community=0").get_data(as_text=True)
        uncapped = client.get("/graph/coauthors?min_papers=2&top=2").get_data(as_text=True)
    finally:
        app.config["MAX_VIEW_NODES"] = 1000
    assert "Showing the 3 most prolific of 4 authors" in capped  # 4 authors have 2 papers or more
    drawn = re.search(r'id="node-count">(\d+)<', one_community).group(1)
    assert f"among the 3 most prolific of 4 authors; this one has {drawn} of them" in one_community
    assert "most prolific" not in uncapped


def test_bad_filters_and_unknown_authors(client) -> None:
    assert client.get("/graph/coauthors?min_papers=abc").status_code == 400
    assert client.get("/graph/ego/author/nobody-00000000").status_code == 404
    assert client.get("/graph/coauthors.docx").status_code == 404


def test_downloads(client) -> None:
    graphml = client.get("/graph/coauthors.graphml?min_papers=2")
    assert graphml.headers["Content-Disposition"] == 'attachment; filename="bibgraph-coauthors.graphml"'
    assert nx.read_graphml(io.BytesIO(graphml.data)).number_of_nodes() == 4
    vos = client.get("/graph/coauthors.vosviewer").get_json()["network"]
    assert len(vos["items"]) == 203 and len(vos["links"]) == 537
    topics = client.get("/graph/topics.gexf")
    assert nx.read_gexf(io.BytesIO(topics.data)).number_of_nodes() == 29


def test_coauthor_view_shows_analytics(client) -> None:
    html = client.get("/graph/coauthors").get_data(as_text=True)
    assert "connected components" in html and "communities (Leiden)" in html
    strongest = re.search(r"Most collaborative.*?<tbody>(.*?)</tbody>", html, re.S).group(1)
    assert strongest.index("Ziniu Li") < strongest.index("</tr>")  # 14 joint papers: the first row


def test_a_network_is_derived_once_for_concurrent_requests(monkeypatch) -> None:
    import threading
    import time

    from bibgraph.web.maps.cache import NetworkCache

    cache, calls = NetworkCache(), []

    def slow() -> int:
        calls.append(1)
        time.sleep(0.2)
        return 42

    results: list[int] = []
    threads = [threading.Thread(target=lambda: results.append(cache._get("k", slow))) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [42] * 4 and len(calls) == 1


@pytest.mark.parametrize("given", ["area/deep-learning", "deep-learning", "/area/deep-learning/"])
def test_an_area_filter_is_its_path_or_its_slug(client, given) -> None:
    """The map filters take an area as the site's URLs name it, and the menu shows it selected."""
    by_path = client.get("/graph/coauthors.json?area=area/deep-learning").get_json()
    response = client.get(f"/graph/coauthors?area={given}")
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert '<option value="area/deep-learning" selected>' in html
    assert client.get(f"/graph/coauthors.json?area={given}").get_json() == by_path
    assert by_path["nodes"], "the seeds have deep-learning authors"


def test_an_area_page_past_its_last_page_shows_the_last(client) -> None:
    last = client.get("/area/deep-learning?page=1").get_data(as_text=True)
    far = client.get("/area/deep-learning?page=999")
    assert far.status_code == 200 and far.get_data(as_text=True) == last


def test_subareas_on_the_topic_map_are_named_with_their_area(client, seed_store) -> None:
    """Two areas may have subareas of one name (Theory under several): the map says whose."""
    html = client.get("/graph/topics?subareas=all").get_data(as_text=True)
    rows = seed_store.select(
        "PREFIX skos: <http://www.w3.org/2004/02/skos/core#>"
        " SELECT ?area ?sub WHERE { ?s skos:broader ?a ; skos:prefLabel ?sub . ?a skos:prefLabel ?area }"
    )
    assert rows
    labels = {
        node["label"] for node in json.loads(re.search(r'id="graph-data">(.*?)</script>', html, re.S)[1])["nodes"]
    }
    for row in rows:
        assert f"{row['area']} · {row['sub']}" in labels, row


def _derivations_forbidden(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """From here on, computing a co-author network fails the test (asserted through the 500 it would answer)."""
    from bibgraph.graph.networks import engine

    def refused(*arguments):  # type: ignore[no-untyped-def]
        raise AssertionError("a network was computed")

    monkeypatch.setattr(engine, "coauthor_network", refused)


def test_head_of_a_map_or_download_computes_nothing(client, monkeypatch) -> None:
    assert client.get("/graph/coauthors.json?min_papers=1").status_code == 200  # the incidence itself, once
    _derivations_forbidden(monkeypatch)
    for path in ("/graph/coauthors.graphml?min_papers=2&resolution=2.7", "/graph/coauthors?min_joint=2&top=7"):
        answer = client.head(path)
        assert answer.status_code == 200 and answer.data == b"" and "Content-Length" not in answer.headers, path
    assert client.head("/graph/coauthors.graphml?min_papers=x").status_code == 400  # still checked
    assert client.head("/graph/nothing.graphml").status_code == 404


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=40, deadline=None)
@given(st.floats(0.0, 20.0, allow_nan=False))
def test_resolutions_are_read_to_fixed_steps(app, value: float) -> None:  # type: ignore[no-untyped-def]
    """Any float names one of 100 steps (0.1 .. 10.0), so a client drawing fresh floats asks for bounded work."""
    from bibgraph.web.maps.args import filters_from_request

    with app.test_request_context(f"/graph/coauthors?resolution={value!r}"):
        read = filters_from_request().resolution
    assert read in {round(step / 10, 1) for step in range(1, 101)}
    assert abs(read - min(10.0, max(0.1, value))) <= 0.05 + 1e-9


def test_resolutions_below_a_step_apart_are_one_computation(client, monkeypatch) -> None:
    assert client.get("/graph/coauthors.gexf?min_papers=2&resolution=1.31").status_code == 200
    _derivations_forbidden(monkeypatch)
    assert client.get("/graph/coauthors.gexf?min_papers=2&resolution=1.349").status_code == 200


def test_a_download_body_is_made_once_per_full_key(client, monkeypatch, tmp_path) -> None:
    from bibgraph.graph.networks.exports import NetworkSyntax

    made = tmp_path / "made"  # a body is made in a child process: it says so in a file
    real = NetworkSyntax.export

    def counted(self, *arguments, **options):  # type: ignore[no-untyped-def]
        with made.open("a") as out:
            out.write(f"{self.name}\n")
        return real(self, *arguments, **options)

    monkeypatch.setattr(NetworkSyntax, "export", counted)
    path = "/graph/coauthors.gexf?min_papers=2&min_joint=2&weighting=fractional"
    first, again = client.get(path), client.get(path)
    assert first.status_code == again.status_code == 200 and again.data == first.data
    assert made.read_text().split() == ["gexf"]
    assert first.headers["Content-Length"] == str(len(first.data))
    assert client.get("/graph/coauthors.gexf?min_papers=2&min_joint=2").status_code == 200  # another key: made
    assert made.read_text().split() == ["gexf", "gexf"]


def test_a_map_the_dataset_keeps_is_served_without_reading_the_incidence(seed_dataset, monkeypatch) -> None:
    """The default co-author map, an area's and the topic map are read from the dataset's files: their first
    request does not wait for the incidence (the warm-up reads it meanwhile; 2 MB at 10,000 papers)."""
    from bibgraph.web.maps.cache import NetworkCache
    from tests.conftest import make_app

    def refused(self):  # type: ignore[no-untyped-def]
        raise AssertionError("the incidence was read")

    monkeypatch.setattr(NetworkCache, "incidence", refused)
    app = make_app(BIBGRAPH_STORE=f"dataset:{seed_dataset}")
    try:
        client = app.test_client()
        area = re.search(r'data-area="/?(area/[^"/]+)', client.get("/graph/coauthors").get_data(as_text=True))
        assert area is not None
        for path in ("/graph/coauthors", f"/graph/coauthors?area={area[1]}", "/graph/topics"):
            assert client.get(path).status_code == 200, path
        with pytest.raises(AssertionError, match="the incidence was read"):  # (TESTING: raised, not a 500)
            client.get("/graph/coauthors?min_papers=2")  # a map not kept: derived from the incidence
    finally:
        app.extensions["bibgraph"].close()


def test_the_default_maps_drawings_the_dataset_keeps_are_served_without_drawing(seed_dataset, monkeypatch) -> None:
    """The build keeps the default maps' drawings under the dataset's base: the first request of the topic map with
    every subarea (0.1 s to draw at 10,000 papers), of the topic map and of the default co-author map draws nothing."""
    from bibgraph.web.maps import views
    from tests.conftest import make_app

    def refused(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("a map was drawn")

    monkeypatch.setattr(views, "topic_view", refused)
    monkeypatch.setattr(views, "author_view", refused)
    app = make_app(BIBGRAPH_STORE=f"dataset:{seed_dataset}")
    try:
        client = app.test_client()
        for path in ("/graph/topics?expand=all", "/graph/topics", "/graph/coauthors"):
            assert client.get(path).status_code == 200, path
        with pytest.raises(AssertionError, match="a map was drawn"):  # (TESTING: raised, not a 500)
            client.get("/graph/coauthors?weighting=fractional")  # a drawing not kept: drawn
    finally:
        app.extensions["bibgraph"].close()


def test_a_kept_drawing_is_the_one_the_server_draws(seed_dataset) -> None:
    """The drawings a build keeps are those a server under the dataset's base draws (its own URLs, its style), to
    the text the page embeds."""
    from bibgraph.graph.dataset.derived import derived_key
    from bibgraph.graph.networks import Filters
    from bibgraph.graph.networks.filters import drawn
    from bibgraph.graph.networks.spec import COAUTHORS, TOPIC_MAP, NetworkSpec
    from bibgraph.graph.site.mapview import author_view, embedded, topic_view, view_options
    from bibgraph.web.links import base_iri, local_urls
    from bibgraph.web.maps.cache import networks
    from tests.conftest import make_app

    app = make_app(BIBGRAPH_STORE=f"dataset:{seed_dataset}")
    try:
        with app.test_request_context("/graph/topics"):
            cache = networks()
            default = NetworkSpec(COAUTHORS, drawn(Filters(), int(app.config["MAX_VIEW_NODES"]))[0])
            for spec, draw in (
                (NetworkSpec(TOPIC_MAP, expand="all"), topic_view),
                (NetworkSpec(TOPIC_MAP), topic_view),
                (default, author_view),
            ):
                assert cache.derived is not None
                found, kept = cache.derived.load(derived_key("view", spec, *view_options(spec, base_iri())))
                assert found, spec
                assert embedded(kept) == embedded(draw(cache.network(spec), cache.positions(spec), local_urls()))
    finally:
        app.extensions["bibgraph"].close()


def test_numbers_past_the_datasets_bounds_are_one_download(client, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """``top`` at or past the number of authors, ``min_papers``/``min_joint`` past the most papers anyone has: each
    value was a key of its own, and a client drawing fresh ones (``top=100000``, ``200000``...) made the whole
    network again for each. Now they are one download: computed once, the same bytes."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from bibgraph.web.maps.cache import networks

    with client.application.test_request_context("/"):
        incidence = networks().incidence()
    authors = len(incidence.authors)
    most = max(int(incidence.author_ptr[a + 1] - incidence.author_ptr[a]) for a in range(authors))
    whole = client.get(f"/graph/coauthors.gexf?top={authors}&resolution=1.7")
    empty = client.get(f"/graph/coauthors.gexf?min_papers={most + 2}&min_joint=2")
    assert whole.status_code == empty.status_code == 200
    _derivations_forbidden(monkeypatch)

    @settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
    @given(top=st.integers(authors, 10**6), minimum=st.integers(most + 2, 10**6))
    def one(top: int, minimum: int) -> None:
        again = client.get(f"/graph/coauthors.gexf?top={top}&resolution=1.7")
        assert again.status_code == 200 and again.data == whole.data
        assert client.get(f"/graph/coauthors.gexf?min_papers={minimum}&min_joint=2").data == empty.data

    one()


def test_a_community_past_every_author_and_an_area_in_another_case_are_one_download(client, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """``community=N`` was a whole network and its communities for each N (none past the number of authors holds
    anyone), and ``area=`` in another case another (empty) computation. Each is one key now, computed once."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from bibgraph.web.maps.cache import networks

    with client.application.test_request_context("/"):
        incidence = networks().incidence()
    authors = len(incidence.authors)
    with client.application.test_request_context("/"):
        from bibgraph.web.links import app_iris

        path = app_iris().path(incidence.concepts[0].area)
    assert path is not None and path == path.lower()
    past = client.get(f"/graph/coauthors.graphml?community={authors + 1}")
    inside = client.get(f"/graph/coauthors.graphml?area={path.removeprefix('area/')}&min_joint=2")
    assert past.status_code == inside.status_code == 200
    _derivations_forbidden(monkeypatch)

    @settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
    @given(community=st.integers(authors + 1, 10**6), spelling=st.randoms(use_true_random=False))
    def one(community: int, spelling) -> None:  # type: ignore[no-untyped-def]
        assert client.get(f"/graph/coauthors.graphml?community={community}").data == past.data
        shown = "".join(c.upper() if spelling.random() < 0.5 else c for c in path)
        again = client.get(f"/graph/coauthors.graphml?area={shown}&min_joint=2")
        assert again.status_code == 200 and again.data == inside.data

    one()


def test_areas_and_subareas_that_match_nothing_are_one_download(client, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """An unknown area slug, or a subarea under another area, was one (empty) computation and one cached body per
    spelling a client invents: every area/subarea pair that matches no concept is one key, computed once."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from bibgraph.web.links import app_iris
    from bibgraph.web.maps.cache import networks

    with client.application.test_request_context("/"):
        incidence = networks().incidence()
        slugs = {app_iris().path(c.area) for c in incidence.concepts} | {
            app_iris().path(c.concept) for c in incidence.concepts
        }
    first = client.get("/graph/coauthors.graphml?area=no-such-area-at-all")
    assert first.status_code == 200
    other = next(c for c in incidence.concepts if c.area != incidence.concepts[0].area)
    with client.application.test_request_context("/"):
        area = (app_iris().path(incidence.concepts[0].area) or "").removeprefix("area/")
        elsewhere = (app_iris().path(other.concept) or "").removeprefix("area/")
    _derivations_forbidden(monkeypatch)
    mismatched = client.get(f"/graph/coauthors.graphml?area={area}&subarea={elsewhere}")
    assert mismatched.status_code == 200 and mismatched.data == first.data

    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
    @given(slug=st.from_regex(r"[a-z][a-z0-9-]{0,20}", fullmatch=True))
    def one(slug: str) -> None:
        if f"area/{slug}" in slugs:
            return
        answer = client.get(f"/graph/coauthors.graphml?area={slug}")
        assert answer.status_code == 200 and answer.data == first.data

    one()
