"""The search as it was before the SQLite FTS5 index: a pure-Python inverted index, kept as the
reference the index is tested against (tests/site/test_search.py), with the BM25 idf as a parameter.

Its words are :func:`bibgraph.graph.site.search.words`; its ranking is the one the module documents."""

import bisect
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable

from bibgraph.graph.site.search import SCORE_DIGITS, Hit, query_terms, words

KIND_ORDER = {"author": 0, "area": 1, "paper": 2}
BM25_K1, BM25_B = 1.2, 0.75


def rank_score(score: float) -> float:
    """``score`` to :data:`~bibgraph.graph.site.search.SCORE_DIGITS` significant digits, as the index ranks by it."""
    return float(f"{score:.{SCORE_DIGITS - 1}e}")


def lucene_idf(total: int, n: int) -> float:
    """The idf of the former index (Lucene's): never negative."""
    return math.log(1 + (total - n + 0.5) / (n + 0.5))


def fts5_idf(total: int, n: int) -> float:
    """The idf of FTS5's ``bm25()`` (fts5_aux.c): 1e-6 for a word in more than half the items."""
    idf = math.log((total - n + 0.5) / (n + 0.5))
    return idf if idf > 0 else 1e-6


def author_facts(rows: Iterable[tuple[str, str | None, int]]) -> dict[str, tuple[int, list[str]]]:
    """Every author's paper count and areas (most papers first), as the former ``pages.author_facts``."""
    per_area: dict[str, Counter[str]] = {}
    totals: Counter[str] = Counter()
    for author, label, papers in rows:
        totals[author] += papers
        if label is not None:
            per_area.setdefault(author, Counter())[label] += papers
    return {
        author: (total, [label for label, _ in sorted(per_area.get(author, {}).items(), key=lambda i: (-i[1], i[0]))])
        for author, total in totals.items()
    }


class OracleIndex:
    def __init__(
        self,
        documents: list[tuple[str, str, str, str]],
        authors: dict[str, tuple[int, list[str]]],
        idf: Callable[[int, int], float] = fts5_idf,
    ) -> None:
        self._documents: dict[str, tuple[str, str]] = {}
        self._names: dict[str, set[str]] = defaultdict(set)
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
        self._authors = authors
        self._mean_length = sum(self._lengths.values()) / max(1, len(self._lengths))
        self._idf = idf
        self.scores: dict[str, float] = {}

    def _prefixed(self, prefix: str) -> dict[str, int]:
        matches: dict[str, int] = {}
        start = bisect.bisect_left(self._vocabulary, prefix)
        for word in self._vocabulary[start:]:
            if not word.startswith(prefix):
                break
            for iri, count in self._postings[word].items():
                matches[iri] = matches.get(iri, 0) + count
        return matches

    def search(self, query: str) -> list[Hit]:
        """The hits in the oracle's order; their BM25 scores are left in :attr:`scores`."""
        spelling = words(query)
        terms = query_terms(spelling)
        if not terms:
            return []
        per_term = [self._prefixed(term) for term in terms]
        found = set(per_term[0])
        for matches in per_term[1:]:
            found &= set(matches)
        total = len(self._lengths)
        self.scores = {}
        for iri in found:
            score = 0.0
            for matches in per_term:
                tf = matches[iri]
                norm = BM25_K1 * (1 - BM25_B + BM25_B * self._lengths[iri] / self._mean_length)
                score += self._idf(total, len(matches)) * tf * (BM25_K1 + 1) / (tf + norm)
            self.scores[iri] = score
        wanted = " ".join(spelling)
        hits = []
        for iri in found:
            kind, title = self._documents[iri]
            papers, areas = self._authors.get(iri, (None, []))
            names = self._names.get(iri, set())
            exact = wanted in names
            whole = any(set(terms) <= set(name.split()) for name in names)
            tier = 0 if exact else 1 if whole else 2
            hits.append(Hit(iri, kind, title, papers, tuple(areas), exact, tier))
        return sorted(hits, key=lambda h: self.key(h))

    def key(self, hit: Hit) -> tuple:
        return (
            KIND_ORDER[hit.kind],
            hit.tier,
            -(hit.papers or 0),
            -rank_score(self.scores[hit.iri]),
            hit.title.casefold(),
            hit.iri,
        )
