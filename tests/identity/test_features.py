"""Identity's abstract evidence: rows made on demand equal scikit-learn's TF-IDF of every record, to the bit."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import sparse
from sklearn.feature_extraction.text import HashingVectorizer, TfidfTransformer

from bibgraph.graph.identity import features
from bibgraph.graph.identity.features import _VECTORISER, Collected, Places
from bibgraph.graph.ingest.names import normalise

WORDS = ["graph", "neural", "protein", "the", "of", "a", "Transformer", "数据", "étude", "x1", "mesh", "rdf"]
abstracts = st.lists(st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join), min_size=1, max_size=14)


# scikit-learn's own words: its default analyzer, every occurrence hashed
SKLEARN = HashingVectorizer(
    n_features=features.HASH_FEATURES, alternate_sign=False, norm=None, binary=True, dtype=np.float32
)


def _reference(texts: list[str]) -> sparse.csr_matrix:
    """What the build computed before: one binary count matrix of every record, fitted and transformed whole."""
    counts = sparse.vstack([SKLEARN.transform([text]).tocsr() for text in texts], format="csr")
    # its column order as stored varies with scipy's version (the rows made here are sorted): compared sorted
    return TfidfTransformer(sublinear_tf=True).fit_transform(counts).tocsr().sorted_indices()


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=60),
            st.lists(st.sampled_from([*WORDS, "GRAPH", "İstanbul", "STRASSE", "Straße", "ǅemal"]), max_size=9).map(
                " ".join
            ),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_the_words_hashed_once_give_scikit_learns_binary_counts(texts: list[str]) -> None:
    """Any text (capitals whose lower case is longer, digits, marks, CJK, punctuation): the same matrix, bit for bit,
    as scikit-learn's default analyzer gives."""
    ours, theirs = _VECTORISER.transform(texts).tocsr(), SKLEARN.transform(texts).tocsr()
    assert np.array_equal(ours.indptr, theirs.indptr) and np.array_equal(ours.indices, theirs.indices)
    assert ours.data.dtype == theirs.data.dtype and np.array_equal(ours.data, theirs.data)


@settings(max_examples=40, deadline=None)
@given(texts=abstracts, batch=st.integers(1, 5), data=st.data())
def test_rows_equal_the_whole_matrix_transformed(texts: list[str], batch: int, data: st.DataObject) -> None:
    old = features._BATCH
    features._BATCH = batch  # several batches, as a large build has
    try:
        collected = Collected()
        for number, text in enumerate(texts):
            collected.add(("A B",), "", "", text, f"{number:016x}", ("f", number))
        terms = collected.term_matrix(list(range(len(texts))))
    finally:
        features._BATCH = old
    expected = _reference(texts)
    assert len(terms) == len(texts)
    for row in range(len(texts)):
        got = terms[row]
        assert got.shape == (1, features.HASH_FEATURES)
        want = expected[row]
        assert np.array_equal(got.indices, want.indices) and np.array_equal(got.indptr, want.indptr)
        assert got.data.dtype == want.data.dtype and np.array_equal(got.data, want.data)
    picked = data.draw(st.lists(st.integers(0, len(texts) - 1), min_size=1, max_size=5))
    assert (terms[picked] != expected[picked]).nnz == 0
    assert np.array_equal(np.asarray(terms[picked].mean(axis=0)), np.asarray(expected[picked].mean(axis=0)))


def test_a_subset_of_rows_is_numbered_from_zero() -> None:
    collected = Collected()
    for number, text in enumerate(["graph neural", "protein mesh", "graph rdf"]):
        collected.add(("A B",), "", "", text, f"{number:016x}", ("f", number))
    terms = collected.term_matrix([2, 0])
    whole = _reference(["graph neural", "protein mesh", "graph rdf"])
    assert (terms[0] != whole[2]).nnz == 0 and (terms[1] != whole[0]).nnz == 0


def test_names_are_held_once() -> None:
    collected = Collected()
    collected.add(("Ann Lee", "Bo Wu"), "AI", "ML", "x", "0" * 16, ("f", 1))
    collected.add(("Ann Lee",), "AI", "ML", "y", "1" * 16, ("f", 2))
    assert collected.names[0][0] is collected.names[1][0]
    assert collected.written[0][0] is collected.written[1][0]
    assert collected.concepts[0][0] is collected.concepts[1][0]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a.txt", "b.txt", "c/d.txt"]), st.integers(1, 30)), unique=True))
