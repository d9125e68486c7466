"""From input files to a loaded store: parse, resolve identities, load, describe (VoID)."""

import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import pyoxigraph as ox
from tqdm import tqdm

from bibgraph.graph.dataset.searchspool import DocumentSpool
from bibgraph.graph.dataset.triples import Catalogue
from bibgraph.graph.dataset.void import VoidCounts, engine_counts, void_lines
from bibgraph.graph.dataset.voidtally import VoidTally
from bibgraph.graph.identity import curation
from bibgraph.graph.identity.curation import Applied
from bibgraph.graph.identity.features import Collected
from bibgraph.graph.identity.numbering import Numbering
from bibgraph.graph.ingest.inputs import find_input_files
from bibgraph.graph.ingest.parse import parse_file, scan_areas
from bibgraph.graph.ingest.records import Problem, Record, Repair, require_records
from bibgraph.graph.networks.incidence import Incidence
from bibgraph.graph.rdf.iris import DEFAULT_BASE, Iris
from bibgraph.graph.rdf.ntriples import unpublishable
from bibgraph.graph.serving.memory import fewer_collections, release_free_memory
from bibgraph.graph.site.roles import Roles
from bibgraph.graph.stores.store import OxigraphGraphStore
from bibgraph.seeds import seed_directory

PROGRESS_MIN_BYTES = 2_000_000
EXAMPLES_PER_CLASS = 5
CHUNK_CHARS = 1 << 19  # characters of whole lines joined into one text for the memory store's loader and the dump
LOAD_CHARS = 40_000_000  # characters of whole lines per bulk_load call: about 250,000 triples, 0.5 GB of peak
# Pieces per bulk_load call at most: a record's lines are one piece (about 10,000 a block: LOAD_CHARS ends those), a
# person's line is one (short lines, a str each in the batch: some 300,000 in LOAD_CHARS). The persons' blocks took
# the 1M load to 2,046 MB, next to deciding's peak (bench.building.loadpeak).
LOAD_PIECES = 150_000


@dataclass
class RepairTally:
    """Name repairs (or warnings) of one class: how many, and the first few with file and line."""

    count: int = 0
    examples: list[str] = field(default_factory=list)

    def add(self, source: str, repair: Repair) -> None:
        self.count += 1
        if len(self.examples) < EXAMPLES_PER_CLASS:
            shown = (
                repr(repair.written)
                if repair.written == repair.cleaned
                else f"{repair.written!r} -> {repair.cleaned!r}"
            )
            self.examples.append(f"{source}:{repair.line}: {shown}")


def _tally_lines(title: str, tallies: dict[str, RepairTally]) -> Iterator[str]:
    total = sum(t.count for t in tallies.values())
    classes = ", ".join(
        f"{kind} {t.count:,}" for kind, t in sorted(tallies.items(), key=lambda kv: (-kv[1].count, kv[0]))
    )
    yield f"{title}: {total:,}" + (f" ({classes})" if classes else "")
    for kind, tally in sorted(tallies.items()):
        yield f"  {kind}: {tally.count:,}"
        for example in tally.examples:
            yield f"    {example}"


@dataclass
class BuildReport:
    """What a build read and made: the one-line summary and the data-quality report."""

    files: int = 0
    records: int = 0
    papers: int = 0
    authors: int = 0
    authorships: int = 0
    concepts: int = 0
    triples: int = 0
    problems: list[Problem] = field(default_factory=list)
    truncated: list[str] = field(default_factory=list)
    merged_names: list[tuple[str, list[str]]] = field(default_factory=list)
    duplicate_records: int = 0
    repairs: dict[str, RepairTally] = field(default_factory=dict)
    warnings: dict[str, RepairTally] = field(default_factory=dict)
    shared_names: int = 0  # persons holding a name another person holds too (each with a numbered IRI)
    curation: Applied = field(default_factory=Applied)
    identity_seconds: float = 0.0
    numbering: Numbering | None = None  # the person keys to publish (graph.identity.numbering)
    roles: Roles | None = None  # the authorships' positions a dataset keeps (graph/site/roles.py), when asked for
    void: VoidCounts | None = None  # the VoID statistics tallied as the lines were written (into an empty store)

    @property
    def repaired_names(self) -> int:
        return sum(t.count for t in self.repairs.values())

    @property
    def name_warnings(self) -> int:
        return sum(t.count for t in self.warnings.values())

    def note(self, record: Record) -> None:
        """Count what name cleaning did to ``record``'s author line."""
        for repair in record.repairs:
            self.repairs.setdefault(repair.kind, RepairTally()).add(record.source, repair)
        for warning in record.warnings:
            self.warnings.setdefault(warning.kind, RepairTally()).add(record.source, warning)

    def summary(self) -> str:
        return (
            f"{self.records} records, {self.papers} papers, {self.authors} authors, "
            f"{self.concepts} concepts, {self.triples} triples, {len(self.problems)} problems"
        )

    def quality_lines(self) -> Iterator[str]:
        yield f"malformed records: {len(self.problems)}"
        for problem in self.problems:
            yield f"  {problem}"
        yield f"truncated author lists (等): {len(self.truncated)}"
        for where in self.truncated:
            yield f"  {where}"
        yield f"persons sharing a name with another person (split by evidence): {self.shared_names}"
        if self.curation.files:
            yield (
                f"curated persons: {self.curation.decisions} decisions applied, {self.curation.overruled} "
                f"overruling the algorithm ({', '.join(self.curation.files)})"
            )
            if self.curation.dropped:  # a curated join would have put one paper twice in a person
                dropped = self.curation.dropped
                yield f"curated joins not made (two authorships of one paper are never one person): {len(dropped)}"
                yield from (f"  {where}" for where in dropped)
        yield f"merged name variants: {len(self.merged_names)}"
        for name, variants in self.merged_names:
            yield f"  {name} = {' = '.join(variants)}"
        yield f"duplicate records (merged into one paper): {self.duplicate_records}"
        yield from _tally_lines("repaired names", self.repairs)
        yield from _tally_lines("author-list warnings", self.warnings)


