"""Red team: a dump being written holds one web thread, not every request that asks for a download.

Every download was written behind one lock, and a request for a file not written yet waited on it without
limit, holding its web thread: while one request had a large store dumped (minutes, up to ``NETWORK_TIMEOUT``),
a few dozen requests for that file, or for a file already written, held all ``WEB_THREADS``, so pages and
``/health`` got no answer. Now a file is written by one request; another asking for it gets 503 with
``Retry-After`` after a short wait, and the other files are served meanwhile.
"""

import threading
from pathlib import Path

from bibgraph.web import downloads
from tests.conftest import make_app


def test_a_dump_being_written_leaves_the_other_downloads_and_threads_free(tmp_path: Path, monkeypatch) -> None:
    app = make_app(DOWNLOAD_DIR=str(tmp_path))
    try:
        client = app.test_client()
        assert client.get("/download/bibgraph.ttl").status_code == 200  # written before the slow one starts
        writing, finish = threading.Event(), threading.Event()
        original = downloads.get_store

        class Slow:  # the store as the dump sees it: the RDF/XML dump of a large store takes its time
            def with_deadline(self, seconds: float) -> "Slow":
                self.seconds = seconds
                return self

            def run(self, *call):
                writing.set()
                assert finish.wait(60)
                return original().with_deadline(self.seconds).run(*call)

        monkeypatch.setattr(downloads, "get_store", Slow)
        answers: dict[str, int] = {}
        writer = threading.Thread(target=lambda: answers.update(first=client.get("/download/bibgraph.rdf").status_code))
        writer.start()
        try:
            assert writing.wait(60)
            done: dict[str, object] = {}

            def others() -> None:
                done["ttl"] = app.test_client().get("/download/bibgraph.ttl").status_code
                again = app.test_client().get("/download/bibgraph.rdf")
                done["rdf"] = (again.status_code, again.headers.get("Retry-After"))

            asking = threading.Thread(target=others)
            asking.start()
            asking.join(30)  # a guard against a hang, not a timing: the writer is held until `finish`
            assert not asking.is_alive(), "a request waited for another file's dump"
            assert done == {"ttl": 200, "rdf": (503, "1")}
        finally:
            finish.set()
            writer.join(60)
        assert answers == {"first": 200}
        assert app.test_client().get("/download/bibgraph.rdf").status_code == 200
    finally:
        app.extensions["bibgraph"].close()
