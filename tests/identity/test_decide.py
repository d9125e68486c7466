"""Person identity (graph/identity): order never matters, no split without evidence, joins need evidence."""

import random

import igraph
from hypothesis import given, settings
from hypothesis import strategies as st

from bibgraph.graph.identity.cluster import APART_COMMON, COMMUNITY_COMMON, COMMUNITY_SIZE, splittable
from bibgraph.graph.identity.decide import identify
from bibgraph.graph.identity.features import Collected
from bibgraph.graph.identity.join import Commonness
from bibgraph.graph.identity.keys import compatible, fold
from bibgraph.graph.ingest.records import Record

WORDS = "graph parsing speech vision protein galaxy lattice enzyme theorem robot market poetry".split()
GIVEN = ["Wei", "Jie", "Anna", "Yoshua", "Jean-Michel", "Bernhard", "Li"]
FAMILY = ["Wang", "Zhou", "Schölkopf", "Bengio", "Loubes", "Kim", "Smith"]


def record(n: int, authors: tuple[str, ...], area: str, words: list[str]) -> Record:
    return Record(f"l{n // 50}.txt", n % 50 + 1, area, None, authors, False, " ".join(words) + f" n{n}.")


def persons_by_paper(records: list[Record]) -> set[frozenset[tuple[str, int]]]:
    """Persons as sets of (paper text, position): comparable whatever the records' order."""
    found = identify(records)
    groups: dict[int, set[tuple[str, int]]] = {}
    for (index, position), person in found.of.items():
        groups.setdefault(person, set()).add((records[index].abstract, position))
    return {frozenset(g) for g in groups.values()}


names = st.builds(lambda g, f: f"{g} {f}", st.sampled_from(GIVEN), st.sampled_from(FAMILY))
papers = st.lists(
    st.tuples(
        st.lists(names, min_size=1, max_size=4, unique=True),
        st.sampled_from(["A", "B", "C"]),
        st.lists(st.sampled_from(WORDS), min_size=3, max_size=8),
    ),
    min_size=1,
    max_size=25,
)


@settings(max_examples=25)
@given(papers, st.randoms(use_true_random=False))
def test_any_input_order_gives_the_same_persons(drawn: list, rng: random.Random) -> None:
    records = [record(n, tuple(a), area, w) for n, (a, area, w) in enumerate(drawn)]
    shuffled = records[:]
    rng.shuffle(shuffled)
    assert persons_by_paper(records) == persons_by_paper(shuffled)


@settings(max_examples=25)
@given(papers, st.lists(st.sampled_from(WORDS), min_size=2, max_size=4, unique=True))
def test_no_split_without_evidence_every_authorship_one_person(drawn: list, topics: list[str]) -> None:
    """A rare name on papers that share nothing (no co-author, area or words) stays one person."""
    records = [record(n, tuple(a), area, w) for n, (a, area, w) in enumerate(drawn)]
    rare = [record(100 + k, ("Zebulon Quackenbush", f"Solo Author{k}"), f"R{k}", [t]) for k, t in enumerate(topics)]
    found = identify(records + rare)
    assert set(found.of) == {(i, p) for i, r in enumerate(records + rare) for p in range(len(r.authors))}
    assert len({found.of[(len(records) + k, 0)] for k in range(len(rare))}) == 1


@settings(max_examples=20)
@given(st.sampled_from(GIVEN), st.sampled_from(FAMILY), st.sampled_from(["\u0301", "\u0308", "\u030c"]))
def test_two_people_sharing_a_folded_name_and_nothing_else_stay_two(given_name: str, family: str, accent: str) -> None:
    marked = f"{given_name} {family[0]}{accent}{family[1:]}"  # an accent on the family name, or more than one
    plain = " ".join(fold(marked).title().split())
    assert fold(marked) == fold(plain) and compatible(marked, plain)  # one person they could be: no evidence says so
    a = record(0, (marked, "Carol Able"), "A", ["protein", "enzyme", "folding"])
    b = record(1, (plain, "Dmitri Baker"), "B", ["galaxy", "lattice", "cosmology"])
    found = identify([a, b])
    assert found.of[(0, 0)] != found.of[(1, 0)]


