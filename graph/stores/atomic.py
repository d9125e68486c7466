"""Writing a file atomically: a reader sees the old file or the new one, never half of one.

Every file bibgraph writes for others to read (dumps, downloads, exports) goes through
:func:`write_atomically`. The temporary file sits beside the target, named
``.NAME.PID.RANDOM.part``: the process id lets a later run tell a temporary whose writer was
killed (stale: removed) from one being written right now (kept).
"""

import errno
import gc
import os
import re
import secrets
import shutil
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

_TEMPORARY = re.compile(r"\.(?P<name>.+)\.(?P<pid>[1-9][0-9]*)\.[0-9a-f]{8}\.part")
# A directory's stale temporaries are looked for at most once a minute per process: an add writes a few thousand
# files into one directory of tens of thousands, and listing it before each write took 2.7 of its s at 1M papers.
SWEEP_INTERVAL = 60.0
_swept: dict[Path, float] = {}


def temporary_name(path: Path) -> Path:
    """A fresh temporary path beside ``path``, tagged with this process's id."""
    return path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.part")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive
    return True


def remove_stale_temporaries(directory: Path) -> list[Path]:
    """Remove the temporaries (files, or store directories) of our own naming in ``directory`` whose
    writing process is gone."""
    removed: list[Path] = []
    try:
        entries = list(directory.iterdir())
    except OSError:
        return removed
    for entry in entries:
        match = _TEMPORARY.fullmatch(entry.name)
        if match and int(match["pid"]) != os.getpid() and not _alive(int(match["pid"])):
            try:
                if entry.is_symlink() or entry.is_file():
                    entry.unlink()
                else:
                    shutil.rmtree(entry)  # a half-built disk store
            except OSError:
                continue
            removed.append(entry)
    return removed


def write_atomically(path: Path, write: Callable[[BinaryIO], object], sync: bool = True) -> int:
    """Call ``write`` on a temporary file beside ``path``, fsync (unless not ``sync``: a file of a version not yet
    published, whose whole tree is fsynced before it is), then rename it over ``path``.

    The file gets the mode the umask allows (as ``open`` would give), not ``mkstemp``'s 0600.
    On any failure the temporary is removed and ``path`` is left as it was. Returns the size.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    now = time.monotonic()
    if now - _swept.get(path.parent, -SWEEP_INTERVAL) >= SWEEP_INTERVAL:
        remove_stale_temporaries(path.parent)
        _swept[path.parent] = now
    temporary = temporary_name(path)
    handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(handle, "wb") as out:
            write(out)
            out.flush()
            if sync:
                os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return path.stat().st_size


def write_bytes_atomically(path: Path, body: bytes, sync: bool = True) -> int:
    return write_atomically(path, lambda out: out.write(body), sync)


_NO_LINK = {errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS}


def link_file(source: Path, target: Path) -> None:
    """``target`` as the same file as ``source``, an earlier version's file kept by a new version: a hard link
    (nothing copied or read), or a copy where the file system refuses one (another device, no hard links, too many).

    Made under a temporary name, then renamed over ``target``: a reader sees the old file or the new one, never none.
    A missing ``source`` raises ``FileNotFoundError`` and leaves ``target`` as it was. Neither file is ever written in
    place afterwards (a link would change the earlier version too): files are replaced whole."""
    temporary = temporary_name(target)
    try:
        os.link(source, temporary)
    except OSError as error:
        if error.errno not in _NO_LINK:
            raise
        write_atomically(target, lambda out: _copy(source, out))
        return
    try:
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _copy(source: Path, out: BinaryIO) -> None:
    with source.open("rb") as data:
        shutil.copyfileobj(data, out, 1 << 20)


def remove_failed(directory: Path, error: BaseException) -> None:
    """Remove ``directory``, left half-written by the work that raised ``error``, once the ended frames ``error``
    passed through let go of what they hold: a store being written among them closes with its last reference, and
    until then RocksDB's threads write into the directory being removed (a refused add left its ``.part``)."""
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        traceback.clear_frames(cause.__traceback__)
        cause = cause.__cause__ or cause.__context__
    gc.collect()
    shutil.rmtree(directory, ignore_errors=True)
