"""Writing the graph to a file atomically: a reader never sees a half-written dump."""

import os
import tempfile
from pathlib import Path

from .formats import RdfSyntax
from .store import GraphStore


def write_dump(store: GraphStore, path: Path, syntax: RdfSyntax) -> int:
    """Serialise into a temporary file beside ``path``, fsync, then rename over it. Returns the size."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            store.dump(out, syntax)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path.stat().st_size
