"""A throw-away Virtuoso (Debian's virtuoso-opensource) on loopback ports, loaded with a dump."""

import contextlib
import os
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path

from bench.servers import free_port, stop

GRAPH = "urn:bibgraph:test"
INI = """[Database]
DatabaseFile = {dir}/virtuoso.db
ErrorLogFile = {dir}/virtuoso.log
LockFile = {dir}/virtuoso.lck
TransactionFile = {dir}/virtuoso.trx
xa_persistent_file = {dir}/virtuoso.pxa
TempStorage = TempDatabase
[TempDatabase]
DatabaseFile = {dir}/virtuoso-temp.db
TransactionFile = {dir}/virtuoso-temp.trx
[Parameters]
ServerPort = 127.0.0.1:{sql_port}
DisableUnixSocket = 1
DirsAllowed = ., {dir}{allowed}
NumberOfBuffers = {buffers}
MaxDirtyBuffers = {dirty}
CheckpointInterval = 0
[HTTPServer]
ServerPort = 127.0.0.1:{http_port}
ServerRoot = {dir}
ServerThreads = 8
EnabledDavVSP = 0
[SPARQL]
ResultSetMaxRows = {max_rows}
MaxQueryExecutionTime = {max_seconds}
DefaultGraph = {graph}
"""


@contextlib.contextmanager
def virtuoso(
    directory: Path,
    dump: Path | None,
    buffers: int = 20000,
    max_rows: int = 1_000_000,
    max_seconds: int = 30,
    cold: bool = False,
    allowed: Sequence[Path] = (),
) -> Iterator[str]:
    """Start Virtuoso in ``directory``, load ``dump`` (Turtle, if any) into one graph; yield the SPARQL endpoint URL.

    Its Graph Store endpoints are beside it: ``/sparql-graph-crud-auth`` (user dba, password dba).
    ``buffers`` are 8 kB pages of cache (Virtuoso's guide: about 2/3 of the memory it may use);
    ``max_rows`` and ``max_seconds`` bound every SPARQL answer (Virtuoso cuts larger results short).
    ``cold``: its database files are dropped from the system's page cache before it starts (its own cache starts
    empty anyway), so the first queries read from the disk, as after a reboot. It checkpoints before it stops, so
    the next start need not replay what was loaded (the log of a 100k-paper publish: minutes). ``allowed``: more
    directories it may read files from (a bulk load's). Its SQL port is in ``virtuoso.ini``: :func:`sql_port`.
    """
    sql_port, http_port = free_port(), free_port()
    ini = directory / "virtuoso.ini"
    ini.write_text(
        INI.format(
            dir=directory,
            sql_port=sql_port,
            http_port=http_port,
            graph=GRAPH,
            buffers=buffers,
            dirty=buffers * 3 // 5,
            max_rows=max_rows,
            max_seconds=max_seconds,
            allowed="".join(f", {path}" for path in allowed),
        )
    )
    if dump is not None:
        shutil.copy(dump, directory / "dump.ttl")
    if cold:
        evict(directory)
    process = subprocess.Popen(
        ["virtuoso-t", "-f", "-c", str(ini)], cwd=directory, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT
    )
    endpoint = f"http://127.0.0.1:{http_port}/sparql"
    try:
        isql(sql_port, "status();", wait=900)  # a database loaded without checkpoints replays its log first
        if dump is not None:
            load = f"DB.DBA.TTLP_MT(file_to_string_output('{directory}/dump.ttl'), '', '{GRAPH}', 0); checkpoint;"
            isql(sql_port, load)
        query = urllib.parse.urlencode({"query": "ASK { ?s ?p ?o }"})
        _wait_http(f"{endpoint}?{query}")
        yield endpoint
        with contextlib.suppress(RuntimeError, subprocess.SubprocessError):
            isql(sql_port, "checkpoint;")
    finally:
        stop(process, timeout=20)


def sql_port(directory: Path) -> int:
    """The SQL port of the Virtuoso :func:`virtuoso` started in ``directory`` (its ``[Parameters] ServerPort``)."""
    parameters = (directory / "virtuoso.ini").read_text().split("[Parameters]")[1]
    return int(parameters.split("ServerPort = 127.0.0.1:")[1].split()[0])


def evict(directory: Path) -> None:
    """Drop Virtuoso's database files in ``directory`` from the system's page cache (their clean pages: written
    pages stay until flushed), and no other file: the machine is shared."""
    for path in directory.glob("virtuoso*.db"):
        descriptor = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(descriptor, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(descriptor)


def isql(port: int, statement: str, wait: float = 0, timeout: float = 120) -> None:
    """Run ``statement`` through Virtuoso's SQL port, again until ``wait`` seconds pass if it fails; ``timeout``
    bounds one run (a bulk load's ``rdf_loader_run()`` takes minutes)."""
    deadline = time.monotonic() + wait
    while True:
        done = subprocess.run(
            ["isql-vt", f"127.0.0.1:{port}", "dba", "dba", f"exec={statement}"],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if done.returncode == 0 and "Error" not in done.stdout + done.stderr:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"isql failed: {done.stdout}\n{done.stderr}")
        time.sleep(0.5)


def _wait_http(url: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=5):
                return
        except OSError:
            time.sleep(0.5)
    raise TimeoutError(url)
