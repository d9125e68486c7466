"""What the network engine derives is kept as data only (no pickle) and reads back equal; a damaged file is refused."""

import hashlib
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from bibgraph.graph.derived import DamagedFile, DerivedFiles, derived_key, file_name
from bibgraph.graph.networks import Filters, engine
from bibgraph.graph.networks.incidence import incidence_of
from bibgraph.graph.networks.spec import COAUTHORS, EGO, TOPIC_MAP, TOPICS, NetworkSpec

from .test_incidence import built, records, same_incidence


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
