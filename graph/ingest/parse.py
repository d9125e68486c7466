"""Reading paper lists (the ``论文检索`` format) into :class:`Record` objects.

The layout is positional: every record is ``[area line] / author line / abstract``, one line each
(an abstract may wrap onto lines with no blank line between them). Blank lines carry no meaning
beyond separating lines. So a record is read by position, and a line's *shape* is used only for
the one real ambiguity — is a record's first line an area or an author line, when the area line
or an abstract is missing? — together with the `` · `` separator, the areas seen in *any* input
file, and the next two lines. Author names are then cleaned by :mod:`.authorline`.

A line that cannot be read (not UTF-8, longer than :data:`MAX_LINE_BYTES`) costs only its record;
a record that cannot be placed is reported with its file and line, and the reader carries on.
"""

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import Enum
from functools import partial
from pathlib import Path
from typing import BinaryIO

from bibgraph.graph.ingest.authorline import MAX_NAME_WORDS, PARTICLES, AuthorLine, read_author_line
from bibgraph.graph.ingest.names import tidy
from bibgraph.graph.ingest.records import Problem, Record

HEADER = "论文检索"
# The header as lists carry it: in traditional characters too, with a colon, and again wherever two lists were
# joined (``cat a.txt b.txt``, each with its byte-order mark): never an area, author line or a line of an abstract.
_HEADER_LINE = re.compile(rf"(?:{HEADER}|論文檢索)\s*[:\uff1a]?")
# " · " as the format writes it; its look-alikes (bullet, katakana and half-width middle dots, hyphenation
# point, bullet and dot operators, Greek ano teleia) and breadcrumb arrows as sites copy them. Never " - " or
# " / ": area names hold those ("Sequential Models, Time series", "Vision-Language / Multimodal").
AREA_SEPARATORS = "\u00b7\u0387\u2022\u30fb\uff65\u2027\u2219\u22c5>\u203a\u00bb\uff1e"
AREA_SEPARATOR = re.compile(rf"\s+[{AREA_SEPARATORS}]\s+")
MAX_LINE_BYTES = 1 << 20  # 1 MiB: the longest abstract seen is ~10 KB; anything longer is not a list line
MAX_AREA_CHARS = 200
_WORDS = re.compile(r"\S+")
_CHUNKS = re.compile(r"[,，、;；]|\s(?:and|&)\s")
_SENTENCE_ENDS = frozenset(".!?。！？")
_NAME_ENDINGS = frozenset({"al.", "Jr.", "Sr."})  # and initials ("C."): a name line may end in them
_NAME_WORDS = PARTICLES | {"et", "al.", "and", "etc."}  # lower-case words an author line may hold
_UNSPACED_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]{13,}")


class Shape(Enum):
    AREA = "area"  # "Area · Subarea"
    PROSE = "prose"  # an abstract
    SHORT = "short"  # an author line or an area with no subarea


@dataclass(frozen=True, slots=True)
class _Line:
    number: int
    text: str
    after_blank: bool
    broken: bool = False  # could not be read; already reported


@dataclass(slots=True)
class _Unit:
    """A line, or an abstract with its wrapped continuation lines."""

    number: int
    lines: list[str]
    shape: Shape
    broken: bool

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def split_area(text: str) -> tuple[str, str | None] | None:
    """``Area · Subarea`` as a pair, or ``None`` when the line has no area separator."""
    found = AREA_SEPARATOR.search(text)
    if not found or len(text) > MAX_AREA_CHARS:
        return None
    area, subarea = tidy(text[: found.start()]), tidy(text[found.end() :])
    if found.group().strip() != "\u00b7" and not (_names_a_topic(area) and _names_a_topic(subarea)):
        return None  # "p > 0.05", "Model A > baseline" in a wrapped abstract: a look-alike needs two topic names
    return (area, subarea or None) if area else None


