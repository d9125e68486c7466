"""Writing the graph to a file atomically: a reader never sees a half-written dump."""

from pathlib import Path

from .atomic import write_atomically
from .formats import RdfSyntax, rdf_syntax
from .stores.store import GraphStore


def write_dump(store: GraphStore, path: Path, syntax: RdfSyntax) -> int:
    """Serialise into a temporary file beside ``path``, fsync, then rename over it. Returns the size."""
    return write_atomically(path, lambda out: store.dump(out, syntax))


def dump_file(store: GraphStore, path: Path, syntax: str) -> int:
    """:func:`write_dump` with the syntax named: a call a query worker can run (a name pickles)."""
    return write_dump(store, path, rdf_syntax(syntax))
