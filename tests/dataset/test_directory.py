"""Dataset directories: ``build --dataset DIR`` writes one atomically; ``serve DIR`` answers as serving the lists."""

import gc
import gzip
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import urllib.parse
import urllib.request
from pathlib import Path
from unittest import mock

import pyoxigraph as ox
import pytest
from rdflib import Graph

from bench.generate import write_corpus
from bench.servers import bibgraph_server
from bibgraph.graph.dataset import sitedata, wholeexports
from bibgraph.graph.dataset.derived import DerivedFiles
from bibgraph.graph.dataset.directory import (
    DERIVED,
    FORMAT_VERSION,
    MANIFEST,
    POINTER,
    DatasetError,
    checksums,
    current_version,
    is_dataset,
    verify,
)
from bibgraph.graph.dataset.dumpsegments import JoinedFile, parts
from bibgraph.graph.networks import engine, incidence
from bibgraph.graph.networks.spec import COAUTHORS
from bibgraph.graph.rdf.vocab import BG
from bibgraph.seeds import seed_directory
from bibgraph.web.commands import versionwrite
from bibgraph.web.commands.cli import main
from bibgraph.web.maps.cache import derived_key
from tests.conftest import BASE, make_app
from tests.networks.test_incidence import same_incidence

# Pages and views compared between a server over the dataset and one over the lists themselves.
PAGES = (
    "/",
    "/graph/coauthors",
    "/graph/coauthors?min_papers=2",
    "/graph/topics",
    "/search?q=learning",
    "/search?q=wang",
    "/areas",
    "/dataset",
    "/graph/authors.json?q=li",
    "/download/bibgraph.ttl",
    "/download/bibgraph.nt.gz",
    "/download/bibgraph.jsonld",
    *(f"/graph/coauthors.{fmt}" for fmt in ("graphml", "gexf", "json", "vosviewer")),  # whole networks' downloads
    "/graph/topics.vosviewer",
)
PAPERS_PER_AREA = """PREFIX dcterms: <http://purl.org/dc/terms/>
SELECT ?concept (COUNT(?paper) AS ?n) WHERE { ?paper dcterms:subject ?concept } GROUP BY ?concept ORDER BY ?concept"""


@pytest.fixture(scope="module")
def dataset_client(seed_dataset: Path):
    app = make_app(BIBGRAPH_STORE=f"dataset:{seed_dataset}")
    yield app.test_client()
    app.extensions["bibgraph"].close()


GRAPH_DATA = re.compile(rb'(<script type="application/json" id="graph-data">)(.*?)(</script>)', re.S)


def _comparable(body: bytes) -> bytes:
    """A page with its drawn network's node and edge lists sorted: networkx iterates sets, whose order
    (hence the order of the lists, never their content) differs between processes."""

    def sort(match: re.Match[bytes]) -> bytes:
        data = json.loads(match[2])
        for key in ("nodes", "edges"):
            data[key] = sorted(data.get(key, []), key=lambda item: json.dumps(item, sort_keys=True))
        return match[1] + json.dumps(data, sort_keys=True).encode() + match[3]

    return GRAPH_DATA.sub(sort, body)


def _triples(path: str, body: bytes) -> set[tuple[str, str, str]]:
    """The triples of a dump download (none of bibgraph's dumps holds a blank node)."""
    if path.endswith(".gz"):
        body, path = gzip.decompress(body), path.removesuffix(".gz")
    syntax = {"ttl": "turtle", "nt": "nt", "jsonld": "json-ld"}[path.rsplit(".", 1)[1]]
    return {(str(s), str(p), o.n3()) for s, p, o in Graph().parse(data=body, format=syntax)}


def _author_paths(client, count: int = 3) -> list[str]:
    """Paths of the first few authors' pages (read through SPARQL, as any client would)."""
    query = f"SELECT ?a WHERE {{ ?a a <http://xmlns.com/foaf/0.1/Person> }} ORDER BY ?a LIMIT {count}"
    answer = client.get("/sparql", query_string={"query": query}, headers={"Accept": "application/json"})
    iris = [row["a"]["value"] for row in answer.get_json()["results"]["bindings"]]
    return ["/" + iri.removeprefix(BASE) for iri in iris]