def _names_a_topic(text: str) -> bool:
    """Starts with a capital (or a letter of a script without case) and holds no digit and no sentence end."""
    return (
        bool(text)
        and text[0].isalpha()
        and not text[0].islower()
        and not any(c.isdigit() or c in _SENTENCE_ENDS for c in text)
    )


def is_prose(text: str) -> bool:
    """Sentences rather than names: a long line ending like a sentence (not in ``et al.``, an initial
    or ``Jr.``), a comma-free stretch of mostly common lower-case words, or a long unspaced CJK run."""
    if text[-1] in _SENTENCE_ENDS and text.count(" ") >= 7:
        last = text.rsplit(None, 1)[-1]
        if len(last) > 2 and last not in _NAME_ENDINGS and not _names_with_a_full_stop(text):
            return True
    for chunk in _CHUNKS.split(text):
        chunk_words = chunk.split()
        if len(chunk_words) >= 5:
            common = sum(1 for w in chunk_words if _is_common(w))
            if common * 3 >= len(chunk_words):
                return True
    return bool(_UNSPACED_CJK.search(text))


def _is_common(word: str) -> bool:
    """A lower-case word no author line holds (``de``, ``van``, ``et al.`` and ``and`` may be in one)."""
    return word[0].islower() and word not in _NAME_WORDS


def _names_with_a_full_stop(text: str) -> bool:
    """``Ann Lee, Bo Chen, Cy Diaz, Dan Wu.``: no common lower-case word (``de``, ``van``, ``et al.`` and ``and``
    may be in a name line) and no stretch between separators longer than a name; a sentence has one or the other
    (one of only formulas and emphasis, ``$x$ $y$ … *z*.``, has the long stretch)."""
    # words read one at a time: an abstract has a common word early, and is not split whole for it
    if any(_is_common(match.group()) for match in _WORDS.finditer(text)):
        return False
    return all(len(chunk.split()) <= MAX_NAME_WORDS for chunk in _CHUNKS.split(text))


def shape(text: str) -> Shape:
    if is_prose(text):
        return Shape.PROSE
    return Shape.AREA if split_area(text) else Shape.SHORT


def _units(lines: Iterable[_Line]) -> list[_Unit]:
    """Group wrapped abstract lines (prose followed by lines with no blank before them) into one unit."""
    units: list[_Unit] = []
    after_header = False
    for line in lines:
        if line.text.startswith("\ufeff"):  # a byte-order mark where two files were joined
            line = _Line(line.number, line.text.lstrip("\ufeff").strip(), line.after_blank, line.broken)
        if _HEADER_LINE.fullmatch(line.text) or (not line.text and not line.broken):
            after_header = True  # ends a record like a blank line
            continue
        if after_header:
            line, after_header = _Line(line.number, line.text, True, line.broken), False
        kind = Shape.PROSE if line.broken and not line.text else shape(line.text)
        last = units[-1] if units else None
        if last and last.shape is Shape.PROSE and not line.after_blank and kind is not Shape.AREA:
            last.lines.append(line.text)
            last.broken = last.broken or line.broken
            continue
        units.append(_Unit(line.number, [line.text], kind, line.broken))
    return units


