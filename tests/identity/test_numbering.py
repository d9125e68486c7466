"""A published person IRI never changes meaning: build a dataset, add to it, rebuild it from scratch from the
same lists: every IRI of the first version names the same person (its papers), or answers as a merge
(``owl:sameAs`` the survivor) or a split (the name's disambiguation page) does."""

import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bibgraph.graph.dataset.directory import STORE, current_version
from bibgraph.graph.identity import numbering
from bibgraph.graph.identity.numbering import Numbering, assign
from bibgraph.graph.ingest.parse import parse_file
from bibgraph.graph.ingest.records import paper_id
from bibgraph.graph.rdf.vocab import sparql_prologue
from bibgraph.graph.stores.store import OxigraphGraphStore
from bibgraph.web.commands import versionwrite
from bibgraph.web.commands.versionwrite import add_to_dataset, build_dataset
from tests.conftest import BASE
from tests.identity.test_pagedata import LIST

PERSONS = """SELECT ?p ?paper WHERE { ?p a foaf:Person . OPTIONAL { ?paper dcterms:creator ?p } }"""
SAME = "SELECT ?old ?p WHERE { ?old owl:sameAs ?p }"
SHARED = "SELECT ?name ?p WHERE { ?name a bg:SharedName ; bg:nameOf ?p }"


def graph_of(root: Path) -> tuple[dict[str, set[str]], dict[str, str], dict[str, set[str]]]:
    """The persons' papers, the retired IRIs' survivors and the shared names' persons of the served version."""
    store = OxigraphGraphStore.disk(current_version(root) / STORE, read_only=True)
    papers: dict[str, set[str]] = {}
    for row in store.select(sparql_prologue() + PERSONS):
        papers.setdefault(str(row["p"]), set()).update([str(row["paper"])] if row.get("paper") else [])
    same = {str(row["old"]): str(row["p"]) for row in store.select(sparql_prologue() + SAME)}
    shared: dict[str, set[str]] = {}
    for row in store.select(sparql_prologue() + SHARED):
        shared.setdefault(str(row["name"]), set()).add(str(row["p"]))
    return papers, same, shared


def assert_kept(before: dict[str, set[str]], after: tuple) -> None:
    papers, same, shared = after
    for iri, old in before.items():
        if iri in papers:  # the same person: over the papers it had, the same papers
            assert papers[iri] & set().union(*before.values()) == old, iri
        elif iri in same:  # merged: the survivor holds its papers
            assert old <= papers[same[iri]], iri
        else:  # split: the name's disambiguation page, its persons hold its papers
            assert iri in shared and old <= set().union(*(papers[p] for p in shared[iri])), iri


def smaller_id_paper(directory: Path, below: str) -> str:
    """A list of one Wei Wang paper sharing nothing with the others, its id below ``below`` (the person it forms
    in a rebuild comes first in the papers' order: the order numbers followed)."""
    for n in range(10_000):
        abstract = f"Magma chambers under Iceland, survey {n}."
        text = f"论文检索\n\nGeology · Volcanoes\n\nWei Wang, Ola Nordmann\n\n{abstract}\n"
        (directory / "more.txt").write_text(text, encoding="utf-8")
        (record,), _ = parse_file(directory / "more.txt", "more.txt", frozenset())
        if paper_id(record) < below:
            return text
    raise AssertionError("no smaller id found")


def test_build_add_rebuild_keeps_every_published_iri(tmp_path: Path) -> None:
    lists, more = tmp_path / "lists", tmp_path / "more"
    lists.mkdir()
    more.mkdir()
    (lists / "list.txt").write_text(LIST, encoding="utf-8")
    root = tmp_path / "dataset"
    build_dataset([lists], root, BASE)
    first = graph_of(root)
    numbered = sorted(p for p in first[0] if p.endswith(("-0001", "-0002")))
    assert len(numbered) == 2  # the two Wei Wangs
    smallest = min(paper.rsplit("/", 1)[1] for p in numbered for paper in first[0][p])
    smaller_id_paper(more, smallest)
    add_to_dataset(root, [more / "more.txt"])
    assert_kept(first[0], graph_of(root))
    build_dataset([lists, more / "more.txt"], root, BASE)  # from scratch, into the same dataset
    rebuilt = graph_of(root)
    assert_kept(first[0], rebuilt)
    # the geologist is a Wei Wang of its own now, under a number never given before
    assert any(p.endswith("-0003") for p in rebuilt[0])