def test_a_dataset_holds_a_complete_checked_version(seed_dataset: Path) -> None:
    assert is_dataset(seed_dataset)
    version = current_version(seed_dataset)
    manifest = json.loads((version / MANIFEST).read_text(encoding="utf-8"))
    assert manifest["version"] == FORMAT_VERSION and manifest["base"] == BASE
    assert manifest["counts"]["papers"] == 40 and manifest["counts"]["authors"] == 203
    assert {"store", "dumps", DERIVED} <= {path.name for path in version.iterdir()}
    assert any(name.startswith(f"{DERIVED}/") for name in manifest["checksums"])
    assert verify(version) == []
    damaged = next((version / DERIVED).iterdir())
    original = damaged.read_bytes()
    try:
        damaged.write_bytes(original + b"x")
        assert verify(version) == [str(damaged.relative_to(version))]
    finally:
        damaged.write_bytes(original)


def test_pages_and_sparql_answer_as_serving_the_lists(client, dataset_client) -> None:
    """Differential: every page, view and query answers the same from the dataset as from the lists."""
    paths = [*PAGES, *_author_paths(client)]
    for path in paths:
        direct, opened = client.get(path), dataset_client.get(path)
        assert (direct.status_code, opened.status_code) == (200, 200), path
        if path.startswith("/download/"):  # the same graph; a disk store lists its triples in another order
            assert _triples(path, opened.data) == _triples(path, direct.data), path
        else:
            assert _comparable(opened.data) == _comparable(direct.data), path
    for query in (PAPERS_PER_AREA, "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"):
        headers = {"Accept": "text/csv"}
        direct = client.get("/sparql", query_string={"query": query}, headers=headers)
        opened = dataset_client.get("/sparql", query_string={"query": query}, headers=headers)
        assert opened.status_code == 200 and opened.data == direct.data


def test_views_read_the_kept_derivations_rather_than_the_store(seed_dataset: Path, monkeypatch) -> None:
    """A server opened on a dataset draws the default maps without reading the authorship rows."""

    def refuse(store):
        raise AssertionError("the authorship rows were read again")

    monkeypatch.setattr(incidence, "incidence_of", refuse)  # the web cache imports it when it first derives
    app = make_app(BIBGRAPH_STORE=f"dataset:{seed_dataset}")
    try:
        client = app.test_client()
        for path in ("/graph/coauthors", "/graph/topics", "/", "/search?q=learning"):
            assert client.get(path).status_code == 200, path
    finally:
        app.extensions["bibgraph"].close()


def test_each_areas_and_subareas_default_map_is_kept_and_other_filters_are_computed(
    seed_dataset: Path, monkeypatch
) -> None:
    """The build keeps the default co-author map of every area and subarea and every area's topic map; a
    map under other filters is computed from the kept incidence when first asked for."""

    def refuse(*arguments):
        raise AssertionError("a map was computed")

    monkeypatch.setattr(engine, "coauthor_network", refuse)
    monkeypatch.setattr(engine, "topic_map", refuse)
    app = make_app(BIBGRAPH_STORE=f"dataset:{seed_dataset}")
    try:
        client = app.test_client()
        topics = client.get("/graph/topics.json").get_json()
        kinds = {node["id"]: node["kind"] for node in topics["nodes"]}
        assert "area" in kinds.values() and "subarea" in kinds.values()
        for iri, kind in kinds.items():
            where = urllib.parse.quote(iri.removeprefix(BASE), safe="/")
            assert client.get(f"/graph/coauthors?{kind}={where}").status_code == 200, iri
            if kind == "area":
                assert client.get(f"/graph/topics?subareas={where}").status_code == 200, iri
        assert client.get("/graph/topics?subareas=all").status_code == 200
        with pytest.raises(AssertionError, match="a map was computed"):
            client.get(f"/graph/coauthors?{kind}={where}&min_papers=2")
    finally:
        app.extensions["bibgraph"].close()