class _Reader:
    """The positional reading of one file's units into records."""

    def __init__(self, units: list[_Unit], source: str, known_areas: frozenset[str]) -> None:
        self.units, self.source, self.known_areas = units, source, known_areas
        self.records: list[Record] = []
        self.problems: list[Problem] = []

    def kind(self, index: int) -> Shape | None:
        return self.units[index].shape if index < len(self.units) else None

    def is_known_area(self, index: int) -> bool:
        return index < len(self.units) and tidy(self.units[index].text) in self.known_areas

    def problem(self, index: int, message: str) -> None:
        if self.units[index].broken:  # its unreadable line is reported already
            return
        self.problems.append(Problem(self.source, self.units[index].number, message))

    def read(self) -> tuple[list[Record], list[Problem]]:
        i = 0
        while i < len(self.units):
            i = self.record(i)
        return self.records, self.problems

    def record(self, i: int) -> int:
        """Read the record starting at unit ``i``; return where the next one starts."""
        kind, k1, k2 = self.kind(i), self.kind(i + 1), self.kind(i + 2)
        if kind is Shape.AREA:
            if k1 is None or k1 is Shape.AREA:
                self.problem(i, "area line with no authors and abstract after it")
                return i + 1
            if k1 is Shape.PROSE:
                self.problem(i + 1, "abstract with no author line before it")
                return i + 2
            if self.abstract_missing(i + 2):
                self.problem(i + 1, "author line with no abstract after it")
                return i + 2
            return self.emit(i, i, i + 1, i + 2)
        if kind is Shape.PROSE:
            self.problem(i, "abstract with no author line before it")
            return i + 1
        # A short first line: an author line (short, then prose) or a bare area (short, short, prose).
        if k1 is Shape.PROSE:
            if self.is_known_area(i):
                self.problem(i + 1, "abstract with no author line before it")
                return i + 2
            return self.emit(i, None, i, i + 1)
        if k1 is Shape.SHORT and (k2 is Shape.PROSE or (k2 is Shape.SHORT and self.kind(i + 3) is not Shape.PROSE)):
            return self.emit(i, i, i + 1, i + 2)
        if k1 is Shape.SHORT and (k2 is None or k2 is Shape.AREA):  # authors and a short abstract, or an
            if self.is_known_area(i):  # area and authors with the abstract missing: the areas tell
                self.problem(i + 1, "author line with no abstract after it")
                return i + 2
            return self.emit(i, None, i, i + 1)
        self.problem(i, "author line with no abstract after it")
        return i + 1

    def abstract_missing(self, index: int) -> bool:
        """Is the line at ``index`` (where an abstract belongs) rather the start of the next record?"""
        kind, k1, k2 = self.kind(index), self.kind(index + 1), self.kind(index + 2)
        if kind is None or kind is Shape.AREA:
            return True
        if kind is Shape.PROSE:
            return False
        # A short line: the next record's author line (prose follows), or its bare area (known).
        return k1 is Shape.PROSE or (k1 is Shape.SHORT and k2 is Shape.PROSE and self.is_known_area(index))

    def emit(self, first: int, area_at: int | None, authors_at: int, abstract_at: int) -> int:
        units = self.units[first : abstract_at + 1]
        if any(unit.broken for unit in units):  # its unreadable line is reported already
            return abstract_at + 1
        area: str | None = None
        subarea: str | None = None
        if area_at is not None:
            text = self.units[area_at].text
            area, subarea = split_area(text) or (tidy(text), None)
        author_unit = self.units[authors_at]
        text = tidy(author_unit.text)
        line = read_author_line(author_unit.text, author_unit.number)
        self.records.append(
            _record(self.source, self.units[first].number, area, subarea, text, line, self.units[abstract_at].text)
        )
        return abstract_at + 1


def _record(
    source: str, number: int, area: str | None, subarea: str | None, text: str, line: AuthorLine, abstract: str
) -> Record:
    authors = tuple(name.name for name in line.names)
    written = tuple(name.written for name in line.names)
    marks = tuple(name.marks for name in line.names)
    return Record(
        source,
        number,
        area,
        subarea,
        authors,
        line.truncated,
        abstract,
        written=written if written != authors else (),
        marks=marks if any(marks) else (),
        author_list=text if line.unsplit else None,
        key_names=line.key_names,
        repairs=line.repairs,
        warnings=line.warnings,
    )


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def _split_lines(text: str) -> list[str]:
    """The lines of ``text`` as the format breaks them: at LF, CRLF or a lone CR only. ``str.splitlines``
    also breaks at VT, FF, FS, GS, RS, NEL, U+2028 and U+2029: one such character inside an author line
    or an abstract silently made two lines of it, and so records that were never written. Kept in the
    line, a control character makes its record a bad one, reported with its line."""
    parts = _LINE_BREAK.split(text)
    if len(parts) > 1 and parts[-1] == "":
        parts.pop()
    return parts


