"""Normalisation of names and labels, and the IRI-safe slugs minted from them.

One person per normalised name is the data model's identity rule, so this module is the
single place that decides when two spellings are the same. It imports no name parser (telling
given from family names is :mod:`~bibgraph.graph.ingest.nameparts`'): a server makes keys and
normalises an autocomplete's query with it, and nameparser takes 0.3 s to load.
"""

import hashlib
import re
import unicodedata
from functools import lru_cache

_NOT_SLUG = re.compile(r"[^a-z0-9]+")


def normalise(text: str) -> str:
    """Unicode NFKC, case-folded, whitespace collapsed: ``YI REN`` and ``Yi  Ren`` agree."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def tidy(text: str) -> str:
    """The text as written, whitespace collapsed: what we store and show (no other normalisation).

    ``str.split`` splits at exactly the characters ``\\s`` matches (every code point checked), and
    is several times faster than a regular expression on an abstract."""
    return " ".join(text.split())


def short_hash(text: str, length: int = 8) -> str:
    """A stable hexadecimal digest; stable across runs and Python versions (unlike ``hash``)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:length]


def ascii_slug(text: str) -> str:
    """Lower-case ASCII words joined by ``-``; empty for scripts without a Latin reading."""
    decomposed = unicodedata.normalize("NFKD", normalise(text))
    ascii_text = decomposed.encode("ascii", "ignore").decode("ascii")
    return _NOT_SLUG.sub("-", ascii_text).strip("-")


@lru_cache(maxsize=1 << 16)  # a build asks for each author's key once per paper; authors recur
def person_key(name: str) -> str:
    """The IRI segment of a person: a readable slug plus a digest of the normalised name.

    The digest keeps ``Devriş İşler`` and ``Devris Isler`` apart (their slugs agree) and gives
    CJK names, whose slug is empty, an identifier too.
    """
    key = normalise(name)
    slug = ascii_slug(name)
    return f"{slug}-{short_hash(key)}" if slug else short_hash(key)


@lru_cache(maxsize=1 << 12)  # asked twice per record (area, subarea): a dataset has tens of concepts
def concept_key(label: str) -> str:
    """The IRI segment of an area or subarea; labels differing only in case or punctuation agree."""
    return ascii_slug(label) or short_hash(normalise(label))