mentions = st.lists(st.integers(0, 30), min_size=1, max_size=6, unique=True)


def persons(groups: list[list[int]], name: str = "Wei Wang") -> tuple[list[str], set[int], list[list[str]]]:
    return [name] * len(groups), set(), [[f"p{m}#0" for m in g] for g in groups]


@settings(max_examples=60, deadline=None)
@given(st.lists(mentions, min_size=1, max_size=5), st.lists(mentions, min_size=1, max_size=5))
def test_numbers_are_kept_by_overlap_and_never_given_again(first: list[list[int]], second: list[list[int]]) -> None:
    """Any two partitions of a name's authorships, one published, then the other: a rebuild of the same persons
    gives the same keys; a number is never given to a second person; a key no person keeps points to one."""
    owned: set[int] = set()
    first = [[m for m in g if m not in owned and not owned.add(m)] for g in first]  # type: ignore[func-returns-value]
    first = [g for g in first if g]
    one = assign(*persons(first), Numbering())
    assert assign(*persons(first), one.numbering).keys == one.keys
    owned = set()
    second = [[m for m in g if m not in owned and not owned.add(m)] for g in second]  # type: ignore[func-returns-value]
    second = [g for g in second if g]
    two = assign(*persons(second), one.numbering)
    assert len(set(two.keys)) == len(two.keys)
    for key, base, mine in zip(one.keys, one.bases, first, strict=True):
        if key == base:  # one person of that name: the name's IRI (a split makes it the disambiguation page)
            continue
        if key in two.keys:  # a number kept: by a person holding some of its authorships
            assert set(mine) & set(second[two.keys.index(key)])
        else:  # a number no one holds: the person holding most of its authorships, or none left
            assert key in dict(two.same_as) or not set(mine) & {m for g in second for m in g}
    numbers = [int(k.rsplit("-", 1)[1]) for k in two.keys if k != two.bases[0]]
    given_before = {int(k.rsplit("-", 1)[1]) for k in one.keys if k != one.bases[0]}
    assert all(n in given_before or n > max(given_before, default=0) for n in numbers)


def test_a_name_left_with_one_holder_points_to_it(tmp_path: Path) -> None:
    """A numbered name one person is left holding (the other Wei Wang's paper gone) keeps the number, and the
    name's IRI is ``owl:sameAs`` that person: not a disambiguation page "shared by 1 people"."""
    lists = tmp_path / "lists"
    lists.mkdir()
    (lists / "list.txt").write_text(LIST, encoding="utf-8")
    root = tmp_path / "dataset"
    build_dataset([lists], root, BASE)
    papers, _, shared = graph_of(root)
    (name,) = shared
    astronomy = LIST.index("Astronomy")
    (lists / "list.txt").write_text(LIST[:astronomy] + LIST[LIST.index("Chemistry") :], encoding="utf-8")
    build_dataset([lists], root, BASE)
    papers, same, shared = graph_of(root)
    assert name not in shared
    (holder,) = (p for p in papers if p.startswith(name + "-"))
    assert same[name] == holder


def test_a_dataset_built_from_its_dump_writes_the_same_person_map(tmp_path: Path) -> None:
    """A dataset loaded from another's N-Triples dump publishes the same persons, so it keeps the same map
    (``persons.json``): a rebuild into it keeps their numbers."""
    lists = tmp_path / "lists"
    lists.mkdir()
    (lists / "list.txt").write_text(LIST, encoding="utf-8")
    build_dataset([lists], tmp_path / "first", BASE)
    built = current_version(tmp_path / "first")
    build_dataset([built / "dumps" / "bibgraph.nt"], tmp_path / "second", BASE)
    original = numbering.read(built / numbering.FILE_NAME)
    loaded = numbering.read(current_version(tmp_path / "second") / numbering.FILE_NAME)
    assert original.keys and original.numbers  # the two Wei Wangs and the joined Schölkopf
    assert loaded.to_json() == original.to_json()


