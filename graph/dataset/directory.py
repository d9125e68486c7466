"""A dataset directory: what ``bibgraph build --dataset DIR`` writes and ``bibgraph serve DIR`` opens.

Layout (format version :data:`FORMAT_VERSION`)::

    DIR/current -> v-000001-20261201T120000-1a2b3c4d (a relative symlink: the version served)
    DIR/v-.../manifest.json                      (format, version, base IRI, counts, checksums, build time)
    DIR/v-.../store/                             (the Oxigraph store, RocksDB, opened read-only)
    DIR/v-.../dumps/                             (the dump in N-Triples and Turtle)
    DIR/v-.../derived/                           (networks, layouts, drawn views, home charts; search.sqlite)

A version is written under a temporary name and renamed when complete; the pointer is switched by
renaming a new symlink over it. So a reader sees the old version or the new one, never half of one,
and a build killed at any point leaves the previous version served (its leftovers are removed by the
next build, once their process is gone). A new ``DIR`` is itself built under a temporary name beside it.

One writer at a time: a build or add holds an exclusive lock on ``DIR`` (:func:`writing`, ``flock`` on the
directory itself, so no lock file is left behind) from reading the version it starts from until the switch.
Two adds at once both started from the same version, and the one switched last dropped the other's papers
while both said they had added them; now the second is refused at once, with a clear error.
"""

import fcntl
import hashlib
import json
import os
import re
import secrets
import shutil
import threading
import time
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bibgraph.graph.dataset import hashedonce
from bibgraph.graph.stores.atomic import remove_failed, remove_stale_temporaries, temporary_name, write_bytes_atomically

FORMAT = "bibgraph-dataset"
FORMAT_VERSION = 1
POINTER, MANIFEST = "current", "manifest.json"
STORE, DUMPS, DERIVED = "store", "dumps", "derived"
# Derived files read on disk a page at a time, never whole into memory, and large (2 GB of search index at a million
# papers): hashed before their first use (:func:`check_file`), like the dumps, not at every open.
READ_ON_DISK = re.compile(rf"{DERIVED}/search(-[0-9]{{6}})?\.sqlite")  # the search index's layers (one per add)
HASHED_ONCE = re.compile(rf"{READ_ON_DISK.pattern}|persons(\.[0-9]{{6}})?\.json")  # what an add reads: .hashedonce
KEPT_VERSIONS = 2  # the one served and the one before it (a server may still be reading it)


class DatasetError(ValueError):
    """A directory that is not a (complete, readable) dataset of this format, or one being written."""


class DatasetBusy(DatasetError):
    """Another build or add holds the dataset's write lock (exit 1, as a failed write: docs/operating.md)."""


class DatasetDamaged(DatasetError):
    """A version's file differs from the checksum its manifest records, or is missing: the version is refused."""


_held = threading.local()  # the datasets this thread holds the write lock of: {real path: depth}


@contextmanager
def writing(root: Path) -> Iterator[None]:
    """The dataset ``root``'s write lock, held by this thread for the block (taken again within it: nothing
    more); another writer, in any process or thread, gets :class:`DatasetError` at once. A directory that does
    not exist yet is not locked: two first builds of it cannot both be renamed into place."""
    held: dict[str, int] = _held.__dict__.setdefault("roots", {})
    if not root.is_dir():
        yield
        return
    key = os.path.realpath(root)
    if held.get(key):
        held[key] += 1
        try:
            yield
        finally:
            held[key] -= 1
        return
    handle = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise DatasetBusy(
                f"{root}: another build or add is writing this dataset; run this one when it has finished"
            ) from None
        held[key] = 1
        try:
            yield
        finally:
            del held[key]
    finally:
        os.close(handle)  # releases the lock


def is_dataset(path: Path) -> bool:
    """Whether ``path`` is a dataset directory (what ``serve`` opens rather than parses as input)."""
    return path.is_dir() and (path / POINTER).is_symlink()


def current_version(root: Path) -> Path:
    """The version directory the pointer names, checked against the manifest's format."""
    if not is_dataset(root):
        raise DatasetError(f"{root} is not a bibgraph dataset (no {POINTER} pointer)")
    version = root / pointed(root)
    read_manifest(version)
    return version


