"""``/download``: the dump in every RDF format and gzip, written once from the store, then served
as files (so Flask sends Content-Length, ETag, Last-Modified, 304s and HEAD, streaming from disk).

A file is written by one request at a time; one asking for a file that another is writing waits
:data:`WRITING_WAIT` seconds at most, then gets 503 with ``Retry-After``. All writes were behind one lock
that waiting requests held their web thread on without limit: a dump of a large store (minutes, up to
``NETWORK_TIMEOUT``, tried again by the next waiter when it ran out of time) let a few dozen requests for it
hold every web thread, so pages and ``/health`` got no answer, and a file already written waited too.

A dataset's own dumps are checked against its manifest's checksums before this process first serves them
(once per file, in the background: :mod:`~bibgraph.web.dumpchecks`; hashing a large dump is too costly for each
start or a request's thread, and too important to skip); a dump that differs is refused (503, the file named in the
log and on ``/health``), never sent."""

import gzip
import hashlib
import io
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, cast

from flask import Blueprint, Flask, Response, abort, current_app, render_template, request, send_file
from werkzeug.exceptions import ServiceUnavailable

from bibgraph.graph.dataset import directory
from bibgraph.graph.dataset.dumps import dump_file
from bibgraph.graph.dataset.dumpsegments import JoinedFile, Part, parts
from bibgraph.graph.networks.exports import NETWORK_SYNTAXES
from bibgraph.graph.rdf.formats import RDF_SYNTAXES, RdfSyntax
from bibgraph.graph.rdf.iris import DUMP_STEM
from bibgraph.graph.serving.fairshare import ServerBusy
from bibgraph.graph.serving.scratch import scratch_directory
from bibgraph.graph.stores.atomic import write_atomically
from bibgraph.web import dumpchecks, enginedumps
from bibgraph.web.errors import error_response
from bibgraph.web.graphstore import get_store
from bibgraph.web.maps.cache import DATASET_VERSION, networks

blueprint = Blueprint("downloads", __name__, url_prefix="/download")
_writers: dict[Path, threading.Lock] = {}  # one per file being written (or written) by this process
_writers_lock = threading.Lock()
_manifests: dict[Path, dict[str, Any]] = {}  # the manifests of the dataset versions this process served
COPY_BLOCK = 1 << 20  # bytes read from a dump at a time
WRITING_WAIT = 1.0  # seconds a request waits for a file another request is writing, before 503
DUMPS: dict[str, RdfSyntax] = {f"{DUMP_STEM}.{s.suffix}": s for s in RDF_SYNTAXES}
NETWORK_BODIES = "networks"  # under the download directory: network exports, one file per full key
NETWORK_BODIES_KEPT = 64  # at most this many kept (least recently written removed first): a bound on the disk
GZIPPED = {f"{DUMP_STEM}.{s.suffix}.gz": f"{DUMP_STEM}.{s.suffix}" for s in RDF_SYNTAXES if s.name in ("turtle", "nt")}


def _root(app: Flask) -> Path:
    configured = app.config.get("DOWNLOAD_DIR")
    if not configured:
        configured = scratch_directory("bibgraph-downloads-")
        app.config["DOWNLOAD_DIR"] = configured
    return Path(configured).absolute()  # Flask's send_file reads a relative path against the package's directory


def _directory(app: Flask) -> Path:
    version = app.config.get(DATASET_VERSION)
    root = _root(app)
    path = root / Path(version).name if version else root  # a dataset's: one per version
    path.mkdir(parents=True, exist_ok=True)
    return path


@contextmanager
def _one_at_a_time(path: Path, doing: str) -> Iterator[None]:
    """Hold ``path``'s own lock while it is written: one request does it, another asking meanwhile
    waits ``WRITING_WAIT`` then gets 503 (files already written are served without any lock)."""
    with _writers_lock:
        lock = _writers.setdefault(path, threading.Lock())
    if not lock.acquire(timeout=WRITING_WAIT):
        raise ServerBusy(f"{path.name} is being {doing} for another request; retry in a moment")
    try:
        yield
    finally:
        lock.release()


