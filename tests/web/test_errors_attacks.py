"""Red team: a query the engine refuses to prepare is the client's error (400), never "busy".

``SELECT (<urn:f>(1) AS ?x) {}`` (an unknown function) got 503 with ``Retry-After: 1``, inviting every
client to send it again each second, and an ERROR "query worker failed" line in the log per request.
"""

import pytest

UNKNOWN_FUNCTIONS = ["SELECT (<urn:f>(1) AS ?x) {}", "ASK { FILTER(<urn:f>(1)) }"]


@pytest.mark.parametrize("query", UNKNOWN_FUNCTIONS)
def test_an_unknown_function_is_a_400_without_retry_after(client, caplog, query: str) -> None:
    response = client.get("/sparql", query_string={"query": query})
    assert response.status_code == 400, response.get_data(as_text=True)
    assert "Retry-After" not in response.headers
    assert "urn:f" in response.get_data(as_text=True)
    assert not [record for record in caplog.records if record.levelname == "ERROR"]
