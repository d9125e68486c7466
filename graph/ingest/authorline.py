"""Reading one author line into names, the way real paper lists write them.

Lists converted from conference listings carry habits the plain ``Name, Name`` layout does not:
equal-contribution marks (``Ann Lee*``), affiliation markers (``Bo Chen[2]``), LaTeX accents
(``Clémen\\c{c}on``), BibTeX's ``and``, ``et al.`` endings, semicolons, odd spaces, ORCID iDs.
Each habit is one small named step below; every change a step makes is returned as a
:class:`~bibgraph.graph.ingest.records.Repair`, so the build report can count and show it, and the
name as written is always kept beside the cleaned one. A line that cannot be split into names
(no separators at all) is never split by guessing: it is kept whole.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass

from nameparser.config import CONSTANTS
from pylatexenc.latex2text import LatexNodes2Text

from bibgraph.graph.ingest.nameparts import is_initials
from bibgraph.graph.ingest.names import normalise, tidy
from bibgraph.graph.ingest.records import Repair

TRUNCATION_MARK = "等"
EQUAL_CONTRIBUTION_MARKS = "*∗＊⁎#♯"
CORRESPONDING_MARKS = "✉"
OTHER_MARKS = "†‡§¶‖⸸"
MARKS = EQUAL_CONTRIBUTION_MARKS + CORRESPONDING_MARKS + OTHER_MARKS
# More capitalised words than this in one name (particles such as "de", "van" not counted) means
# the separators are missing: ``María de los Ángeles García de la Torre`` has four.
MAX_NAME_WORDS = 5
# A run of Han characters longer than this is no single person's name (Chinese names have 2-4).
MAX_HAN_NAME = 6
# More names than this in one list is no list to draw people from: each pair of a paper's authors is a
# co-author link, so one 290 KB line of 30,000 names took a dataset build 287 s and 7.2 GB. The largest
# real author lists (high-energy physics) have about 5,000 names; conference lists have far fewer.
MAX_AUTHORS = 1000

# Repair classes, as the build report names them.
MARK = "equal-contribution and other marks"
AFFILIATION = "affiliation markers"
LATEX = "LaTeX"
AND = "'and' separators"
SEMICOLON = "semicolon separators"
ET_AL = "'et al.' endings"
ELLIPSIS = "'...' endings"
SPACES = "unusual spaces"
ORCID = "ORCID iDs"
CUT = "'等人', '，等' and unspaced '等' endings"
FULL_STOP = "a full stop ending the line"
NOTES = "bracketed notes and e-mail addresses"
FAMILY_FIRST = "'Family, Given' names"
LABEL = "'Authors:' labels"
TYPOGRAPHY = "typographic apostrophes and hyphens"
# Warnings: the list is kept as written, nothing repaired.
UNSPLIT = "author lines with no separators (kept whole, no persons)"
TOO_MANY = f"author lines of more than {MAX_AUTHORS:,} names (kept whole, no persons)"
REPEATED = "names repeated in one author list"

PARTICLES = frozenset(
    "de del della der di da das dos du la le los las van von den ten ter y e zu bin binti ibn al el".split()
)
_TRUNCATED_TAIL = re.compile(r"\s+" + TRUNCATION_MARK + r"\s*$")
# "O'Brien" with U+2019 or U+02BC, "Jean-Michel" with U+2010 (as PDFs copy it): one spelling each, so one
# person. Not U+02BB (the Hawaiian okina is a letter) nor the acute and grave accents (LaTeX's \' and \`).
_APOSTROPHES, _HYPHENS = "\u2019\u2018\u02bc\u2032", "\u2010\u2011\u2012\u2013\u2212\ufe63"
_TYPOGRAPHIC = str.maketrans(dict.fromkeys(_APOSTROPHES, "'") | dict.fromkeys(_HYPHENS, "-"))
_LABEL = re.compile(r"^(?:authors?|作者|著者)\s*[:\uff1a]\s*", re.IGNORECASE)  # "作者\uff1a张伟；李娜" (CNKI)
_HAN_CHARS = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff"
# CNKI-like portals: "张伟, 李娜 等人", "张伟，李娜等人", "张伟，李娜，等" (a lone "等" is no name), "Bo Li 等.". An
# unspaced "等" stays part of the name ("王等" is a name). Not in raw_parts: paper IRIs stay as they were.
_CUT_TAIL = re.compile(rf"(?:(?:\s*[,，、;；]\s*|\s+)等人?|(?<=[{_HAN_CHARS}])等人)\s*[.。]?\s*$")
_ET_AL_TAIL = re.compile(
    r"(?:\s*[,，;；])?\s+(?:et\.?\s*al(?:\.|ii)?|etc\.?|(?:and|&)\s+others|(?-i:u\.\s*a\.)|и\s+др\.?)\s*[,，;；.]?\s*$",
    re.IGNORECASE,
)
_ELLIPSIS_TAIL = re.compile(r"(?:\s*[,，;；])?\s*(?:\.{3,}|…+|⋯+)\s*$")
# Format characters (Unicode category Cf: soft hyphen, zero-width and bidirectional marks): invisible, so
# never part of a name as read; copied from web pages, they made "Bo Ch\u00aden" another person than "Bo Chen".
_FORMAT_CHARS = (
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
)
_UNUSUAL_SPACE = re.compile(rf"[\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\t{_FORMAT_CHARS}]")
_ZERO_WIDTH = re.compile(rf"[{_FORMAT_CHARS}]")
_AND = re.compile(r"\s+(?:and|&)\s+", re.IGNORECASE)
_LEADING_AND = re.compile(r"^(?:and|&)\s+", re.IGNORECASE)
_ORCID = re.compile(r"\s*[(\[]?\s*(?:https?://orcid\.org/|orcid:?\s*)?\d{4}-\d{4}-\d{4}-\d{3}[\dX]\s*[)\]]?\s*$", re.I)
_SUPERSCRIPT = "⁰¹²³⁴⁵⁶⁷⁸⁹ᵃᵇᶜᵈᵉ"
_MARKER_BODY = rf"[\d{_SUPERSCRIPT}{re.escape(MARKS)}a-e,，\s]*"
# ``^{1}``, ``$^a$`` are markers; ``\^{a}`` is LaTeX's circumflex (â), not one
_LATEX_SUPERSCRIPT = re.compile(rf"\$?(?<!\\)\^\{{?({_MARKER_BODY})\}}?\$?|\\textsuperscript\{{({_MARKER_BODY})\}}")
_TRAILING_MARKER = re.compile(
    rf"(?<=[^\W\d_]|\.)\d+$|\s*[\[(]\d+(?:\s*[,，]\s*\d+)*[\])]$|[{_SUPERSCRIPT}]+$|\s*[{re.escape(MARKS)}]$"
)
_LEADING_MARKER = re.compile(rf"^(?:\d+(?=[^\W\d_])|[{_SUPERSCRIPT}]+|[{re.escape(MARKS)}]\s*)")
_MARKER_ONLY = re.compile(rf"^[\d{_SUPERSCRIPT}{re.escape(MARKS)}\s\[\]()]+$")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff]")
_LATEX_SIGNS = ("\\", "{", "$", "~")
_latex = LatexNodes2Text()


@dataclass(frozen=True, slots=True)
class Name:
    """One author as read: the cleaned name, the text it came from, and its marks."""

    name: str
    written: str
    marks: str = ""


@dataclass(frozen=True, slots=True)
class AuthorLine:
    """An author line read: names in order, or none when it is kept whole (``unsplit``)."""

    names: tuple[Name, ...]
    truncated: bool
    unsplit: bool
    key_names: tuple[str, ...]
    repairs: tuple[Repair, ...]
    warnings: tuple[Repair, ...]


def raw_parts(text: str) -> tuple[str, ...]:
    """The line split at its commas, nothing cleaned: what a paper's IRI is minted from (stable)."""
    body = _TRUNCATED_TAIL.sub("", text)
    return tuple(tidy(part) for part in re.split(r"\s*[,，、]\s*", body) if part.strip())