def ensure(name: str) -> Path:
    """The file ``name``, written from the store on first request (atomically; never half-written): a dump the
    server's dataset does not hold, or a gzip one."""
    path = _directory(current_app) / name
    if path.exists():  # written atomically: there means complete
        return path
    with _one_at_a_time(path, "written"):
        if path.exists():
            return path
        if name in DUMPS:
            store = get_store().with_deadline(float(current_app.config["NETWORK_TIMEOUT"]))
            store.run(dump_file, path, DUMPS[name].name)
        else:
            _pack_in_turn(GZIPPED[name], path)
    return path


def _pack_in_turn(source: str, path: Path) -> None:
    """Write the gzip of the dump ``source`` at ``path`` as costly work: minutes of a core for a million papers'
    dump, once per version, yet it was made in the request's thread whoever asked (a HEAD too), in no client's
    share, and went on after its client had gone. Now in the client's turn at the map gate (429 past its share), in
    a child process killed when the client goes or at ``NETWORK_TIMEOUT``, like a network download's body. The
    dump read is found (and checked) here: the child only compresses."""
    held = _dataset_dump(source)
    read: Callable[[], BinaryIO]
    if held is None:
        made = ensure(source)
        read = lambda: made.open("rb")  # noqa: E731
    else:
        read = lambda: cast(BinaryIO, io.BufferedReader(JoinedFile(*held), COPY_BLOCK))  # noqa: E731
    networks().forked(lambda: _pack(read, path), path)


def _pack(read: Callable[[], BinaryIO], path: Path) -> None:
    """Write at ``path`` (atomically) the gzip of what ``read`` opens."""

    def pack(out: BinaryIO) -> None:
        with read() as raw, gzip.GzipFile(path.name, "wb", fileobj=out, mtime=0) as packed:
            shutil.copyfileobj(raw, packed, COPY_BLOCK)

    write_atomically(path, pack)


def _from_engine() -> bool:
    return str(current_app.config["BIBGRAPH_STORE"]).startswith("sparql:")


def _engine_dump(name: str) -> tuple[Path, bytes]:
    """The dump ``name`` of the engine's version read now and its checksum, made in the background
    (:mod:`~bibgraph.web.enginedumps`; :class:`~bibgraph.web.enginedumps.DumpPending` until it is written)."""
    from bibgraph.graph.stores.remote import pinned_endpoint, read_version

    version: str | None = get_store().run(read_version)
    folder = _root(current_app) / enginedumps.engine_folder(version) if version else _directory(current_app)
    endpoint = pinned_endpoint(str(current_app.config["BIBGRAPH_STORE"]).removeprefix("sparql:"), version)
    plan = _plan(name, folder, endpoint)
    digest = enginedumps.request(plan, float(current_app.config["DUMP_TIMEOUT"]), request.method != "HEAD")
    return plan.path, digest


def _plan(name: str, folder: Path, endpoint: str) -> enginedumps.Plan:
    """How the dump ``name`` is made for an engine: N-Triples from the engine; another syntax from the N-Triples
    dump; gzip from its source; from the published dataset's own dump when it holds it (no engine read)."""
    from bibgraph.graph.stores.remote import from_ntriples, write_engine_dump

    source = GZIPPED.get(name, f"{DUMP_STEM}.nt")
    if name == source:
        return enginedumps.Plan(folder / name, lambda path: write_engine_dump(endpoint, path, "nt"))
    held = _dataset_dump(source)
    before = None if held is not None else _plan(source, folder, endpoint)

    def read() -> BinaryIO:
        if held is None:
            return (folder / source).open("rb")
        return cast(BinaryIO, io.BufferedReader(JoinedFile(*held), COPY_BLOCK))

    if name in GZIPPED:
        return enginedumps.Plan(folder / name, lambda path: _pack(read, path), before)
    return enginedumps.Plan(folder / name, lambda path: from_ntriples(read, path, DUMPS[name].name), before)


