"""Red team: with no trusted proxy (``PROXY_HOPS=0``), no request header chooses a URL the site gives out.

Werkzeug answers a URL missing its trailing slash (``/download``) with a redirect it builds from the
request's ``Host``: ``Host: evil.example:666`` got ``Location: http://evil.example:666/download/`` (and the
same link in the body), a link to the attacker's host for anyone a shared cache hands it to.
"""

import pytest

from tests.conftest import BASE

SPOOF = {"Host": "evil.example:666", "X-Forwarded-Host": "evil.example", "X-Forwarded-Proto": "gopher"}


@pytest.fixture(scope="module")
def slash_rules(app) -> list[str]:
    rules = [rule.rule for rule in app.url_map.iter_rules() if rule.rule.endswith("/") and rule.rule != "/"]
    assert rules, "the site has a route with a trailing slash (the redirect under test)"
    return rules


def test_slash_redirects_name_the_base_whatever_the_host_header(client, slash_rules) -> None:
    for rule in slash_rules:
        response = client.get(rule.rstrip("/"), headers=SPOOF)
        assert response.status_code in (301, 308), rule
        location = response.headers["Location"]
        assert location in (rule, BASE + rule.lstrip("/")), location
        assert b"evil" not in response.data and b"gopher" not in response.data
