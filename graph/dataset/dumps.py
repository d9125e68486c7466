"""Writing the graph to files: atomically (a reader never sees a half-written dump), and a dataset's dumps as
segments that its next version continues rather than writes again.

A dataset's dump is its data, then its VoID description (which counts the whole graph, so every version
states it anew). The manifest records where the data ends (``data_bytes``); ``bibgraph add`` keeps the
previous version's segments up to there (hard links: :mod:`.dumpsegments`) and writes a new one, the triples
it added then the new VoID. N-Triples is one line per triple, and Turtle declares its prefixes again before
each appended segment, so the segments in order parse to the same graph as a dump written whole.
"""

from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import BinaryIO

import pyoxigraph as ox

from bibgraph.graph.rdf.formats import RdfSyntax, rdf_syntax
from bibgraph.graph.rdf.iris import DUMP_STEM
from bibgraph.graph.rdf.vocab import PREFIXES
from bibgraph.graph.stores.atomic import write_atomically
from bibgraph.graph.stores.store import GraphStore, OxigraphGraphStore

DATASET_SYNTAXES = ("nt", "turtle")  # the dumps a dataset version holds


def write_dump(store: GraphStore, path: Path, syntax: RdfSyntax) -> int:
    """Serialise into a temporary file beside ``path``, fsync, then rename over it. Returns the size."""
    return write_atomically(path, lambda out: store.dump(out, syntax))


def dump_file(store: GraphStore, path: Path, syntax: str) -> int:
    """:func:`write_dump` with the syntax named: a call a query worker can run (sent to it by name)."""
    return write_dump(store, path, rdf_syntax(syntax))


def dump_name(syntax: RdfSyntax) -> str:
    return f"{DUMP_STEM}.{syntax.suffix}"


class Segments:
    """A dataset version's dump files open for appending: added triples, then the VoID tail."""

    def __init__(self, files: Mapping[str, tuple[RdfSyntax, BinaryIO]]) -> None:
        self.files = files

    def append(self, quads: Sequence[ox.Quad]) -> None:
        """Append ``quads`` (default graph, none already in the dumps) to every file."""
        if not quads:
            return
        for syntax, out in self.files.values():
            prefixes = PREFIXES if syntax.name == "turtle" else None
            ox.serialize(quads, out, format=syntax.oxigraph, prefixes=prefixes)

    def finish(self, tail: Sequence[ox.Quad]) -> dict[str, dict[str, int]]:
        """Append the VoID ``tail``; what the manifest keeps: where each file's data ends."""
        ends = {name: {"data_bytes": out.tell()} for name, (_, out) in self.files.items()}
        self.append(tail)
        for _, out in self.files.values():
            out.flush()
        return ends


def write_dataset_dumps(store: OxigraphGraphStore, directory: Path, tail: Sequence[ox.Quad]) -> dict[str, dict]:
    """Every dataset dump of ``store`` into ``directory``: the data in store order, then the ``tail`` quads.

    The tail (the VoID description) is taken out of the store while the data is dumped and put back after,
    so that it ends each file where the next version can cut it off. Returns the manifest's ``dumps`` entry.
    """
    directory.mkdir(exist_ok=True)
    for quad in tail:
        store.store.remove(quad)
    try:
        with ExitStack() as files:
            opened = {}
            for name in DATASET_SYNTAXES:
                syntax = rdf_syntax(name)
                out = files.enter_context((directory / dump_name(syntax)).open("wb"))
                store.dump(out, syntax)
                opened[dump_name(syntax)] = (syntax, out)
            return Segments(opened).finish(tail)
    finally:
        store.store.extend(tail)


def streamed_ntriples(directory: Path) -> BinaryIO:
    """The N-Triples dump, new, to be filled with the data as it streams (:func:`~.build.build_graph`)."""
    directory.mkdir(exist_ok=True)
    return (directory / dump_name(rdf_syntax("nt"))).open("xb")


def complete_streamed_dumps(directory: Path, tail: Sequence[ox.Quad]) -> dict[str, dict]:
    """Make the dumps whole once :func:`streamed_ntriples` holds the data: the Turtle dump converted from
    it (parsed and written in Rust, no pass over the store), then the ``tail`` (VoID) quads at the end of
    each. Returns the manifest's ``dumps`` entry.

    The file is parsed leniently (IRIs not checked again: half the parse): it holds the very bytes the store's
    strict loader read and accepted as they streamed (:func:`~.build.load_blocks`)."""
    ntriples = directory / dump_name(rdf_syntax("nt"))
    turtle = directory / dump_name(rdf_syntax("turtle"))
    data = ox.parse(path=str(ntriples), format=ox.RdfFormat.N_TRIPLES, lenient=True)
    ox.serialize(data, str(turtle), format=ox.RdfFormat.TURTLE, prefixes=PREFIXES)
    paths = (ntriples, turtle)
    with ExitStack() as files:
        opened = {path.name: (rdf_syntax(path.suffix[1:]), files.enter_context(path.open("ab"))) for path in paths}
        return Segments(opened).finish(tail)