def _split_top_level(text: str, separators: str) -> list[str]:
    """Split at separators that are not inside brackets, braces or ``$...$`` (``Lee[1,2]`` stays whole)."""
    parts, depth, math, start = [], 0, False, 0
    for index, char in enumerate(text):
        if char in "([{\uff08\u3010":  # and the full-width round and lenticular brackets
            depth += 1
        elif char in ")]}\uff09\u3011":
            depth = max(0, depth - 1)
        elif char == "$":
            math = not math
        elif char in separators and depth == 0 and not math:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return parts


def _strip_orcid(text: str) -> str:
    return _ORCID.sub("", text)


# "Ann Lee (MIT)", "Wei Zhang (张伟)", "Bo Chen <bo@x.org>", "Cy Diaz cy@x.org": a bracketed note of two or more
# letters (a bracketed number or letter is an affiliation marker) or an e-mail address after the name.
_OPENING = r"(\[<\uff08\u3010\uff1c"  # and the full-width round, lenticular and angle brackets
_CLOSING = r")\]>\uff09\u3011\uff1e"
_NOTE = re.compile(
    rf"\s*(?:[{_OPENING}](?=[^{_OPENING}{_CLOSING}]*[^\W\d_][^{_OPENING}{_CLOSING}]*[^\W\d_])[^{_OPENING}{_CLOSING}]*"
    rf"[{_CLOSING}]|\s[^\s@()<>]+@[^\s@()<>]+\.\w+)$"
)