def graph_lines(
    paths: Sequence[Path],
    iris: Iris,
    catalogue: Catalogue,
    problems: list[Problem],
    progress: bool = True,
    report: BuildReport | None = None,
) -> Iterator[str]:
    """N-Triples of every record, file by file in a stable order, then of people and concepts: texts of whole
    lines (a record's at a time: no Python step per line between the catalogue and the loader).

    Records stream straight into the store: a build holds names and concepts, never abstracts.
    A first, cheap pass collects the areas named in any file (``Area · Subarea`` lines), which
    the reader needs to place a bare area line. The cyclic garbage collector runs rarely meanwhile: the catalogue
    grows by millions of small containers that live until the end, and each full collection walked them all
    again (a sixth of the lines' CPU at 10,000 papers); what the build drops in cycles is little.
    """
    with fewer_collections():
        yield from _graph_lines(paths, iris, catalogue, problems, progress, report)


def _graph_lines(
    paths: Sequence[Path],
    iris: Iris,
    catalogue: Catalogue,
    problems: list[Problem],
    progress: bool,
    report: BuildReport | None,
) -> Iterator[str]:
    files = list(find_input_files(paths, problems))
    sizes = [_size(path) for path, _ in files]
    known_areas = scan_areas(path for path, _ in files)
    total = sum(sizes)
    # a log file gets no bar: tqdm would fill it with carriage-return updates
    on_terminal = sys.stderr.isatty()
    with tqdm(
        total=total,
        unit="B",
        unit_scale=True,
        desc="build",
        disable=not (progress and on_terminal) or total < PROGRESS_MIN_BYTES,
    ) as bar:
        for (path, name), size in zip(files, sizes, strict=True):
            found, trouble = parse_file(path, name, known_areas)
            problems.extend(trouble)
            for record in found:
                why = record_unpublishable(record)
                if why:
                    problems.append(Problem(record.source, record.line, why))
                    continue
                if report is not None:
                    report.note(record)
                yield "".join(catalogue.add(record, iris))
            bar.update(size)
    yield ""  # every record read: the store takes what is held before the persons are decided (see ``_texts``)
    yield from catalogue.closing(iris)


def load_blocks(store: ox.Store, lines: Iterable[str], copy: BinaryIO | None = None) -> None:
    """Bulk-load N-Triples ``lines`` (texts of whole lines) into a disk store, a bounded block at a time.

    One ``bulk_load`` of everything held up to a million parsed triples per loading thread besides the batch being
    read (1.95 GB of peak at 4.9 million triples); a call given :data:`LOAD_CHARS` holds that block alone. Each block
    is loaded in a thread (the engine releases the GIL) while Python makes the next one: both cores work, and at most
    two blocks exist at once. With ``copy``, every block is also written there (the N-Triples dump, made as the data
    streams, of the very bytes the store's strict loader reads). A disk store's order is its keys', so neither the
    store nor the dump depends on where the blocks end (the build mints no blank nodes: nothing is scoped to a call).
    """
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="bulk-load") as loader:
        pending: Future[None] | None = None
        for text in _texts(lines, LOAD_CHARS, LOAD_PIECES):
            if not text:  # a stage ends: its blocks loaded (the loader's memory back) before the next one runs
                if pending is not None:
                    pending.result()
                    pending = None
                continue
            block = text.encode("utf-8")
            del text
            if copy is not None:
                copy.write(block)
            if pending is not None:
                pending.result()  # the previous block loaded (its error raised here) before a third is made
            pending = loader.submit(store.bulk_load, block, format=ox.RdfFormat.N_TRIPLES)
            del block  # the loader holds it while it loads: not this frame while the persons are decided
        if pending is not None:
            pending.result()


