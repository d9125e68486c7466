"""Shared fixtures: the seed graph and the seed datasets are built once per session (read-only in tests)."""

import gc
import hashlib
import io
import logging
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pyoxigraph as ox
import pytest
from flask import Flask
from hypothesis import Phase, settings

from bibgraph.graph.dataset.build import BuildReport, build_graph
from bibgraph.graph.ingest.parse import parse_stream
from bibgraph.graph.ingest.records import Problem, Record
from bibgraph.graph.stores.store import OxigraphGraphStore
from bibgraph.seeds import seed_directory

BASE = "http://bibgraph.test/"
CHECKOUT = Path(__file__).resolve().parent.parent
SEED_FILES = sorted(seed_directory().glob("*.txt"))


def parse_text(text: str, source: str, known_areas: frozenset[str] = frozenset()) -> tuple[list[Record], list[Problem]]:
    """A list written in the test, read as the build reads a file: as bytes, by the parser's one entry point."""
    return parse_stream(io.BytesIO(text.encode("utf-8")), source, known_areas)


# Every phase but "explain": after a failure it traces each shrinking run with sys.settrace, which on Python
# 3.11 made one failing search test run past pytest-timeout's 300 s, so CI reported a timeout, not the
# counterexample. Shrinking still gives the smallest failing case, and print_blob a way to replay it.
# No deadline: Hypothesis's default (200 ms an example) is a timing assert, which failed a parser test once on
# a loaded machine; speed is measured in bench/, and pytest-timeout still bounds a test that hangs.
settings.register_profile(
    "bibgraph",
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
    print_blob=True,
    deadline=None,
)
settings.load_profile("bibgraph")


def pytest_configure(config: pytest.Config) -> None:
    """Refuse to test a stale installed copy: the package must be this checkout (``pip install -e .`` here)."""
    import bibgraph.graph

    where = Path(next(iter(bibgraph.graph.__path__))).resolve()
    if not where.is_relative_to(CHECKOUT):
        raise pytest.UsageError(
            f"bibgraph.graph is imported from {where}, not from the checkout under test ({CHECKOUT}):"
            f" run `python -m pip install -e '.[test]'` in {CHECKOUT} with the interpreter that runs pytest"
        )


@pytest.fixture(scope="session")
def seed_build() -> tuple[OxigraphGraphStore, BuildReport]:
    return build_graph([seed_directory()], base=BASE, progress=False)


@pytest.fixture(scope="session")
def seed_store(seed_build: tuple[OxigraphGraphStore, BuildReport]) -> OxigraphGraphStore:
    return seed_build[0]


def _contents(root: Path) -> dict[str, str]:
    """Every file below ``root`` (symlinks by their target) and its SHA-256: what a reader must leave as it was."""
    return {
        str(path.relative_to(root)): f"-> {path.readlink()}"
        if path.is_symlink()
        else hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_symlink() or path.is_file()
    }


def _shared_dataset(root: Path, *lists: Path) -> Iterator[Path]:
    """A dataset of ``lists`` built once by the command, for tests that only read it (a test that changes a
    dataset takes a copy: ``dataset``); its teardown fails when any test changed it."""
    from bibgraph.web.commands.cli import main

    assert main(["build", *map(str, lists), "--dataset", str(root), "--base", BASE, "--quiet"]) == 0
    built = _contents(root)
    yield root
    assert _contents(root) == built, f"a test changed the shared dataset {root}: copy it first (fixture `dataset`)"