@settings(max_examples=20)
@given(
    st.sampled_from(
        [
            ("Bernhard Schölkopf", "Bernhard Scholkopf"),
            ("Y. Bengio", "Yoshua Bengio"),
            ("Jean-Michel Loubes", "Jean Michel Loubes"),
            ("Steven P. Abney", "Steven Abney"),
        ]
    ),
    st.sampled_from(["Carol Able", "Dmitri Baker"]),
)
def test_variants_with_a_shared_coauthor_join(pair: tuple[str, str], coauthor: str) -> None:
    a = record(0, (pair[0], coauthor), "A", ["protein", "enzyme"])
    b = record(1, (pair[1], coauthor), "B", ["galaxy", "lattice"])
    c = record(2, (pair[1], "Ed Unrelated"), "B", ["poetry", "market"])
    found = identify([a, b, c])
    assert found.of[(0, 0)] == found.of[(1, 0)]
    person = found.of[(0, 0)]
    assert found.joined[person] and set(found.variants.get(person, ())) | {found.names[person]} == set(pair)


def test_shared_coauthor_does_not_join_forms_that_cannot_be_one_person() -> None:
    a = record(0, ("Anna Kim", "Carol Able"), "A", ["protein"])
    b = record(1, ("Alex Kim", "Carol Able"), "A", ["protein"])
    assert not compatible("Anna Kim", "Alex Kim")
    found = identify([a, b])
    assert found.of[(0, 0)] != found.of[(1, 0)]


def _surname(k: int) -> str:
    return "".join("bcdfghjklmnpqrstvwxz"[int(d)] for d in f"{k:03d}").capitalize() + "son"


@settings(max_examples=20, deadline=None)
@given(
    st.lists(st.integers(3, 5), min_size=2, max_size=3),
    st.integers(0, 3),
    st.integers(0, 10),
    st.booleans(),
    st.randoms(use_true_random=False),
)
def test_a_common_name_is_split_by_large_coauthor_communities(
    sizes: list[int], strays: int, shift: int, bridged: bool, rng: random.Random
) -> None:
    """A common name (``Yang Liu`` beside other Yang and Liu names) whose papers fall into co-author communities
    of COMMUNITY_SIZE papers or more is one person per community, even where one co-author wrote with two of
    them (``bridged``); a paper sharing no co-author stays with the largest community (the first on a tie). The
    same papers under a rare name are one person."""
    papers: list[tuple[tuple[str, ...], int]] = []  # authors, community (-1: a stray paper)
    for c, size in enumerate(sizes):
        for k in range(size):  # each paper names the community's anchor and one co-author of its own
            bridge = ("Heng Bridge",) if bridged and k == 0 and c < 2 else ()
            papers.append((("Yang Liu", f"Anchor {_surname(c)}", f"Ko {_surname(100 * c + k + shift)}", *bridge), c))
    papers += [(("Yang Liu", f"Lone {_surname(900 + k)}"), -1) for k in range(strays)]
    rng.shuffle(papers)

    def persons_of(others: int) -> tuple[list[set[int]], float]:
        records = [record(n, authors, "A", ["graph", "parsing"]) for n, (authors, _) in enumerate(papers)]
        records += [  # other names of the given name Yang and the family name Liu: how common the name is
            record(len(records) + k, (f"Yang {_surname(500 + k)}", f"{_surname(600 + k)} Liu"), "B", ["galaxy"])
            for k in range(others)
        ]
        collected = Collected()
        for r in records:
            collected.add(r.authors, r.area or "", "", r.abstract, f"{r.line}", (r.source, r.line))
        common = Commonness(collected.written).of("Yang Liu").expected
        found = identify(records)
        by_person: dict[int, set[int]] = {}
        for n in range(len(papers)):
            by_person.setdefault(found.of[(n, 0)], set()).add(n)
        return sorted(by_person.values(), key=min), common

    split, common = persons_of(6)
    assert common >= COMMUNITY_COMMON and not splittable(common)  # the communities split it, not the model
    communities = [{n for n, (_, c) in enumerate(papers) if c == k} for k in range(len(sizes))]
    stray = {n for n, (_, c) in enumerate(papers) if c == -1}
    with_strays = [  # the strays with one of the largest communities (which one: the first in the papers' order)
        sorted([*communities[:k], communities[k] | stray, *communities[k + 1 :]], key=min)
        for k in range(len(sizes))
        if sizes[k] == max(sizes)
    ]
    assert COMMUNITY_SIZE <= 3 and split in with_strays
    whole, rare = persons_of(0)
    assert rare < COMMUNITY_COMMON and whole == [set(range(len(papers)))]


