"""Name keys for identity: the folded form, the block a name falls in, and which forms may be one person.

Folding drops what writers vary without meaning another person: diacritics (``Schölkopf``), case,
hyphens and full stops (``Jean-Michel``, ``Y.``). A block is (family name, first initial), so
``Y. Bengio`` and ``Yoshua Bengio`` meet and nothing is compared across the whole dataset. Whether two
forms of one block may name one person is :func:`compatible` (given names that agree word by word,
an initial standing for a word, a middle name present in one form only); it is never enough alone:
joining needs evidence (:mod:`bibgraph.graph.identity.cluster`).
"""

import re
import unicodedata
from functools import lru_cache

from bibgraph.graph.ingest.nameparts import name_parts
from bibgraph.graph.ingest.names import normalise

_SEPARATORS = re.compile(r"[\s.\-\u2010-\u2015_'\u2019]+")  # spaces, full stops, hyphens and dashes, apostrophes


@lru_cache(maxsize=1 << 16)
def fold(name: str) -> str:
    """Lower case, no diacritics, hyphens and full stops as spaces.

    ``Jean-Michel Schölkopf`` → ``jean michel scholkopf``."""
    decomposed = unicodedata.normalize("NFKD", normalise(name))
    bare = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(_SEPARATORS.sub(" ", bare).split())


_PARTICLES = frozenset("de del della der di da das dos du la le van von den ten ter zu".split())


@lru_cache(maxsize=1 << 16)
def split_name(name: str) -> tuple[tuple[str, ...], str]:
    """Folded given-name words and folded family name.

    The last word (with the particles before it: ``van der Berg``) is the family name, unless the form
    says otherwise in a way :func:`~bibgraph.graph.ingest.nameparts.name_parts` reads: Han characters, a word in
    capitals (``MAI Xiaoyi``), family name then initials (``Smith J``). Asking nameparser for every name
    cost half the identity step, and for ``Given Middle Family`` it agrees with the last-word rule."""
    words = name.split()
    unusual = len(words) < 2 or any(ord(c) >= 0x2E80 for c in name) or any(w.isupper() and len(w) > 1 for w in words)
    if unusual or (len(words[-1].rstrip(".")) == 1 and words[-1][:1].isupper()):
        parts = name_parts(name)
        if parts is not None:
            return tuple(fold(parts[0]).split()), fold(parts[1]).replace(" ", "")
    folded = fold(name).split()
    cut = len(folded) - 1
    while cut > 1 and folded[cut - 1] in _PARTICLES:
        cut -= 1
    return tuple(folded[:cut]), "".join(folded[cut:])


@lru_cache(maxsize=1 << 16)
def block_key(name: str) -> str:
    """Family name and first initial: where variants of one person can meet (``bengio y``)."""
    return block_of(split_name(name))


def block_of(parts: tuple[tuple[str, ...], str]) -> str:
    """:func:`block_key` of a name already split (:func:`split_name`)."""
    given, family = parts
    return f"{family} {given[0][:1]}" if given else family


def _given_agree(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Word by word, a word equal to the other or its initial; a middle word may be missing in one form;
    ``jeanmichel`` and ``jean michel`` agree too (spaces inside a given name vary)."""
    if "".join(a) == "".join(b):
        return True
    if not a or not b:
        return False
    short, long = (a, b) if len(a) <= len(b) else (b, a)
    if not _word_agrees(short[0], long[0]):
        return False
    if len(short) < len(long) and short[0] != long[0]:
        return False  # a missing middle name only beside the same first name: ``Y. K. Li`` is not ``Yifei Li``
    rest = list(long[1:])
    for word in short[1:]:  # the remaining words of the shorter form, in order, each matched once
        while rest and not _word_agrees(word, rest[0]):
            rest.pop(0)
        if not rest:
            return False
        rest.pop(0)
    return True


def _word_agrees(a: str, b: str) -> bool:
    if a == b:
        return True
    if len(a) == 1 or len(b) == 1:
        return a[0] == b[0]
    return False


@lru_cache(maxsize=1 << 18)
def compatible(a: str, b: str) -> bool:
    """Whether written names ``a`` and ``b`` may name one person (same block, given names that agree)."""
    return parts_compatible(split_name(a), split_name(b))


def parts_compatible(a: tuple[tuple[str, ...], str], b: tuple[tuple[str, ...], str]) -> bool:
    """:func:`compatible` of names already split (:func:`split_name`)."""
    return a[1] == b[1] and _given_agree(a[0], b[0])
