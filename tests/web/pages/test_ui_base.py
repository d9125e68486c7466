"""A base IRI other than the address served: ``serve`` says so in its first lines, and /dataset says that its
addresses are the dataset's base (the links on the page still work from the site)."""

from bibgraph.web.server import base_notice
from tests.conftest import make_app


def test_serve_says_whether_links_name_the_address_it_serves() -> None:
    same = base_notice({"BIBGRAPH_BASE": "http://127.0.0.1:5000/", "PROXY_HOPS": 0}, "127.0.0.1", 5000)
    assert not same.startswith("warning") and "http://127.0.0.1:5000/" in same
    other = base_notice({"BIBGRAPH_BASE": "http://127.0.0.1:5000/", "PROXY_HOPS": 0}, "127.0.0.1", 5128)
    assert other.startswith("warning: base IRI http://127.0.0.1:5000/ is not this address (http://127.0.0.1:5128/)")
    assert not base_notice({"BIBGRAPH_BASE": "http://bib.example:8080/", "PROXY_HOPS": 0}, "0.0.0.0", 8080).startswith(
        "w"
    )
    proxied = base_notice({"BIBGRAPH_BASE": "https://bib.example/", "PROXY_HOPS": 1}, "127.0.0.1", 5128)
    assert "proxy" in proxied and not proxied.startswith("warning")


def test_the_dataset_page_says_its_addresses_are_the_base_when_opened_elsewhere() -> None:
    for port, noted in ((5128, True), (5000, False)):
        app = make_app(BIBGRAPH_BASE="http://127.0.0.1:5000/", HOST="127.0.0.1", PORT=port)
        try:
            page = app.test_client().get("/dataset").get_data(as_text=True)
            assert ('id="base-note"' in page) is noted
            assert "http://127.0.0.1:5000/sparql" in page  # the addresses stay the base's, consistently
        finally:
            app.extensions["bibgraph"].close()
