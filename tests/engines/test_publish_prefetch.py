"""``publish`` reads and writes the next batch while the engine loads this one, and stops reading when it stops.

At 1M papers reading a batch of 100,000 triples from the store took about 2 CPU-s, and the Oxigraph server's load of
it about as much: one after the other, the publish ran at the sum of the two (5,000 to 6,000 triples/s under load).
"""

import threading
from collections.abc import Iterator
from pathlib import Path

import pyoxigraph as ox
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bibgraph.graph.engines import publish as publish_module
from bibgraph.graph.engines.client import EngineError
from bibgraph.graph.engines.publish import PublishError, Target, prefetched, publish

WAIT = 10.0  # seconds a load waits for the next batch to be read: reached only when nothing reads it meanwhile


class _Engine:
    """The requests a publish makes, kept in memory; ``during_load`` runs inside each load."""

    def __init__(self, target: Target, fail_at: int | None = None) -> None:
        self.target = target
        self.loaded: list[bytes] = []
        self.fail_at = fail_at  # the load (1-based) the engine refuses
        self.during_load = lambda number: None

    def pointers(self) -> dict[str, list[str]]:
        return {key: [] for key in (publish_module.CURRENT, publish_module.PREVIOUS, publish_module.STAGING,
                                    publish_module.DROPPING)}  # fmt: skip

    def mark(self, insert: object = (), delete: object = ()) -> None:
        pass

    def load(self, graph: str, body: bytes) -> None:
        number = len(self.loaded) + 1
        if number == self.fail_at:
            raise EngineError("the engine answered 500: full")
        self.during_load(number)
        self.loaded.append(body)

    def count(self, graph: str) -> int:
        return sum(body.count(b"\n") for body in self.loaded) if graph != self.target.graph else 0


def _triple(i: int) -> ox.Triple:
    return ox.Triple(ox.NamedNode(f"http://x/s{i}"), ox.NamedNode("http://x/p"), ox.NamedNode(f"http://x/o{i}"))


@pytest.fixture
def dump(tmp_path: Path) -> Path:
    path = tmp_path / "source.nt"  # named for resolve_source; its triples are those the test gives
    path.write_text("<http://x/s> <http://x/p> <http://x/o> .\n", encoding="utf-8")
    return path


def _run(monkeypatch, dump: Path, source: Iterator[ox.Triple], engine: _Engine, batch: int) -> None:
    monkeypatch.setattr(publish_module, "source_triples", lambda path: source)
    monkeypatch.setattr(publish_module, "_engine", lambda target, timeout: engine)
    publish(dump, engine.target, batch)


def _prefetchers_stop() -> bool:
    for thread in threading.enumerate():
        if thread.name == "bibgraph-publish-prefetch":
            thread.join(WAIT)
    return not any(thread.name == "bibgraph-publish-prefetch" for thread in threading.enumerate())


def test_the_next_batch_is_read_while_the_engine_loads_one(monkeypatch, dump: Path) -> None:
    second_read = threading.Event()

    def source() -> Iterator[ox.Triple]:
        for i in range(6):
            if i == 2:
                second_read.set()  # the first triple of the second batch of 2
            yield _triple(i)

    engine = _Engine(Target.parse("http://127.0.0.1:1/store", "urn:g"))
    overlapped: list[bool] = []
    engine.during_load = lambda number: overlapped.append(second_read.wait(WAIT)) if number == 1 else None
    _run(monkeypatch, dump, source(), engine, 2)
    assert overlapped == [True]
    assert [body.count(b"\n") for body in engine.loaded] == [2, 2, 2]


@settings(max_examples=40, deadline=None)
@given(
    triples=st.integers(0, 30),
    batch=st.integers(1, 7),
    engine_fails=st.none() | st.integers(1, 6),
    source_fails=st.none() | st.integers(0, 30),
)
def test_the_engine_gets_the_source_in_order_and_a_stop_stops_the_reading(
    monkeypatch_module, dump_module: Path, triples: int, batch: int, engine_fails: int | None, source_fails: int | None
) -> None:
    def source() -> Iterator[ox.Triple]:
        for i in range(triples):
            if i == source_fails:
                raise PublishError("cannot read this dump")
            yield _triple(i)

    engine = _Engine(Target.parse("http://127.0.0.1:1/store", "urn:g"), engine_fails)
    stops = source_fails is not None and source_fails < triples
    readable = min(source_fails, triples) if source_fails is not None else triples
    made = readable // batch if stops else -(-readable // batch)  # the batch being read when it stops is not made
    failing = stops or (engine_fails is not None and engine_fails <= made)
    if failing:
        with pytest.raises(PublishError):
            _run(monkeypatch_module, dump_module, source(), engine, batch)
    else:
        _run(monkeypatch_module, dump_module, source(), engine, batch)
    sent = b"".join(engine.loaded)
    expected = ox.serialize([_triple(i) for i in range(readable)], format=ox.RdfFormat.N_TRIPLES) or b""
    assert expected.startswith(sent)  # what was loaded is the source's beginning, in order
    assert failing or sent == expected
    assert _prefetchers_stop()


@pytest.fixture(scope="module")
def monkeypatch_module() -> Iterator[pytest.MonkeyPatch]:
    with pytest.MonkeyPatch.context() as patch:
        yield patch


@pytest.fixture(scope="module")
def dump_module(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("prefetch") / "source.nt"
    path.write_text("<http://x/s> <http://x/p> <http://x/o> .\n", encoding="utf-8")
    return path


@given(items=st.lists(st.integers()), stop=st.none() | st.integers(0, 20))
def test_prefetched_gives_the_items_in_order_and_an_error_in_its_place(items: list[int], stop: int | None) -> None:
    def made() -> Iterator[int]:
        for i, item in enumerate(items):
            if i == stop:
                raise ValueError(i)
            yield item

    got: list[int] = []
    if stop is not None and stop < len(items):
        with pytest.raises(ValueError, match=f"^{stop}$"):
            got.extend(prefetched(made()))
        assert got == items[:stop]
    else:
        assert list(prefetched(made())) == items
    assert _prefetchers_stop()
