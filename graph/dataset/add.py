"""Adding paper lists to a built store: only the new records are read, the store is told what it already holds.

A build decides identities record by record (:class:`~.model.Catalogue`). Adding continues that
catalogue where the store left it: the papers, people and concepts the new records name are looked
up in the store first, so a paper already present keeps its IRI and gains a source (numbered after
its existing ones), a known person keeps the name they were first seen under (a new spelling becomes
an ``skos:altLabel``), and only then are the new records' triples written: those the store does not hold
yet, each handed to ``added`` too (the dumps are continued with them). The work is proportional to what is
added, the VoID statistics included: they are updated from what is added (index look-ups), not counted again.
"""

import gc
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

import numpy as np
import pyoxigraph as ox
from rdflib import PROV

from bibgraph.graph.arrays.sets import distinct
from bibgraph.graph.dataset.build import BuildReport, record_unpublishable
from bibgraph.graph.dataset.triples import Catalogue
from bibgraph.graph.dataset.void import recorded_counts, void_lines, void_quads
from bibgraph.graph.identity.extend import Coauthors, resolver
from bibgraph.graph.identity.numbering import Numbering
from bibgraph.graph.ingest.inputs import find_input_files
from bibgraph.graph.ingest.names import concept_key, normalise
from bibgraph.graph.ingest.parse import parse_file, scan_areas
from bibgraph.graph.ingest.records import Problem, Record, paper_id, require_records
from bibgraph.graph.networks.incidence import Incidence, ranges
from bibgraph.graph.rdf.iris import Iris
from bibgraph.graph.sparql.queries import bind, named_query
from bibgraph.graph.stores.store import OxigraphGraphStore

BATCH = 500  # IRIs per VALUES block of a look-up query
LOAD_LINES = 20_000  # N-Triples lines parsed, checked against the store and written at a time

_DERIVED_FROM = ox.NamedNode(str(PROV.wasDerivedFrom))


def papers_read(quads: Iterable[ox.Quad]) -> Iterator[str]:
    """The papers of the records behind an ``added`` batch of :func:`add_lists`: each record read gives its paper
    a new source (``prov:wasDerivedFrom``), a record seen again too; a paper no record was read of has none."""
    return (
        quad.subject.value
        for quad in quads
        if quad.predicate == _DERIVED_FROM and isinstance(quad.subject, ox.NamedNode)
    )


def add_lists(
    store: OxigraphGraphStore,
    paths: Sequence[Path],
    base: str,
    added: Callable[[list[ox.Quad]], None] | None = None,
    numbering: Numbering | None = None,
    triples: int | None = None,
    coauthors: Coauthors | None = None,
) -> BuildReport:
    """Add the records of ``paths`` to ``store`` (built from other lists with the same ``base``).

    ``added`` is called with each batch of triples the store did not hold, in the order written (the
    VoID description, replaced at the end, is not among them). ``numbering``, the dataset's published person
    keys (:mod:`~.identity.numbering`), is given the authorships added under the keys it follows. ``triples``, the
    store's count before (a dataset's manifest says it), spares counting the whole store again after.
    ``coauthors``: the shared names' persons' papers and co-authors' names when kept elsewhere than the store (a
    dataset's incidence: :func:`incidence_coauthors`).
    """
    iris = Iris(base)
    problems: list[Problem] = []
    report = BuildReport(problems=problems)
    files = list(find_input_files(paths, problems))
    catalogue = Catalogue(numbering=numbering)
    areas = _known_concepts(store, iris, catalogue)
    known = scan_areas(path for path, _ in files) | areas
    records: list[Record] = []
    for path, name in files:
        found, trouble = parse_file(path, name, frozenset(known))
        problems.extend(trouble)
        for record in found:
            trouble_text = record_unpublishable(record)
            if trouble_text:
                problems.append(Problem(record.source, record.line, trouble_text))
            else:
                records.append(record)
    require_records(len(files), len(records), problems)  # before the store is touched
    catalogue.resolve = resolver(store, iris, records, coauthors)  # known names go to the persons the store has
    catalogue.retired = catalogue.resolve.joined  # new forms joined into a person: their IRIs owl:sameAs it
    existing_papers = _known_papers(store, iris, catalogue, records)
    existing_people = _known_people(store, iris, catalogue, records)
    described = void_quads(store, iris)
    counts = recorded_counts(described, iris)
    for quad in described:  # set aside while adding: the statistics count the data only
        store.store.remove(quad)

    written = [0]

    def write(quads: list[ox.Quad]) -> None:
        counts.observe(store.store, quads, iris.base)
        store.store.extend(quads)
        written[0] += len(quads)
        if added is not None:
            added(quads)

    _load_new(store, _lines(catalogue, records, iris, report), write)
    problems.sort(key=lambda problem: (problem.source, problem.line))
    report.files = len(files)
    report.records = catalogue.records
    report.papers = len(catalogue.sources) - existing_papers
    report.authors = len(catalogue.people) - existing_people
    report.authorships = catalogue.authorships
    report.concepts = len(catalogue.areas) + len(catalogue.subareas)
    report.truncated = catalogue.truncated
    report.duplicate_records = catalogue.records - report.papers
    del catalogue, records
    gc.collect()
    store.load_ntriples(void_lines(counts, iris))
    if triples is None:
        report.triples = store.triple_count()
    else:  # what was there, less the VoID set aside, plus what was written and the new VoID
        report.triples = triples - len(described) + written[0] + len(void_quads(store, iris))
    return report


