"""Normalisation of names and labels, and the IRI-safe slugs minted from them.

One person per normalised name is the data model's identity rule, so this module is the
single place that decides when two spellings are the same.
"""

import hashlib
import re
import unicodedata

_WHITESPACE = re.compile(r"\s+")
_NOT_SLUG = re.compile(r"[^a-z0-9]+")


def normalise(text: str) -> str:
    """Unicode NFKC, case-folded, whitespace collapsed: ``YI REN`` and ``Yi  Ren`` agree."""
    return _WHITESPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def tidy(text: str) -> str:
    """The text as written, whitespace collapsed: what we store and show (no other normalisation)."""
    return _WHITESPACE.sub(" ", text).strip()


def short_hash(text: str, length: int = 8) -> str:
    """A stable hexadecimal digest; stable across runs and Python versions (unlike ``hash``)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:length]


def ascii_slug(text: str) -> str:
    """Lower-case ASCII words joined by ``-``; empty for scripts without a Latin reading."""
    decomposed = unicodedata.normalize("NFKD", normalise(text))
    ascii_text = decomposed.encode("ascii", "ignore").decode("ascii")
    return _NOT_SLUG.sub("-", ascii_text).strip("-")


def person_key(name: str) -> str:
    """The IRI segment of a person: a readable slug plus a digest of the normalised name.

    The digest keeps ``Devriş İşler`` and ``Devris Isler`` apart (their slugs agree) and gives
    CJK names, whose slug is empty, an identifier too.
    """
    key = normalise(name)
    slug = ascii_slug(name)
    return f"{slug}-{short_hash(key)}" if slug else short_hash(key)


def concept_key(label: str) -> str:
    """The IRI segment of an area or subarea; labels differing only in case or punctuation agree."""
    return ascii_slug(label) or short_hash(normalise(label))
