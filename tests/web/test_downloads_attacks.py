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


# Red team (issue 25, second round): the gzip of a dump (minutes of a core at a million papers, once per version) was
# made in the request's thread whoever asked, a HEAD too, in no client's share; and a HEAD of a dataset's dump hashed
# the whole dump (its check before the first send).


def _headers_only(answer) -> None:  # type: ignore[no-untyped-def]
    assert answer.status_code == 200 and answer.data == b""
    assert answer.headers["Content-Disposition"].startswith("attachment")


def test_head_of_a_dump_makes_and_hashes_nothing(dataset: Path, tmp_path: Path, monkeypatch) -> None:
    """(A copy: this process checks a dump file once, and another test may have served the shared dataset.)"""
    import gzip

    from bibgraph.graph.dataset import directory
    from bibgraph.graph.dataset.directory import DUMPS, current_version

    hashed: list[str] = []
    real = directory.check_file
    monkeypatch.setattr(
        directory, "check_file", lambda version, name, *rest: (hashed.append(name), real(version, name, *rest))
    )
    app = make_app(BIBGRAPH_STORE=f"dataset:{dataset}", DOWNLOAD_DIR=str(tmp_path / "downloads"))
    try:
        client = app.test_client()
        version = current_version(dataset)
        hashed.clear()  # what opening the version checked
        for name in ("bibgraph.nt", "bibgraph.ttl", "bibgraph.nt.gz", "bibgraph.ttl.gz", "bibgraph.rdf"):
            _headers_only(client.head(f"/download/{name}"))
        assert hashed == [] and not list((tmp_path / "downloads").rglob("bibgraph.*"))  # nothing hashed, nothing made
        nt = client.head("/download/bibgraph.nt")
        assert nt.headers["Content-Length"] == str((version / DUMPS / "bibgraph.nt").stat().st_size)
        packed = client.get("/download/bibgraph.nt.gz")
        assert packed.status_code == 200
        assert gzip.decompress(packed.data) == (version / DUMPS / "bibgraph.nt").read_bytes()
        assert hashed == [f"{DUMPS}/bibgraph.nt"]  # checked once, before its first use
        again = client.head("/download/bibgraph.nt.gz")  # made: described as the file it is
        assert again.status_code == 200 and again.headers["Content-Length"] == str(len(packed.data))
    finally:
        app.extensions["bibgraph"].close()


def test_a_dumps_gzip_is_made_in_its_clients_turn(first_list_dataset: Path, tmp_path: Path, monkeypatch) -> None:
    """One client holding its share of costly work (a network download being made) is answered 429 for a gzip not
    made yet, as for any other costly download; another client gets it."""
    from bibgraph.web.maps.cache import networks

    app = make_app(BIBGRAPH_STORE=f"dataset:{first_list_dataset}", DOWNLOAD_DIR=str(tmp_path), MAP_DERIVATIONS=2)
    try:
        client = app.test_client()
        held, release = threading.Event(), threading.Event()

        def hold() -> None:
            with app.test_request_context("/", environ_base={"REMOTE_ADDR": "10.0.0.1"}), networks().derivation():
                held.set()
                release.wait(60)

        holder = threading.Thread(target=hold)
        holder.start()
        try:
            assert held.wait(60)
            greedy = client.get("/download/bibgraph.ttl.gz", environ_base={"REMOTE_ADDR": "10.0.0.1"})
            assert greedy.status_code == 429 and greedy.headers.get("Retry-After")
            other = client.get("/download/bibgraph.ttl.gz", environ_base={"REMOTE_ADDR": "10.0.0.2"})
            assert other.status_code == 200 and other.data[:2] == b"\x1f\x8b"
        finally:
            release.set()
            holder.join()
    finally:
        app.extensions["bibgraph"].close()