def test_a_failed_build_leaves_the_served_version(seed_dataset: Path, tmp_path: Path, monkeypatch) -> None:
    root = Path(shutil.copytree(seed_dataset, tmp_path / "dataset", symlinks=True))  # as a build of the seeds left it
    before = os.readlink(root / POINTER)

    def crash(version: Path, base: str, previous: Path | None = None, **options: object) -> None:
        (version / DERIVED / "half-written").write_bytes(b"...")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(versionwrite, "derive", crash)
    assert main(["build", "--dataset", str(root), "--base", BASE, "--quiet"]) == 1
    assert os.readlink(root / POINTER) == before
    assert sorted(path.name for path in root.iterdir()) == sorted([POINTER, before])
    assert verify(root / before) == []
    fresh = tmp_path / "fresh"
    assert main(["build", "--dataset", str(fresh), "--base", BASE, "--quiet"]) == 1
    assert sorted(path.name for path in tmp_path.iterdir()) == ["dataset"]


def test_a_new_build_switches_versions_and_keeps_the_one_before(seed_dataset: Path, tmp_path: Path) -> None:
    root = Path(shutil.copytree(seed_dataset, tmp_path / "dataset", symlinks=True))  # the first build's
    versions = [os.readlink(root / POINTER)]
    for _ in range(2):
        assert main(["build", "--dataset", str(root), "--base", BASE, "--quiet"]) == 0
        versions.append(os.readlink(root / POINTER))
    assert len(set(versions)) == 3
    assert sorted(path.name for path in root.iterdir()) == sorted([POINTER, *versions[1:]])


def test_a_directory_that_is_no_dataset_is_refused(tmp_path: Path, capsys) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine\n", encoding="utf-8")
    assert main(["build", "--dataset", str(other), "--quiet"]) == 2
    assert "not a bibgraph dataset" in capsys.readouterr().err
    assert [path.name for path in other.iterdir()] == ["notes.txt"]


