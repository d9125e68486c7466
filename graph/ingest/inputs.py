"""Which files a build or an add reads, and the name each is reported by.

Paths given on the command line are turned into regular files with stable, distinct display names, so a
record's source and a problem's file name say which file they come from whatever order the paths were
given in, and nothing that could block or fail (a FIFO, a device, a dangling symlink) is ever opened.
"""

import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

from bibgraph.graph.ingest.records import Problem


def find_input_files(paths: Iterable[Path], problems: list[Problem] | None = None) -> Iterator[tuple[Path, str]]:
    """Regular files to read with their display names, in a stable order whatever order they were given in.

    A directory contributes its ``*.txt`` files (recursively) named relative to it; a file is
    named by its file name. A file given twice (or reached twice) is read once; two different files
    of one name (``a/list.txt`` and ``b/list.txt``) are both read, each named by as many of its last path
    components as tell them apart (the second was dropped without a word). Anything that is not a regular
    file (a dangling symlink, a FIFO, a device) is reported to ``problems`` and skipped: reading it could
    fail or never end.
    """
    named: dict[object, tuple[str, Path]] = {}  # one entry per file: its name relative to what was given
    for path in paths:
        given = (
            [(c.relative_to(path).as_posix(), c) for c in path.rglob("*.txt")] if path.is_dir() else [(path.name, path)]
        )
        for name, file in given:
            key = _identity(file)
            named[key] = min(named.get(key, (name, file)), (name, file), key=lambda entry: (entry[0], str(entry[1])))
    found = _distinct_names(list(named.values()))
    for name in sorted(found):
        path = found[name]
        if not path.is_file():
            if problems is not None:
                problems.append(Problem(name, 1, f"not a regular file ({_file_kind(path)}): skipped"))
            continue
        yield path, name


def _identity(path: Path) -> object:
    """What tells two paths of one file apart from two files: the device and inode (the path, if none)."""
    try:
        status = path.stat()
    except OSError:
        return str(path.absolute())
    return (status.st_dev, status.st_ino)


def _distinct_names(files: list[tuple[str, Path]]) -> dict[str, Path]:
    """Each file by its name, lengthened (by its parent directories) while another file has the same name."""
    names = {path: name for name, path in files}
    while True:
        holders: dict[str, list[Path]] = {}
        for path, name in names.items():
            holders.setdefault(name, []).append(path)
        shared = [path for group in holders.values() if len(group) > 1 for path in group]
        longer = {path: _longer(path, names[path]) for path in shared}
        if not shared or all(longer[path] == names[path] for path in shared):
            return {name: path for path, name in names.items()}
        names.update(longer)


def _longer(path: Path, name: str) -> str:
    """``name`` with one more of ``path``'s parent directories before it (as it is, at the root)."""
    parts = path.absolute().parts
    count = len(name.split("/")) + 1
    return "/".join(parts[-count:]).lstrip("/") if count <= len(parts) else name


def _file_kind(path: Path) -> str:
    try:
        mode = path.stat().st_mode
    except OSError:
        return "dangling symlink" if path.is_symlink() else "cannot be read"
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "device"
