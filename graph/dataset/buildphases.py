"""A dataset build's phases, each in a child process that exits before the next one starts.

At a million papers the parse, identity and load left ~1.0 GB resident in the build's process (the catalogue's
and RocksDB's pages, glibc's heap) when the VoID counts began (their hash sets: +1.2 GB) and when the derive began
(the whole co-author exports: +1.5 GB): the whole build peaked at 3.1 GB. Each phase here runs in a child started
for it (:func:`~bibgraph.graph.serving.childprocess.in_child`): the store is filled and closed by one
(:func:`load_lists`), counted and described by another (:func:`describe`), and the derive that follows runs in a
process that never held either. What a child hands back is small: the report, the roles' arrays, the dumps' ends.
"""

from collections.abc import Sequence
from pathlib import Path

from bibgraph.graph.dataset.build import BuildReport, describe_store
from bibgraph.graph.dataset.derived import DerivedFiles, derived_key
from bibgraph.graph.dataset.directory import DERIVED, DUMPS, STORE
from bibgraph.graph.dataset.dumps import complete_streamed_dumps, streamed_ntriples, write_dataset_dumps
from bibgraph.graph.dataset.opener import fill
from bibgraph.graph.dataset.searchspool import spooling
from bibgraph.graph.dataset.void import VoidCounts, void_quads
from bibgraph.graph.identity import numbering
from bibgraph.graph.rdf.iris import Iris
from bibgraph.graph.stores.store import OxigraphGraphStore


def load_lists(version: Path, inputs: Sequence[Path], base: str, served: Path | None) -> BuildReport:
    """Parse ``inputs`` into ``version``'s store, its N-Triples dump written as the data streams, and its person
    map written, keeping the keys of ``served``'s (the version a rebuild replaces, its files checked by the caller);
    not described (:func:`describe`). The incidence the pass made is written to ``derived/`` as soon as it is made
    (never held while the last blocks load), where the derive reads it (not from the store); so are the search
    index's texts (:mod:`~bibgraph.graph.dataset.searchspool`). The report, without its person map (written, not
    sent back)."""
    published = numbering.read_version(served) if served is not None else None
    store = OxigraphGraphStore.disk(version / STORE)
    (version / DERIVED).mkdir(exist_ok=True)
    derived = DerivedFiles.unpublished(version)
    with streamed_ntriples(version / DUMPS) as ntriples, spooling(version) as search:
        report = fill(
            store,
            inputs,
            base,
            ntriples,
            numbering=published,
            roles=True,
            describe=False,
            incidence=lambda made: derived.save(derived_key("incidence"), made),
            search=search,
        )
    report = report or BuildReport()
    store.close()
    if report.numbering is not None:  # the person keys published: a rebuild into this dataset keeps them
        report.numbering.write(version / numbering.FILE_NAME)
    report.numbering = None
    return report


def describe(version: Path, base: str, counts: VoidCounts | None = None) -> tuple[int, dict[str, dict[str, int]]]:
    """Load the VoID description of ``version``'s filled store (stating ``counts``, the load's tally, else the
    engine's count) and end its dumps with it (the Turtle dump written from the N-Triples one first); the triples
    the store then holds and the manifest's ``dumps`` entry."""
    store = OxigraphGraphStore.disk(version / STORE)
    iris = Iris(base)
    triples = describe_store(store, iris, counts)
    dumps = complete_streamed_dumps(version / DUMPS, void_quads(store, iris))
    store.compact()  # the build's last write: the next add's writes go beside its tables, none rewritten
    store.close()
    return triples, dumps


def load_dumps(version: Path, inputs: Sequence[Path], base: str) -> tuple[BuildReport, dict[str, dict[str, int]]]:
    """Load ``inputs`` (dumps among them) into ``version``'s store and write its dumps from it (what a dump holds is
    not streamed); its person map written. The report and the manifest's ``dumps`` entry."""
    store = OxigraphGraphStore.disk(version / STORE)
    report = fill(store, inputs, base) or BuildReport()
    report.triples = report.triples or store.triple_count()  # dumps alone: none counted (an add starts here)
    numbering.of_store(store).write(version / numbering.FILE_NAME)  # the persons the loaded graph publishes
    dumps = write_dataset_dumps(store, version / DUMPS, void_quads(store, Iris(base)))
    store.compact()
    store.close()
    report.numbering = None
    return report, dumps