def pointed(root: Path) -> str:
    """The name of the version ``root/current`` points at: one of ``root``'s own version directories.

    A pointer to anything else (an absolute path, ``../``, a subdirectory, a link that leaves ``root``) is
    refused: whoever can replace that one link must not make a server read files outside the dataset.
    """
    try:
        name = os.readlink(root / POINTER)
    except OSError as error:
        raise DatasetError(f"{root / POINTER}: cannot read the pointer: {error.strerror or error}") from error
    target = root / name
    if (
        not name.startswith("v-")
        or os.sep in name
        or (os.altsep and os.altsep in name)
        or target.is_symlink()
        or not target.is_dir()
        or os.path.realpath(target.parent) != os.path.realpath(root)
    ):
        raise DatasetError(f"{root / POINTER} -> {name!r}: not a version directory of {root}; refused")
    return name


def read_manifest(version: Path) -> dict[str, Any]:
    return _read_manifest(version)[0]


def identified_manifest(version: Path) -> tuple[dict[str, Any], str]:
    """The manifest of ``version`` and its content identity (``sha256:`` of its bytes, read once): the manifest
    records the checksum of every file of the version, so two versions with one identity hold the same files
    whatever their names (what ``publish`` records in an engine, and a site compares before it reads a dataset)."""
    manifest, data = _read_manifest(version)
    return manifest, "sha256:" + hashlib.sha256(data).hexdigest()


def _read_manifest(version: Path) -> tuple[dict[str, Any], bytes]:
    try:
        data = (version / MANIFEST).read_bytes()
        manifest: dict[str, Any] = json.loads(data.decode("utf-8"))
    except (OSError, ValueError) as error:
        raise DatasetError(f"{version}: no readable {MANIFEST}: {error}") from error
    if not isinstance(manifest, dict):
        raise DatasetError(f"{version / MANIFEST}: not a manifest (a JSON object) this bibgraph wrote; build it again")
    if manifest.get("format") != FORMAT or manifest.get("version") != FORMAT_VERSION:
        raise DatasetError(
            f"{version}: dataset format {manifest.get('format')!r} version {manifest.get('version')!r};"
            f" this bibgraph reads {FORMAT!r} version {FORMAT_VERSION}: build it again"
        )
    if (wrong := _misshapen(manifest)) is not None:  # a field every reader relies on: refused here, in one line
        raise DatasetError(f"{version / MANIFEST}: {wrong}: not a manifest this bibgraph wrote; build it again")
    return manifest, data


_PLAIN_NAME = re.compile(r"[^/\\\x00]+")  # a file directly in its directory (a segment named in ``dumps``)


def _misshapen(manifest: dict[str, Any]) -> str | None:
    """What is wrong with the shape of a manifest of the right format (None: nothing). A manifest that parsed but
    lacked ``base`` or held a list of ``checksums`` was a traceback in every command; a dump segment named
    ``../x`` would have been read outside its version."""

    def strings(value: Any) -> bool:
        return isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())

    def segment(value: Any) -> bool:
        return (
            isinstance(value, list)
            and len(value) == 2
            and isinstance(value[0], str)
            and _PLAIN_NAME.fullmatch(value[0]) is not None
            and value[0] not in (".", "..")
            and type(value[1]) is int
            and value[1] >= 0
        )

    def dump(value: Any) -> bool:
        return isinstance(value, dict) and (
            "segments" not in value or (isinstance(value["segments"], list) and all(map(segment, value["segments"])))
        )

    counts = manifest.get("counts")
    if not isinstance(manifest.get("base"), str):
        return "no base IRI"
    if not isinstance(counts, dict) or not all(type(n) is int for n in counts.values()):
        return "no counts"
    if not strings(manifest.get("checksums")):
        return "no checksums"
    if not hashedonce.well_formed(manifest.get("stats", {})):
        return "stats that are not a file's inode, size and time"
    if not isinstance(manifest.get("inputs", []), list):
        return "no list of inputs"
    dumps = manifest.get("dumps", {})
    if not isinstance(dumps, dict) or not all(map(dump, dumps.values())):
        return "a dump's segments are not files of its version"
    return None


def checksums(version: Path, previous: Path | None = None, hashed: set[str] | None = None) -> dict[str, str]:
    """SHA-256 of every file of a version but the manifest and RocksDB's diagnostic logs (``LOG``,
    ``LOG.old.*``: rewritten whenever the store is opened, even read-only), by path relative to it.

    A file that is a hard link to the same file of ``previous`` keeps the checksum ``previous``'s manifest
    records: an added version shares the files that did not change (its store is a checkpoint of the one before,
    whose table files RocksDB never changes; its dumps' earlier segments; its derived values kept), and no file of
    a published version is ever written again. So an add does not read the whole store or dumps again (``hashed``:
    given the names of the files hashed here)."""
    known: dict[str, str] = read_manifest(previous)["checksums"] if previous else {}
    sums = {}
    for path in sorted(version.rglob("*")):
        name = str(path.relative_to(version))
        if previous and name in known and _same_file(path, previous / name):
            sums[name] = known[name]
        elif path.is_file() and path.name != MANIFEST and not path.name.startswith("LOG"):
            sums[name] = file_digest(path)
            if hashed is not None:
                hashed.add(name)
    return sums