def _copied(texts: Iterable[str], out: BinaryIO) -> Iterator[str]:
    for text in texts:
        out.write(text.encode("utf-8"))
        yield text


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def build_graph(
    paths: Sequence[Path],
    base: str = DEFAULT_BASE,
    store: OxigraphGraphStore | None = None,
    progress: bool = True,
    ntriples: BinaryIO | None = None,
    numbering: Numbering | None = None,
    roles: bool = False,
    describe: bool = True,
    incidence: Callable[[Incidence], None] | None = None,
    search: DocumentSpool | None = None,
) -> tuple[OxigraphGraphStore, BuildReport]:
    """Build the graph of the given files or directories (the seeds if none) into ``store`` (new by default).

    With ``ntriples``, the data (not the VoID description) is also written there as N-Triples as it
    streams into the store, each triple once: a dump without a second pass over the store. ``numbering``: the
    person keys the dataset published before (kept; the report's ``numbering`` is what this build publishes).
    ``roles``: the report's ``roles`` are made (a dataset keeps them: :mod:`~bibgraph.graph.site.rolesbuild`).
    ``incidence``: given the build's incidence (:mod:`~bibgraph.graph.networks.incidencebuild`) once the persons
    are decided, before their lines load; nothing holds it afterwards (a dataset writes it at once).
    ``search``: given the search index's texts as their lines are written (:mod:`.searchspool`).
    ``describe``: the store counted and its VoID description loaded (:func:`describe_store`); else the report counts
    no triples and the caller describes the store.
    """
    iris = Iris(base)
    store = store or OxigraphGraphStore.memory()
    inputs = list(paths) or [seed_directory()]  # the one place the seeds are the default input
    catalogue = Catalogue(
        identity=Collected(),
        curation=curation.read(curation.find(inputs)),
        numbering=numbering,
        keep_roles=roles,
        keep_incidence=incidence,
        tally=VoidTally(iris.base) if _empty(store) else None,  # what the store then holds is what the lines state
        search=search or DocumentSpool(),
    )
    problems: list[Problem] = []
    report = BuildReport(problems=problems)
    lines = graph_lines(inputs, iris, catalogue, problems, progress, report)
    if store.kind == "disk":
        load_blocks(store.store, lines, ntriples)  # RocksDB files written directly, in bounded blocks
    else:
        texts = (text for text in _texts(lines) if text)
        store.load_ntriples(_copied(texts, ntriples) if ntriples else texts, batch_lines=1)
    problems.sort(key=lambda problem: (problem.source, problem.line))
    report.files = len(list(find_input_files(inputs)))
    report.records = catalogue.records
    require_records(report.files, report.records, problems)
    report.papers = catalogue.papers
    report.authors = catalogue.persons
    report.authorships = catalogue.authorships
    report.concepts = len(catalogue.areas) + len(catalogue.subareas)
    report.truncated = catalogue.truncated
    report.merged_names = catalogue.joined
    report.shared_names = catalogue.shared
    report.curation = catalogue.curated
    report.identity_seconds = catalogue.identity_seconds
    report.numbering = catalogue.numbering
    report.roles = catalogue.roles
    report.duplicate_records = catalogue.duplicate_records
    report.void = catalogue.tally.counts() if catalogue.tally is not None else None
    del catalogue
    if describe:
        report.triples = describe_store(store, iris, report.void)
    return store, report


def _empty(store: OxigraphGraphStore) -> bool:
    return next(iter(store.store.quads_for_pattern(None, None, None)), None) is None


def describe_store(store: OxigraphGraphStore, iris: Iris, counts: VoidCounts | None = None) -> int:
    """Load the VoID description of what ``store`` holds, stating ``counts`` (those the build tallied) or, without
    them, the engine's count of it; the triples the store then holds. A dataset build runs this in a process of its
    own (:mod:`~bibgraph.graph.dataset.buildphases`): the engine's hash sets (1.2 GB at a million papers) would
    meet none of the parse's memory."""
    if counts is None:
        release_free_memory()  # the caller's freed pages (the catalogue's) back to the system before the counts
        counts = engine_counts(store.store, iris.base)  # each triple once in the store: its count is the data's
    described = list(void_lines(counts, iris))
    store.load_ntriples(described)
    return counts.triples + len(described)


def _texts(pieces: Iterable[str], limit: int = CHUNK_CHARS, most: int = sys.maxsize) -> Iterator[str]:
    """``pieces`` (whole lines each) joined into texts of about ``limit`` characters, ``most`` pieces at most. An
    empty piece ends a stage: what is held goes at once, then an empty text (the loader waits there: the stage's
    state never meets the next's peak; at a million records, one block in the loader is about half a gigabyte)."""
    batch: list[str] = []
    size = 0
    for piece in pieces:
        if not piece:
            if batch:
                text = "".join(batch)
                batch, size = [], 0
                yield text
                del text  # the stage's last text (up to 2 bytes a character) not held while the next one runs
            yield ""
            continue
        batch.append(piece)
        size += len(piece)
        if size >= limit or len(batch) >= most:
            text = "".join(batch)
            batch, size = [], 0  # the pieces let go before the text is used
            yield text
            del text
    yield "".join(batch)


def record_unpublishable(record: Record) -> str | None:
    """What in ``record`` no dump could carry; such a record is reported and left out, alone."""
    fields = {"area": record.area, "subarea": record.subarea, "abstract": record.abstract, "source": record.source}
    fields |= {f"author {n}": name for n, name in enumerate(record.authors, 1)}
    for where, text in fields.items():
        why = unpublishable(text or "")
        if why:
            return f"{where}: {why}"
    return None
