"""What the load phase lets go before the persons are decided and while they are (issue 28: the 1M build's peak is
there). The figures are tracemalloc's and the objects' own, relative to the same run: no absolute memory claim."""

import tracemalloc
from collections.abc import Iterator
from typing import Any

import pyoxigraph as ox

from bibgraph.graph.dataset import build
from bibgraph.graph.identity import join
from bibgraph.graph.identity.keys import fold, split_name
from bibgraph.seeds import seed_directory
from tests.conftest import BASE

CHARACTERS = 2_000_000  # one record's text: 4 MB as a str (a character past Latin-1), 6 MB encoded


def _big_line() -> str:
    return f'<{BASE}a> <{BASE}b> "{"名" * CHARACTERS}" .\n'


def test_a_stages_last_text_and_block_are_not_held_while_the_next_stage_runs() -> None:
    """The records' stage ends (``""``) before the persons are decided: its last text and its encoded block, the
    loader done with them, are held by no frame of the loader while the next pieces are made."""
    held: list[int] = []

    def pieces(baseline: list[int]) -> Iterator[str]:
        yield _big_line()
        yield ""
        held.append(tracemalloc.get_traced_memory()[0] - baseline[0])  # what the next stage starts beside
        yield f"<{BASE}c> <{BASE}d> <{BASE}e> .\n"

    store = ox.Store()
    baseline: list[int] = []
    tracemalloc.start()
    try:
        baseline.append(tracemalloc.get_traced_memory()[0])
        build.load_blocks(store, pieces(baseline))
    finally:
        tracemalloc.stop()
    assert len(store) == 2
    assert held and held[0] < CHARACTERS // 4, f"{held[0]:,} bytes still held from the records' stage"


def test_what_the_rules_read_is_let_go_before_the_persons_arrays_are_made(monkeypatch: Any) -> None:
    """Deciding's peak is where the persons' arrays are made (``join._persons``): by then the co-author answers
    kept, the names' lookup and the split names' caches (tens to hundreds of MB at a million papers) are gone."""
    seen: list[dict[str, int]] = []
    make = join._persons

    def watched(units: Any, authorships: Any, *rest: Any) -> Any:
        names = authorships.names
        seen.append(
            {
                "answers kept": len(names._kept),
                "names' lookup": len(names.ids) + len(authorships.collected.name_table.ids),
                "split names cached": split_name.cache_info().currsize + fold.cache_info().currsize,
                "names": len(names.strings),
            }
        )
        return make(units, authorships, *rest)

    monkeypatch.setattr(join, "_persons", watched)
    _, report = build.build_graph([seed_directory()], base=BASE, describe=False)
    assert report.authors and len(seen) == 1
    figures = seen[0]
    assert figures.pop("names") > 0
    assert figures == {"answers kept": 0, "names' lookup": 0, "split names cached": 0}
