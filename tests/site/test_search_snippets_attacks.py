"""Red team: a search result's snippet costs the words the query is matched with, not every word it repeats.

``/search`` keeps 200 characters of ``q`` and matches the first :data:`~bibgraph.graph.site.search.MAX_QUERY_WORDS`
distinct words (see test_redteam_search), but each of the 20 snippets of a page compared every word of its
abstract with every word of the query: ``q=a a a …`` (100 words) made a page of snippets cost about twelve times
``q=a`` (0.084 s against 0.007 s for 20 abstracts of 1,700 characters), and marked words the search had not
matched (an eleventh distinct word).
"""

import re

from hypothesis import given
from hypothesis import strategies as st

from bibgraph.graph.site import search
from bibgraph.graph.site.search import MAX_QUERY_WORDS, fold, query_terms, snippet, words

VOCABULARY = ["a", "ab", "abc", "b", "learning", "learn", "Éclair", "eclairs", "周欣", "欣", "x1", "deep"]
CJK = {"周", "欣"}
MARK = re.compile(r"<mark>(.*?)</mark>")


@given(
    st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=40),
    st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=30),
    st.integers(1, 8),
)
def test_a_snippet_marks_the_words_the_query_is_matched_with(text: list[str], query: list[str], times: int) -> None:
    sent = " ".join(query * times)
    compared: list[int] = []
    original = search._matches

    def counted(word: str, terms: list[str]) -> bool:
        compared.append(len(terms))
        return original(word, terms)

    search._matches = counted
    try:
        shown = snippet(" ".join(text), sent, width=10_000)
    finally:
        search._matches = original
    assert max(compared) <= MAX_QUERY_WORDS
    matched = query_terms(words(sent))
    # a word is marked when it starts with a matched word or (CJK) holds a matched character
    expected = [w for w in text if any(fold(w).startswith(t) or (t in CJK and t in w) for t in matched)]
    assert MARK.findall(str(shown)) == expected
