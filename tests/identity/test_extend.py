"""``add`` against a dataset's persons (graph/identity/extend.py): two authorships of one added paper are never one
person, and for names no identity rule splits or joins, build + add gives the persons a build of all the lists
gives."""

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from bibgraph.graph.dataset.add import add_lists
from bibgraph.graph.dataset.build import build_graph
from bibgraph.graph.ingest.names import person_key
from bibgraph.graph.rdf.vocab import sparql_prologue
from bibgraph.graph.stores.store import OxigraphGraphStore
from tests.conftest import BASE
from tests.identity.test_numbering import assert_kept, graph_of

WORDS = "graph parsing speech vision protein galaxy lattice enzyme theorem robot market poetry".split()
# Names whose given and family names are each borne by no other name, of blocks apart (no variant joins): no rule
# splits or joins them, so a name is one person but for a paper listing it twice (the cannot-link).
RARE = ["Ada Quill", "Bert Lee", "Cora Moss", "Dov Ruiz", "Eli Tamm", "Fay Okoro"]
# Names that normalise alike, are variants of one another, or are common: evidence may chain them.
CANNOT = ["Wei Wang", "WEI WANG", "W. Wang", "Wei Wáng", "Wei-Min Wang", "王王", "Yang Liu", "Y. Liu", "Ann Lee"]

AGENTS = """SELECT ?paper ?position ?person WHERE {
  ?paper bg:authorship ?node . ?node bg:authorPosition ?position ; prov:agent ?person }"""


def papers(names: list[str]) -> st.SearchStrategy[list[tuple[list[str], list[str]]]]:
    authors = st.lists(st.sampled_from(names), min_size=1, max_size=4)
    paper = st.tuples(authors, st.lists(st.sampled_from(WORDS), min_size=2, max_size=4))
    return st.lists(paper, min_size=1, max_size=8)


def write(path: Path, drawn: list[tuple[list[str], list[str]]], tag: str, first: int = 0) -> Path:
    text = "{}\n\nWe study {} in setting {}{}, with new results.\n"
    records = [
        text.format(", ".join(authors), " and ".join(words), tag, n) for n, (authors, words) in enumerate(drawn, first)
    ]
    path.write_text("论文检索\n\n" + "\n".join(records), encoding="utf-8")
    return path


def persons(store: OxigraphGraphStore) -> tuple[set[frozenset[tuple[str, int]]], dict[tuple[str, int], str]]:
    """Persons as sets of authorships (paper, position), and each authorship's person."""
    agent: dict[tuple[str, int], str] = {}
    for row in store.select(sparql_prologue() + AGENTS):
        where = (str(row["paper"]), int(str(row["position"])))
        assert where not in agent, f"two agents of {where}"
        agent[where] = str(row["person"])
    groups: dict[str, set[tuple[str, int]]] = {}
    for where, person in agent.items():
        groups.setdefault(person, set()).add(where)
    return {frozenset(group) for group in groups.values()}, agent


def assert_no_person_twice_on_a_paper(agent: dict[tuple[str, int], str]) -> None:
    seen: set[tuple[str, str]] = set()
    for (paper, _), person in sorted(agent.items()):
        assert (paper, person) not in seen, f"{person} holds two authorships of {paper}"
        seen.add((paper, person))


def build_then_add(tmp: Path, first: list, second: list) -> OxigraphGraphStore:
    for old in tmp.glob("*.txt"):
        old.unlink()
    store, _ = build_graph([write(tmp / "a.txt", first, "a")], base=BASE, progress=False)
    add_lists(store, [write(tmp / "b.txt", second, "b")], BASE)
    return store


@settings(max_examples=25, deadline=None)
@given(papers(RARE), papers(RARE))
def test_add_gives_the_persons_a_build_of_all_the_lists_gives(tmp_path_factory, first: list, second: list) -> None:
    """Rare names (no split, no join): the first authorship of a name on a paper is the name's person, each later
    one a person of its own, whether the paper was built or added (fails before the add applied the cannot-link:
    the added paper's second authorship went to the first's person)."""
    tmp = tmp_path_factory.mktemp("add")
    added, agent = persons(build_then_add(tmp, first, second))
    assert_no_person_twice_on_a_paper(agent)
    whole, _ = persons(build_graph([tmp / "a.txt", tmp / "b.txt"], base=BASE, progress=False)[0])
    assert added == whole