def _strip_notes(text: str) -> str:
    while (stripped := _NOTE.sub("", text)) != text and stripped.strip():
        text = stripped
    return text


def _strip_markers(text: str) -> tuple[str, str, bool]:
    """Remove marks and affiliation markers at either end; return (name, marks, had affiliation)."""
    marks, affiliation = "", False

    def take_superscript(match: re.Match[str]) -> str:
        nonlocal marks, affiliation
        body = match.group(1) if match.group(1) is not None else match.group(2)
        marks += "".join(c for c in body if c in MARKS)
        affiliation = affiliation or any(c not in MARKS and not c.isspace() for c in body)
        return ""

    text = _LATEX_SUPERSCRIPT.sub(take_superscript, text).strip()
    while True:
        match = _TRAILING_MARKER.search(text) or _LEADING_MARKER.search(text)
        if not match:
            return text.strip(), marks, affiliation
        found = match.group().strip()
        if found in MARKS:
            marks = found + marks if match.start() > 0 else marks + found
        else:
            affiliation = True
        text = (text[: match.start()] + text[match.end() :]).strip()


# TeX ends a control word's name at the first character that is not an ASCII letter (``\\Lącki`` is ``\\L``
# then ``ącki``); pylatexenc reads any letter as part of the name and drops the unknown macro, and the surname with
# it. A space after the name says the same to both (TeX eats it).
_CONTROL_WORD_BEFORE_OTHER_LETTER = re.compile(r"(\\[A-Za-z]+)(?=[^\x00-\x7f])")


def _decode_latex(text: str) -> str:
    if not any(sign in text for sign in _LATEX_SIGNS):
        return text
    return tidy(_latex.latex_to_text(_CONTROL_WORD_BEFORE_OTHER_LETTER.sub(r"\1 ", text)))


def name_words(name: str) -> int:
    """Capitalised words of a name, particles (``de``, ``van``) not counted."""
    return sum(1 for word in name.split() if word.lower() not in PARTICLES and not word[0].islower())


_LONG_HAN_RUN = re.compile(rf"[\u3400-\u9fff\uf900-\ufaff]{{{MAX_HAN_NAME + 1},}}")
# Anything a cleaning step acts on; a line with none of it (most lines) takes the plain path.
_NEEDS_CLEANING = re.compile(
    rf"[\d{_SUPERSCRIPT}{re.escape(MARKS)}\[\](){{}}\\$~;；…⋯等@<{_APOSTROPHES}{_HYPHENS}\uff08\u3010\uff1c\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\t{_FORMAT_CHARS}]"
    r"|\s(?:and|&)\s|^(?:and|&)\s|\bet\.?\s*al\b|\.\.\.|\setc\b|\su\.\s*a\.|\sи\s+др|[.。]\s*$|^(?:authors?|作者|著者)\s*[:\uff1a]"
    r"|[,，]\s*[A-Z](?![^\W\d_])",  # "Lee, A": initials alone after a comma
    re.IGNORECASE,
)


# Han, kana, Hangul: a name in these scripts has at most two spaced parts (family, given: "山田 太郎", "김 철수").
_CJK_WORD = re.compile(rf"[{_HAN_CHARS}\u3040-\u30ff\u31f0-\u31ff\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]+")


def _too_long(name: str) -> bool:
    if name.count(" ") >= MAX_NAME_WORDS and name_words(name) > MAX_NAME_WORDS:
        return True
    if name.count(" ") >= 2 and all(_CJK_WORD.fullmatch(word) for word in name.split()):
        return sum(len(word) > 1 for word in name.split()) > 1  # "张伟 李娜 王芳", not "王 小 明": no split invented
    return len(name) > MAX_HAN_NAME and bool(_LONG_HAN_RUN.search(name))


