"""Compression (Flask-Compress): text answers in gzip or br as the client accepts, decoding to the very bytes sent
uncompressed, with ``Vary: Accept-Encoding``; dumps served in byte ranges and gzip files never re-encoded; a
streamed answer still streams."""

import gzip
import random
from pathlib import Path

import brotli
import pytest
from flask import Response

from tests.conftest import make_app

PAGES = ["/", "/graph/coauthors", "/graph/topics", "/static/graphview.js", "/static/site.css", "/graph/coauthors.json"]
SELECT = "/sparql?query=SELECT%20*%20WHERE%20%7B%3Fs%20%3Fp%20%3Fo%7D%20LIMIT%20200"
DECODE = {"gzip": gzip.decompress, "br": brotli.decompress}


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    app = make_app(DOWNLOAD_DIR=str(tmp_path_factory.mktemp("downloads")))
    yield app.test_client()
    app.extensions["bibgraph"].close()


@pytest.mark.parametrize("path", [*PAGES, SELECT])
@pytest.mark.parametrize("encoding", ["gzip", "br"])
def test_text_answers_are_compressed_as_the_client_accepts_and_decode_to_the_same_bytes(
    client, path: str, encoding: str
) -> None:
    plain = client.get(path, headers={"Accept-Encoding": "identity"})
    packed = client.get(path, headers={"Accept-Encoding": f"{encoding}, identity;q=0.5"})
    assert plain.status_code == packed.status_code == 200
    assert "Content-Encoding" not in plain.headers
    assert packed.headers["Content-Encoding"] == encoding
    assert "accept-encoding" in packed.headers["Vary"].lower()
    assert "accept-encoding" in plain.headers["Vary"].lower()  # a cache keeps the two apart
    assert DECODE[encoding](packed.get_data()) == plain.get_data()
    assert len(packed.get_data()) < len(plain.get_data())


def test_without_accept_encoding_nothing_is_compressed(client) -> None:
    assert "Content-Encoding" not in client.get("/graph/coauthors").headers


@pytest.mark.parametrize("name", ["bibgraph.ttl", "bibgraph.nt", "bibgraph.ttl.gz"])
def test_downloads_keep_their_bytes_etag_and_ranges(client, name: str) -> None:
    whole = client.get(f"/download/{name}", headers={"Accept-Encoding": "identity"})
    asked = client.get(f"/download/{name}", headers={"Accept-Encoding": "gzip, br"})
    assert "Content-Encoding" not in asked.headers
    assert asked.get_data() == whole.get_data()
    assert asked.headers["ETag"] == whole.headers["ETag"]
    part = client.get(f"/download/{name}", headers={"Accept-Encoding": "gzip, br", "Range": "bytes=10-99"})
    assert part.status_code == 206
    assert "Content-Encoding" not in part.headers
    assert part.get_data() == whole.get_data()[10:100]
    again = client.get(f"/download/{name}", headers={"Accept-Encoding": "gzip", "If-None-Match": whole.headers["ETag"]})
    assert again.status_code == 304


def test_an_etag_names_the_encoding_and_a_conditional_request_gets_304() -> None:
    app = make_app()
    payload = b"a line of a report\n" * 400

    @app.route("/_tagged")
    def tagged() -> Response:
        response = Response(payload, mimetype="text/plain")
        response.set_etag("v1")
        return response

    client = app.test_client()
    packed = client.get("/_tagged", headers={"Accept-Encoding": "br"})
    assert packed.headers["ETag"] == '"v1:br"'  # another representation, another strong validator
    assert client.get("/_tagged", headers={"Accept-Encoding": "br", "If-None-Match": '"v1:br"'}).status_code == 304
    app.extensions["bibgraph"].close()


def test_a_streamed_answer_still_streams_compressed(tmp_path: Path) -> None:
    app = make_app()
    made: list[int] = []

    @app.route("/_stream")
    def stream() -> Response:
        def chunks():
            rng = random.Random(1)
            for index in range(200):
                made.append(index)
                yield (" ".join(str(rng.random()) for _ in range(4000)) + "\n").encode()

        return Response(chunks(), mimetype="text/csv")

    answer = app.test_client().get("/_stream", headers={"Accept-Encoding": "br"}, buffered=False)
    assert answer.headers["Content-Encoding"] == "br" and answer.is_streamed
    pieces = iter(answer.response)
    first = next(pieces)
    assert first and len(made) < 200  # the first compressed bytes leave before the last chunk is made
    body = first + b"".join(pieces)
    assert len(made) == 200 and brotli.decompress(body).count(b"\n") == 200
    app.extensions["bibgraph"].close()
