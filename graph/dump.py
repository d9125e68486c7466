"""Writing the graph to a file atomically: a reader never sees a half-written dump."""

from pathlib import Path

from .atomic import write_atomically
from .formats import RdfSyntax
from .stores.store import GraphStore


def write_dump(store: GraphStore, path: Path, syntax: RdfSyntax) -> int:
    """Serialise into a temporary file beside ``path``, fsync, then rename over it. Returns the size."""
    return write_atomically(path, lambda out: store.dump(out, syntax))