def _dataset_dump(name: str, checked: bool = True) -> tuple[Path, list[Part]] | None:
    """The segments of the dataset's dump ``name`` (:mod:`~bibgraph.graph.dataset.dumpsegments`), each found as built
    (unless not ``checked``: a HEAD); None when no dataset is served or its version does not hold that dump."""
    version = current_app.config.get(DATASET_VERSION)
    if not version or name not in DUMPS:
        return None
    version = Path(version).absolute()
    folder = version / directory.DUMPS
    if not (folder / name).is_file():
        return None
    manifest = _manifest(version)
    segments = parts(folder, name, manifest.get("dumps", {}).get(name, {}))
    files = [f"{directory.DUMPS}/{file}" for file, _ in segments] if checked else []
    unchecked = []
    for file in files:  # every segment queued at once, then waited for (in the order they are checked)
        try:
            _checked_dump(version, file, manifest["checksums"], 0.0)
        except dumpchecks.CheckPending:
            unchecked.append(file)
    until = time.monotonic() + dumpchecks.WAIT
    for file in unchecked:
        try:
            _checked_dump(version, file, manifest["checksums"], max(0.0, until - time.monotonic()))
        except dumpchecks.CheckPending as pending:
            abort(error_response(f"{name}: {pending}; retry later", 503, dumpchecks.RETRY_AFTER))
    return folder, segments


def _manifest(version: Path) -> dict[str, Any]:
    """``version``'s manifest, read once by this process (a published version never changes)."""
    with _writers_lock:
        if version not in _manifests:
            _manifests[version] = directory.read_manifest(version)
        return _manifests[version]


def _checked_dump(version: Path, name: str, recorded: dict[str, str], wait: float) -> None:
    """Refuse the dataset's dump file (or kept export) ``name`` (503) unless it is as built: checked once per
    process in the background (:mod:`~bibgraph.web.dumpchecks`; :class:`~.dumpchecks.CheckPending` while it still
    is after ``wait`` seconds), never hashed in a request's thread; a segment an earlier version shares (the same
    file, unchanged since, the same checksum) is not checked again."""
    path = version / name
    key = _check_key(path, recorded.get(name))
    try:
        if key is None:  # not there (or unreadable): said at once, nothing to hash
            directory.check_file(version, name, recorded)
        else:
            dumpchecks.checked(key, lambda: directory.check_file(version, name, recorded), wait)
    except (dumpchecks.CheckFailed, directory.DatasetDamaged, OSError) as error:
        if not isinstance(error, dumpchecks.CheckFailed) or error.first:
            current_app.logger.error("download refused: %s", error)
        switches = current_app.extensions.get("bibgraph-versions")
        if switches is not None:
            switches.damaged[name] = str(error)
        raise ServiceUnavailable(f"{path.name} differs from what was built; it is not served") from error


def checked_kept(path: Path) -> None:
    """Refuse (503) a file of a dataset version's ``derived/`` that a download sends as it is (a whole network's
    export) unless it is as built: checked once per process in the background like a dump (503 with
    ``Retry-After`` while it is), since the start no longer hashes these (``opener.whole_exports``)."""
    version = path.parent.parent
    name = path.relative_to(version).as_posix()
    try:
        _checked_dump(version, name, _manifest(version)["checksums"], dumpchecks.WAIT)
    except dumpchecks.CheckPending as pending:
        abort(error_response(f"{path.name}: {pending}; retry later", 503, dumpchecks.RETRY_AFTER))


def _check_key(path: Path, expected: str | None) -> dumpchecks.Key | None:
    """What identifies a dump file as checked: the file, its size and time, the checksum it was checked against."""
    try:
        status = path.stat()
    except OSError:
        return None
    return (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, expected)


def _is_checked(version: Path, name: str) -> bool:
    key = _check_key(version / name, _manifest(version)["checksums"].get(name))
    return key is not None and dumpchecks.passed(key)


def network_body(key: str, suffix: str, make: Callable[[Path], object]) -> Path:
    """The file of a network export whose full key (kind, format, filters, weighting) is ``key``: made once by
    ``make`` (which writes it, atomically) and kept, so a repeated download is a file sent (Content-Length, ETag,
    ranges), not a body rebuilt for each request; at most :data:`NETWORK_BODIES_KEPT` are kept."""
    folder = _directory(current_app) / NETWORK_BODIES
    path = folder / f"{hashlib.sha256(key.encode()).hexdigest()[:32]}.{suffix}"
    if path.exists():
        return path
    make(path)
    kept = sorted(folder.glob("*.*"), key=_written, reverse=True)
    for old in kept[NETWORK_BODIES_KEPT:]:
        old.unlink(missing_ok=True)
    return path