@pytest.fixture(scope="session")
def seed_dataset(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A dataset of every seed list (a ``current`` pointer to its one version), read-only."""
    yield from _shared_dataset(tmp_path_factory.mktemp("datasets") / "seeds", seed_directory())


@pytest.fixture(scope="session")
def first_list_dataset(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A dataset of the first seed list only (the other lists are there to add to it), read-only."""
    yield from _shared_dataset(tmp_path_factory.mktemp("datasets") / "first", SEED_FILES[0])


@pytest.fixture
def dataset(first_list_dataset: Path, tmp_path: Path) -> Path:
    """A copy of :func:`first_list_dataset` to change (its ``current`` pointer is a relative symlink: it follows)."""
    return Path(shutil.copytree(first_list_dataset, tmp_path / "dataset", symlinks=True))


@pytest.fixture
def write_list(tmp_path: Path) -> Callable[..., Path]:
    """Write a paper list (text or bytes) into a temporary file and return its path."""

    def write(content: str | bytes, name: str = "list.txt") -> Path:
        path = tmp_path / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path

    return write


def pytest_collection_finish(session: pytest.Session) -> None:
    """Everything imported so far (pytest, Hypothesis, rdflib, every test module) goes to the permanent generation:
    the full collections a build makes (``gc.collect()``, for its memory at scale) then scan what the tests made,
    not the whole test process (0.1-0.9 s a build before, most of some tests' time)."""
    gc.freeze()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that uses the Virtuoso fixture carries the ``virtuoso`` marker (``-m "not virtuoso"`` skips them)."""
    for item in items:
        if "virtuoso_endpoint" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.virtuoso)


@pytest.fixture(scope="session")
def virtuoso_endpoint(tmp_path_factory, seed_store) -> str:
    """A Virtuoso on loopback holding the seed graph; the endpoint URL names its graph."""
    from bench.virtuoso import GRAPH, virtuoso
    from bibgraph.graph.dataset.dumps import write_dump
    from bibgraph.graph.rdf.formats import rdf_syntax

    directory = tmp_path_factory.mktemp("virtuoso")
    dump = directory / "seeds.ttl"
    write_dump(seed_store, dump, rdf_syntax("turtle"))
    with virtuoso(directory, dump) as endpoint:
        yield f"{endpoint}?default-graph-uri={GRAPH}"


# A query no deadline lets finish: four patterns with no variable in common, the seeds' triples to the fourth power
RUNAWAY = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"
# Joined into a query, a new UUID per evaluation, the same on every row (``?stamp``): an answer that comes again with
# the stamp of an earlier one came from the answer cache. (A stopped worker once stood for "only the cache can answer";
# whatever continued it, such as a signal to the process group, answered the query and failed the test by chance.)
STAMP = "{ SELECT (STRUUID() AS ?stamp) WHERE {} }"


def stamps(body: bytes, syntax: str) -> set[str]:
    """The evaluation stamps (:data:`STAMP`) of a SELECT answer in ``syntax`` ("json", "tsv"): one per evaluation."""
    results = ox.parse_query_results(body, format=ox.QueryResultsFormat.from_extension(syntax))
    return {row["stamp"].value for row in results}


def make_app(**config):
    from bibgraph.web.app import create_app

    return create_app({"TESTING": True, "BIBGRAPH_BASE": BASE, "QUERY_TIMEOUT": 3.0, "QUERY_THREADS": 2, **config})


@contextmanager
def app_with(**config: object) -> Iterator[Flask]:
    """:func:`make_app` with ``config``, its query workers stopped when done."""
    application = make_app(**config)
    try:
        yield application
    finally:
        application.extensions["bibgraph"].close()


@pytest.fixture(scope="session")
def app() -> Iterator[Flask]:
    """The web app over the seeds, with two query threads and a short deadline."""
    with app_with() as application:
        yield application


@pytest.fixture(scope="session")
def short_app() -> Iterator[Flask]:
    """The seeds' app with a 1.5 s query deadline (the explanation tests of the web process share it)."""
    with app_with(QUERY_TIMEOUT=1.5) as application:
        yield application


@pytest.fixture(scope="session")
def proxied() -> Iterator[Flask]:
    """The seeds' app behind one trusted proxy (``PROXY_HOPS=1``)."""
    with app_with(PROXY_HOPS=1) as application:
        yield application


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


@pytest.fixture(scope="session")
def seed_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``bibgraph serve`` of the seeds on a free loopback port (its base URL is the base IRI), started once for the
    browser tests: they read it."""
    from bench.servers import bibgraph_server

    with bibgraph_server([], tmp_path_factory.mktemp("seed-server") / "serve.log") as base:
        yield base


@pytest.fixture(scope="module")
def browser():
    """Debian's chromium driven by Playwright (``playwright install`` cannot fetch browsers here)."""
    from playwright.sync_api import sync_playwright

    from bench.servers import CHROMIUM, CHROMIUM_FLAGS

    assert Path(CHROMIUM).exists(), "Debian's chromium is needed: run tests/setup-system.sh"
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield instance
        instance.close()


@pytest.fixture
def restored_loggers():
    """``logs.configure`` sets process-wide loggers: put them back for the other tests."""
    saved = {
        name: (lg.handlers[:], lg.level, lg.propagate)
        for name in ("bibgraph", "waitress")
        for lg in [logging.getLogger(name)]
    }
    yield
    for name, (handlers, level, propagate) in saved.items():
        logger = logging.getLogger(name)
        logger.handlers[:], logger.level, logger.propagate = handlers, level, propagate
