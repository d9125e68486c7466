"""Shared fixtures: the seed graph is built once per session (it is read-only in tests)."""

from collections.abc import Callable
from pathlib import Path

import pytest

from bibgraph.graph.build import BuildReport, build_graph
from bibgraph.graph.store import OxigraphGraphStore
from bibgraph.seeds import seed_directory

BASE = "http://bibgraph.test/"


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
