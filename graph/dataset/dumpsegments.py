"""A dataset version's dumps as segments shared with the versions before it: an add writes only what it adds.

A build writes each dump as one file: its data, then the VoID description (the manifest's ``data_bytes`` says
where the data ends). ``bibgraph add`` does not copy that file: the new version holds a hard link to it (and to
every earlier segment) and one new file per dump, the added triples then the new VoID description. The
manifest's ``segments`` lists ``[file, bytes]`` in order: the data of each earlier segment (a prefix of its file,
which may end with a VoID an earlier version stated) and the new file whole. A download is the segments read in
order (:class:`JoinedFile`): N-Triples is one line per triple, and each Turtle segment declares its prefixes
again, so the whole parses to the graph a dump written at once holds, in another order. A segment is never
written once its version is published: the checksums of the linked ones carry over (:func:`~.directory.checksums`).
So an add costs what it adds, on disk and in time, whatever the size of the dumps before it.
"""

import io
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from bibgraph.graph.dataset.dumps import DATASET_SYNTAXES, Segments, dump_name
from bibgraph.graph.rdf.formats import rdf_syntax
from bibgraph.graph.rdf.iris import DUMP_STEM
from bibgraph.graph.stores.atomic import link_file

Part = tuple[str, int]  # (a file of the version's dumps directory, the bytes of it that belong to the dump)


def parts(directory: Path, name: str, entry: Mapping[str, Any]) -> list[Part]:
    """The segments of dump ``name`` as its download reads them: each earlier one's data, the last file whole.
    ``entry`` is the manifest's ``dumps[name]``; a dump written whole (no ``segments``) is its one file."""
    if "segments" in entry:
        return [(str(file), int(size)) for file, size in entry["segments"]]
    return [(name, (directory / name).stat().st_size)]


def _data_parts(directory: Path, name: str, entry: Mapping[str, Any]) -> list[Part]:
    """The segments of dump ``name`` cut where its data ends (the VoID description left out): what the next
    version continues."""
    *earlier, (last, _) = parts(directory, name, entry)
    return [*earlier, (last, int(entry["data_bytes"]) - sum(size for _, size in earlier))]


def segment_name(syntax_name: str, number: int) -> str:
    """The file of the segment version ``number`` adds to a dump (its suffix kept: the file is valid alone)."""
    return f"{DUMP_STEM}.{number:06d}.{rdf_syntax(syntax_name).suffix}"


@contextmanager
def continued_segments(
    previous: Path, directory: Path, ends: Mapping[str, Mapping[str, Any]], number: int
) -> Iterator["ContinuedDumps"]:
    """The dumps of ``previous`` (a version's dump directory, its manifest's ``dumps`` entry ``ends``) continued
    into ``directory`` by version ``number``: the earlier segments hard-linked (never copied), a new segment per
    dump open for appending."""
    directory.mkdir(exist_ok=True)
    with ExitStack() as files:
        opened, kept = {}, {}
        for syntax_name in DATASET_SYNTAXES:
            syntax = rdf_syntax(syntax_name)
            name = dump_name(syntax)
            kept[name] = [(file, size) for file, size in _data_parts(previous, name, ends[name]) if size > 0]
            for file, size in kept[name]:
                if (previous / file).stat().st_size < size:
                    raise ValueError(f"{previous / file}: shorter than the {size:,} bytes its manifest records")
                if not (directory / file).exists():
                    link_file(previous / file, directory / file)
            segment = directory / segment_name(syntax_name, number)
            opened[name] = (syntax, files.enter_context(segment.open("xb")))
        yield ContinuedDumps(opened, kept)


class ContinuedDumps(Segments):
    """:class:`~.dump.Segments` writing new segment files after the linked ones; :meth:`finish` says where."""

    def __init__(self, files: Mapping[str, Any], kept: Mapping[str, list[Part]]) -> None:
        super().__init__(files)
        self.kept = kept

    def finish(self, tail: Any) -> dict[str, dict[str, Any]]:
        """Append the VoID ``tail``; the manifest's ``dumps`` entry: every segment and where the data ends."""
        ends = super().finish(tail)
        entries = {}
        for name, (_, out) in self.files.items():
            earlier = self.kept[name]
            data = sum(size for _, size in earlier)
            entries[name] = {
                "data_bytes": data + ends[name]["data_bytes"],
                "segments": [*earlier, (Path(out.name).name, out.tell())],
            }
        return entries


class JoinedFile(io.RawIOBase):
    """The segments of a dump read as one file (seekable, for ranges), each file opened when first read."""

    def __init__(self, directory: Path, segments: list[Part]) -> None:
        super().__init__()
        self.directory = directory
        self.segments = segments
        self.size = sum(size for _, size in segments)
        self._position = 0
        self._open: tuple[int, io.BufferedReader] | None = None

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        start = {io.SEEK_SET: 0, io.SEEK_CUR: self._position, io.SEEK_END: self.size}[whence]
        self._position = max(0, start + offset)
        return self._position

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        start = 0
        for index, (file, size) in enumerate(self.segments):
            if self._position < start + size:
                wanted = min(len(view), start + size - self._position)
                data = self._segment(index, file)
                data.seek(self._position - start)
                count = data.readinto(view[:wanted])
                if not count:
                    raise OSError(f"{self.directory / file}: shorter than the {size:,} bytes its manifest records")
                self._position += count
                return count
            start += size
        return 0

    def _segment(self, index: int, file: str) -> io.BufferedReader:
        if self._open is None or self._open[0] != index:
            if self._open is not None:
                self._open[1].close()
            self._open = (index, (self.directory / file).open("rb"))
        return self._open[1]

    def close(self) -> None:
        if self._open is not None:
            self._open[1].close()
            self._open = None
        super().close()