TOPICS = [["protein", "enzyme", "folding"], ["theorem", "lattice", "proof"], ["robot", "vision", "grasping"]]


@settings(max_examples=20, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from("ABC"), st.integers(0, 2)), min_size=2, max_size=6),
    st.randoms(use_true_random=False),
)
def test_a_common_name_splits_only_where_every_evidence_differs(drawn: list, rng: random.Random) -> None:
    """The papers of a common name, each with a co-author of its own, are one person wherever anything links them
    (the same area, alike abstracts); a paper that differs from every other in both is a person of its own. The
    same papers under a rare name are one person: no split without evidence."""
    rng.shuffle(drawn)

    def persons_of(others: int) -> tuple[set[frozenset[int]], float]:
        records = [
            record(n, ("Yang Liu", f"Ko {_surname(700 + n)}"), area, TOPICS[t]) for n, (area, t) in enumerate(drawn)
        ]
        records += [
            record(len(records) + k, (f"Yang {_surname(500 + k)}", f"{_surname(600 + k)} Liu"), "D", ["galaxy"])
            for k in range(others)
        ]
        records.append(record(len(records), tuple(f"Fil {_surname(800 + k)}" for k in range(20)), "D", ["star"]))
        collected = Collected()
        for r in records:
            collected.add(r.authors, r.area or "", "", r.abstract, f"{r.line}", (r.source, r.line))
        found = identify(records)
        by_person: dict[int, set[int]] = {}
        for n in range(len(drawn)):
            by_person.setdefault(found.of[(n, 0)], set()).add(n)
        return {frozenset(p) for p in by_person.values()}, Commonness(collected.written).of("Yang Liu").expected

    links = [
        (a, b)
        for a in range(len(drawn))
        for b in range(a + 1, len(drawn))
        if any(x == y for x, y in zip(drawn[a], drawn[b], strict=True))
    ]
    expected = {frozenset(c) for c in igraph.Graph(n=len(drawn), edges=links).connected_components()}
    split, common = persons_of(6)
    assert common >= APART_COMMON and not splittable(common)
    assert split == expected
    whole, rare = persons_of(0)
    assert rare < APART_COMMON and whole == {frozenset(range(len(drawn)))}


# Names that normalise alike (``WEI WANG``, ``Wei Wang``) or are variants of one another, so a paper may list one
# name twice and evidence may chain variants into one another across a paper.
CANNOT = ["Wei Wang", "WEI WANG", "W. Wang", "Wei Wáng", "Wei-Min Wang", "王王", "Yang Liu", "Y. Liu", "Ann Lee"]
repeated_papers = st.lists(
    st.tuples(
        st.lists(st.sampled_from(CANNOT), min_size=1, max_size=5),  # not unique: a name may be listed twice
        st.sampled_from(["A", "B", ""]),
        st.lists(st.sampled_from(WORDS), min_size=2, max_size=5),
    ),
    min_size=1,
    max_size=30,
)


@settings(max_examples=40, deadline=None)
@given(repeated_papers, st.randoms(use_true_random=False))
def test_two_authorships_of_one_paper_are_never_one_person(drawn: list, rng: random.Random) -> None:
    """S2AND's cannot-link, whatever the evidence: a paper listing a name twice, or two forms the join chains
    together through other papers, gives two persons; each person's authorships are distinct papers."""
    records = [record(n, tuple(a), area, w) for n, (a, area, w) in enumerate(drawn)]
    found = identify(records)
    for person in range(len(found.names)):
        papers = [r for r, _ in found.mentions(person)]
        assert len(papers) == len(set(papers)), found.names[person]
    for index, r in enumerate(records):
        assert len(set(found.of.row(index))) == len(r.authors)
    shuffled = records[:]
    rng.shuffle(shuffled)
    assert persons_by_paper(records) == persons_by_paper(shuffled)
