"""Files an add reads hashed once, not at every add: what a version's manifest records of each when it was hashed
(``stats``: inode, size, modification time in nanoseconds). They are the search index's layers and the person map's
files (``directory.HASHED_ONCE``).

A version never writes a file of an earlier version (versions share them as hard links), so a file an add hashed
against its checksum (or a version hashed when it was written) and that still has the inode, size and modification
time it had then was not written since: the next add reads it without hashing it again (the search index alone is
2 GB at a million papers: 1.7 CPU-s at every add). A file written in place since has another time (a flipped bit written
by any program, a copy: another inode) and is hashed again, and refused if it differs. What this does not see: a
change that keeps the time (the disk's own decay, or a writer that sets the time back); ``bibgraph check`` and a
server's check before it first reads the index hash the whole file whatever is recorded.
"""

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

Stat = list[int]  # [inode, size, modification time in ns], as JSON keeps it


def stat_of(path: Path) -> Stat:
    """What the manifest records of ``path`` (its link not followed: a dataset holds no links)."""
    status = os.lstat(path)
    return [status.st_ino, status.st_size, status.st_mtime_ns]


def well_formed(stats: Any) -> bool:
    """Whether a manifest's ``stats`` is what this module writes: file names to three integers."""
    return isinstance(stats, dict) and all(
        isinstance(name, str) and isinstance(value, list) and len(value) == 3 and all(type(n) is int for n in value)
        for name, value in stats.items()
    )


def unchanged(stats: Mapping[str, Stat], name: str, path: Path) -> bool:
    """Whether the file ``path`` (``name`` in its version) has what ``stats`` recorded of it when it was hashed."""
    recorded = stats.get(name)
    return recorded is not None and recorded == stat_of(path)


def recorded(version: Path, names: Iterable[str], hashed: set[str], trusted: Mapping[str, Stat]) -> dict[str, Stat]:
    """The ``stats`` a new ``version``'s manifest records of its files ``names``: of each one hashed as the version
    was written (``hashed``), and of each one ``trusted`` (the version before's ``stats``, and what the add hashed of
    the files it read) records as it is now. A file neither hashed nor unchanged is left out: hashed at next use."""
    return {
        name: stat_of(version / name) for name in names if name in hashed or unchanged(trusted, name, version / name)
    }