def test_places_answer_as_a_dict_of_every_record_would(places: list[tuple[str, int]]) -> None:
    """Files read in turn, or interleaved, lines rising or not: each (file, line) gives its record, others none."""
    kept = Places()
    for record, where in enumerate(places):
        kept.add(where, record)
    expected = {where: record for record, where in enumerate(places)}
    assert dict(kept) == expected and len(kept) == len(expected)
    for source in ("a.txt", "b.txt", "c/d.txt", "e.txt"):
        for line in range(0, 32):
            assert kept.get((source, line)) == expected.get((source, line))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["ann", "bo", "cy", "di", "ed", "李"]), max_size=5).map(tuple), max_size=12))
def test_coauthors_found_when_asked_equal_a_set_per_name(rows: list[tuple[str, ...]]) -> None:
    """Names repeated on a paper, papers of no author, names never met: each name's co-authors as the sets gave."""
    expected: dict[str, set[str]] = {}
    for names in rows:
        for name in names:
            expected.setdefault(name, set()).update(other for other in names if other != name)
    collected = Collected()
    for number, names in enumerate(rows):
        collected.add(names, "", "", "x", f"{number:016x}", ("f", number))
    assert list(collected.names) == rows and [collected.names[i] for i in range(-len(rows), len(rows))] == rows * 2
    found = collected.coauthors()
    assert set(found) == set(expected) and len(found) == len(expected)
    for name in ["ann", "bo", "cy", "di", "ed", "李", "zed"]:
        assert found.get(name, set()) == expected.get(name, set())
        assert found.get(name, set()) == expected.get(name, set())  # kept: the same answer again


NAMES = ["Ann Lee", "ANN  lee", "Bo Wu", "李 娜", "\uff2a\uff49\uff45 Zhou", "jie zhou", "Ed", ""]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(st.sampled_from(NAMES), max_size=5).map(tuple),
            st.sampled_from(["", "AI", "ai ", "Biology"]),
            st.sampled_from(["", "ML", "Genomics"]),
        ),
        max_size=10,
    ),
    st.integers(-12, 11),
)
def test_rows_held_as_ids_read_as_the_tuples_they_replaced(
    records: list[tuple[tuple[str, ...], str, str]], index: int
) -> None:
    """Names, written forms and concepts held as ids into string tables read back as the tuples a list of tuples
    held (the normalised forms of what was added), by index (negative too), slice and iteration; the co-author
    index is numbered as the names were first met; released, only the paper ids stay."""
    collected = Collected()
    for number, (authors, area, subarea) in enumerate(records):
        assert collected.add(authors, area, subarea, "x", f"{number:016x}", ("f", number)) == number
    names = [tuple(normalise(name) for name in authors) for authors, _, _ in records]
    written = [authors for authors, _, _ in records]
    concepts = [(normalise(area), normalise(subarea)) for _, area, subarea in records]
    assert list(collected.names) == names and list(collected.written) == written
    assert list(collected.concepts) == concepts and len(collected.concepts) == len(records)
    for rows, want_rows in ((collected.names, names), (collected.written, written)):  # entries: rows end to end
        assert [rows.entry(number) for number in range(len(rows.flat))] == [s for row in want_rows for s in row]
    for got, want in ((collected.names, names), (collected.written, written), (collected.concepts, concepts)):
        assert got[1:4] == want[1:4] and len(got) == len(want)
        if -len(want) <= index < len(want):
            assert got[index] == want[index]
        else:
            with pytest.raises(IndexError):
                got[index]
    first_met = list(dict.fromkeys(name for row in names for name in row))
    assert collected.coauthors().strings == first_met
    collected.close()
    collected.add(authors := ("Bo Wu", "Zed"), "", "", "x", "late", ("g", 1))  # after closing: read the same
    assert collected.written[-1] == authors and list(collected.written)[:-1] == written
    order = list(collected.order)
    collected.release()
    assert collected.order == order and len(collected.names) == len(records) + 1
    assert not collected.name_table.strings
