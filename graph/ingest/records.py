"""The parsed form of a paper list: records and the problems found while reading them."""

from collections.abc import Sequence
from dataclasses import dataclass, field

from bibgraph.graph.ingest.names import normalise, short_hash


@dataclass(frozen=True, slots=True)
class Repair:
    """One change name cleaning made (or a warning about a list kept as written), located by line."""

    kind: str
    line: int
    written: str
    cleaned: str


@dataclass(frozen=True, slots=True)
class Record:
    """One paper as the list gives it, with where it was read from.

    ``authors`` are the cleaned names (identity goes by them); ``written`` holds the names as the
    line wrote them and ``marks`` each author's marks (``*``, ``†``...), both only when some name
    differs or has marks, so a plain record compares equal to one built by hand. ``author_list``
    is the verbatim line when it could not be split (then ``authors`` is empty).
    """

    source: str
    line: int
    area: str | None
    subarea: str | None
    authors: tuple[str, ...]
    truncated: bool
    abstract: str
    written: tuple[str, ...] = ()
    marks: tuple[str, ...] = ()
    author_list: str | None = None
    # What the paper IRI is minted from (the line split at commas, uncleaned), and what cleaning did.
    key_names: tuple[str, ...] = field(default=(), compare=False)
    repairs: tuple[Repair, ...] = field(default=(), compare=False)
    warnings: tuple[Repair, ...] = field(default=(), compare=False)

    @property
    def names_as_written(self) -> tuple[str, ...]:
        return self.written or self.authors

    @property
    def author_marks(self) -> tuple[str, ...]:
        return self.marks or ("",) * len(self.authors)


@dataclass(frozen=True, slots=True)
class Problem:
    """Something wrong in the input, located so that a user can open the file at that line."""

    source: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.source}:{self.line}: {self.message}"


class NoRecords(ValueError):
    """Paper lists that hold no record (a file of problems only, a header alone): nothing to build or add. Exit 2 as
    inputs that hold no paper list: a build, an add or a server of nothing exited 0 (docs/operating.md's table)."""


def require_records(files: int, records: int, problems: Sequence[Problem]) -> None:
    """Refuse ``files`` paper lists that yielded no record (:class:`NoRecords`), naming the first problems found in
    them. No file at all is not refused here (a build of none builds the seeds; the commands refuse inputs that
    hold no list)."""
    if files and records == 0:
        found = "; ".join(str(problem) for problem in problems[:3]) + (" …" if len(problems) > 3 else "")
        raise NoRecords(f"the paper lists hold no record{': ' + found if found else ''}")


def paper_id(record: Record) -> str:
    """Content-derived identifier: the same author line and abstract give the same paper anywhere.

    The author line counts as written, split at its commas and normalised, never as cleaned: so
    improving name cleaning never renames a paper (and every IRI minted before cleaning existed stays).
    """
    authors = "\x1f".join(normalise(name) for name in record.key_names or record.authors)
    return short_hash(f"{authors}\x1e{normalise(record.abstract)}", 16)
