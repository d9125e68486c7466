"""The dump downloads of a ``sparql:`` store: made in the background, once per engine version, under their own
deadline; ``503`` with ``Retry-After`` meanwhile.

An engine gives 10-15k triples a second whatever the query's shape (measured at 10k and 100k papers): a 1M-paper
dump (~48M triples) takes over an hour, which no request may wait for. So the first ``GET`` of a dump starts a
job and answers 503; the job runs in a child process forked for it (:func:`~bibgraph.graph.serving.forked.run_forked`:
the web process's memory does not grow with the dump, and the query worker, which is killed and replaced when any
other query runs past its deadline, does not carry it), killed at ``DUMP_TIMEOUT``; it writes the file atomically
(never half-written), then its SHA-256 beside it. A request that leaves does not stop the job; ``HEAD`` starts
nothing. Once written the file is served as any download (Content-Length, ETag, ranges), with its checksum in
``Repr-Digest`` (RFC 9530). A file this process did not write is read against its checksum once before its
first send (a job too: 503 meanwhile); one that does not match is removed, named in the log, and made again. The
first job in a new version's folder removes the folders of the versions before (no longer published). A failed
job is said for :data:`FAILED_KEPT` seconds (so a stuck engine is not asked again by every request), then the next
``GET`` tries again. The engine is read once: the other syntaxes are written from the N-Triples dump (the published
dataset's, when it is the version the engine holds), gzip from its source.
"""

import base64
import hashlib
import logging
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bibgraph.graph.dataset.directory import file_digest
from bibgraph.graph.serving.forked import ForkedFailed, run_forked
from bibgraph.graph.stores.atomic import remove_stale_temporaries, write_atomically

log = logging.getLogger("bibgraph.downloads")
FAILED_KEPT = 60.0  # seconds a failed job's error is answered before the next GET starts it again
RETRY_AFTER = 10  # seconds a client is told to wait while a dump is being made
SUM_SUFFIX = ".sha256"  # beside each written dump: its SHA-256, hex (written after it: its presence means ready)
FOLDER_PREFIX = "engine-"  # an engine version's download folder: FOLDER_PREFIX + a hash of the version graph


