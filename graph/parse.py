"""Reading paper lists (the ``论文检索`` format) into :class:`Record` objects.

Blank lines carry no meaning beyond separating lines, because real lists put one between every
line and sometimes several. A record is therefore recognised by the *shape* of its lines: an
optional area line, an author line (comma-separated short names), then an abstract (prose).
A line that cannot be placed is reported with its file and line and the reader carries on, so
one broken record never costs the good ones.
"""

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from .names import tidy
from .records import Problem, Record

HEADER = "论文检索"
TRUNCATION_MARK = "等"
AREA_SEPARATOR = re.compile(r"\s+·\s+")
NAME_SEPARATOR = re.compile(r"\s*[,，、]\s*")
_NAME_PART = re.compile(r"[^,，、]+")
_TRUNCATED_TAIL = re.compile(r"\s+" + TRUNCATION_MARK + r"\s*$")
_NOT_IN_NAMES = ("$", "://", "*", "\\", "{", "}")
MAX_WORDS_PER_NAME = 6
MAX_CHARS_PER_NAME = 60


@dataclass(frozen=True, slots=True)
class _Line:
    number: int
    text: str
    after_blank: bool


def split_authors(text: str) -> tuple[tuple[str, ...], bool]:
    """Names in order and whether the list was cut (it ends in ``等``)."""
    truncated = bool(_TRUNCATED_TAIL.search(text))
    body = _TRUNCATED_TAIL.sub("", text) if truncated else text
    names = tuple(tidy(part) for part in NAME_SEPARATOR.split(body) if part.strip())
    return names, truncated


def looks_like_name(part: str) -> bool:
    """A person's name: a few words, no sentence punctuation (initials such as ``Jr.`` allowed)."""
    words = part.split()
    if not 1 <= len(words) <= MAX_WORDS_PER_NAME or len(part) > MAX_CHARS_PER_NAME:
        return False
    if any(marker in part for marker in _NOT_IN_NAMES):
        return False
    if part[-1] in "!?;:":
        return False
    # A name may end in an initial or a suffix ("J.", "Jr."), never in a lower-case word and a full stop.
    return part[-1] != "." or (len(words[-1]) <= 4 and words[-1][0].isupper())


def looks_like_author_line(text: str) -> bool:
    """Every comma-separated part is a name; stops at the first part that is not (abstracts are long)."""
    body = _TRUNCATED_TAIL.sub("", text)
    found = False
    for match in _NAME_PART.finditer(body):
        part = match.group().strip()
        if part:
            if not looks_like_name(part):
                return False
            found = True
    return found


def split_area(text: str) -> tuple[str, str | None] | None:
    """``Area · Subarea`` as a pair, or ``None`` when the line has no `` · `` separator."""
    parts = AREA_SEPARATOR.split(text, maxsplit=1)
    if len(parts) != 2:
        return None
    area, subarea = tidy(parts[0]), tidy(parts[1])
    return (area, subarea or None) if area else None


def _content_lines(text: str) -> list[_Line]:
    lines: list[_Line] = []
    after_blank = True
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not stripped:
            after_blank = True
            continue
        lines.append(_Line(number, stripped, after_blank))
        after_blank = False
    if lines and lines[0].text.lstrip("\ufeff") == HEADER:
        lines.pop(0)
    return lines


def parse_text(text: str, source: str) -> tuple[list[Record], list[Problem]]:
    """Parse one file's text. ``source`` is the name used in records and problem messages."""
    lines = _content_lines(text)
    if not lines:
        return [], [Problem(source, 1, "empty file: no records")]
    areas = [split_area(line.text) for line in lines]
    author_like = [not area and looks_like_author_line(line.text) for line, area in zip(lines, areas, strict=True)]
    known_areas = {area[0] for area in areas if area}
    records: list[Record] = []
    problems: list[Problem] = []
    i, n = 0, len(lines)

    def is_abstract(index: int) -> bool:
        return index < n and areas[index] is None and not author_like[index]

    def is_bare_area(index: int) -> bool:
        """An area with no subarea (``Optimization``): a short line followed by authors and abstract."""
        text = lines[index].text
        if index + 1 >= n or not author_like[index + 1] or not is_abstract(index + 2):
            return False
        return "," not in text or text in known_areas

    while i < n:
        first = lines[i]
        area: str | None = None
        subarea: str | None = None
        if pair := areas[i]:
            area, subarea = pair
            i += 1
        elif author_like[i] and is_bare_area(i):
            area = tidy(first.text)
            i += 1
        if i >= n:
            problems.append(Problem(source, first.number, "area line with no authors and abstract after it"))
            break
        author_line = lines[i]
        if areas[i]:
            problems.append(Problem(source, first.number, "area line with no authors and abstract after it"))
            continue
        if not author_like[i]:
            problems.append(Problem(source, author_line.number, "abstract with no author line before it"))
            i = _skip_paragraph(lines, i + 1)
            continue
        i += 1
        if not is_abstract(i):
            problems.append(Problem(source, author_line.number, "author line with no abstract after it"))
            continue
        end = _skip_paragraph(lines, i + 1)
        abstract = "\n".join(line.text for line in lines[i:end])
        i = end
        authors, truncated = split_authors(author_line.text)
        records.append(Record(source, first.number, area, subarea, authors, truncated, abstract))
    return records, problems


def _skip_paragraph(lines: list[_Line], index: int) -> int:
    """Index after the lines that continue a paragraph (no blank line before them)."""
    while index < len(lines) and not lines[index].after_blank and not split_area(lines[index].text):
        index += 1
    return index


def parse_file(path: Path, source: str | None = None) -> tuple[list[Record], list[Problem]]:
    """Parse one file; a file that is not UTF-8 is one problem located at its first bad byte."""
    name = source or path.name
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        byte = data[error.start]
        return [], [Problem(name, line, f"not UTF-8 (byte 0x{byte:02x} at offset {error.start})")]
    return parse_text(text, name)


def find_input_files(paths: Iterable[Path]) -> Iterator[tuple[Path, str]]:
    """Files to read with their display names, in a stable order whatever order they were given in.

    A directory contributes its ``*.txt`` files (recursively) named relative to it; a file is
    named by its file name.
    """
    found: dict[str, Path] = {}
    for path in paths:
        if path.is_dir():
            for child in path.rglob("*.txt"):
                found.setdefault(child.relative_to(path).as_posix(), child)
        else:
            found.setdefault(path.name, path)
    for name in sorted(found):
        yield found[name], name
