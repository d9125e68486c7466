"""What the WSGI server itself does against the abuses ``bibgraph serve``'s layer is built for: waitress with
``serve``'s options, and granian with them mapped (:func:`bench.serving.wsgiservers.granian_server`).

Each server runs a small WSGI app in its own process on loopback, with a short timeout and a small connection limit
and thread count so that a probe ends in seconds; the clients are this process's sockets, every loop bounded.
Probes: a connection that sends nothing, one idle after a request (keep-alive), headers trickled a line a second
(slow-loris), as many clients trickling a request body as there are threads (does a page still answer?), twice the
connection limit of idle connections (how many the server holds), a body over ``MAX_CONTENT_LENGTH`` (refused by
the server, or handed to the app), a client that leaves while its request runs (is the app told?), and whether the
server gives a file wrapper. Usage: ``python -m bench.serving.wsgiprobe [--servers waitress granian]
[--timeout 3] [--threads 4] [--limit 100]``.
"""

import argparse
import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from bench.servers import free_port, stop, wait_for_http

SERVERS = ("waitress", "granian")
BODY_LIMIT = 1024  # the probes' MAX_CONTENT_LENGTH
SLOW = 5.0  # seconds the app's slow request runs unless told its client left


def probe_app(log: Path) -> Callable[..., list[bytes]]:
    """``/`` answers at once; ``/slow`` runs :data:`SLOW` s, stopping early if the server says its client left (and
    writes to ``log`` which); ``/environ`` names the server's own environ keys."""

    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        path = environ["PATH_INFO"]
        body = b"ok"
        if path == "/slow":
            started, gone = time.monotonic(), environ.get("waitress.client_disconnected")
            while time.monotonic() - started < SLOW and not (gone and gone()):
                time.sleep(0.05)
            log.write_text(f"{'told' if gone and gone() else 'not told'}, ran {time.monotonic() - started:.1f} s")
        elif path == "/environ":
            body = " ".join(sorted(key for key in environ if key.startswith(("wsgi.file", "waitress.")))).encode()
        elif environ.get("CONTENT_LENGTH"):
            body = str(len(environ["wsgi.input"].read(int(environ["CONTENT_LENGTH"])))).encode()
        start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
        return [body]

    return app


def serve(kind: str, port: int, log: Path, timeout: int, threads: int, limit: int) -> None:
    """Serve :func:`probe_app` with ``kind`` until killed."""
    from bibgraph.web.settings import defaults

    app = probe_app(log)
    limits = {"WEB_THREADS": threads, "CONNECTION_LIMIT": limit, "CHANNEL_TIMEOUT": timeout}
    if kind == "waitress":
        from waitress import serve as waitress_serve

        from bibgraph.web.server import waitress_options

        waitress_serve(
            app,
            host="127.0.0.1",
            port=port,
            **waitress_options(defaults() | limits | {"MAX_CONTENT_LENGTH": BODY_LIMIT}),
        )
        return
    from bench.serving.wsgiservers import granian_server

    granian_server(port, defaults() | limits).serve(target_loader=lambda: app, wrap_loader=False)


@contextlib.contextmanager
def running(kind: str, args: argparse.Namespace, log: Path) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    port = free_port()
    limits = ["--timeout", str(args.timeout), "--threads", str(args.threads), "--limit", str(args.limit)]
    command = [sys.executable, "-m", "bench.serving.wsgiprobe", "--serve", kind, "--port", str(port), "--log", str(log)]
    process = subprocess.Popen([*command, *limits], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_http(f"http://127.0.0.1:{port}/", process)
        yield port, process
    finally:
        stop(process)


def connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=5)


def closed_within(sock: socket.socket, seconds: float) -> str:
    """When the server closed ``sock`` (reading what it sends meanwhile), or that it was still open."""
    started = time.monotonic()
    sock.settimeout(seconds)
    with contextlib.suppress(TimeoutError, OSError):
        while sock.recv(65536):
            pass
        return f"closed after {time.monotonic() - started:.1f} s"
    return f"still open after {seconds:.0f} s"


def ask(port: int, path: str = "/", timeout: float = 60) -> tuple[str, float]:
    """The status line of ``GET path`` on a new connection, and the seconds it took."""
    started = time.monotonic()
    with connect(port) as sock:
        sock.settimeout(timeout)
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n".encode())
        head = sock.recv(65536).split(b"\r\n", 1)[0].decode()
    return head, time.monotonic() - started


def trickled_headers(port: int, within: float) -> str:
    sock = connect(port)
    sock.sendall(b"GET / HTTP/1.1\r\nHost: probe\r\n")
    started = time.monotonic()
    with sock, contextlib.suppress(OSError):
        while time.monotonic() - started < within:
            sock.sendall(b"X-Slow: 1\r\n")
            time.sleep(1)
        return f"still open after {within:.0f} s"
    return f"closed after {time.monotonic() - started:.1f} s"


