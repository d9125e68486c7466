"""A dataset build keeps the incidence its own pass made (``graph/networks/incidencebuild.py``): the derive does
not read it back from the store, and what is kept is what the store would give."""

import io
import weakref
from pathlib import Path

from bibgraph.graph.dataset import build
from bibgraph.graph.dataset.derived import DerivedFiles, derived_key
from bibgraph.graph.networks import incidence
from bibgraph.graph.stores.store import OxigraphGraphStore
from bibgraph.seeds import seed_directory
from bibgraph.web.commands import versionwrite
from tests.conftest import BASE
from tests.networks.test_incidencebuild import same_incidence


def test_a_dataset_build_keeps_its_passes_incidence_and_never_reads_it_from_the_store(
    tmp_path: Path, monkeypatch
) -> None:
    read_from_store = incidence.incidence_of

    def not_read(*args: object, **kwargs: object) -> None:
        raise AssertionError("the incidence was read from the store")

    monkeypatch.setattr(incidence, "incidence_of", not_read)
    version, _ = versionwrite.build_dataset([seed_directory()], tmp_path / "data", BASE)
    found, kept = DerivedFiles.unpublished(version).load(derived_key("incidence"))
    store = OxigraphGraphStore.disk(version / "store", read_only=True)
    assert found and same_incidence(kept, read_from_store(store))


class PersonLinesWatch(io.BytesIO):
    """A build's N-Triples output that notes, as each text is written, whether a person's line is in it while the
    incidence the build handed over is still alive somewhere."""

    def __init__(self, handed: list[weakref.ref]) -> None:
        super().__init__()
        self.handed = handed
        self.person_lines = 0
        self.held_while_persons_load = False

    def write(self, data: bytes) -> int:  # type: ignore[override]
        if b"<http://xmlns.com/foaf/0.1/Person>" in data:
            self.person_lines += 1
            self.held_while_persons_load |= any(ref() is not None for ref in self.handed)
        return super().write(data)


def test_the_build_holds_no_incidence_once_handed_over_while_the_persons_load(monkeypatch) -> None:
    """The incidence is handed to its keeper before the persons' lines stream into the store, and nothing of the
    build keeps it then (at a million papers it is ~200 MB on top of the load's peak). Each line is sent on alone
    (texts of one line), as a large build's blocks go while its persons' lines are still being made."""
    joined = build._texts
    monkeypatch.setattr(build, "_texts", lambda pieces: joined(pieces, limit=1))
    handed: list[weakref.ref] = []
    watch = PersonLinesWatch(handed)
    build.build_graph(
        [],
        base=BASE,
        progress=False,
        roles=True,
        ntriples=watch,
        incidence=lambda made: handed.append(weakref.ref(made)),
    )
    assert len(handed) == 1 and watch.person_lines > 0
    assert not watch.held_while_persons_load