def _same_file(path: Path, other: Path) -> bool:
    try:
        return os.path.samefile(path, other)
    except OSError:
        return False


def verify(version: Path) -> list[str]:
    """The files of ``version`` whose checksum differs from the manifest's, that are missing, or that are links
    (what a build never writes: a link may lead out of the dataset)."""
    recorded = read_manifest(version)["checksums"]
    found = checksums(version)
    links = set(_links(version))
    return sorted(
        name
        for name in recorded.keys() | found.keys() | links
        if name in links or recorded.get(name) != found.get(name)
    )


def check_opened(version: Path, hashed: bool = True, sent: Collection[str] = ()) -> None:
    """Refuse ``version`` (:class:`DatasetDamaged`, naming the file) unless what a server reads into memory is as
    built: every file of ``derived/`` has the manifest's checksum (and none is there the manifest does not
    name), every file the manifest names exists, and no path in the version is a symbolic link (a build writes
    none; a ``store`` or ``derived`` linked elsewhere was read from outside the dataset). The store's, the dumps'
    and the search index's contents are too large to hash at each start: ``bibgraph check DIR`` does, and a dump
    or the search index is checked before its first use (:func:`check_file`), as are the files ``sent`` names (the
    whole networks' exports). ``hashed=False`` (``add``'s check of the version it extends): no file is hashed."""
    for name in _links(version):
        raise DatasetDamaged(f"{version / name}: a link (a build writes none; it may lead out of the dataset): refused")
    recorded: dict[str, str] = read_manifest(version)["checksums"]
    for name in sorted(recorded):
        if not (version / name).is_file():
            raise DatasetDamaged(
                f"{version / name}: missing (the manifest lists it): restore the dataset or build it again"
            )
    derived = version / DERIVED
    for path in sorted(derived.rglob("*")) if derived.is_dir() else []:
        name = path.relative_to(version).as_posix()
        if not path.is_file() or READ_ON_DISK.fullmatch(name):
            continue
        if hashed and name not in sent:
            check_file(version, name, recorded)
        elif name not in recorded:
            raise _unlisted(version, name)


def _links(version: Path) -> list[str]:
    """The symbolic links in ``version`` (not followed), by path relative to it."""
    found = []
    for folder, folders, files in os.walk(version):
        for name in [*folders, *files]:
            if os.path.islink(os.path.join(folder, name)):
                found.append(os.path.relpath(os.path.join(folder, name), version))
    return sorted(found)


def _unlisted(version: Path, name: str) -> DatasetDamaged:
    return DatasetDamaged(f"{version / name}: not in the manifest (added after the build): refused")


def check_file(version: Path, name: str, recorded: dict[str, str] | None = None) -> None:
    """Refuse ``version`` (:class:`DatasetDamaged`) unless its file ``name`` has the manifest's checksum."""
    expected = (read_manifest(version)["checksums"] if recorded is None else recorded).get(name)
    if expected is None:
        raise _unlisted(version, name)
    if file_digest(version / name) != expected:
        raise DatasetDamaged(
            f"{version / name}: differs from the checksum of the manifest (damaged or changed since it was built):"
            " restore the dataset or build it again"
        )


def checked_files(version: Path, paths: list[Path]) -> dict[str, hashedonce.Stat]:
    """Check ``paths`` (files of ``version``: the search layers an add reads, not hashed at an open) against its
    manifest's checksums before they are read (a damaged layer was read into the new one); one its ``stats`` record
    as it is now was hashed already and not written since (:mod:`.hashedonce`). Each file's stat when checked."""
    manifest = read_manifest(version)
    found = {}
    for path in paths:
        name = path.relative_to(version).as_posix()
        found[name] = hashedonce.stat_of(path)  # before it is read: a write meanwhile is seen next time
        if not hashedonce.unchanged(manifest.get("stats", {}), name, path):
            check_file(version, name, manifest["checksums"])
    return found


