"""The roles an add keeps (``graph/site/rolesupdate.py``): the previous version's updated with what the add wrote are
those read again from the new store (``roles_of``, the oracle); what the added triples cannot account for keeps none,
never other arrays; and a dataset's added version keeps them, so its profiles and papers' sitemap ask the store
nothing per paper."""

import tempfile
from pathlib import Path

import pyoxigraph as ox
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bibgraph.graph.dataset.add import add_lists
from bibgraph.graph.dataset.derived import DerivedFiles, derived_key
from bibgraph.graph.dataset.directory import STORE, read_manifest
from bibgraph.graph.networks.incidence import incidence_of, incidence_part
from bibgraph.graph.networks.incidencemerge import merged
from bibgraph.graph.rdf.vocab import BG
from bibgraph.graph.site.roles import matches, roles_of
from bibgraph.graph.site.rolesupdate import AddedAuthorships, updated_roles
from bibgraph.graph.stores.store import OxigraphGraphStore
from bibgraph.web.commands import versionwrite
from tests.conftest import BASE, SEED_FILES
from tests.networks.test_incidence import paper_list
from tests.site.test_rolesbuild import built_with_roles, records, same_roles


def added(store: OxigraphGraphStore, generated: list, first: int) -> tuple[OxigraphGraphStore, AddedAuthorships]:
    """Add the records (abstracts numbered from ``first``) to ``store``: the incidence part of what it wrote, and
    what the roles read of it."""
    part, authorships = OxigraphGraphStore.memory(), AddedAuthorships()

    def keep(quads: list[ox.Quad]) -> None:
        part.store.extend(incidence_part(quads))
        authorships.observe(quads)

    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "more.txt"
        path.write_text(paper_list(generated, first), encoding="utf-8")
        report = add_lists(store, [path], BASE, added=keep)
    assert report.problems == []
    return part, authorships


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records, records, st.integers(0, 3))
def test_the_roles_updated_by_an_add_are_the_roles_read_from_the_new_store(first, second, again) -> None:
    """Build, then add new records and some of the first again (a known paper gains a source only): the updated
    roles equal those read from the whole new store (names listed twice, cut lists, no area, no named author)."""
    store, previous = built_with_roles(first)
    before = incidence_of(store)
    assert previous is not None
    part, authorships = added(store, first[:again] + second, len(first) - again)
    incidence = merged(before, part, store)
    assert incidence is not None
    updated = updated_roles(previous, before, incidence, authorships)
    oracle = roles_of(store, incidence_of(store))
    assert updated is not None and oracle is not None
    assert matches(updated, incidence_of(store)) and same_roles(updated, oracle)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records, records)
def test_an_add_naming_a_nameless_person_keeps_roles_only_when_they_are_the_stores(first, second) -> None:
    """Data loaded from elsewhere may hold a person without a name (out of the incidence and its roles); an add that
    names them brings their earlier papers into the incidence with positions only the store holds: the update
    keeps none rather than other arrays."""
    store, _ = built_with_roles(first)
    store.store.update('DELETE WHERE { ?author <http://xmlns.com/foaf/0.1/name> "Bob Beta" }')
    before = incidence_of(store)
    previous = roles_of(store, before)
    assert previous is not None
    part, authorships = added(store, second, len(first))
    incidence = merged(before, part, store)
    assert incidence is not None
    updated = updated_roles(previous, before, incidence, authorships)
    oracle = roles_of(store, incidence_of(store))
    assert updated is None or (oracle is not None and same_roles(updated, oracle))
    if not any("Bob Beta" in names for _, names, _ in second):  # nobody named now: kept
        assert updated is not None


def test_roles_of_another_incidence_or_a_doubled_authorship_are_not_updated() -> None:
    generated = [("Vision", ["Ann Alpha", "Bob Beta"], False)]
    store, previous = built_with_roles(generated)
    before = incidence_of(store)
    assert previous is not None
    part, authorships = added(store, [(None, ["Cid Gamma", "Ann Alpha"], True)], 1)
    incidence = merged(before, part, store)
    assert incidence is not None and updated_roles(previous, before, incidence, authorships) is not None
    assert updated_roles(previous, incidence, incidence, authorships) is None  # not the previous incidence's
    node = next(iter(authorships.position))
    authorships.observe([ox.Quad(ox.NamedNode(node), ox.NamedNode(str(BG.authorPosition)), ox.Literal("9"))])
    assert updated_roles(previous, before, incidence, authorships) is None  # a node with two positions


def test_a_datasets_add_keeps_the_roles_a_fresh_read_of_its_store_gives(dataset) -> None:
    """Build (one seed list), add the others: the new version keeps roles, equal to those read from its store."""
    version, _ = versionwrite.add_to_dataset(dataset, SEED_FILES[1:])
    files = DerivedFiles.of_version(version, read_manifest(version)["checksums"])
    kept, roles = files.load(derived_key("roles"))
    found, incidence = files.load(derived_key("incidence"))
    assert kept and found
    store = OxigraphGraphStore.disk(version / STORE, read_only=True)
    oracle = roles_of(store, incidence_of(store))
    assert oracle is not None and matches(roles, incidence) and same_roles(roles, oracle)
