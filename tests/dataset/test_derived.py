"""Every derived value is kept as data only (no pickle) and reads back equal; a damaged file is refused."""

import ast
import hashlib
import json
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bibgraph.graph.dataset import sitedata
from bibgraph.graph.dataset.derived import DATA_FORMATS, DamagedFile, DerivedFiles, derived_key, file_name
from bibgraph.graph.networks import Filters, engine
from bibgraph.graph.networks.incidence import incidence_of
from bibgraph.graph.networks.spec import COAUTHORS, EGO, TOPIC_MAP, TOPICS, NetworkSpec
from bibgraph.graph.site.conceptindex import ConceptFigures
from bibgraph.graph.site.mapview import view_data
from bibgraph.graph.site.pagedata import TreeArea
from tests.networks.test_incidence import built, records, same_incidence


def _same_graph(found, expected) -> None:
    assert found.graph == expected.graph
    assert list(found.nodes(data=True)) == list(expected.nodes(data=True))
    assert list(found.edges(data=True)) == list(expected.edges(data=True))


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(records)
def test_the_engines_values_round_trip_as_data(tmp_path, generated) -> None:
    incidence = incidence_of(built(generated))
    files = DerivedFiles(tmp_path, writable=True)
    files.save(derived_key("incidence"), incidence)
    with np.load(tmp_path / file_name(derived_key("incidence")), allow_pickle=False) as arrays:
        assert "ap_paper" in arrays.files  # data a reader opens without running anything
    same_incidence(files.load(derived_key("incidence"))[1], incidence)
    author = incidence.authors[0] if len(incidence.authors) else None
    specs = [NetworkSpec(COAUTHORS), NetworkSpec(COAUTHORS, Filters(min_joint=2, top=3)), NetworkSpec(TOPICS)]
    specs += [NetworkSpec(TOPIC_MAP, expand="all")] + ([NetworkSpec(EGO, ego=(author, 2, 3))] if author else [])
    for spec in specs:
        network = engine.network(incidence, spec)
        positions = engine.positions(spec, network)
        files.save(derived_key("network", spec), network)
        files.save(derived_key("layout", spec), positions)
        json.loads((tmp_path / file_name(derived_key("network", spec))).read_bytes())
        _same_graph(files.load(derived_key("network", spec))[1], network)
        assert files.load(derived_key("layout", spec))[1] == positions
        if spec.kind == COAUTHORS:
            summary = engine.summary(incidence, spec, network)
            files.save(derived_key("summary", spec), summary)
            assert files.load(derived_key("summary", spec))[1] == summary


def test_a_file_whose_checksum_is_not_the_manifests_is_refused(tmp_path) -> None:
    key = derived_key("layout", NetworkSpec(TOPICS))
    DerivedFiles(tmp_path, writable=True).save(key, {"a": (1.0, 2.0)})
    name = file_name(key)
    good = hashlib.sha256((tmp_path / name).read_bytes()).hexdigest()
    assert DerivedFiles(tmp_path, checksums={name: good}).load(key) == (True, {"a": (1.0, 2.0)})
    (tmp_path / name).write_bytes(b'{"a": [1.0, 3.0]}')
    with pytest.raises(DamagedFile):
        DerivedFiles(tmp_path, checksums={name: good}).load(key)


text = st.text(max_size=8)
names = text.filter(lambda name: not name.startswith("@"))
scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | text
triples = st.tuples(text, text, st.integers()).map(tuple)
concepts = st.builds(
    ConceptFigures,
    text,
    text,
    st.none() | text,
    st.integers(),
    st.integers(),
    st.lists(triples, max_size=3).map(tuple),
    st.lists(triples, max_size=3).map(tuple),
)
trees = st.recursive(
    st.builds(TreeArea, text, text, st.integers(), st.integers(), st.just([])),
    lambda inner: st.builds(TreeArea, text, text, st.integers(), st.integers(), st.lists(inner, max_size=3)),
    max_leaves=6,
)
page_values = st.recursive(
    scalars | concepts | trees,
    lambda inner: (
        st.lists(inner, max_size=4) | st.lists(inner, max_size=4).map(tuple) | st.dictionaries(names, inner, max_size=4)
    ),
    max_leaves=12,
)


