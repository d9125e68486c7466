"""A dataset's dump is checked before its first send, in the background: never in a request's thread.

Red team (issue 25, third round): the first ``GET`` of each dump hashed the whole file in the request's thread (6-8
GB at a million papers: minutes of a core), outside any client's share, and a client that left went on costing it.
Now the hash is queued for one low-priority thread, made once whoever asks; the file answers 503 with
``Retry-After`` until it has passed, and is never sent before.
"""

import os
import threading
import time
from pathlib import Path

import pytest

from bibgraph.graph.dataset import directory
from bibgraph.graph.dataset.directory import DUMPS, current_version
from bibgraph.web import dumpchecks
from tests.conftest import make_app

HELD = 30.0  # seconds the slow hash waits for the test at most (a guard against a hang, not a timing)


def test_the_first_get_of_a_dump_never_hashes_it_in_the_request_thread(
    dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dumpchecks, "WAIT", 0.2)
    release = threading.Event()
    hashed: list[tuple[str, str, int]] = []  # (file, thread, its niceness)
    real = directory.check_file

    def slow(version: Path, name: str, *rest: object) -> None:  # a dump of a million papers takes its time
        if name.startswith(DUMPS):
            thread = threading.current_thread()
            hashed.append((name, thread.name, os.getpriority(os.PRIO_PROCESS, threading.get_native_id())))
            release.wait(HELD)
        real(version, name, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(directory, "check_file", slow)
    app = make_app(BIBGRAPH_STORE=f"dataset:{dataset}", DOWNLOAD_DIR=str(tmp_path / "downloads"))
    try:
        asked = time.monotonic()
        answers = [app.test_client().get("/download/bibgraph.nt") for _ in range(2)]  # two clients, one after another
        assert time.monotonic() - asked < HELD / 2  # neither waited for the hash
        for answer in answers:
            assert answer.status_code == 503 and answer.headers["Retry-After"] == str(dumpchecks.RETRY_AFTER)
            assert b"bibgraph.nt" in answer.data and b"#" not in answer.data[:1]  # never the dump's bytes
        assert [(name, thread) for name, thread, _ in hashed] == [(f"{DUMPS}/bibgraph.nt", "dump checks")]
        assert hashed[0][2] == dumpchecks.NICENESS  # the checking thread alone runs at the lowest priority
        assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) != dumpchecks.NICENESS
        release.set()
        deadline = time.monotonic() + HELD
        while (answer := app.test_client().get("/download/bibgraph.nt")).status_code == 503:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert answer.status_code == 200
        assert answer.data == (current_version(dataset) / DUMPS / "bibgraph.nt").read_bytes()
        assert len(hashed) == 1  # once, whoever asked
    finally:
        release.set()
        app.extensions["bibgraph"].close()


def test_a_damaged_dump_is_refused_by_its_background_check_and_told_once(
    dataset: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = current_version(dataset) / DUMPS / "bibgraph.ttl"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    app = make_app(BIBGRAPH_STORE=f"dataset:{dataset}", DOWNLOAD_DIR=str(tmp_path / "downloads"))
    try:
        answers = [app.test_client().get("/download/bibgraph.ttl") for _ in range(3)]
        assert [a.status_code for a in answers] == [503, 503, 503]
        assert all(bytes(data[:20]) not in a.data for a in answers)
        assert sum("download refused" in r.getMessage() for r in caplog.records) == 1
        assert "dumps/bibgraph.ttl" in app.test_client().get("/health").get_json()["dataset"]["damaged_files"]
    finally:
        app.extensions["bibgraph"].close()
