"""HTTP on loopback for the tests: stand-in endpoints for the remote store's tests (a handler base that replies in
one call and logs nothing, a context manager serving one in a thread), and a WSGI app served by waitress in a thread
that is wholly stopped when the block ends."""

import contextlib
import http.server
import threading
from collections.abc import Iterator
from typing import Any

from waitress import wasyncore
from waitress.server import TcpWSGIServer, create_server


class Handler(http.server.BaseHTTPRequestHandler):
    """A request handler whose subclasses answer with :meth:`reply`."""

    def request_body(self) -> bytes:
        return self.rfile.read(int(self.headers["Content-Length"]))

    def reply(self, code: int, body: bytes, content_type: str | None = None) -> None:
        self.send_response(code)
        if content_type:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass  # the tests read what they assert, not the access log


@contextlib.contextmanager
def serving(handler: type[Handler]) -> Iterator[str]:
    """``http://127.0.0.1:PORT`` where ``handler`` answers, until the block ends."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = False  # so server_close() joins every handler thread: none outlives its test
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def waitress_serving(app: Any, **options: Any) -> Iterator[TcpWSGIServer]:
    """``app`` served by waitress on a free loopback port, until the block ends; then every handler thread has
    finished before the sockets close. ``server.close()`` alone closes them under a running task, whose error is then
    logged from its thread after the test: CPython 3.11 can raise ``SystemError: AST constructor recursion depth
    mismatch`` when two threads parse at once (gh-106905; 3.11's tracebacks parse the failing line), so such a
    leftover thread made a later test fail."""
    server = create_server(app, host="127.0.0.1", port=0, **options)
    assert isinstance(server, TcpWSGIServer)
    running = threading.Thread(target=server.run, daemon=True)
    running.start()
    try:
        yield server
    finally:
        server.task_dispatcher.shutdown(timeout=30)
        assert not server.task_dispatcher.threads, "a request was still running 30 s after its test"
        wasyncore.close_all(server._map)
        running.join(30)
        assert not running.is_alive(), "waitress's loop was still running 30 s after its test"
