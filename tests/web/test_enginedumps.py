"""A ``sparql:`` store's dump downloads are made in the background (web/enginedumps.py), against a fake engine on
loopback that answers when the test lets it: 503 with ``Retry-After`` while the dump is made (a ``HEAD`` starts
nothing), the engine's triples once done with their SHA-256, a deadline that stops a stuck engine and keeps nothing
half-written, the work kept when the requester has gone, the web process's memory flat during a large dump.

Before, the request itself dumped the engine within ``NETWORK_TIMEOUT`` (300 s): the first ``GET`` waited for
the whole dump (or got 503 after 300 s, its work lost), which no 1M-paper dump (over an hour) fits."""

import base64
import hashlib
import resource
import threading
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pyoxigraph as ox
import pytest
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from bibgraph.graph.stores.atomic import write_bytes_atomically
from bibgraph.web import enginedumps
from tests.conftest import app_with
from tests.loopback import Handler, serving

PREDICATE = "http://x/p"
COUNT = """<?xml version="1.0"?><sparql xmlns="http://www.w3.org/2005/sparql-results#"><head><variable name="p"/>
<variable name="n"/></head><results><result><binding name="p"><uri>{p}</uri></binding><binding name="n">
<literal datatype="http://www.w3.org/2001/XMLSchema#integer">{n}</literal></binding></result></results></sparql>"""


class _Engine(Handler):
    """One predicate of ``triples`` triples; the CONSTRUCT's answer starts with its first line, then waits for
    ``release`` before the rest (a slow engine; never released: a stuck one)."""

    triples = 3
    release = threading.Event()
    queries: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        query = urllib.parse.parse_qs(self.request_body().decode())["query"][0]
        type(self).queries.append(query)
        if query.startswith("SELECT"):
            self.reply(200, COUNT.format(p=PREDICATE, n=self.triples).encode(), "application/sparql-results+xml")
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/n-triples")
        self.end_headers()
        lines = _lines(self.triples)
        self.wfile.write(next(lines))
        self.wfile.flush()
        if not type(self).release.wait(30):
            return  # stuck: the connection is closed after the test
        for line in lines:
            self.wfile.write(line)


def _lines(count: int) -> Iterator[bytes]:
    for number in range(count):
        yield f'<http://x/s{number}> <{PREDICATE}> "object {number} with some text to weigh" .\n'.encode()


@pytest.fixture
def engine() -> Iterator[str]:
    _Engine.triples, _Engine.release, _Engine.queries = 3, threading.Event(), []
    with serving(_Engine) as address:
        yield f"{address}/sparql"
    _Engine.release.set()


def downloaded(client: FlaskClient, path: str, seconds: float = 60) -> TestResponse:
    """``path``'s answer once it is not 503 (a dump being made), or the 503 after ``seconds``."""
    ends = time.monotonic() + seconds
    while (answer := client.get(path)).status_code == 503 and time.monotonic() < ends:
        time.sleep(0.05)
    return answer


def test_a_dump_is_made_in_the_background_then_served_with_its_checksum(engine: str, tmp_path: Path) -> None:
    with app_with(BIBGRAPH_STORE=f"sparql:{engine}", DOWNLOAD_DIR=str(tmp_path)) as app:
        client = app.test_client()
        looked = client.head("/download/bibgraph.nt")
        assert (looked.status_code, looked.headers["Retry-After"]) == (503, str(enginedumps.RETRY_AFTER))
        assert _Engine.queries == [], "a HEAD asked the engine"
        first = client.get("/download/bibgraph.nt")  # starts the job, answered at once
        assert (first.status_code, first.headers["Retry-After"]) == (503, str(enginedumps.RETRY_AFTER))
        assert "being made" in first.get_data(as_text=True)
        time.sleep(0.5)
        assert client.get("/download/bibgraph.nt").status_code == 503  # the engine still holds its answer
        _Engine.release.set()
        done = downloaded(client, "/download/bibgraph.nt")
        assert done.status_code == 200
        body = done.get_data()
        assert body.splitlines(keepends=True) == list(_lines(3))
        digest = hashlib.sha256(body).digest()
        assert done.headers["Repr-Digest"] == f"sha-256=:{base64.b64encode(digest).decode()}:"
        assert done.headers["ETag"].strip('"') == digest.hex()[:32]
        asked = len(_Engine.queries)
        for name in ("bibgraph.ttl", "bibgraph.nt.gz", "bibgraph.ttl.gz"):  # from the N-Triples: no engine read
            made = downloaded(client, f"/download/{name}")
            assert made.status_code == 200, name
        assert len(_Engine.queries) == asked
        turtle = client.get("/download/bibgraph.ttl").get_data()
        assert {str(q.triple) for q in ox.parse(turtle, format=ox.RdfFormat.TURTLE)} == {
            str(q.triple) for q in ox.parse(body, format=ox.RdfFormat.N_TRIPLES)
        }