def _round_trip(tmp_path, key, value):
    files = DerivedFiles(tmp_path, writable=True)
    files.save(key, value)
    json.loads((tmp_path / file_name(key)).read_bytes())  # plain JSON: read with nothing made but JSON's values
    found, read = files.load(key)
    assert found
    return read


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(page_values, st.sampled_from(["page", "view"]))
def test_every_page_value_round_trips_as_json(tmp_path, value, what) -> None:
    """Figures, orders and drawn views read back equal and of the same types (a tuple stays a tuple, True is not
    1, a record is made again from its fields)."""
    read = _round_trip(tmp_path, derived_key(what, None, "generated"), value)
    assert read == value and repr(read) == repr(value)


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(records)
def test_the_sites_values_round_trip_as_json(tmp_path, generated) -> None:
    """What a build keeps for the site (concept figures, each piece of each paper order, the home page's figures)
    and a drawn view read back equal, of the same types."""
    store = built(generated)
    files = DerivedFiles(tmp_path, writable=True)
    kept: dict = {}

    def keep(key, value) -> None:
        files.save(key, value)
        kept[key] = value

    figures = sitedata.concept_figures(store, keep)
    incidence = incidence_of(store)
    home = sitedata.home_figures(store, engine.coauthor_degrees(incidence), figures)
    kept |= {derived_key("page", None, sitedata.CONCEPT_FIGURES): figures, derived_key("page", None, "home"): home}
    network = engine.network(incidence, NetworkSpec(COAUTHORS))
    drawn = view_data(network, engine.positions(NetworkSpec(COAUTHORS), network), lambda n, d: {}, lambda a, b, d: {})
    kept[derived_key("view", NetworkSpec(COAUTHORS), "generated")] = drawn
    for key, value in kept.items():
        read = _round_trip(tmp_path, key, value)
        assert read == value and repr(read) == repr(value)


@pytest.mark.parametrize(
    "value",
    [{1, 2}, Counter({1: 2}), {"@type": "ConceptFigures"}, {1: "a"}, [b"bytes"], type("Name", (str,), {})("x")],
    ids=["set", "Counter", "tag", "int key", "bytes", "str subclass"],
)
def test_a_value_that_would_not_read_back_equal_is_refused_when_kept(tmp_path, value) -> None:
    with pytest.raises(TypeError):
        DerivedFiles(tmp_path, writable=True).save(derived_key("page", None, "x"), value)
    assert not list(tmp_path.iterdir())


def test_a_file_naming_any_other_record_makes_nothing(tmp_path) -> None:
    key = derived_key("page", None, "x")
    (tmp_path / file_name(key)).write_text('{"@type": "Popen", "args": ["touch", "ran"]}', encoding="utf-8")
    with pytest.raises(ValueError, match="unknown record 'Popen'"):
        DerivedFiles(tmp_path).load(key)


def test_no_kind_of_value_falls_back_to_a_format_that_runs_code(tmp_path) -> None:
    with pytest.raises(TypeError, match="no data format"):
        file_name(derived_key("anything else"))