def _written(path: Path) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


@blueprint.route("/")
def index() -> str:
    dumps = [(syntax.label, name) for name, syntax in DUMPS.items()]
    dumps += [(f"{DUMPS[source].label}, gzip", name) for name, source in GZIPPED.items()]
    formats = [(syntax.name, syntax.label) for syntax in NETWORK_SYNTAXES]
    return render_template("download.html", title="Downloads", dumps=dumps, network_formats=formats)


@blueprint.route("/<name>")
def file(name: str) -> Response:
    if name not in DUMPS and name not in GZIPPED:
        abort(404)
    media_type = DUMPS[name].media_type if name in DUMPS else "application/gzip"
    if request.method == "HEAD" and (head := _head(name, media_type)) is not None:
        return head
    held = _dataset_dump(name)
    if held is not None and len(held[1]) > 1:
        return _joined(name, media_type, *held)
    digest = None
    if held is not None:
        path = held[0] / name
    elif _from_engine():
        try:
            path, digest = _engine_dump(name)
        except enginedumps.DumpPending as pending:
            return error_response(str(pending), 503, pending.retry_after)
    else:
        path = ensure(name)
    response = send_file(
        path,
        mimetype=media_type,
        as_attachment=True,
        download_name=name,
        conditional=True,
        etag=True if digest is None else digest.hex()[:32],
        last_modified=path.stat().st_mtime,
        max_age=0,
    )
    if digest is not None:
        response.headers["Repr-Digest"] = enginedumps.repr_digest(digest)
    return response


def _head(name: str, media_type: str) -> Response | None:
    """HEAD of a dump computes nothing: a dataset's dump is described from its files (its checksum is checked before
    its first GET, not for a HEAD: hashing a million papers' dump is a minute of a core); a file not made yet (a
    gzip, a syntax the dataset does not hold) is answered without its length. None: the file is there to describe."""
    held = _dataset_dump(name, checked=False)
    if held is not None:
        if len(held[1]) > 1:
            return _joined(name, media_type, *held)
        return (
            None
            if _is_checked(held[0].parent, f"{directory.DUMPS}/{name}")
            else _bare(name, media_type, held[0] / name)
        )
    if _from_engine() or (_directory(current_app) / name).exists():
        return None  # an engine's dump: its own HEAD starts nothing (enginedumps); a file made: sent as one
    return _bare(name, media_type, None)


def _bare(name: str, media_type: str, path: Path | None) -> Response:
    response = Response(content_type=media_type)
    response.headers["Content-Disposition"] = f'attachment; filename="{name}"'
    if path is not None:
        response.content_length = path.stat().st_size
    else:
        del response.headers["Content-Length"]  # the body's length is not known without making it
        response.automatically_set_content_length = False
    return response


def _joined(name: str, media_type: str, folder: Path, segments: list[Part]) -> Response:
    """A dump held as segments, sent as one file: its length, an ETag (its segments' checksums), ranges and 304s,
    read from the segments as it is sent (never copied into one file)."""
    recorded = _manifest(folder.parent)["checksums"]
    sums = " ".join(f"{recorded[f'{directory.DUMPS}/{file}']}:{size}" for file, size in segments)
    tag = hashlib.sha256(sums.encode())
    joined = JoinedFile(folder, segments)
    response = send_file(
        io.BufferedReader(joined, COPY_BLOCK),
        mimetype=media_type,
        as_attachment=True,
        download_name=name,
        conditional=False,
        etag=tag.hexdigest()[:32],
        last_modified=max((folder / file).stat().st_mtime for file, _ in segments),
        max_age=0,
    )
    response.content_length = joined.size
    response.make_conditional(request, accept_ranges=True, complete_length=joined.size)
    return response
