"""Search over author names and abstract words: case- and accent-insensitive, by word prefix.

A small inverted index (sorted vocabulary + bisect for prefixes), built from SPARQL rows, so it
agrees with the store; pure Python, no Flask.
"""

import bisect
import re
import unicodedata
from collections import defaultdict
from dataclasses import dataclass

_WORD = re.compile(r"\w+")


def fold(text: str) -> str:
    """Lower-case, without accents: ``Oğuz Yüksel`` → ``oguz yuksel``; CJK is kept."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def words(text: str) -> list[str]:
    folded = fold(text)
    found = _WORD.findall(folded)
    # CJK has no spaces: index every character of a CJK run too, so "欣" finds "周欣".
    found += [c for token in found for c in token if unicodedata.east_asian_width(c) == "W"]
    return found


@dataclass(frozen=True)
class Hit:
    iri: str
    kind: str  # "author" or "paper"
    title: str  # what to show: the name, or the paper's label


class SearchIndex:
    def __init__(self, documents: list[tuple[str, str, str, str]]) -> None:
        """``documents``: (IRI, kind, searchable text, title) rows; an IRI may come with several texts."""
        self._documents: dict[str, tuple[str, str]] = {}
        postings: dict[str, set[str]] = defaultdict(set)
        for iri, kind, text, title in documents:
            self._documents.setdefault(iri, (kind, title))
            for word in words(text):
                postings[word].add(iri)
        self._vocabulary = sorted(postings)
        self._postings = postings

    def _prefixed(self, prefix: str) -> set[str]:
        matches: set[str] = set()
        start = bisect.bisect_left(self._vocabulary, prefix)
        for word in self._vocabulary[start:]:
            if not word.startswith(prefix):
                break
            matches |= self._postings[word]
        return matches

    def search(self, query: str) -> list[Hit]:
        """Items with a word starting with every query word; authors first, then by text."""
        terms = words(query)
        if not terms:
            return []
        found = self._prefixed(terms[0])
        for term in terms[1:]:
            found &= self._prefixed(term)
        hits = [Hit(iri, *self._documents[iri]) for iri in found]
        return sorted(hits, key=lambda h: (h.kind != "author", fold(h.title)))
