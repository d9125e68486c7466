"""Given and family names told apart (``name_parts``), and initials recognised, in the habits of the lists read.

Apart from :mod:`~bibgraph.graph.ingest.names` because it loads ``nameparser`` (0.3 s): a build and an add need
it, a server does not.
"""

import re
from typing import cast

from nameparser import HumanName
from nameparser.config import CONSTANTS

_NAMEPARSER_WORDS = frozenset(
    {*CONSTANTS.titles, *CONSTANTS.suffix_acronyms, *CONSTANTS.suffix_not_acronyms, *CONSTANTS.prefixes}
    | {*CONSTANTS.conjunctions}
)
# nameparser's own rule for a suffix like "VI" (its config object is typed loosely, hence the cast)
_ROMAN_NUMERAL = cast(re.Pattern[str], CONSTANTS.regexes.roman_numeral)
_COMPOUND_SURNAMES = frozenset(
    "欧阳 司马 上官 诸葛 东方 皇甫 尉迟 公孙 慕容 令狐 长孙 宇文 司徒 夏侯 轩辕 端木 独孤 南宫 西门 百里 "
    "歐陽 司徒 諸葛 東方 長孫 夏侯 軒轅 獨孤".split()
)
_PARTICLES = frozenset("de del della der di da das dos du la le van von den ten ter zu".split())
_HAN_NAME = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]{2,4}")
_NOT_A_PERSON = re.compile(
    r"\b(?:collaboration|consortium|team|group|project|initiative|society|laboratory|lab|committee|network)\b|^the\s",
    re.IGNORECASE,
)


_INITIALS = re.compile(r"[A-Z]\.?(?:[\s-]*[A-Z]\.?)*")
_TWO_LETTERS = re.compile(r"[^\W\d_]{2}")


def is_initials(text: str) -> bool:
    """``A.``, ``J.-P.``, ``J.A.``, ``A B``, ``J``: capitals standing alone; not ``AB`` (``LI`` may be a family
    name in capitals) nor ``AHMED KIM`` (a name in capitals)."""
    return bool(_INITIALS.fullmatch(text.strip())) and not _TWO_LETTERS.search(text)


def _family_then_initials(words: list[str]) -> tuple[str, str] | None:
    """``Smith J``, ``Lee A. B.`` (Vancouver, PubMed): family name first, the given name as initials after it."""
    for cut in range(len(words) - 1, 0, -1):
        if is_initials(" ".join(words[cut:])) and not is_initials(words[cut - 1]):
            family = words[:cut]
            capitalised = [word for word in family if word.lower() not in _PARTICLES]
            if len(capitalised) == 1 and capitalised[0][0].isupper():  # "Lee Ann B." is no family name then initials
                return " ".join(words[cut:]), " ".join(family)
            return None
    return None


def name_parts(name: str) -> tuple[str, str] | None:
    """``(given, family)`` when they can be told apart, else ``None`` (better no answer than a wrong one).

    Han-character names put the family name first: one character (two for the compound surnames
    listed), the rest given; an unspaced four-character name that starts with no compound surname
    could be Japanese (2 + 2) or Chinese (1 + 3), so it gets no split. Western names go through
    ``nameparser`` (given = first and middle names); names with particles inside (``María de los
    Ángeles García de la Torre``: where does the family name start?), single words and groups
    (``The ATLAS Collaboration``) get no split. A word in capitals among others (``MAI Xiaoyi``,
    ``Xiaoyi MAI``) is the family name, as that habit intends.
    """
    if _HAN_NAME.fullmatch(name):
        surname = 2 if name[:2] in _COMPOUND_SURNAMES else 1
        if len(name) - surname not in (1, 2):
            return None
        return name[surname:], name[:surname]
    words = name.split()
    if all(word[0].islower() for word in words):  # no capitalised given name can come out: spare nameparser
        return None
    if len(words) < 2 or _NOT_A_PERSON.search(name) or any(ord(c) >= 0x3000 for c in name):
        return None
    if vancouver := _family_then_initials(words):
        return vancouver
    capitals = [i for i, w in enumerate(words) if len(w) > 1 and w.isupper() and w.isalpha()]
    if len(capitals) == 1 and len(words) > len(capitals) and len(words) == 2:
        family = words[capitals[0]]
        return words[1 - capitals[0]], family
    given, family = _two_words(words) or western_parts(name)
    if not given or not family or any(w[0].islower() for w in given.split()):
        return None
    return given, family


def western_parts(name: str) -> tuple[str, str]:
    """Given (first and middle) and family name as nameparser reads them."""
    parsed = HumanName(name)
    return " ".join(part for part in (parsed.first, parsed.middle) if part), parsed.last


def _two_words(words: list[str]) -> tuple[str, str] | None:
    """``Given Family`` without asking nameparser (a third of a millisecond a name), when it would agree:
    two words, neither a title, suffix, particle or conjunction it knows, no nickname brackets or quotes."""
    if len(words) != 2 or any(c in '()"“”,[]' for w in words for c in w):
        return None
    for word in words:
        key = word.lower().rstrip(".")
        letters = word.replace("-", "").replace("'", "")
        if key in _NAMEPARSER_WORDS or len(word) < 2 or not word[0].isupper() or not letters.isalpha():
            return None
        if _ROMAN_NUMERAL.match(word):  # nameparser reads "VI", "IX" as suffixes, not family names
            return None
    return words[0], words[1]