def slow_bodies(port: int, clients: int, seconds: float) -> str:
    """``clients`` trickle a request body a byte a second for ``seconds``; meanwhile, how long a ``GET /`` waits."""
    socks = [connect(port) for _ in range(clients)]
    for sock in socks:
        sock.sendall(b"POST / HTTP/1.1\r\nHost: probe\r\nContent-Length: 1000\r\n\r\n")
    stopping = threading.Event()

    def trickle() -> None:
        while not stopping.wait(1):
            for sock in socks:
                with contextlib.suppress(OSError):
                    sock.sendall(b"a")

    feeder = threading.Thread(target=trickle)
    feeder.start()
    time.sleep(1)
    try:
        head, took = ask(port, timeout=seconds)
        answer = f"GET / answered ({head}) in {took:.2f} s"
    except TimeoutError:
        answer = f"GET / not answered in {seconds:.0f} s"
    stopping.set()
    feeder.join()
    for sock in socks:
        sock.close()
    return answer


def sockets_of(pid: int) -> int:
    """Open sockets of ``pid`` and its descendants (granian serves from a worker process)."""
    count, pending = 0, [pid]
    while pending:
        process = pending.pop()
        with contextlib.suppress(OSError):
            fds = os.listdir(f"/proc/{process}/fd")
            count += sum(os.readlink(f"/proc/{process}/fd/{fd}").startswith("socket:") for fd in fds)
            for task in os.listdir(f"/proc/{process}/task"):
                pending += [int(child) for child in Path(f"/proc/{process}/task/{task}/children").read_text().split()]
    return count


def many_connections(port: int, pid: int, count: int) -> str:
    before = sockets_of(pid)
    socks = [connect(port) for _ in range(count)]
    time.sleep(1)
    held = sockets_of(pid) - before
    for sock in socks:
        sock.close()
    return f"{count} idle connections: the server holds {held}"


def big_body(port: int) -> str:
    with connect(port) as sock:
        size = 4 * BODY_LIMIT
        sock.sendall(f"POST / HTTP/1.1\r\nHost: probe\r\nContent-Length: {size}\r\n\r\n".encode() + b"a" * size)
        answer = sock.recv(65536)
    status = answer.split(b"\r\n", 1)[0].decode()
    return f"{size} bytes: {status}, {'handed to the app' if answer.endswith(str(size).encode()) else 'app not called'}"


def client_leaves(port: int, log: Path) -> str:
    log.unlink(missing_ok=True)
    with connect(port) as sock:
        sock.sendall(b"GET /slow HTTP/1.1\r\nHost: probe\r\n\r\n")
        time.sleep(0.5)
    deadline = time.monotonic() + SLOW + 5
    while not log.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    return f"left after 0.5 s: the app was {log.read_text() if log.exists() else 'never done'}"


def probes(kind: str, args: argparse.Namespace, scratch: Path) -> dict[str, str]:
    log = scratch / f"{kind}.slow"
    within = 2 * args.timeout + 5
    with running(kind, args, log) as (port, process):
        found = {
            "connection sending nothing": closed_within(connect(port), within),
            "idle after a request (keep-alive)": idle_after_request(port, within),
            "headers trickled (slow-loris)": trickled_headers(port, within),
            f"{args.threads} clients trickling bodies ({args.threads} threads)": slow_bodies(
                port, args.threads, within
            ),
            "connection limit": many_connections(port, process.pid, 2 * args.limit),
            "body over the limit": big_body(port),
            "client leaves while its request runs": client_leaves(port, log),
            "server's environ keys": ask_environ(port),
        }
    return found


def idle_after_request(port: int, within: float) -> str:
    with connect(port) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: probe\r\n\r\n")
        time.sleep(0.2)
        sock.recv(65536)
        return closed_within(sock, within)


def ask_environ(port: int) -> str:
    with connect(port) as sock:
        sock.sendall(b"GET /environ HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n")
        time.sleep(0.2)
        keys = sock.recv(65536).split(b"\r\n\r\n", 1)[-1].decode()
    return keys or "none"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", nargs="+", default=list(SERVERS), choices=SERVERS)
    parser.add_argument("--timeout", type=int, default=3, help="CHANNEL_TIMEOUT (granian: its header-read timeout)")
    parser.add_argument("--threads", type=int, default=4, help="WEB_THREADS")
    parser.add_argument("--limit", type=int, default=100, help="CONNECTION_LIMIT (granian has none)")
    parser.add_argument("--scratch", type=Path, default=Path("."))
    parser.add_argument("--serve", choices=SERVERS, help=argparse.SUPPRESS)  # run as that server
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--log", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.port, args.log, args.timeout, args.threads, args.limit)
        return
    results = {kind: probes(kind, args, args.scratch) for kind in args.servers}
    print("\n| probe | " + " | ".join(results) + " |")
    print("|---|" + "---|" * len(results))
    for name in next(iter(results.values())):
        print(f"| {name} | " + " | ".join(found[name] for found in results.values()) + " |")


if __name__ == "__main__":
    main()