def read_author_line(text: str, line: int) -> AuthorLine:
    """Names of one author line, each cleaning step counted (see the module docstring)."""
    repairs: list[Repair] = []
    warnings: list[Repair] = []

    def repair(kind: str, written: str, cleaned: str) -> None:
        repairs.append(Repair(kind, line, written, cleaned))

    key_names = raw_parts(text)
    if len(key_names) > MAX_AUTHORS:  # before any cleaning: that costs each name
        return _kept_whole(TOO_MANY, text, line, key_names, bool(_TRUNCATED_TAIL.search(text)), repairs)
    if not _NEEDS_CLEANING.search(text) and not _TRUNCATED_TAIL.search(text):
        return _plain(text, line, key_names)
    body = text
    if label := _LABEL.match(body):
        repair(LABEL, body, body[label.end() :])
        body = body[label.end() :]
    truncated = False
    for pattern, kind in ((_TRUNCATED_TAIL, None), (_CUT_TAIL, CUT), (_ET_AL_TAIL, ET_AL), (_ELLIPSIS_TAIL, ELLIPSIS)):
        if found := pattern.search(body):
            cut = body[: found.start()]
            if kind:
                repair(kind, body, cut)
            body, truncated = cut, True
            break
    if _UNUSUAL_SPACE.search(body):
        spaced = tidy(_ZERO_WIDTH.sub("", body))
        repair(SPACES, body, spaced)
        body = spaced
    if (stopped := _strip_full_stop(body)) != body:
        repair(FULL_STOP, body, stopped)
        body = stopped
    names: list[Name] = []
    parts: list[str] = []
    if family_first := _family_first(body):
        for chunk in family_first:
            for name in _clean(chunk, repair):
                family, given = (tidy(p) for p in _split_top_level(name.name, ",，"))
                repair(FAMILY_FIRST, name.name, f"{given} {family}")
                names.append(Name(f"{given} {family}", name.written, name.marks))
    else:
        for chunk in _split_top_level(body, ";；"):
            parts.extend(_split_top_level(chunk, ",，、"))
        if body.count(";") + body.count("；") and len(parts) > 1:
            repair(SEMICOLON, body, ", ".join(tidy(p) for p in parts if p.strip()))
    for part in (tidy(p) for p in parts):
        if not part:
            continue
        if _MARKER_ONLY.match(part) and names:  # "Ann Lee1,2": the "2" belongs to the name before
            last = names[-1]
            extra = "".join(c for c in part if c in MARKS)
            names[-1] = Name(last.name, f"{last.written},{part}", last.marks + extra)
            continue
        for piece in _split_and(part, repair, first=not names):
            names.extend(_clean(piece, repair))
    if not names:
        names = [Name(tidy(body), tidy(body))]
    if len(names) > MAX_AUTHORS:  # "and" and ";" separate names too
        return _kept_whole(TOO_MANY, text, line, key_names, truncated, repairs)
    if any(_too_long(name.name) for name in names):
        return _kept_whole(UNSPLIT, text, line, key_names, truncated, repairs)
    warnings.extend(_repeated(names, line))
    return AuthorLine(tuple(names), truncated, False, key_names, tuple(repairs), tuple(warnings))


_NAME_SUFFIXES = frozenset(CONSTANTS.suffix_not_acronyms | CONSTANTS.suffix_acronyms) | {"al", "etc"}


def _strip_full_stop(body: str) -> str:
    """``…, Dan Wu.``, ``…, Xiaoyi MAI.`` and ``张伟，李娜。``: a full stop ending the line, not one ending an
    initial (``Lee A.``, ``J.-P.``) or a suffix nameparser knows (``Jr.``)."""
    if body.endswith("。"):
        return body[:-1].rstrip()
    if not body.endswith("."):
        return body
    last = body[:-1].rsplit(None, 1)[-1] if body[:-1].strip() else ""
    if not last or is_initials(last + ".") or "." in last or last.lower() in _NAME_SUFFIXES:
        return body
    return body[:-1].rstrip()