def file_digest(path: Path) -> str:
    """SHA-256 of a file, read a megabyte at a time (what the manifest records)."""
    digest = hashlib.sha256()
    with path.open("rb") as data:
        for block in iter(lambda: data.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@contextmanager
def new_version(root: Path, base: str) -> Iterator[tuple[Path, dict[str, Any]]]:
    """A fresh version directory to fill and its manifest to complete; published when the block ends.

    On leaving the block the manifest (with checksums) is written, the version renamed into place
    and the pointer switched to it; older versions beyond :data:`KEPT_VERSIONS` are removed. An
    exception leaves everything as it was (the half-written version is removed). The block runs under
    :func:`writing`: a caller that reads the version it starts from takes that lock first.
    """
    with writing(root):
        yield from _new_version(root, base)


def _new_version(root: Path, base: str) -> Iterator[tuple[Path, dict[str, Any]]]:
    if root.exists() and not is_dataset(root) and any(root.iterdir()):
        raise DatasetError(f"{root} holds files but is not a bibgraph dataset: give an empty or new directory")
    fresh = not root.exists() or not is_dataset(root)
    previous = None if fresh else current_version(root)
    target = temporary_name(root) if fresh else root
    target.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(target)
    if root.parent.exists():
        remove_stale_temporaries(root.parent)
    number = 1 + max((int(p.name.split("-")[1]) for p in _versions(target)), default=0)
    name = f"v-{number:06d}-{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{secrets.token_hex(4)}"
    building = temporary_name(target / name)
    building.mkdir()
    manifest: dict[str, Any] = {"format": FORMAT, "version": FORMAT_VERSION, "base": base, "counts": {}, "name": name}
    try:
        yield building, manifest
        manifest["built"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        hashed: set[str] = set()
        manifest["checksums"] = checksums(building, previous, hashed)
        trusted = {**(read_manifest(previous).get("stats", {}) if previous else {}), **manifest.get("stats", {})}
        once = [name for name in manifest["checksums"] if HASHED_ONCE.fullmatch(name)]
        manifest["stats"] = hashedonce.recorded(building, once, hashed, trusted)
        write_bytes_atomically(building / MANIFEST, json.dumps(manifest, indent=2, sort_keys=True).encode() + b"\n")
        _sync_tree(building)
        os.rename(building, target / name)
        switch(target, name)
        if fresh:
            if root.exists():  # an empty directory given as DIR
                root.rmdir()
            os.rename(target, root)
    except BaseException as error:
        remove_failed(building, error)
        if fresh:
            shutil.rmtree(target, ignore_errors=True)
        raise
    prune(root)


def switch(root: Path, name: str) -> None:
    """Point ``root/current`` at version ``name`` in one rename (readers see the old or the new one)."""
    pointer = temporary_name(root / POINTER)
    os.symlink(name, pointer)
    os.replace(pointer, root / POINTER)
    _sync_directory(root)


def prune(root: Path) -> None:
    """Remove the versions older than the last :data:`KEPT_VERSIONS`: never the one the pointer names, nor one a
    running server still reads (it holds a :class:`Lease` on it: removed by a later add, once released)."""
    served = os.readlink(root / POINTER)
    for version in _versions(root)[:-KEPT_VERSIONS]:
        if version.name != served:
            try:
                handle = os.open(version, os.O_RDONLY | os.O_DIRECTORY)
            except OSError:
                continue
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # leased by a reader
            else:
                shutil.rmtree(version, ignore_errors=True)
            finally:
                os.close(handle)


class Lease:
    """A reader's hold on a version directory (a shared ``flock`` on the directory itself, so no file is left
    behind, and a killed reader's lease ends with it): :func:`prune` removes no version while one is held."""

    def __init__(self, version: Path) -> None:
        self.version = version
        self._handle: int | None = os.open(version, os.O_RDONLY | os.O_DIRECTORY)
        fcntl.flock(self._handle, fcntl.LOCK_SH)

    def release(self) -> None:
        if self._handle is not None:
            os.close(self._handle)
            self._handle = None

    def __del__(self) -> None:
        self.release()


def _versions(root: Path) -> list[Path]:
    """The complete versions in ``root``, oldest first (names ``v-NNNNNN-...`` sort by number)."""
    return sorted(p for p in root.iterdir() if p.name.startswith("v-") and p.is_dir())


def _sync_tree(directory: Path) -> None:
    """fsync every file and directory under ``directory``: the rename publishes data that is on disk."""
    for path in [directory, *directory.rglob("*")]:
        if path.is_dir():
            _sync_directory(path)
        elif path.is_file():
            handle = os.open(path, os.O_RDONLY)
            try:
                os.fsync(handle)
            finally:
                os.close(handle)


def _sync_directory(directory: Path) -> None:
    handle = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)
