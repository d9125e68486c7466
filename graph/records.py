"""The parsed form of a paper list: records and the problems found while reading them."""

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Record:
    """One paper as the list gives it, with where it was read from."""

    source: str
    line: int
    area: str | None
    subarea: str | None
    authors: tuple[str, ...]
    truncated: bool
    abstract: str


@dataclass(frozen=True, slots=True)
class Problem:
    """Something wrong in the input, located so that a user can open the file at that line."""

    source: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.source}:{self.line}: {self.message}"
