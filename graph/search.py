"""Search over author names, area labels and abstract words: case- and accent-insensitive, by word prefix.

A small inverted index (sorted vocabulary + bisect for prefixes), built from SPARQL rows, so it
agrees with the store; pure Python, no Flask. Ranking, as dblp does for people: authors whose name
is the query first, then those with every query word as a whole word of their name (a family
name), each group by papers; then areas; then papers by relevance (BM25 over the
abstract, each query word counting its prefix matches).
"""

import bisect
import math
import re
import unicodedata
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from markupsafe import Markup, escape

from .plaintext import plain_text

_WORD = re.compile(r"\w+")
KIND_ORDER = {"author": 0, "area": 1, "paper": 2}
BM25_K1, BM25_B = 1.2, 0.75


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
    kind: str  # "author", "area" or "paper"
    title: str  # what to show: the name, the area label, or the paper's label
    papers: int | None = None  # authors: how many papers
    areas: tuple[str, ...] = field(default=())  # authors: their areas
    exact: bool = False  # authors: a spelling of the name is the query
    tier: int = 2  # authors: 0 the name is the query, 1 every query word is a whole word of the name, 2 prefixes


class SearchIndex:
    def __init__(
        self,
        documents: list[tuple[str, str, str, str]],
        authors: dict[str, tuple[int, list[str]]] | None = None,
    ) -> None:
        """``documents``: (IRI, kind, searchable text, title) rows; an IRI may come with several texts.
        ``authors``: paper count and areas per author IRI."""
        self._documents: dict[str, tuple[str, str]] = {}
        self._names: dict[str, set[str]] = defaultdict(set)  # author IRI -> folded spellings
        self._lengths: dict[str, int] = {}
        postings: dict[str, dict[str, int]] = defaultdict(dict)
        for iri, kind, text, title in documents:
            self._documents.setdefault(iri, (kind, title))
            if kind == "author":
                self._names[iri].add(" ".join(words(text)))
            found = words(text)
            self._lengths[iri] = self._lengths.get(iri, 0) + len(found)
            for word, count in Counter(found).items():
                postings[word][iri] = postings[word].get(iri, 0) + count
        self._vocabulary = sorted(postings)
        self._postings = postings
        self._authors = authors or {}
        self._mean_length = sum(self._lengths.values()) / max(1, len(self._lengths))

    def _prefixed(self, prefix: str) -> dict[str, int]:
        """Items with a word starting with ``prefix``, and how many such words each has."""
        matches: dict[str, int] = {}
        start = bisect.bisect_left(self._vocabulary, prefix)
        for word in self._vocabulary[start:]:
            if not word.startswith(prefix):
                break
            for iri, count in self._postings[word].items():
                matches[iri] = matches.get(iri, 0) + count
        return matches

    def search(self, query: str) -> list[Hit]:
        """Items with a word starting with every query word, ranked (see the module's docstring)."""
        terms = words(query)
        if not terms:
            return []
        per_term = [self._prefixed(term) for term in terms]
        found = set(per_term[0])
        for matches in per_term[1:]:
            found &= set(matches)
        total = len(self._lengths)
        scores: dict[str, float] = {}
        for iri in found:
            score = 0.0
            for matches in per_term:
                idf = math.log(1 + (total - len(matches) + 0.5) / (len(matches) + 0.5))
                tf = matches[iri]
                norm = BM25_K1 * (1 - BM25_B + BM25_B * self._lengths[iri] / self._mean_length)
                score += idf * tf * (BM25_K1 + 1) / (tf + norm)
            scores[iri] = score
        wanted = " ".join(terms)
        hits = []
        for iri in found:
            kind, title = self._documents[iri]
            papers, areas = self._authors.get(iri, (None, []))
            names = self._names.get(iri, set())
            exact = wanted in names
            whole = any(set(terms) <= set(name.split()) for name in names)
            tier = 0 if exact else 1 if whole else 2
            hits.append(Hit(iri, kind, title, papers, tuple(areas), exact, tier))
        return sorted(
            hits,
            key=lambda h: (KIND_ORDER.get(h.kind, 3), h.tier, -(h.papers or 0), -scores[h.iri], h.title.casefold()),
        )


def snippet(text: str, query: str, width: int = 220) -> Markup:
    """A window of ``text`` (as plain text) around the first query word, each matching word in ``<mark>``."""
    plain = plain_text(text)
    terms = words(query)
    spans = [(m.start(), m.end()) for m in _WORD.finditer(plain) if _matches(fold(m.group()), terms)]
    start = 0
    if spans and spans[0][0] > width // 3:
        start = plain.rfind(" ", 0, spans[0][0] - width // 3) + 1
    end = min(len(plain), start + width)
    if end < len(plain):
        end = max(plain.rfind(" ", start, end), spans[0][1] if spans else start + 1)
    html, cursor = [], start
    for a, b in spans:
        if a < start or b > end:
            continue
        html.append(str(escape(plain[cursor:a])) + f"<mark>{escape(plain[a:b])}</mark>")
        cursor = b
    html.append(str(escape(plain[cursor:end])))
    return Markup(("… " if start else "") + "".join(html) + (" …" if end < len(plain) else ""))


def _matches(word: str, terms: list[str]) -> bool:
    """A word of the text matches a query word by its beginning, or (CJK) by any of its characters."""
    return any(
        word.startswith(t) or (len(t) == 1 and unicodedata.east_asian_width(t) == "W" and t in word) for t in terms
    )
