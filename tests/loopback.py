"""Stand-in HTTP endpoints on loopback for the remote store's tests: a handler base that replies in one call and
logs nothing, and a context manager serving one in a thread."""

import contextlib
import http.server
import threading
from collections.abc import Iterator


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
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