KEYS = ["wei-wang", "wei-wang-0001", "wei-wang-0002", "ola-nordmann", "li-na"]
mention = st.builds(lambda paper, position: f"p{paper}#{position}", st.integers(0, 20), st.integers(0, 3))
operation = st.one_of(
    st.tuples(st.just("record"), st.sampled_from(KEYS), mention),
    st.tuples(st.just("mint"), st.sampled_from(KEYS[:1] + KEYS[3:]), mention),
)


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(st.sampled_from(KEYS), st.lists(mention, max_size=3), max_size=4),
    st.dictionaries(st.sampled_from(["wei-wang", "li-na"]), st.integers(1, 3)),
    st.lists(st.lists(operation, max_size=6), min_size=1, max_size=4),
)
def test_a_map_read_as_the_builds_file_and_each_adds_changes_is_the_map_written_whole(
    tmp_path_factory: pytest.TempPathFactory, keys: dict[str, list[str]], numbers: dict[str, int], adds: list
) -> None:
    """Rule: the build's file, then one file per add holding what it recorded and numbered (``since`` its mark),
    read in order, is the map the adds left in memory (what was written whole before): keys, authorships, numbers."""
    version = tmp_path_factory.mktemp("version")
    published = Numbering(keys=keys, numbers=dict(numbers))
    published.write(version / numbering.FILE_NAME)
    for number, operations in enumerate(adds, 2):
        mark = published.mark()
        for kind, key, at in operations:
            if kind == "mint":  # as an add numbers a name (extend.Resolver._mint), then records its authorship
                published.numbers[key] = published.numbers.get(key, 0) + 1
                key = f"{key}-{published.numbers[key]:04d}"
                published.added.setdefault(key, [])
            published.record(key, at)
        published.since(mark).write(version / numbering.delta_name(number))
    assert numbering.files(version)[0] == numbering.FILE_NAME and len(numbering.files(version)) == len(adds) + 1
    assert numbering.read_version(version).to_json() == published.to_json()


def test_an_add_writes_only_what_it_changed_of_the_person_map(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two adds: each version's person map is the build's file and the earlier adds' (hard links, never written
    again) and one small file of its own; read together, the map an add writing it whole gives (same lists, a copy
    of the dataset, the old way), which a rebuild into the dataset then reads."""
    lists, more = tmp_path / "lists", tmp_path / "more"
    lists.mkdir()
    more.mkdir()
    (lists / "list.txt").write_text(LIST, encoding="utf-8")
    root, whole = tmp_path / "dataset", tmp_path / "whole"
    build_dataset([lists], root, BASE)
    shutil.copytree(root, whole, symlinks=True)
    built = (current_version(root) / numbering.FILE_NAME).stat()
    added = []
    for n in range(2):
        text = f"论文检索\n\nGeology · Volcanoes\n\nWei Wang, Ola Nordmann, Kari Nordmann\n\nLava flows {n}.\n"
        added.append(more / f"more{n}.txt")
        added[-1].write_text(text, encoding="utf-8")
        add_to_dataset(root, [added[-1]])
        version = current_version(root)
        assert (version / numbering.FILE_NAME).stat().st_ino == built.st_ino
        assert numbering.files(version) == [numbering.FILE_NAME, *(numbering.delta_name(k + 2) for k in range(n + 1))]
        assert (version / numbering.delta_name(n + 2)).stat().st_size < built.st_size
    monkeypatch.setattr(
        versionwrite,
        "_keep_person_map",
        lambda _, version, published, *__: published.write(version / numbering.FILE_NAME),
    )
    for path in added:
        add_to_dataset(whole, [path])
    expected = numbering.read(current_version(whole) / numbering.FILE_NAME)
    assert expected.added and numbering.read_version(current_version(root)).to_json() == expected.to_json()
