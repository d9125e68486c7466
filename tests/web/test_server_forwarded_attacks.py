"""Red team: behind a trusted proxy (``PROXY_HOPS``), the forwarded root must be a root.

werkzeug's ``ProxyFix`` believes ``X-Forwarded-Prefix``, ``-Host`` and ``-Proto`` from the trusted hop; a
proxy that does not set one passes the client's own on. ``X-Forwarded-Prefix: //evil.example`` made every
page load its scripts from evil.example (``<script src="//evil.example/static/loading.js">``) and
``javascript:alert(1)`` made every link a script, for whoever a shared cache then gave the page to.
"""

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

_URL = re.compile(r'(?:href|src|action|content)="([^"]*)"')
NASTY = ["//", "/", ":", "javascript:", "\\", "@", "?", "#", " ", "%2f", '"', "<", ".", "evil.example", "a", "8"]


def _root_is_sane(url: str) -> bool:
    """A URL the page gives out is on this site: a path, or an absolute http(s) URL of a plain host."""
    if url.startswith("/"):
        return not url.startswith("//") and "\\" not in url
    found = re.match(r"(https?)://([A-Za-z0-9.\-]+|\[[0-9A-Fa-f:.]+\])(:[0-9]+)?(/|$)", url)
    return found is not None or (not re.match(r"[A-Za-z][A-Za-z0-9+.\-]*:", url) and not url.startswith("//"))


_part = st.lists(st.sampled_from(NASTY), max_size=5).map("".join)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(prefix=_part, host=_part, proto=st.sampled_from(["http", "https", "javascript", "ftp", "", "HTTPS"]))
def test_a_forwarded_root_that_is_no_root_is_refused(proxied, prefix: str, host: str, proto: str) -> None:
    headers = {"X-Forwarded-Prefix": prefix, "X-Forwarded-Host": host, "X-Forwarded-Proto": proto}
    response = proxied.test_client().get("/", headers=headers)
    if response.status_code == 400:
        return
    assert response.status_code == 200
    urls = [u for u in _URL.findall(response.get_data(as_text=True)) if "/" in u or ":" in u]
    assert urls and all(_root_is_sane(url) for url in urls), (headers, [u for u in urls if not _root_is_sane(u)])


@pytest.mark.parametrize(
    "headers",
    [
        {"X-Forwarded-Prefix": "//evil.example"},
        {"X-Forwarded-Prefix": "javascript:alert(1)"},
        {"X-Forwarded-Prefix": "http://evil.example/x"},
        {"X-Forwarded-Host": "evil.example/x"},
        {"X-Forwarded-Proto": "javascript"},
    ],
)
def test_the_reported_roots_are_400(proxied, headers: dict[str, str]) -> None:
    assert proxied.test_client().get("/", headers=headers).status_code == 400


def test_a_real_proxys_root_is_followed(proxied) -> None:
    headers = {"X-Forwarded-Prefix": "/bib", "X-Forwarded-Host": "bib.example:8443", "X-Forwarded-Proto": "https"}
    page = proxied.test_client().get("/", headers=headers).get_data(as_text=True)
    assert 'src="/bib/static/loading.js"' in page
