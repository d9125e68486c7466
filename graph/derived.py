"""Derived data kept in a dataset: one file per cache key, written at build time, read when first asked for.

The views derive networks, layouts, drawn views and the home page's charts from
the store; each is a value under a key (what, the spec it is derived from, options). A build computes
the default ones and keeps them here, so a server opened on the dataset reads a file instead of
deriving (lazily: nothing is loaded before a request needs it, and a value is read once per process).

Values are pickled: they are networkx graphs and plain Python objects, and pickle is the format
that round-trips them exactly. A dataset directory is trusted like the code that wrote it (it is
never uploaded by clients); the manifest's checksums tell a damaged file.
"""

import dataclasses
import hashlib
import json
import os
import pickle
from collections.abc import Hashable
from pathlib import Path
from typing import Any

from .atomic import write_bytes_atomically

SUFFIX = ".pickle"


def canonical(value: Any) -> Any:
    """``value`` as JSON-able data that is the same in every process (sets sorted, dataclasses by field)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: canonical(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return {"@type": type(value).__name__, **fields}
    if isinstance(value, frozenset | set):
        return sorted((canonical(item) for item in value), key=lambda item: json.dumps(item, sort_keys=True))
    if isinstance(value, tuple | list):
        return [canonical(item) for item in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise TypeError(f"no canonical form for a derived-data key part of type {type(value).__name__}")


def file_name(key: tuple[Hashable, ...]) -> str:
    """The file holding the value of ``key``: a hash of its canonical form."""
    text = json.dumps(canonical(key), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32] + SUFFIX


class DerivedFiles:
    """The derived values of one dataset version, in ``directory`` (read-only unless ``writable``)."""

    def __init__(self, directory: Path, writable: bool = False) -> None:
        self.directory = directory
        self.writable = writable

    def load(self, key: tuple[Hashable, ...]) -> tuple[bool, Any]:
        """(True, value) when the dataset holds the value of ``key``, else (False, None)."""
        try:
            with (self.directory / file_name(key)).open("rb") as data:
                return True, pickle.load(data)
        except FileNotFoundError:
            return False, None

    def save(self, key: tuple[Hashable, ...], value: Any) -> None:
        """Keep ``value`` (atomically) when this is a dataset being built; otherwise nothing."""
        if self.writable:
            write_bytes_atomically(self.directory / file_name(key), pickle.dumps(value, pickle.HIGHEST_PROTOCOL))

    def link(self, previous: "DerivedFiles", key: tuple[Hashable, ...]) -> None:
        """Keep ``previous``'s value of ``key`` as this one's: a hard link to its file, never copied or read (a value
        is never written in place, :meth:`save` replaces the file); ``FileNotFoundError`` when it has none."""
        if self.writable:
            target = self.directory / file_name(key)
            target.unlink(missing_ok=True)
            os.link(previous.directory / file_name(key), target)