def test_a_turtle_dump_asked_first_reads_the_engine_once(engine: str, tmp_path: Path) -> None:
    with app_with(BIBGRAPH_STORE=f"sparql:{engine}", DOWNLOAD_DIR=str(tmp_path)) as app:
        client = app.test_client()
        assert client.get("/download/bibgraph.ttl.gz").status_code == 503
        assert client.get("/download/bibgraph.ttl").status_code == 503
        _Engine.release.set()
        assert downloaded(client, "/download/bibgraph.ttl.gz").status_code == 200
        assert downloaded(client, "/download/bibgraph.ttl").status_code == 200
        assert sum(query.startswith("CONSTRUCT") for query in _Engine.queries) == 1


def test_a_deadline_stops_a_stuck_engine_and_nothing_half_written_is_kept(
    engine: str, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(enginedumps, "FAILED_KEPT", 2.0)
    with app_with(BIBGRAPH_STORE=f"sparql:{engine}", DOWNLOAD_DIR=str(tmp_path), DUMP_TIMEOUT=1.0) as app:
        client = app.test_client()
        assert client.get("/download/bibgraph.nt").status_code == 503
        ends = time.monotonic() + 30
        while "could not be made" not in (said := client.get("/download/bibgraph.nt")).get_data(as_text=True):
            assert time.monotonic() < ends, "the stuck dump was not stopped"
            time.sleep(0.1)
        assert said.status_code == 503 and "deadline" in said.get_data(as_text=True)
        assert 1 <= int(said.headers["Retry-After"]) <= 2
        assert [path.name for path in tmp_path.rglob("*") if path.is_file()] == []  # no half-written dump
        asked = len(_Engine.queries)
        assert client.get("/download/bibgraph.nt").status_code == 503  # within FAILED_KEPT: not asked again
        assert len(_Engine.queries) == asked
        _Engine.release.set()
        time.sleep(2.1)
        assert downloaded(client, "/download/bibgraph.nt").status_code == 200  # tried again, now made


def test_the_work_goes_on_when_the_requester_has_gone(engine: str, tmp_path: Path) -> None:
    """The requests end (503) while the engine still answers: nobody waits, yet the file gets written."""
    with app_with(BIBGRAPH_STORE=f"sparql:{engine}", DOWNLOAD_DIR=str(tmp_path)) as app:
        assert app.test_client().get("/download/bibgraph.nt").status_code == 503
        _Engine.release.set()
        ends = time.monotonic() + 60
        while not list(tmp_path.rglob("bibgraph.nt.sha256")):
            assert time.monotonic() < ends
            time.sleep(0.05)
        assert app.test_client().get("/download/bibgraph.nt").status_code == 200


def test_the_web_process_does_not_hold_a_large_dump(engine: str, tmp_path: Path) -> None:
    """150,000 triples (~11 MB of N-Triples, several times that as parsed objects) go through the child."""
    _Engine.triples = 150_000
    _Engine.release.set()
    with app_with(BIBGRAPH_STORE=f"sparql:{engine}", DOWNLOAD_DIR=str(tmp_path)) as app:
        client = app.test_client()
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        assert downloaded(client, "/download/bibgraph.ttl", 120).status_code == 200
        grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
        size = (next(tmp_path.rglob("bibgraph.nt"))).stat().st_size
        assert size > 10_000_000
        assert grown * 1024 < size / 5, f"the web process's peak grew by {grown} kB for a {size} byte dump"


def _made(plan: enginedumps.Plan, seconds: float = 60) -> bytes:
    """The checksum of ``plan``'s file once :func:`enginedumps.request` serves it (its job started and waited for)."""
    ends = time.monotonic() + seconds
    while True:
        try:
            digest = enginedumps.request(plan, 30.0, start=True)
        except enginedumps.DumpPending:
            assert time.monotonic() < ends, f"{plan.path} was not made"
            time.sleep(0.05)
            continue
        while plan.path in enginedumps._jobs:  # served once its sum is written; its job ends a moment later
            assert time.monotonic() < ends, f"the job of {plan.path} did not end"
            time.sleep(0.01)
        return digest


def _counted_plan(path: Path, body: bytes, made: Path) -> enginedumps.Plan:
    """A plan writing ``body`` at ``path``; each run (in the forked child) adds a line to ``made``."""

    def make(target: Path) -> None:
        with made.open("a") as log:
            log.write("made\n")
        write_bytes_atomically(target, body)

    return enginedumps.Plan(path, make)


def test_a_dump_changed_on_disk_is_refused_and_made_again(tmp_path: Path, monkeypatch, caplog) -> None:
    """A process serving a dump it did not write reads it against its checksum before the first send: a flipped bit
    is not served; the file is removed, said in the log, and made again. An intact one is not made again."""
    made = tmp_path / "made.log"
    plan = _counted_plan(tmp_path / "engine-0123456789abcdef" / "bibgraph.nt", b"<http://x/s> <http://x/p> 1 .\n", made)
    digest = _made(plan)
    assert enginedumps.request(plan, 30.0, start=True) == digest  # written by this process: served at once
    monkeypatch.setattr(enginedumps, "_verified", {})  # another process, later: the file is on disk, not yet read
    with pytest.raises(enginedumps.DumpPending, match="against its checksum"):
        enginedumps.request(plan, 30.0, start=True)
    assert _made(plan) == digest and made.read_text().count("made") == 1  # intact: read, not made again
    monkeypatch.setattr(enginedumps, "_verified", {})
    body = bytearray(plan.path.read_bytes())
    body[3] ^= 0x01  # one flipped bit, the checksum beside it unchanged
    plan.path.write_bytes(bytes(body))
    with caplog.at_level("ERROR", logger="bibgraph.downloads"), pytest.raises(enginedumps.DumpPending):
        enginedumps.request(plan, 30.0, start=True)
    assert _made(plan) == digest == hashlib.sha256(plan.path.read_bytes()).digest()
    assert made.read_text().count("made") == 2
    assert f"{plan.path} does not match" in caplog.text


def test_a_new_version_removes_the_folders_of_the_versions_before(tmp_path: Path, monkeypatch) -> None:
    """The first job in an engine version's folder removes the earlier versions' folders; nothing else is touched,
    and a folder a job still writes in is kept."""
    older = tmp_path / enginedumps.engine_folder("http://x/version-1")
    (older / "bibgraph.nt").parent.mkdir()
    (older / "bibgraph.nt").write_bytes(b"old\n")
    (tmp_path / "networks").mkdir()
    (tmp_path / "networks" / "kept.json").write_bytes(b"{}")
    (tmp_path / "engine-notes.txt").write_bytes(b"a file, not a version's folder")
    monkeypatch.setattr(enginedumps, "_jobs", {})
    stuck = _running_job(tmp_path / enginedumps.engine_folder("http://x/version-2") / "bibgraph.nt")
    newer = tmp_path / enginedumps.engine_folder("http://x/version-3") / "bibgraph.nt"
    _made(_counted_plan(newer, b"new\n", tmp_path / "made.log"))
    assert not older.exists()
    assert stuck.parent.is_dir(), "the folder of a job still running was removed"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["engine-notes.txt", "made.log", "networks", newer.parent.name, stuck.parent.name]
    )
    assert newer.read_bytes() == b"new\n" and (tmp_path / "networks" / "kept.json").is_file()


def _running_job(path: Path) -> Path:
    """A job of this process that has not ended, writing at ``path``."""
    path.parent.mkdir(parents=True)
    with enginedumps._jobs_lock:
        enginedumps._jobs[path] = enginedumps._Job(time.monotonic())
    return path
