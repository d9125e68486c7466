"""``bibgraph add`` writes what it adds: the dumps' earlier segments and the maps no added paper reaches are the
previous version's files (hard links), and what a version serves is what a build of all its lists gives."""

import json
import os
import tempfile
from pathlib import Path

import networkx as nx
import pyoxigraph as ox
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.generate import write_corpus
from bibgraph.graph.dataset.derived import DerivedFiles, derived_key, file_name
from bibgraph.graph.dataset.directory import DERIVED, MANIFEST, current_version, verify
from bibgraph.graph.dataset.dumpsegments import JoinedFile, parts
from bibgraph.graph.dataset.sitedata import HOME, default_maps
from bibgraph.graph.networks.spec import COAUTHORS, TOPICS, NetworkSpec
from bibgraph.web.commands import versionwrite
from bibgraph.web.maps.cache import networks
from tests.conftest import BASE, make_app
from tests.identity.test_dumps import records_of, write

SYNTAXES = {"bibgraph.nt": ox.RdfFormat.N_TRIPLES, "bibgraph.ttl": ox.RdfFormat.TURTLE}
# Names no identity decision touches (no shared given or family name, no variant): what an add of records whose
# people a later record would split or join gives is tests/test_identity*.py's matter (an add keeps the names
# people already have; Hypothesis found such lists, e.g. "Wei Li" with "Wei Zhang", "Y. Bengio" then "Yoshua Bengio").
PEOPLE = ["Ada Quill", "Bert Norm", "Cleo Marsh", "Dov Penn", "Esa Kirk", "Fay Orton", "Gus Hale", "Hal Roux"]
records = records_of(PEOPLE)


def dump_bytes(version: Path, name: str) -> bytes:
    """A version's dump ``name`` as a download reads it: its segments in order."""
    entry = json.loads((version / MANIFEST).read_text())["dumps"][name]
    with JoinedFile(version / "dumps", parts(version / "dumps", name, entry)) as joined:
        return joined.read()


def triples(version: Path, name: str) -> set[ox.Quad]:
    """The graph of a dump (bibgraph's dumps hold no blank node: equal sets are isomorphic graphs)."""
    return set(ox.parse(dump_bytes(version, name), format=SYNTAXES[name]))


@settings(max_examples=6, deadline=None)
@given(drawn=records, cut=st.integers(1, 23), second=st.integers(0, 23))
def test_build_then_add_is_a_build_of_all_the_lists(drawn: list, cut: int, second: int) -> None:
    """Build A, add B (and C): each version's downloads are the graph one build of A, B (and C) gives, segment by
    segment, the earlier segments hard links to the previous version's files."""
    cut, second = sorted((min(cut, len(drawn) - 1), min(max(second, cut), len(drawn))))
    pieces = [drawn[:cut], drawn[cut:second], drawn[second:]]
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as patch:
        patch.setattr(versionwrite, "derive", lambda version, base, previous=None, roles=None: None)  # the dumps only
        root = Path(tmp)
        lists = [root / f"l{i}" for i in range(3)]
        for number, (directory, part) in enumerate(zip(lists, pieces, strict=True)):
            write(directory, {f"list{number}.txt": part} if part else {})
        added, _ = versionwrite.build_dataset([lists[0]], root / "added", BASE)
        for number in (1, 2):
            served = added
            added, _ = versionwrite.add_to_dataset(root / "added", [lists[number]])
            whole, _ = versionwrite.build_dataset(lists[: number + 1], root / f"whole{number}", BASE)
            for name in SYNTAXES:
                assert triples(added, name) == triples(whole, name), (number, name)
                entry = json.loads((added / MANIFEST).read_text())["dumps"][name]
                *earlier, (last, _) = entry["segments"]
                assert all(os.path.samefile(added / "dumps" / f, served / "dumps" / f) for f, _ in earlier)
                assert not (served / "dumps" / last).exists()
            assert verify(added) == []


def _same_network(one: nx.Graph, other: nx.Graph) -> bool:
    def listed(network: nx.Graph) -> tuple:
        nodes = sorted((n, json.dumps(d, sort_keys=True)) for n, d in network.nodes(data=True))
        edges = sorted((*sorted((a, b)), json.dumps(d, sort_keys=True)) for a, b, d in network.edges(data=True))
        return network.graph, nodes, edges

    return listed(one) == listed(other)