def test_every_kind_of_value_the_code_keys_has_a_data_format() -> None:
    """A kind without a format is refused when its file is named (no fallback): every ``derived_key`` the package
    makes names a kind of :data:`DATA_FORMATS` (read from the source, so a new kind cannot be added without one)."""
    root = Path(__file__).resolve().parents[2]
    kinds = set()
    for path in [*root.glob("graph/**/*.py"), *root.glob("web/**/*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "derived_key":
                assert isinstance(node.args[0], ast.Constant), f"{path}: derived_key's kind must be a literal"
                kinds.add(node.args[0].value)
    assert {"incidence", "network", "layout", "summary", "page", "view"} <= kinds <= set(DATA_FORMATS)


texts = st.text(max_size=6)  # any character: escapes, CJK, U+2028, surrogates' neighbours
attributes = st.dictionaries(
    st.sampled_from(["name", "papers", "areas", "weight", "fractional", "lower_bound", "community"]),
    st.one_of(texts, st.integers(), st.floats(allow_nan=False), st.booleans(), st.lists(texts, max_size=3)),
    max_size=4,
)


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(texts, attributes, max_size=8),
    st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7), attributes), max_size=12),
    attributes,
)
def test_a_network_is_written_item_by_item_as_json_dumps_writes_it_whole(nodes, edges, graph) -> None:
    """The network's JSON is written item by item (the whole document as lists, text and bytes held 736 MB beside
    the 532 MB network at 100,000 papers): the same bytes as ``json.dumps`` of the whole document."""
    import networkx as nx

    network = nx.Graph(**graph)
    network.add_nodes_from(nodes.items())
    names = list(nodes)
    for a, b, data in edges:
        if a < len(names) and b < len(names):
            network.add_edge(names[a], names[b], **data)
    whole = {
        "graph": network.graph,
        "nodes": [[node, data] for node, data in network.nodes(data=True)],
        "edges": [[a, b, data] for a, b, data in network.edges(data=True)],
    }
    written = DATA_FORMATS["network"][1](network)
    assert written == json.dumps(whole, ensure_ascii=False, default=sorted).encode("utf-8")
    assert list(DATA_FORMATS["network"][2](written).edges(data=True)) == list(network.edges(data=True))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_a_kept_file_is_read_as_json_reads_it(value) -> None:
    """The readers parse with orjson, and with ``json`` what orjson refuses (``NaN``, ``Infinity``, integers past
    64 bits, which ``json.dumps`` writes): the value read is ``json.loads``'s, whatever the file holds."""
    from bibgraph.graph.dataset.derived import _loads

    text = json.dumps(value, ensure_ascii=False).encode("utf-8")
    assert repr(_loads(text)) == repr(json.loads(text))


def test_an_incidence_given_to_the_derive_is_neither_read_back_nor_kept_again(dataset: Path, tmp_path: Path) -> None:
    """An add hands sitedata.derive the incidence it extended and kept already: the derive makes its values from
    that one (the topic network here), and reads no incidence file (none is there) nor derives one from the store."""
    version = (dataset / "current").resolve()
    kept, incidence = DerivedFiles(version / "derived").load(derived_key("incidence"))
    assert kept
    again = tmp_path / "again"
    shutil.copytree(version / "store", again / "store")
    (again / "derived").mkdir()
    sitedata.derive(again, 50, exports=(), maps=lambda spec: False, incidence=incidence)
    topics = file_name(derived_key("network", NetworkSpec(TOPICS)))
    assert not (again / "derived" / file_name(derived_key("incidence"))).exists()
    assert (again / "derived" / topics).read_bytes() == (version / "derived" / topics).read_bytes()


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(records)
def test_an_incidence_is_saved_straight_into_its_file_as_the_same_bytes(tmp_path, monkeypatch, generated) -> None:
    """A build saves its incidence at its load's peak: written into the file, never made whole in memory first (the
    bytes writer is not called), and the file is what that writer gives, byte for byte."""
    incidence = incidence_of(built(generated))
    suffix, as_bytes, read = DATA_FORMATS["incidence"]
    expected = as_bytes(incidence)

    def not_in_memory(value: object) -> bytes:
        raise AssertionError("the incidence was made into bytes in memory")

    with monkeypatch.context() as patched:  # undone after each drawn example
        patched.setitem(DATA_FORMATS, "incidence", (suffix, not_in_memory, read))
        DerivedFiles(tmp_path, writable=True).save(derived_key("incidence"), incidence)
    assert (tmp_path / file_name(derived_key("incidence"))).read_bytes() == expected