class DumpPending(Exception):
    """The dump is not written yet (being made, or its last try failed): 503 with ``Retry-After`` seconds."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@dataclass
class _Job:
    started: float
    thread: threading.Thread = field(init=False)
    failed: str | None = None
    ended: float | None = None
    checking: bool = False  # reading a file already written against its checksum (made again if it differs)


@dataclass(frozen=True)
class Plan:
    """How the file at ``path`` is made, in the forked child (``make(path)``, writing it atomically), once the file
    of ``before`` (which it reads; None: it reads the engine or a dataset's file) is made by its own job."""

    path: Path
    make: Callable[[Path], object]
    before: "Plan | None" = None


_jobs: dict[Path, _Job] = {}  # by the file each makes (one per file and engine version, this process's)
_jobs_lock = threading.Lock()
_verified: dict[Path, bytes] = {}  # files read against their checksum (or written) by this process: their SHA-256


def engine_folder(version: str) -> str:
    """The download folder's name for an engine's version graph ``version`` (its dumps and exports)."""
    return FOLDER_PREFIX + hashlib.sha256(version.encode()).hexdigest()[:16]


def ready(path: Path) -> bytes | None:
    """``path``'s SHA-256 when the dump is written whole (its checksum written beside it), else None."""
    try:
        digest = bytes.fromhex(path.with_name(path.name + SUM_SUFFIX).read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        return None
    return digest if len(digest) == 32 and path.is_file() else None


def _served(path: Path) -> bytes | None:
    """``path``'s SHA-256 when it is :func:`ready` and this process has read it against that checksum (or wrote it)."""
    digest = ready(path)
    return digest if digest is not None and _verified.get(path) == digest else None


def repr_digest(digest: bytes) -> str:
    """The ``Repr-Digest`` header (RFC 9530) of a file whose SHA-256 is ``digest``."""
    return f"sha-256=:{base64.b64encode(digest).decode()}:"


def request(plan: Plan, deadline: float, start: bool) -> bytes:
    """The checksum of the dump ``plan`` makes (:func:`ready`), or :class:`DumpPending`; its job is started first
    when ``start`` (a ``GET``; not a ``HEAD``) and none is running or has failed in the last :data:`FAILED_KEPT`
    seconds."""
    if (digest := _served(plan.path)) is not None:
        return digest
    with _jobs_lock:
        job = _jobs.get(plan.path)
        if job is not None and not job.checking and (digest := ready(plan.path)) is not None:
            _verified[plan.path] = digest  # its sum is written last, by this process's job, from the file it wrote
            return digest
        if start and (job is None or (job.ended is not None and time.monotonic() - job.ended >= FAILED_KEPT)):
            if (digest := _served(plan.path)) is not None:  # written while this request looked
                return digest
            job = _start(plan, deadline)
    if job is None:
        raise DumpPending(f"{plan.path.name} is not made yet: a GET starts it", RETRY_AFTER)
    if job.failed is not None:
        assert job.ended is not None  # a job fails as it ends
        wait = max(1, round(FAILED_KEPT - (time.monotonic() - job.ended)))
        failed = f"{plan.path.name} could not be made from the engine ({job.failed}); tried again in {wait} s"
        raise DumpPending(failed, wait)
    if job.checking:
        raise DumpPending(f"{plan.path.name} is being read against its checksum; retry later", RETRY_AFTER)
    raise DumpPending(
        f"{plan.path.name} is being made from the engine (for {time.monotonic() - job.started:.0f} s); retry later",
        RETRY_AFTER,
    )


def _start(plan: Plan, deadline: float) -> _Job:
    """A new job for ``plan`` (the caller holds the lock), the one of the file it reads started first if needed."""
    before = None
    if plan.before is not None and _served(plan.before.path) is None:
        before = _jobs.get(plan.before.path)
        if before is None or before.ended is not None:
            before = _start(plan.before, deadline)
    job = _Job(time.monotonic(), checking=ready(plan.path) is not None)
    job.thread = threading.Thread(target=_run, args=(job, plan, before, deadline), daemon=True, name="engine dump")
    _jobs[plan.path] = job
    job.thread.start()
    return job


def _run(job: _Job, plan: Plan, before: _Job | None, deadline: float) -> None:
    """The job's thread: wait for the file it reads, then make its own in a child, killed at the deadline."""
    failed = None
    try:
        _remove_older_folders(plan.path.parent)
        if job.checking:
            if _checked(plan.path):
                _ended(job, plan, None)
                return
            job.checking = False  # made again, from here on
        if before is not None:
            before.thread.join(max(0.0, deadline - (time.monotonic() - job.started)))
            if before.failed is not None or before.ended is None:
                raise ForkedFailed(before.failed or "the dump it is written from was not made in time")
        left = deadline - (time.monotonic() - job.started)
        run_forked(lambda: _checksummed(plan), deadline=max(left, 0.001))
        if (digest := ready(plan.path)) is not None:  # the child summed the file it wrote
            _verified[plan.path] = digest
        log.info("%s made from the engine in %.1f s", plan.path, time.monotonic() - job.started)
    except Exception as error:  # told to the requests that ask, and logged
        failed = str(error) or type(error).__name__
        log.error("%s could not be made from the engine: %s", plan.path.name, failed)
        remove_stale_temporaries(plan.path.parent)  # a killed child's half-written file
    _ended(job, plan, failed)


def _ended(job: _Job, plan: Plan, failed: str | None) -> None:
    with _jobs_lock:
        job.failed, job.ended, job.checking = failed, time.monotonic(), False
        if failed is None:
            _jobs.pop(plan.path, None)


def _checked(path: Path) -> bool:
    """Whether the file at ``path`` matches the checksum written beside it; one that does not (a flipped bit, a
    file cut or changed since) is removed with its checksum, and said in the log, so the job makes it again."""
    recorded = ready(path)
    if recorded is not None and bytes.fromhex(file_digest(path)) == recorded:
        _verified[path] = recorded
        return True
    log.error("%s does not match the SHA-256 written beside it: removed, made again", path)
    path.with_name(path.name + SUM_SUFFIX).unlink(missing_ok=True)
    path.unlink(missing_ok=True)
    return False


def _remove_older_folders(folder: Path) -> None:
    """Remove the download folders of the engine's earlier versions beside ``folder`` (an engine version's), unless
    a job of this process writes in one: the pointer has moved on, so no request reads them again (a file being sent
    is kept open by its response until it is sent)."""
    if not folder.name.startswith(FOLDER_PREFIX):
        return
    with _jobs_lock:
        busy = {path.parent for path, job in _jobs.items() if job.ended is None}
    for older in folder.parent.glob(FOLDER_PREFIX + "*"):
        if older != folder and older not in busy and older.is_dir():
            log.info("removing %s: the dumps and exports of an engine version no longer published", older)
            shutil.rmtree(older, ignore_errors=True)
            with _jobs_lock:
                for path in [path for path in _verified if path.parent == older]:
                    del _verified[path]


def _checksummed(plan: Plan) -> None:
    """Make the file, then write its SHA-256 beside it (read back: what is served is what is summed)."""
    path = plan.path
    plan.make(path)
    digest = file_digest(path)
    write_atomically(path.with_name(path.name + SUM_SUFFIX), lambda out: out.write(digest.encode()))
