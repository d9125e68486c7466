"""Shared fixtures: the seed graph is built once per session (it is read-only in tests)."""

import io
import logging
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import Phase, settings

from bibgraph.graph.build import BuildReport, build_graph
from bibgraph.graph.parse import parse_stream
from bibgraph.graph.records import Problem, Record
from bibgraph.graph.stores.store import OxigraphGraphStore
from bibgraph.seeds import seed_directory

BASE = "http://bibgraph.test/"
CHECKOUT = Path(__file__).resolve().parent.parent


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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that uses the Virtuoso fixture carries the ``virtuoso`` marker (``-m "not virtuoso"`` skips them)."""
    for item in items:
        if "virtuoso_endpoint" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.virtuoso)


@pytest.fixture(scope="session")
def virtuoso_endpoint(tmp_path_factory, seed_store) -> str:
    """A Virtuoso on loopback holding the seed graph; the endpoint URL names its graph."""
    from bench.virtuoso import GRAPH, virtuoso
    from bibgraph.graph.dump import write_dump
    from bibgraph.graph.formats import rdf_syntax

    directory = tmp_path_factory.mktemp("virtuoso")
    dump = directory / "seeds.ttl"
    write_dump(seed_store, dump, rdf_syntax("turtle"))
    with virtuoso(directory, dump) as endpoint:
        yield f"{endpoint}?default-graph-uri={GRAPH}"


def make_app(**config):
    from bibgraph.web.app import create_app

    return create_app({"TESTING": True, "BIBGRAPH_BASE": BASE, "QUERY_TIMEOUT": 3.0, "QUERY_THREADS": 2, **config})


@pytest.fixture(scope="session")
def app():
    """The web app over the seeds, with two query threads and a short deadline."""
    application = make_app()
    yield application
    application.extensions["bibgraph"].close()


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


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
