"""The curation file: a curator's decisions about persons, which always win over the algorithm.

``people.curation`` beside the paper lists (in a directory given to the build, or beside a list given
as a file), one decision a line, ``#`` starting a comment::

    # these authorships are one person (FILE:LINE is the record's first line, as the build report
    # shows it; #N the author's position on it)
    same: icml.txt:12#2 = neurips.txt:40#1
    # this authorship is a person of its own (no other authorship joins it)
    other: icml.txt:77#3
    # these written forms are one person, wherever they are written
    same-name: Bernhard Schölkopf = B. Schölkopf

A reference to no authorship of the lists, an unknown decision, or a file contradicting itself (an
authorship both ``other`` and in a ``same``) is an error with the file and line, and nothing is built.
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bibgraph.graph.ingest.names import normalise

FILE_NAME = "people.curation"
_REFERENCE = re.compile(r"(?P<file>[^\s#=|]+):(?P<line>\d+)#(?P<position>\d+)")


class CurationError(ValueError):
    """A curation file that cannot be applied: where, and why."""


@dataclass(frozen=True)
class Reference:
    """One authorship named by a curator, and where the curation file named it."""

    source: str
    line: int
    position: int  # 1-based
    stated_at: str  # "people.curation:7"


@dataclass
class Curation:
    """Every decision of the curation files read (their lines kept for errors and the report)."""

    same: list[list[Reference]] = field(default_factory=list)
    other: list[Reference] = field(default_factory=list)
    same_names: list[tuple[list[str], str]] = field(default_factory=list)  # normalised forms, where stated
    files: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.same or self.other or self.same_names)

    def check(self) -> None:
        """A file contradicting itself is an error: an authorship both ``other`` and ``same``."""
        apart = {(r.source, r.line, r.position): r for r in self.other}
        for group in self.same:
            for reference in group:
                if (found := apart.get((reference.source, reference.line, reference.position))) is not None:
                    raise CurationError(
                        f"{reference.stated_at}: {reference.source}:{reference.line}#{reference.position} is also "
                        f"'other' at {found.stated_at}: a decision contradicting another"
                    )


@dataclass
class Applied:
    """What the curation did, for the build report."""

    decisions: int = 0
    overruled: int = 0  # decisions that changed what the algorithm had decided
    dropped: list[str] = field(default_factory=list)  # joins not made: two authorships of one paper (where, forms)
    files: list[str] = field(default_factory=list)


def resolve(reference: Reference, where: Mapping[tuple[str, int], int], sizes: list[int]) -> tuple[int, int]:
    """The (record, position) a reference names; an error with the curation file's line if none."""
    record = where.get((reference.source, reference.line))
    if record is None or reference.position > sizes[record]:
        raise CurationError(
            f"{reference.stated_at}: {reference.source}:{reference.line}#{reference.position} names no authorship "
            "of the lists (FILE:LINE is a record's first line, #N its author's position)"
        )
    return record, reference.position - 1


def find(inputs: list[Path]) -> list[Path]:
    """The curation files beside the inputs: in each directory given, beside each file given."""
    places = {(path if path.is_dir() else path.parent).resolve() for path in inputs}
    return sorted(place / FILE_NAME for place in places if (place / FILE_NAME).is_file())


def read(paths: list[Path]) -> Curation:
    curation = Curation()
    for path in paths:
        curation.files.append(str(path))
        for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            text = re.split(r"(?:^|\s)#", raw, maxsplit=1)[0].strip()  # a comment; a reference's #N is no comment
            if not text:
                continue
            where = f"{path.name}:{number}"
            kind, colon, rest = text.partition(":")
            kind = kind.strip().lower()
            if not colon or kind not in ("same", "other", "same-name"):
                raise CurationError(f"{where}: expected 'same:', 'other:' or 'same-name:', not {raw.strip()!r}")
            parts = [part.strip() for part in rest.split("=")]
            if kind == "same-name":
                if len(parts) < 2 or not all(parts):
                    raise CurationError(f"{where}: 'same-name:' takes two or more written names joined by '='")
                curation.same_names.append(([normalise(part) for part in parts], where))
                continue
            references = [_reference(part, where) for part in parts]
            if kind == "same" and len(references) < 2:
                raise CurationError(f"{where}: 'same:' takes two or more authorships joined by '='")
            if kind == "other" and len(references) != 1:
                raise CurationError(f"{where}: 'other:' takes one authorship")
            if kind == "same":
                curation.same.append(references)
            else:
                curation.other.append(references[0])
    curation.check()
    return curation


def _reference(text: str, where: str) -> Reference:
    match = _REFERENCE.fullmatch(text)
    if match is None:
        raise CurationError(f"{where}: {text!r} is not an authorship (FILE:LINE#POSITION, e.g. list.txt:12#2)")
    position = int(match["position"])
    if position < 1:
        raise CurationError(f"{where}: positions start at 1 ({text!r})")
    return Reference(match["file"], int(match["line"]), position, where)