def _family_first(body: str) -> list[str] | None:
    """The names of a line written ``Family, Given`` (the comma inside a name), or ``None``.

    Three unambiguous layouts: semicolons between names (``Lee, Ann; Chen, Bo``), BibTeX's ``and``
    (``Lee, Ann and Chen, Bo``) and initials alone between commas (``Lee, A., Chen, B.``: no person is
    called ``A.``). The family part must be one name word (particles aside) or the given part initials,
    so ``Ann Lee, Bo Chen; Cy Diaz`` (two groups) stays a list of names."""
    chunks = [c for c in _split_top_level(body, ";；") if c.strip()]
    if len(chunks) < 2:
        chunks = [c for c in _AND.split(body) if c.strip()]
    if len(chunks) >= 2:
        pairs = [_split_top_level(chunk, ",，") for chunk in chunks]
    else:
        parts = _split_top_level(body, ",，")
        if len(parts) % 2 or not all(is_initials(given) for given in parts[1::2]):
            return None
        pairs = [parts[i : i + 2] for i in range(0, len(parts), 2)]
    for pair in pairs:
        if len(pair) != 2 or not pair[0].strip() or not pair[1].strip() or is_initials(pair[0]):
            return None
        if name_words(pair[0]) != 1 and not is_initials(pair[1]):
            return None
    return [f"{tidy(family)}, {tidy(given)}" for family, given in pairs]


def _kept_whole(
    kind: str, text: str, line: int, key_names: tuple[str, ...], truncated: bool, repairs: list[Repair]
) -> AuthorLine:
    """A line read as no list of persons (warning ``kind``): kept verbatim, no names. The report shows
    the start of a line of too many names (the whole line could be a megabyte)."""
    shown = tidy(text) if kind != TOO_MANY else f"{tidy(text)[:80]}… ({len(key_names):,} names)"
    warning = Repair(kind, line, shown, shown)
    return AuthorLine((), truncated, True, key_names, tuple(repairs), (warning,))


def _plain(text: str, line: int, key_names: tuple[str, ...]) -> AuthorLine:
    """A line no cleaning step acts on: its comma parts are the names."""
    names = [Name(part, part) for part in key_names]
    if any(_too_long(part) for part in key_names):
        return _kept_whole(UNSPLIT, text, line, key_names, False, [])
    return AuthorLine(tuple(names), False, False, key_names, (), tuple(_repeated(names, line)))


def _repeated(names: list[Name], line: int) -> list[Repair]:
    # Cased ASCII names (most) agree under normalise() exactly when they agree case-folded: cheaper.
    if len({name.name.casefold() for name in names}) == len(names) and all(name.name.isascii() for name in names):
        return []
    keys = [normalise(name.name) for name in names]
    seen: set[str] = set()
    found = []
    for key, name in zip(keys, names, strict=True):
        if key in seen:
            found.append(Repair(REPEATED, line, name.written, name.name))
        seen.add(key)
    return found


def _split_and(part: str, repair: Callable[[str, str, str], None], first: bool) -> list[str]:
    """``B. Jones and C. Wu`` is two names, ``and C. Wu`` after a comma (Oxford comma) one; a line's
    first name has no comma before it, so a leading ``And`` there is part of the name."""
    if _HAN.search(part) and not re.search(r"[A-Za-z]", part):
        return [part]
    pieces = [tidy(p) for p in _AND.split(part if first else _LEADING_AND.sub("", part)) if p.strip()]
    if pieces != [part]:
        repair(AND, part, ", ".join(pieces))
    return pieces


def _clean(written: str, repair: Callable[[str, str, str], None]) -> list[Name]:
    """One name through the steps in order: ORCID iD, notes, marks and markers, LaTeX, typography."""
    text = written
    if (stripped := _strip_orcid(text)) != text:
        repair(ORCID, text, stripped)
        text = stripped
    if (stripped := _strip_notes(text)) != text:
        repair(NOTES, text, stripped)
        text = stripped
    unmarked, marks, affiliation = _strip_markers(text)
    if marks:
        repair(MARK, written, unmarked)
    if affiliation:
        repair(AFFILIATION, written, unmarked)
    text = unmarked
    if (decoded := _decode_latex(text)) != text:
        repair(LATEX, text, decoded)
        text = decoded
    if (plain := text.translate(_TYPOGRAPHIC)) != text:  # after LaTeX: "\`e" is a grave accent, no apostrophe
        repair(TYPOGRAPHY, text, plain)
        text = plain
    text = tidy(text)
    return [Name(text, written, marks)] if text else []