def incidence_coauthors(incidence: Incidence) -> Coauthors:
    """The figures :func:`~bibgraph.graph.identity.extend.resolver` asks of the store about the persons of a shared
    name, read from ``incidence`` (the store's, before the add): their papers and their co-authors' names,
    normalised. The store's rows grow with those persons' papers (a prolific holder's 3,026 papers and 14,023
    co-authors: 4.5 of an add's CPU-s at a million papers); here a few array slices each. The incidence keeps one
    name per person (a person has one ``foaf:name``: a new spelling is an ``skos:altLabel``) and no person without
    one, as the store's query reads them."""

    def figures(holders: list[str]) -> dict[str, tuple[int, frozenset[str]]]:
        found = {}
        for iri in holders:
            author = incidence.author_id(iri)
            if author is None:
                continue
            papers = incidence.papers_of(np.array([author]))
            starts = incidence.paper_ptr[papers]
            others = distinct(incidence.ap_author[ranges(starts, incidence.paper_ptr[papers + 1] - starts)])
            names = incidence.names.take(others[others != author])
            found[iri] = (len(papers), frozenset(normalise(name) for name in names if name))
        return found

    return figures


def _lines(catalogue: Catalogue, records: list[Record], iris: Iris, report: BuildReport) -> Iterator[str]:
    for record in records:
        report.note(record)
        yield from catalogue.add(record, iris)
    yield from catalogue.closing(iris)


def _load_new(store: OxigraphGraphStore, lines: Iterable[str], write: Callable[[list[ox.Quad]], None]) -> None:
    """Hand the triples of ``lines`` the store does not hold yet (a known person's name, a concept, are
    stated again by the catalogue) to ``write``, batch by batch."""
    batch: list[str] = []
    for line in lines:
        batch.append(line)
        if len(batch) >= LOAD_LINES:
            _load_batch(store, batch, write)
            batch.clear()
    _load_batch(store, batch, write)


def _load_batch(store: OxigraphGraphStore, lines: list[str], write: Callable[[list[ox.Quad]], None]) -> None:
    """Write the triples of ``lines`` the store does not hold: a triple whose subject the store has no triple about
    (a new paper's, a new person's: most of them) is not asked about, one index seek per subject instead of one per
    triple."""
    held = store.store
    present: dict[ox.NamedNode | ox.BlankNode | ox.Triple, bool] = {}

    def new(quad: ox.Quad) -> bool:
        subject = quad.subject
        if subject not in present:
            present[subject] = next(held.quads_for_pattern(subject, None, None), None) is not None
        return not present[subject] or quad not in held

    parsed = ox.parse("".join(lines).encode("utf-8"), format=ox.RdfFormat.N_TRIPLES)
    write([quad for quad in dict.fromkeys(parsed) if new(quad)])


def _blocks(iris: Iterable[str]) -> Iterator[list[str]]:
    """The distinct ``iris`` in order, :data:`BATCH` at a time: each block bound into a look-up query (``bind``)."""
    batch = sorted(set(iris))
    for start in range(0, len(batch), BATCH):
        yield batch[start : start + BATCH]


def _known_papers(store: OxigraphGraphStore, iris: Iris, catalogue: Catalogue, records: list[Record]) -> int:
    """Tell ``catalogue`` the sources and subjects of the papers among ``records`` the store holds; how many."""
    by_iri = {iris.paper(paper_id(record)): paper_id(record) for record in records}
    for block in _blocks(by_iri):
        for row in store.select(bind(named_query("added_paper_sources").text, paper=block)):
            number = int(by_iri[str(row["paper"])], 16)  # the catalogue keys papers by their id as an int
            catalogue.sources[number] = int(row["sources"] or 0)
            catalogue.subjects[number] = tuple(str(row["subjects"] or "").split())
    return len(catalogue.sources)


def _known_people(store: OxigraphGraphStore, iris: Iris, catalogue: Catalogue, records: list[Record]) -> int:
    """Tell ``catalogue`` the names of the people among ``records`` the store holds; how many."""
    keys = {catalogue.key(name, record) for record in records for name in record.authors}
    by_iri = {iris.person(key): key for key in keys}
    for block in _blocks(by_iri):
        for row in store.select(bind(named_query("added_people_names").text, person=block)):
            key = by_iri[str(row["person"])]
            catalogue.people.setdefault(key, str(row["name"]))
            if row["variant"] is not None:
                known = catalogue.variants.setdefault(key, [])
                if str(row["variant"]) not in known:
                    known.append(str(row["variant"]))
    return len(catalogue.people)


def _known_concepts(store: OxigraphGraphStore, iris: Iris, catalogue: Catalogue) -> set[str]:
    """Tell ``catalogue`` the areas and subareas of the store; the area labels (for the parser)."""
    rows = store.select(named_query("added_concepts").text)
    labels = {str(row["concept"]): str(row["label"]) for row in rows}
    for row in rows:
        if row["broader"] is None:
            catalogue.areas[concept_key(labels[str(row["concept"])])] = labels[str(row["concept"])]
    for row in rows:
        if row["broader"] is not None:
            area = concept_key(labels[str(row["broader"])])
            catalogue.subareas[(area, concept_key(str(row["label"])))] = str(row["label"])
    return set(catalogue.areas.values())
