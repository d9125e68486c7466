"""Red team: nothing a client sends starts a log line of its own.

The access log wrote the request's path as decoded: ``GET /x%0a2026-12-01 … bibgraph.access INFO GET /admin
200`` printed a second, forged access line. Every plain log line escapes controls in its message.
"""

import io
import json
import urllib.parse

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bibgraph.web import logs

BREAKS = ["\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029", "\x00", "\x1b"]


_text = st.text(alphabet=st.one_of(st.sampled_from(BREAKS), st.characters(exclude_categories=("Cs",))), max_size=20)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=_text, query=_text, log_format=st.sampled_from(["text", "json"]))
def test_one_log_line_per_request_whatever_its_url(
    client, restored_loggers, monkeypatch, path, query, log_format
) -> None:
    stream = io.StringIO()
    monkeypatch.setattr("sys.stderr", stream)
    logs.configure(log_format)
    client.get("/x" + urllib.parse.quote(path) + "?q=" + urllib.parse.quote(query))
    lines = stream.getvalue().split("\n")
    assert lines[-1] == "" and len(lines) == 2, lines
    assert not any(c in lines[0] for c in BREAKS), lines[0]
    if log_format == "json":
        assert json.loads(lines[0])["name"] == "bibgraph.access"
    else:
        assert " bibgraph.access INFO GET /x" in lines[0]