def test_a_dataset_of_another_format_version_is_refused(seed_dataset: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    copy.mkdir()
    version = current_version(seed_dataset)
    (copy / version.name).mkdir()
    manifest = json.loads((version / MANIFEST).read_text(encoding="utf-8"))
    (copy / version.name / MANIFEST).write_text(json.dumps({**manifest, "version": FORMAT_VERSION + 1}))
    (copy / POINTER).symlink_to(version.name)
    with pytest.raises(DatasetError, match="build it again"):
        current_version(copy)


def test_serve_opens_a_dataset_directory(seed_dataset: Path, tmp_path: Path) -> None:
    with bibgraph_server([str(seed_dataset)], tmp_path / "serve.log") as base:
        for path in ("/", "/graph/coauthors", "/health"):
            with urllib.request.urlopen(base + path, timeout=30) as answer:
                assert answer.status == 200
        query = urllib.parse.quote("SELECT (COUNT(?p) AS ?n) WHERE { ?p <http://purl.org/dc/terms/abstract> ?a }")
        with urllib.request.urlopen(f"{base}/sparql?query={query}&format=csv", timeout=30) as answer:
            assert answer.read().decode().splitlines() == ["n", "40"]
    assert "dataset " in (tmp_path / "serve.log").read_text(encoding="utf-8")


def test_serve_refuses_another_base_for_a_dataset(seed_dataset: Path, capsys) -> None:
    assert main(["serve", str(seed_dataset), "--base", "http://elsewhere.test/"]) == 2
    assert f"built with base IRI {BASE}" in capsys.readouterr().err


SEED_FILES = sorted(seed_directory().glob("*.txt"))


@pytest.fixture(scope="module")
def lists(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The two seed lists, and a third (sorting last) that repeats a record and respells an author."""
    directory = tmp_path_factory.mktemp("lists")
    for path in SEED_FILES:
        (directory / path.name).write_bytes(path.read_bytes())
    lines = [line for line in SEED_FILES[0].read_text(encoding="utf-8").splitlines() if line.strip()]
    area, authors, abstract = lines[1:4]  # the first record, as written
    respelled = f"{area}\n\n{authors.upper()}\n\n{abstract} Seen again with the names in capitals."
    (directory / "zz_again.txt").write_text(f"{area}\n\n{authors}\n\n{abstract}\n\n{respelled}\n", encoding="utf-8")
    return directory


def dump_bytes(version: Path, name: str) -> bytes:
    """A version's dump ``name`` as a download reads it: its segments in order."""
    entry = json.loads((version / MANIFEST).read_text())["dumps"][name]
    with JoinedFile(version / "dumps", parts(version / "dumps", name, entry)) as joined:
        return joined.read()


def _sorted_dump(root: Path) -> list[str]:
    return sorted(dump_bytes(current_version(root), "bibgraph.nt").decode().splitlines())


@mock.patch.object(sitedata, "ORDER_CHUNK", 3)  # orders of several pieces, some kept as they were
def test_add_equals_a_build_of_all_the_lists(lists: Path, tmp_path: Path, capsys) -> None:
    """Papers keep their IRIs, a record seen again gains a source, a known person keeps their name:
    the graph, the counts and every view after build + add are those of one build of all the lists."""
    first, rest = sorted(lists.iterdir())[0], sorted(lists.iterdir())[1:]
    added, whole = tmp_path / "added", tmp_path / "whole"
    assert main(["build", str(first), "--dataset", str(added), "--base", BASE, "--quiet"]) == 0
    before = set(_sorted_dump(added))
    for path in rest:  # one add at a time: the second continues dumps that were continued already
        served = current_version(added)
        # the views' incidence is the previous one extended with what was added, not read again from the store,
        # and the concepts' figures and orders are the previous ones updated, not derived again
        with (
            mock.patch.object(incidence, "incidence_of", side_effect=AssertionError("read again")),
            mock.patch.object(sitedata, "concept_index", side_effect=AssertionError("concept index derived again")),
        ):
            assert main(["add", str(added), str(path)]) == 0
        assert "added to" in capsys.readouterr().out
        _assert_continued(served, current_version(added))
        pieces = [(path, served / DERIVED / path.name) for path in (current_version(added) / DERIVED).glob("*.json")]
        assert any(old.exists() and os.path.samefile(path, old) for path, old in pieces), (
            "no order piece kept as it was"
        )
    assert main(["build", str(lists), "--dataset", str(whole), "--base", BASE, "--quiet"]) == 0
    dump = _sorted_dump(added)
    assert dump == _sorted_dump(whole)
    assert {line for line in before if "/dataset" not in line.split(" ", 1)[0]} <= set(dump)  # nothing renamed
    assert any("/paper/" in line and "#source-2>" in line for line in dump)  # the record seen again
    incidences = [
        DerivedFiles(current_version(root) / DERIVED).load(derived_key("incidence")) for root in (added, whole)
    ]
    assert incidences[0][0] and incidences[1][0]
    same_incidence(incidences[0][1], incidences[1][1])
    manifests = [json.loads((current_version(root) / MANIFEST).read_text()) for root in (added, whole)]
    assert manifests[0]["counts"] == manifests[1]["counts"]
    kept = [DerivedFiles(current_version(root) / DERIVED) for root in (added, whole)]
    figures = [files.load(derived_key("page", None, sitedata.CONCEPT_FIGURES)) for files in kept]
    assert figures[0] == figures[1] and figures[1][0]
    concepts = figures[1][1].values()
    for concept in concepts:  # the orders, piece by piece (hard links to the previous pieces before the changes)
        for number in range(max(1, -(-concept.papers // sitedata.ORDER_CHUNK))):
            found = [files.load(sitedata.order_piece_key(concept.iri, number)) for files in kept]
            assert found[0] == found[1] and found[1][0], (concept.iri, number)
    # the whole co-author network's exports are left to the first download (the same bytes: PAGES); the topics' kept
    for spec in wholeexports.DEFAULT_EXPORTS:
        files = [wholeexports.export_file(current_version(r) / DERIVED, spec, "json", "weight") for r in (added, whole)]
        assert files[1].is_file() and files[0].is_file() == (spec.kind != COAUTHORS), spec
    apps = [make_app(BIBGRAPH_STORE=f"dataset:{root}") for root in (added, whole)]
    try:
        clients = [app.test_client() for app in apps]
        areas = [concept.iri.removeprefix(BASE.rstrip("/")) for concept in concepts]
        for path in (*PAGES, *_author_paths(clients[1]), *areas, *(f"{area}?page=2" for area in areas)):
            one, other = (client.get(path) for client in clients)
            assert one.status_code == other.status_code == 200, path
            if path.startswith("/download/"):  # a continued dump: the same graph, in another order
                assert _triples(path, one.data) == _triples(path, other.data), path
            else:
                assert _comparable(one.data) == _comparable(other.data), path
    finally:
        for app in apps:
            app.extensions["bibgraph"].close()


def _assert_continued(served: Path, version: Path) -> None:
    """``version``'s dumps are ``served``'s data segments (hard links, never copied nor read) and one new segment
    each; its store's table files are hard links to ``served``'s; the checksums of every shared file the manifest
    carried over (and they hold)."""
    before, after = (json.loads((path / MANIFEST).read_text())["dumps"] for path in (served, version))
    for name, ends in before.items():
        old, new = (dump_bytes(path, name) for path in (served, version))
        assert new[: ends["data_bytes"]] == old[: ends["data_bytes"]] and after[name]["data_bytes"] > len(old) // 2
        *earlier, (last, _) = after[name]["segments"]
        assert all(os.path.samefile(version / "dumps" / file, served / "dumps" / file) for file, _ in earlier)
        assert not (served / "dumps" / last).exists()  # the one file this version adds
    linked = [(path, served / path.relative_to(version)) for path in (version / "store").glob("*.sst")]
    assert any(old.is_file() and os.path.samefile(path, old) for path, old in linked), "no checkpoint"
    files = [path.relative_to(version) for path in version.rglob("*") if path.is_file()]
    shared = [name for name in files if (served / name).is_file() and os.path.samefile(version / name, served / name)]
    assert verify(version) == []
    hashed, sha256 = [], hashlib.sha256
    with mock.patch("bibgraph.graph.dataset.directory.hashlib.sha256", lambda: hashed.append(1) or sha256()):
        assert checksums(version, served) == checksums(version)  # reused where linked, and right
    assert len(hashed) == 2 * len(checksums(version)) - len(shared)  # the linked files were not read again


def test_a_failed_add_leaves_the_served_version_and_readers_never_see_half(dataset: Path, monkeypatch) -> None:
    root = dataset
    served = os.readlink(root / POINTER)
    seen: list[str] = []
    half: list[str] = []
    stop = threading.Event()

    def read() -> None:  # a reader opening the dataset again and again while versions change
        while not stop.is_set():
            version = current_version(root)
            if not ((version / "store" / versionwrite.COMPLETE_MARKER).is_file() and verify(version) == []):
                half.append(version.name)
            seen.append(version.name)

    reader = threading.Thread(target=read)
    reader.start()
    try:
        original = versionwrite.derive

        def crash(version: Path, base: str, previous: Path | None = None, **options: object) -> None:
            original(version, base, previous, **options)
            raise KeyboardInterrupt  # as if killed once everything but the switch was written

        monkeypatch.setattr(versionwrite, "derive", crash)
        with pytest.raises(KeyboardInterrupt):
            main(["add", str(root), str(SEED_FILES[1])])
        assert os.readlink(root / POINTER) == served
        assert sorted(path.name for path in root.iterdir()) == sorted([POINTER, served])
        monkeypatch.setattr(versionwrite, "derive", original)
        assert main(["add", str(root), str(SEED_FILES[1])]) == 0
        now = os.readlink(root / POINTER)
        for _ in range(1000):  # until the reader has opened the new version (no timing is asserted)
            if seen[-1] == now:
                break
            threading.Event().wait(0.01)
    finally:
        stop.set()
        reader.join()
    assert now != served and set(seen) == {served, now} and half == []


def test_a_running_server_switches_to_an_added_version_without_failed_requests(dataset: Path, tmp_path: Path) -> None:
    root = dataset
    count = urllib.parse.quote("SELECT (COUNT(?p) AS ?n) WHERE { ?p <http://purl.org/dc/terms/abstract> ?a }")
    # one client (this test) with several requests at once: no fair-share limit on its queries, so any failure is
    # the switch's; its map computations keep the default share (identical work in progress is waited for)
    with bibgraph_server([str(root), "--client-queries", "0"], tmp_path / "serve.log") as base:

        def papers() -> int:
            with urllib.request.urlopen(f"{base}/sparql?query={count}&format=csv", timeout=60) as answer:
                return int(answer.read().decode().splitlines()[1])

        before = papers()
        failures: list[str] = []
        answered = [0]
        stop = threading.Event()

        def load() -> None:  # requests in flight all the time, before, during and after the switch
            while not stop.is_set():
                for path in ("/", "/graph/coauthors", "/graph/topics", "/search?q=learning", "/download/bibgraph.nt"):
                    try:
                        with urllib.request.urlopen(base + path, timeout=60) as answer:
                            answer.read()
                            answered[0] += 1
                    except OSError as error:
                        failures.append(f"{path}: {error}")

        clients = [threading.Thread(target=load) for _ in range(3)]
        for client in clients:
            client.start()
        try:
            assert main(["add", str(root), str(SEED_FILES[1])]) == 0
            after = before
            for _ in range(600):  # until the server has switched (bounded; no timing is asserted)
                after = papers()
                if after != before:
                    break
                threading.Event().wait(0.1)
            done = answered[0]
            while answered[0] < done + 10 and not failures:  # and served some more on the new version
                threading.Event().wait(0.1)
        finally:
            stop.set()
            for client in clients:
                client.join()
    assert (before, after) == (20, 40)
    assert failures == []
    assert "now serving dataset version" in (tmp_path / "serve.log").read_text(encoding="utf-8")


def test_an_add_killed_half_way_leaves_the_served_version(dataset: Path) -> None:
    """SIGKILL while the new version is being written: the pointer still names the old, complete
    version, and the next add removes what the killed one left and publishes normally."""
    root = dataset
    served = os.readlink(root / POINTER)
    command = [sys.executable, "-m", "bibgraph.web.commands.cli", "add", str(root), str(SEED_FILES[1])]
    adding = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(6000):  # until its version is being written (bounded; no timing is asserted)
            if any(path.name.startswith(".v-") for path in root.iterdir()) or adding.poll() is not None:
                break
            threading.Event().wait(0.01)
        adding.send_signal(signal.SIGKILL)
    finally:
        adding.wait()
    assert adding.returncode == -signal.SIGKILL, "the add finished before it could be killed"
    assert os.readlink(root / POINTER) == served and verify(root / served) == []
    assert main(["add", str(root), str(SEED_FILES[1])]) == 0
    assert sorted(path.name for path in root.iterdir()) == sorted([POINTER, served, os.readlink(root / POINTER)])


def test_the_streamed_dumps_hold_the_store_each_triple_once(tmp_path: Path, monkeypatch) -> None:
    """The N-Triples dump is written as the data streams into the store, the Turtle one converted from it:
    both hold exactly the store's triples (a name listed twice on a paper is two persons of that name, never one
    person holding two authorships of the paper), the data before ``data_bytes`` and the VoID description after."""
    lists = tmp_path / "lists"
    write_corpus(lists, 300)
    (lists / "zz_twice.txt").write_text(
        "论文检索\n\nSocial Aspects · Fairness\n\nAda Quill, Bert Lee, Ada Quill\n\nA paper listing an author twice.\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(versionwrite, "derive", lambda version, base, previous=None, roles=None: None)
    version, _ = versionwrite.build_dataset([lists], tmp_path / "dataset", BASE)
    store = ox.Store.read_only(str(version / "store"))
    twice = f"""PREFIX bg: <{BG}> PREFIX prov: <http://www.w3.org/ns/prov#> PREFIX foaf: <http://xmlns.com/foaf/0.1/>
    ASK {{ ?paper bg:authorship ?a, ?b . ?a prov:agent ?x . ?b prov:agent ?y . ?x foaf:name ?n . ?y foaf:name ?n
           FILTER(?x != ?y) }}"""
    assert bool(store.query(twice)), "the corpus has no name listed twice on a paper"
    one = f"""PREFIX bg: <{BG}> PREFIX prov: <http://www.w3.org/ns/prov#>
    ASK {{ ?paper bg:authorship ?a, ?b . ?a prov:agent ?x . ?b prov:agent ?x FILTER(?a != ?b) }}"""
    assert not bool(store.query(one)), "a person holds two authorships of one paper"
    held = set(store)
    void = {quad for quad in held if quad.subject.value.startswith(BASE + "dataset")}
    ends = json.loads((version / MANIFEST).read_text())["dumps"]
    for name, syntax in (("bibgraph.nt", ox.RdfFormat.N_TRIPLES), ("bibgraph.ttl", ox.RdfFormat.TURTLE)):
        data = (version / "dumps" / name).read_bytes()
        assert set(ox.parse(data, format=syntax)) == held, name
        head = data[: ends[name]["data_bytes"]]
        assert set(ox.parse(head, format=syntax)) == held - void and void, name
    assert len((version / "dumps" / "bibgraph.nt").read_bytes().splitlines()) == len(held)
    del store  # RocksDB's files and threads are let go now, not when a later collection finds it
    gc.collect()