def test_an_add_keeps_the_maps_no_added_paper_reaches(tmp_path: Path) -> None:
    """The default co-author maps of the areas and subareas an add does not reach are the previous version's files,
    those it reaches are left to the first request (none is kept), the whole graph's maps are derived; every default
    map (network, layout, summary) after the add, kept or derived by a server of it, is the one a build of all the
    lists derives."""
    base_lists, more = tmp_path / "base", tmp_path / "more"
    write_corpus(base_lists, 400, seed=3)
    write_corpus(more, 2, seed=4)
    (more / "corpus_00000.txt").rename(more / "zz_more.txt")  # after the base lists, as a build orders them
    served, _ = versionwrite.build_dataset([base_lists], tmp_path / "added", BASE)
    added, _ = versionwrite.add_to_dataset(tmp_path / "added", [more])
    whole, _ = versionwrite.build_dataset([base_lists, more], tmp_path / "whole", BASE)
    found = [DerivedFiles(version / DERIVED) for version in (added, whole)]
    topics = found[1].load(derived_key("network", NetworkSpec(TOPICS)))[1]
    linked = deferred = 0
    app = make_app(BIBGRAPH_STORE=f"dataset:{tmp_path / 'added'}")
    try:
        with app.app_context():
            cache = networks()
            for spec in default_maps(topics, 1000):
                derive = {"network": cache.network, "layout": cache.positions, "summary": cache.summary}
                for what in ("network", "layout", "summary") if spec.kind == COAUTHORS else ("network", "layout"):
                    key = derived_key(what, spec)
                    (kept, one), (built, other) = (files.load(key) for files in found)
                    assert built, (what, spec)
                    if not kept:  # deferred: an area's map, derived by the server of the added version
                        assert not versionwrite.whole_graph_map(spec), (what, spec)
                        one, deferred = derive[what](spec), deferred + 1
                    else:
                        path, old = added / DERIVED / file_name(key), served / DERIVED / file_name(key)
                        linked += old.exists() and os.path.samefile(path, old)
                    assert _same_network(one, other) if what == "network" else one == other, (what, spec)
    finally:
        app.extensions["bibgraph"].close()
    assert linked > 0, "no map kept as it was"
    assert deferred > 0, "no reached map left to the first request"
    home = derived_key("page", None, HOME)  # updated from the kept counts: as derived from the whole store
    assert found[0].load(home) == found[1].load(home)
    assert verify(added) == []


def test_a_segmented_dump_is_served_as_one_file(tmp_path: Path) -> None:
    """A download of a dump held as segments: the whole graph, its length, an ETag that a 304 honours, ranges
    across segments; a damaged segment is refused (503), never sent."""
    lists = tmp_path / "lists"
    write_corpus(lists, 60, per_file=30, seed=5)
    first, second = sorted(lists.iterdir())
    versionwrite.build_dataset([first], tmp_path / "data", BASE)
    version, _ = versionwrite.add_to_dataset(tmp_path / "data", [second])
    segments = json.loads((version / MANIFEST).read_text())["dumps"]["bibgraph.nt"]["segments"]
    assert len(segments) == 2
    whole = dump_bytes(version, "bibgraph.nt")
    app = make_app(BIBGRAPH_STORE=f"dataset:{tmp_path / 'data'}")
    try:
        client = app.test_client()
        answer = client.get("/download/bibgraph.nt")
        assert answer.status_code == 200 and answer.data == whole and answer.content_length == len(whole)
        assert client.get("/download/bibgraph.nt", headers={"If-None-Match": answer.headers["ETag"]}).status_code == 304
        middle = segments[0][1] - 10  # 20 bytes across the two segments
        part = client.get("/download/bibgraph.nt", headers={"Range": f"bytes={middle}-{middle + 19}"})
        assert part.status_code == 206 and part.data == whole[middle : middle + 20]
        turtle = client.get("/download/bibgraph.ttl").data
        assert set(ox.parse(turtle, format=ox.RdfFormat.TURTLE)) == set(ox.parse(whole, format=ox.RdfFormat.N_TRIPLES))
    finally:
        app.extensions["bibgraph"].close()
    last = version / "dumps" / segments[-1][0]
    data = bytearray(last.read_bytes())
    data[0] ^= 1
    last.write_bytes(bytes(data))
    app = make_app(BIBGRAPH_STORE=f"dataset:{tmp_path / 'data'}")
    try:
        assert app.test_client().get("/download/bibgraph.nt").status_code == 503
    finally:
        app.extensions["bibgraph"].close()
    assert current_version(tmp_path / "data") == version


def test_a_new_versions_derived_files_are_each_fsynced_once_before_it_is_published(tmp_path: Path) -> None:
    """Durable as before, without an fsync per file as it is written: every derived file a build or an add writes is
    fsynced exactly once, by the version's tree sync before the rename that publishes it."""
    lists, more = tmp_path / "base", tmp_path / "more"
    write_corpus(lists, 60, seed=5)
    write_corpus(more, 2, seed=6)
    synced: list[tuple[int, int]] = []
    real = os.fsync

    def fsync(handle: int) -> None:
        status = os.fstat(handle)
        synced.append((status.st_dev, status.st_ino))
        real(handle)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "fsync", fsync)
        for make in (
            lambda: versionwrite.build_dataset([lists], tmp_path / "data", BASE),
            lambda: versionwrite.add_to_dataset(tmp_path / "data", [more]),
        ):
            synced.clear()
            version, _ = make()
            files = [path for path in (version / DERIVED).iterdir() if path.suffix != ".sqlite"]  # SQLite syncs its own
            assert len(files) > 10
            for path in files:
                status = path.stat()
                assert synced.count((status.st_dev, status.st_ino)) == 1, path.name
