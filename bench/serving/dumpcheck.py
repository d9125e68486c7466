"""The first ``GET`` of a dataset's dump on a fresh server: how long until it is served, the server's CPU meanwhile,
and what another client's new maps and a cached page see during the check.

A dump is checked against the manifest before this process first sends it. It was hashed in the first request's
thread (800 MB at 100k papers, 6-8 GB at 1M); it is now hashed by one background thread at the lowest priority
(``web/dumpchecks.py``). ``--clients 2`` has a second client ask for the same dump meanwhile (the work must not be
done twice); ``--leave`` has each asking client close its connection 1 s in (the work must not be repeated for the
next one). Each GET reads the status line only (the send is not measured). ``--server-python`` serves from another
checkout (``PYTHONPATH=BASE`` with a ``bibgraph`` link to it, for a baseline). Usage:
``python -m bench.serving.dumpcheck /work/data/d100k-s14 [--clients 2] [--leave] [--server-python PY]``.
"""

import argparse
import http.client
import os
import statistics
import sys
import threading
import time

from bench.serving.abuse import request, server, tree_cpu


def first_status(port: int, source: str, path: str, leave: float | None) -> tuple[int, float]:
    """The status of a GET of ``path`` (0: none, it left after ``leave`` seconds) and the seconds to it."""
    started = time.monotonic()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=leave or 3600, source_address=(source, 0))
    try:
        connection.request("GET", path)
        status = connection.getresponse().status
    except (OSError, http.client.HTTPException):
        status = 0
    finally:
        connection.close()
    return status, time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset")
    parser.add_argument("--dump", default="bibgraph.nt")
    parser.add_argument("--clients", type=int, default=1, help="clients asking for the dump at once")
    parser.add_argument("--leave", action="store_true", help="each asker closes its connection 1 s in")
    parser.add_argument("--server-python", default=sys.executable)
    parser.add_argument("--other", action=argparse.BooleanOptionalAction, default=True, help="another client's maps")
    args = parser.parse_args()
    args.serve_args = [args.dataset]
    with server(args) as (port, process):
        assert request(port, "127.0.0.9", "GET", "/graph/coauthors", 300)[0] == 200  # warm: the default map
        time.sleep(2)
        cpu_before, began = tree_cpu(process.pid), time.monotonic()
        stop = threading.Event()
        other: dict[str, list[tuple[int, float]]] = {"maps": [], "page": []}

        def meanwhile() -> None:  # another client: a new map (fresh parameters) and a cached page, in turn
            number = 0
            while args.other and not stop.is_set():
                number += 1
                other["maps"].append(request(port, "127.0.0.50", "GET", f"/graph/coauthors?min_papers={number}", 300))
                other["page"].append(request(port, "127.0.0.50", "GET", "/", 60))
                time.sleep(0.5)

        watcher = threading.Thread(target=meanwhile)
        watcher.start()
        firsts: list[tuple[int, float]] = []
        askers = [
            threading.Thread(
                target=lambda n=n: firsts.append(
                    first_status(port, f"127.0.0.{10 + n}", f"/download/{args.dump}", 1.0 if args.leave else None)
                )
            )
            for n in range(args.clients)
        ]
        for asker in askers:
            asker.start()
        for asker in askers:
            asker.join()
        polls = 0
        while (status := first_status(port, "127.0.0.30", f"/download/{args.dump}", None)[0]) != 200:
            polls += 1
            assert status == 503, status
            time.sleep(1.0)
        ready = time.monotonic() - began
        cpu = tree_cpu(process.pid) - cpu_before
        stop.set()
        watcher.join()
    maps = [seconds for status, seconds in other["maps"] if status == 200]
    pages = [seconds for status, seconds in other["page"] if status == 200]
    size = os.path.getsize(
        os.path.join(args.dataset, os.readlink(os.path.join(args.dataset, "current")), "dumps", args.dump)
    )
    print(
        f"{args.dump} ({size / 2**20:,.0f} MB), {args.clients} client(s){', each leaving 1 s in' if args.leave else ''}"
    )
    print(f"    first answers (status, s): {', '.join(f'{s} {t:.2f}' for s, t in sorted(firsts, key=lambda f: f[1]))}")
    print(f"    served (200) after {ready:.1f} s ({polls} polls of 503 before); server tree CPU meanwhile {cpu:.1f} s")
    for name, times, total in (("new maps", maps, other["maps"]), ("cached page /", pages, other["page"])):
        if times:
            p99 = sorted(times)[max(0, round(0.99 * len(times)) - 1)]
            print(
                f"    other client's {name}: {len(times)}/{len(total)} 200, p50 {statistics.median(times):.2f} s,"
                f" p99 {p99:.2f} s, max {max(times):.2f} s"
            )


if __name__ == "__main__":
    main()