def _parse_lines(
    lines: Iterable[_Line], source: str, known_areas: frozenset[str], problems: list[Problem]
) -> tuple[list[Record], list[Problem]]:
    units = _units(lines)
    if not units:
        if not problems:
            problems.append(Problem(source, 1, "empty file: no records"))
        return [], problems
    records, found = _Reader(units, source, known_areas).read()
    return records, sorted([*problems, *found], key=lambda p: p.line)


_UTF16_MARKS = (b"\xff\xfe", b"\xfe\xff")
_UTF32_MARKS = (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")


def _binary_lines(stream: BinaryIO, source: str, problems: list[Problem]) -> Iterator[_Line]:
    """Lines of a file read as bytes, one at a time: a bad line is reported and marked, never fatal."""
    after_blank = True
    number = 0
    while raw := stream.readline(MAX_LINE_BYTES + 1):
        number += 1
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            while (rest := stream.readline(MAX_LINE_BYTES)) and not rest.endswith(b"\n"):
                pass
            problems.append(
                Problem(source, number, f"line longer than {MAX_LINE_BYTES:,} bytes: skipped with its record")
            )
            yield _Line(number, "", after_blank, broken=True)
            after_blank = False
            continue
        if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        elif number == 1 and raw.startswith(_UTF16_MARKS + _UTF32_MARKS):
            mark = " ".join(f"{byte:02X}" for byte in raw[: 4 if raw.startswith(_UTF32_MARKS) else 2])
            problems.append(
                Problem(
                    source,
                    1,
                    f"UTF-16 or UTF-32 text (byte-order mark {mark}), not UTF-8: the file is skipped;"
                    " convert it, e.g. iconv -f UTF-16 -t UTF-8",
                )
            )
            return
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            problems.append(
                Problem(
                    source,
                    number,
                    f"not UTF-8 (byte 0x{raw[error.start]:02x} at column {error.start + 1}): skipped with its record",
                )
            )
            text, broken = raw.decode("utf-8", "replace"), True
        else:
            broken = False
        parts = [part.strip() for part in _split_lines(text)]
        for offset, part in enumerate(parts):  # a lone CR ends a line too (a CR-only file is one read)
            if not part:
                after_blank = True
                continue
            yield _Line(number + offset, part, after_blank, broken)
            after_blank = False
        number += len(parts) - 1


def parse_stream(
    stream: BinaryIO, source: str, known_areas: frozenset[str] = frozenset()
) -> tuple[list[Record], list[Problem]]:
    """Parse one list read as bytes from ``stream``; ``source`` names it in records and problems."""
    problems: list[Problem] = []
    return _parse_lines(list(_binary_lines(stream, source, problems)), source, known_areas, problems)


def parse_file(
    path: Path, source: str | None = None, known_areas: frozenset[str] = frozenset()
) -> tuple[list[Record], list[Problem]]:
    """Parse one file, reading it line by line; a file that cannot be opened is one problem."""
    name = source or path.name
    try:
        with path.open("rb") as stream:
            return parse_stream(stream, name, known_areas)
    except OSError as error:
        return [], [Problem(name, 1, f"cannot read: {error.strerror or error}")]


def scan_areas(files: Iterable[Path]) -> frozenset[str]:
    """Areas named in ``Area · Subarea`` lines of all the files: a cheap first pass over the bytes."""
    areas: set[str] = set()
    separators = tuple(char.encode() for char in AREA_SEPARATORS)
    for path in files:
        try:
            with path.open("rb") as stream:
                for raw in iter(partial(stream.readline, MAX_LINE_BYTES + 1), b""):
                    if len(raw) <= MAX_AREA_CHARS * 4 and any(sep in raw for sep in separators):
                        pair = split_area(raw.decode("utf-8", "replace").strip())
                        if pair:
                            areas.add(pair[0])
        except OSError:
            continue  # parse_file reports it
    return frozenset(areas)