@settings(max_examples=60, deadline=None)
@given(papers(CANNOT), papers(CANNOT))
def test_no_added_person_holds_two_authorships_of_one_paper(tmp_path_factory, first: list, second: list) -> None:
    """Whatever the names (listed twice, alike once normalised, variants joined into a person on the paper, a
    shared name's holders), an added paper never gives one person two authorships, and each has one person."""
    tmp = tmp_path_factory.mktemp("add")
    store = build_then_add(tmp, first, second)
    _, agent = persons(store)
    assert_no_person_twice_on_a_paper(agent)
    # a name's page lists persons that hold authorships; a name is a page or points to a person, never both
    pages = store.select(sparql_prologue() + "SELECT ?name ?p WHERE { ?name a bg:SharedName ; bg:nameOf ?p }")
    assert {str(row["p"]) for row in pages} <= set(agent.values())
    both = "ASK { ?name a bg:SharedName ; owl:sameAs ?p }"
    assert not store.store.query(sparql_prologue() + both)


@settings(max_examples=20, deadline=None)
@given(papers(CANNOT[:3] + RARE[:2]), papers(CANNOT[:3] + RARE[:2]), st.randoms(use_true_random=False))
def test_an_add_numbers_alike_in_any_order(tmp_path_factory, first: list, second: list, rng) -> None:
    """The same added papers in another order give every authorship the same person IRI: numbers given by an add
    and new forms' joins follow the papers' ids, not the reading order."""
    tmp = tmp_path_factory.mktemp("add")
    _, agent = persons(build_then_add(tmp, first, second))
    order = list(range(len(second)))
    rng.shuffle(order)
    again = tmp_path_factory.mktemp("again")
    store, _ = build_graph([write(again / "a.txt", first, "a")], base=BASE, progress=False)
    add_lists(store, [write(again / f"b{k:02d}.txt", [second[i]], "b", i) for k, i in enumerate(order)], BASE)
    assert persons(store)[1] == agent


def test_a_name_listed_twice_is_numbered_and_published_iris_keep_their_meaning(tmp_path: Path) -> None:
    """Build, add papers listing a known name and a new one twice, rebuild into the same dataset: the added second
    authorships are new numbered persons; the new name is numbered as a build numbers it, its IRI the
    disambiguation page; every IRI of each version names the same papers after (or answers as a split)."""
    from bibgraph.web.commands.versionwrite import add_to_dataset, build_dataset

    lists, more = tmp_path / "lists", tmp_path / "more"
    lists.mkdir()
    more.mkdir()
    write(lists / "a.txt", [(["Ada Quill", "Bert Lee"], ["graph", "parsing"])], "a")
    twice = [(["Ada Quill", "Cora Moss", "Ada Quill"], ["speech", "vision"]), (["Dov Ruiz", "Dov Ruiz"], ["robot"])]
    write(more / "b.txt", twice, "b")
    root = tmp_path / "dataset"
    build_dataset([lists], root, BASE)
    first = graph_of(root)
    add_to_dataset(root, [more / "b.txt"])
    added = graph_of(root)
    assert_kept(first[0], added)
    papers_of, _, shared = added
    ada, dov = (f"{BASE}author/{person_key(name)}" for name in ("Ada Quill", "Dov Ruiz"))
    assert len(papers_of[ada]) == 2 and len(papers_of[f"{ada}-0001"]) == 1  # the known person keeps its IRI
    assert shared[dov] == {f"{dov}-0001", f"{dov}-0002"}  # numbered as a build of both lists numbers it
    build_dataset([lists, more / "b.txt"], root, BASE)  # from scratch, into the same dataset
    rebuilt = graph_of(root)
    assert_kept(added[0], rebuilt)
    assert rebuilt[0][f"{ada}-0001"] == papers_of[f"{ada}-0001"] and rebuilt[2][dov] == shared[dov]
