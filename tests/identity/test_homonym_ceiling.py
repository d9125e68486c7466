"""The homonym ceiling's bounds (bench.persons.homonym_ceiling): a co-author component is never cut, and the oracle
merges components by their gold person."""

from hypothesis import given, settings
from hypothesis import strategies as st

from bench.persons.homonym_ceiling import Part, components, observable_merge, oracle_merge, partition
from bench.persons.identity import Mention, bcubed
from bibgraph.graph.ingest.records import Record

NAMES = ["Wei Wang", "Ada Quill", "Bo Li", "Jun Sato", "Eva Berg"]
WORDS = "graph parsing speech vision protein galaxy lattice enzyme".split()


def record(n: int, authors: tuple[str, ...], area: str, words: list[str]) -> Record:
    return Record("l.txt", n + 1, area, None, authors, False, " ".join(words) + f" n{n}.")


Drawn = list[tuple[list[str], str, list[str], list[str]]]  # each paper's names, area, words and gold persons
papers = st.lists(
    st.tuples(
        st.lists(st.sampled_from(NAMES), min_size=1, max_size=3, unique=True),
        st.sampled_from(["A", "B"]),
        st.lists(st.sampled_from(WORDS), min_size=3, max_size=6),
        st.lists(st.sampled_from(["p", "q", "r"]), min_size=3, max_size=3),
    ),
    min_size=1,
    max_size=12,
)


def made(drawn: Drawn) -> Part:
    records = [record(n, tuple(names), area, words) for n, (names, area, words, _) in enumerate(drawn)]
    gold = {(n, p): drawn[n][3][p] for n in range(len(drawn)) for p in range(len(drawn[n][0]))}
    return Part.of(records, gold)


@settings(max_examples=60, deadline=None)
@given(papers, st.sampled_from([0.0, 0.5]), st.booleans())
def test_no_bound_cuts_a_coauthor_component(drawn: Drawn, gate: float, oracle: bool) -> None:
    part = made(drawn)
    predicted = partition(part, gate, oracle_merge if oracle else None)
    for name, mentions in part.names.items():
        for a in mentions:
            for b in mentions:
                if part.views(a).coauthors & part.views(b).coauthors:
                    assert predicted[a] == predicted[b]
        if part.expected[name] < gate:  # a name below the gate stays whole
            assert len({predicted[m] for m in mentions}) == 1


@settings(max_examples=60, deadline=None)
@given(papers)
def test_the_oracle_joins_components_of_one_majority_person(
    drawn: Drawn,
) -> None:
    part = made(drawn)
    for name, mentions in part.names.items():
        parts = components(part, name)
        labels = oracle_merge(part, name, parts)
        for label, component in zip(labels, parts, strict=True):
            held = [part.gold[mentions[i]] for i in component]
            assert held.count(label) == max(held.count(g) for g in held)


def test_a_homonym_of_separate_circles_is_split_by_the_oracle_and_joined_by_its_area() -> None:
    drawn = [
        (["Wei Wang", "Ada Quill"], "A", ["graph", "parsing", "speech"], ["w1", "a", "-"]),
        (["Wei Wang", "Ada Quill"], "A", ["graph", "lattice", "speech"], ["w1", "a", "-"]),
        (["Wei Wang", "Jun Sato"], "B", ["protein", "enzyme", "galaxy"], ["w2", "j", "-"]),
        (["Wei Wang", "Eva Berg"], "B", ["protein", "enzyme", "vision"], ["w2", "e", "-"]),
    ]
    part = made(drawn)
    subset: set[Mention] = {(n, 0) for n in range(4)}
    assert components(part, "wei wang") == [[0, 1], [2], [3]]
    assert bcubed(partition(part, 0.0, oracle_merge), part.gold, subset)[2] == 1.0
    assert bcubed(partition(part, 0.0, None), part.gold, subset)[2] < 1.0
    by_area = observable_merge(part, "wei wang", components(part, "wei wang"), area=True, cut=2.0)
    assert by_area[1] == by_area[2] != by_area[0]
