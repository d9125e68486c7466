"""The VoID description of the dataset: counted from the very lines the store is built from, or (after an
add) updated with index look-ups of what the add writes, so it never drifts from the store."""

import re
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from hashlib import blake2b
from pathlib import Path
from types import TracebackType

import pyoxigraph as ox
from rdflib import DCTERMS, RDF, VOID, XSD

from bibgraph.graph.ingest.names import ascii_slug
from bibgraph.graph.rdf.formats import RDF_SYNTAXES
from bibgraph.graph.rdf.iris import Iris
from bibgraph.graph.rdf.vocab import PREFIXES
from bibgraph.graph.stores.store import OxigraphGraphStore

_TYPE = ox.NamedNode(str(RDF.type))
_TYPE_TOKEN = f"<{RDF.type}>"
BUCKETS = 256  # digests of distinct terms are counted a bucket (by first byte) at a time
SPILL_BYTES = 4 << 20  # buffered digests of one counter before they are appended to its temporary files
RECENT = 1 << 14  # terms remembered to skip repeats (a class, an author's IRI) before digesting them
BATCH_LINES = 4096  # lines counted at a time (list comprehensions: a line costs no Python call of its own)
# A line as the builder writes it: subject and predicate hold no space (IRIs, blank nodes); the object is taken with
# the " ." that ends every line (the same for every term, so distinct objects are counted alike), sparing a backtrack
_TRIPLE = re.compile(r"^([^ \n]+) ([^ \n]+) ([^\n]*)$", re.MULTILINE)


@dataclass
class VoidCounts:
    """The statistics a VoID description states, by IRI where per class or property."""

    triples: int = 0
    entities: int = 0
    subjects: int = 0
    objects: int = 0
    classes: dict[str, int] = field(default_factory=dict)  # class IRI -> entities
    properties: dict[str, int] = field(default_factory=dict)  # property IRI -> triples

    def observe(self, store: ox.Store, quads: Sequence[ox.Quad], base: str) -> None:
        """Count ``quads`` (none of them in ``store`` yet, each once) as about to be added to ``store``:
        an add updates the statistics with index look-ups of what it adds, not by counting everything again.
        """
        self.triples += len(quads)
        for quad in quads:
            self.properties[quad.predicate.value] = self.properties.get(quad.predicate.value, 0) + 1
        typed = {quad.subject for quad in quads if quad.predicate == _TYPE}
        for quad in quads:
            if quad.predicate == _TYPE and isinstance(quad.object, ox.NamedNode):
                self.classes[quad.object.value] = self.classes.get(quad.object.value, 0) + 1
        self.entities += sum(
            1
            for subject in typed
            if isinstance(subject, ox.NamedNode)
            and subject.value.startswith(base)
            and _absent(store, subject, _TYPE, None)
        )
        self.subjects += sum(1 for subject in {quad.subject for quad in quads} if _absent(store, subject, None, None))
        self.objects += sum(1 for value in {quad.object for quad in quads} if _absent(store, None, None, value))


def _absent(
    store: ox.Store,
    subject: ox.NamedNode | ox.BlankNode | ox.Triple | None,
    predicate: ox.NamedNode | None,
    value: ox.NamedNode | ox.BlankNode | ox.Literal | ox.Triple | None,
) -> bool:
    """Whether no triple of ``store`` matches the pattern (one index seek)."""
    return next(store.quads_for_pattern(subject, predicate, value), None) is None


class DistinctTerms:
    """How many distinct terms were added, exactly, in memory bounded whatever their number.

    Each term is kept as its 16-byte BLAKE2b digest (two distinct terms share one with a probability of
    about n²/2¹²⁹: 10⁻²³ for a hundred million terms, as unlikely as two git objects sharing a name). The
    digests are spread over :data:`BUCKETS` by their first byte and appended to one temporary file per
    bucket once :data:`SPILL_BYTES` are buffered; at the end each bucket is deduplicated alone. The engine's
    ``COUNT(DISTINCT ?o)`` over the whole store held every term at once (1.2 GB for the 8M subjects of a
    million papers) and took minutes.
    """

    def __init__(self, scratch: Path | None = None) -> None:
        self.recent: set[str] = set()  # terms counted lately (classes, people, areas recur)
        self.buffers = [bytearray() for _ in range(BUCKETS)]
        self.buffered = 0
        self.scratch = scratch  # where the temporary directory goes (None: the system's, ``TMPDIR``)
        self.directory: Path | None = None  # made at the first spill: small inputs never touch the disk

    def update(self, terms: Iterable[str]) -> None:
        """Count ``terms`` (a batch). Repeats within the batch and of the recent terms are dropped by a set
        difference first (C-level string hashing), so only terms not seen lately are encoded and digested."""
        fresh = set(terms)
        fresh -= self.recent
        if len(self.recent) >= RECENT:
            self.recent.clear()
        self.recent |= fresh
        buffers = self.buffers
        for term in fresh:
            digest = blake2b(term.encode("utf-8"), digest_size=16).digest()
            buffers[digest[0]] += digest
        self.buffered += 16 * len(fresh)
        if self.buffered >= SPILL_BYTES:
            self._spill()

    def _spill(self) -> None:
        if self.directory is None:
            self.directory = Path(tempfile.mkdtemp(prefix="bibgraph-void-", dir=self.scratch))
        for number, buffer in enumerate(self.buffers):
            if buffer:
                with (self.directory / str(number)).open("ab") as spilled:
                    spilled.write(buffer)
                buffer.clear()
        self.buffered = 0

    def count(self) -> int:
        """The number of distinct terms added."""
        total = 0
        for number, buffer in enumerate(self.buffers):
            spilled = self.directory / str(number) if self.directory else None
            data = (spilled.read_bytes() if spilled and spilled.exists() else b"") + bytes(buffer)
            total += len({data[start : start + 16] for start in range(0, len(data), 16)})
        return total

    def close(self) -> None:
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None


class VoidTally:
    """The statistics of the N-Triples lines a store is built from, counted as they stream past.

    The lines hold each triple once and write each term one way only (:mod:`bibgraph.graph.rdf.ntriples`
    writes what pyoxigraph writes), so counting their texts counts what the store holds: the same figures
    as the engine's ``COUNT``/``COUNT(DISTINCT …)`` over the store (a test compares them), without a pass
    over the store afterwards. A context manager: the temporary files of the distinct counts (in ``scratch``:
    a dataset build gives its version directory, so a killed build leaves nothing behind that the next one does
    not remove) are removed on leaving it.
    """

    def __init__(self, base: str, scratch: Path | None = None) -> None:
        self.entity_prefix = f"<{base}"
        self.triples = 0
        self.properties: Counter[str] = Counter()  # by predicate as written (<IRI>)
        self.classes: Counter[str] = Counter()
        self.subjects, self.objects, self.entities = (DistinctTerms(scratch) for _ in range(3))

    def __enter__(self) -> "VoidTally":
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        for counter in (self.subjects, self.objects, self.entities):
            counter.close()

    def lines(self, lines: Iterable[str]) -> Iterator[str]:
        """``lines`` (``S P O .`` each, as the builder writes them), each counted as it passes, a batch at a time."""
        for batch in _batches(lines):
            self._count(batch, "".join(batch))
            yield from batch

    def chunks(self, lines: Iterable[str]) -> Iterator[bytes]:
        """``lines`` counted a batch at a time, each batch given as one UTF-8 chunk: what a loader or a dump file
        takes, with no Python step per line between the builder and them."""
        for batch in _batches(lines):
            text = "".join(batch)
            self._count(batch, text)
            yield text.encode("utf-8")

    def _count(self, batch: list[str], text: str) -> None:
        """Count ``batch`` (its lines joined are ``text``): one regular-expression pass splits every line (C, not a
        Python call per line); sets drop the repeats before anything is digested."""
        triples = _TRIPLE.findall(text)
        if len(triples) != len(batch):
            raise ValueError(f"{len(batch) - len(triples)} of {len(batch)} lines are not one N-Triples statement each")
        self.triples += len(triples)
        self.properties.update([predicate for _, predicate, _ in triples])
        self.objects.update([value for _, _, value in triples])
        self.subjects.update([subject for subject, _, _ in triples])
        typed = [(subject, value) for subject, predicate, value in triples if predicate == _TYPE_TOKEN]
        self.classes.update([value[:-2] for _, value in typed if value.startswith("<")])  # each triple once: an entity
        self.entities.update([subject for subject, _ in typed if subject.startswith(self.entity_prefix)])

    def counts(self) -> VoidCounts:
        """The statistics of every line seen."""
        return VoidCounts(
            triples=self.triples,
            entities=self.entities.count(),
            subjects=self.subjects.count(),
            objects=self.objects.count(),
            classes={iri[1:-1]: number for iri, number in self.classes.items()},
            properties={iri[1:-1]: number for iri, number in self.properties.items()},
        )


def _batches(lines: Iterable[str]) -> Iterator[list[str]]:
    batch: list[str] = []
    for line in lines:
        batch.append(line)
        if len(batch) == BATCH_LINES:
            yield batch
            batch = []
    if batch:
        yield batch


def recorded_counts(described: Sequence[ox.Quad], iris: Iris) -> VoidCounts:
    """The statistics a VoID description (:func:`void_quads`) states: what an add continues from."""
    dataset = ox.NamedNode(iris.dataset)
    by_subject: dict[ox.NamedNode | ox.BlankNode | ox.Triple, dict[str, ox.NamedNode | ox.Literal]] = {}
    for quad in described:
        if isinstance(quad.object, ox.NamedNode | ox.Literal):
            by_subject.setdefault(quad.subject, {})[quad.predicate.value] = quad.object
    stated = by_subject.get(dataset, {})

    def number(values: dict, name: str) -> int:
        return int(values[str(VOID[name])].value) if str(VOID[name]) in values else 0

    counts = VoidCounts(
        number(stated, "triples"), number(stated, "entities"), number(stated, "distinctSubjects"),
        number(stated, "distinctObjects"),
    )  # fmt: skip
    for values in by_subject.values():
        if str(VOID["class"]) in values:
            counts.classes[values[str(VOID["class"])].value] = number(values, "entities")
        if str(VOID.property) in values:
            counts.properties[values[str(VOID.property)].value] = number(values, "triples")
    return counts


def void_lines(counts: VoidCounts, iris: Iris) -> Iterator[str]:
    """The VoID description stating ``counts``, as N-Triples lines.

    Terms are pyoxigraph's, so every line is valid N-Triples whatever the base IRI or counts hold.
    """
    dataset = ox.NamedNode(iris.dataset)

    def integer(value: int) -> ox.Literal:
        return ox.Literal(value)  # an xsd:integer

    def term(iri: object) -> ox.NamedNode:
        return ox.NamedNode(str(iri))

    triples: list[tuple[ox.NamedNode, ox.NamedNode, ox.NamedNode | ox.Literal]] = [
        (dataset, term(RDF.type), term(VOID.Dataset)),
        (dataset, term(DCTERMS.title), ox.Literal("bibgraph")),
        (
            dataset,
            term(DCTERMS.description),
            ox.Literal(
                "Papers, authors (in order) and research areas read from paper lists;"
                " void:triples counts the data, not this description."
            ),
        ),
        (dataset, term(VOID.uriSpace), ox.Literal(iris.base)),
        (dataset, term(VOID.sparqlEndpoint), term(iris.endpoint)),
        (dataset, term(VOID.rootResource), term(iris.scheme)),
    ]
    triples += [(dataset, term(VOID.dataDump), term(iris.dump(s.suffix))) for s in RDF_SYNTAXES]
    namespaces = sorted(set(PREFIXES.values()) - {str(XSD), str(RDF)})
    triples += [(dataset, term(VOID.vocabulary), term(namespace)) for namespace in namespaces]
    triples += [
        (dataset, term(VOID.triples), integer(counts.triples)),
        (dataset, term(VOID.entities), integer(counts.entities)),
        (dataset, term(VOID.distinctSubjects), integer(counts.subjects)),
        (dataset, term(VOID.distinctObjects), integer(counts.objects)),
        (dataset, term(VOID.properties), integer(len(counts.properties))),
        (dataset, term(VOID.classes), integer(len(counts.classes))),
    ]
    for iri, entities in sorted(counts.classes.items()):
        partition = term(f"{iris.dataset}#class-{_fragment(iri)}")
        triples.append((dataset, term(VOID.classPartition), partition))
        triples.append((partition, term(VOID["class"]), term(iri)))
        triples.append((partition, term(VOID.entities), integer(entities)))
    for iri, count in sorted(counts.properties.items()):
        partition = term(f"{iris.dataset}#property-{_fragment(iri)}")
        triples.append((dataset, term(VOID.propertyPartition), partition))
        triples.append((partition, term(VOID.property), term(iri)))
        triples.append((partition, term(VOID.triples), integer(count)))
    for subject, predicate, value in triples:
        yield f"{ox.Triple(subject, predicate, value)} .\n"


def _fragment(iri: str) -> str:
    """A readable fragment for a partition: the term's prefixed name (``schema-ScholarlyArticle``)."""
    for prefix, namespace in PREFIXES.items():
        if iri.startswith(namespace):
            return f"{prefix}-{ascii_slug(iri.removeprefix(namespace)) or 'term'}"
    return ascii_slug(iri)


def void_quads(store: OxigraphGraphStore, iris: Iris) -> list[ox.Quad]:
    """The VoID description the store holds now: the dataset's quads and its partitions' (to replace or set aside)."""
    quads = store.store
    dataset = ox.NamedNode(iris.dataset)
    described = list(quads.quads_for_pattern(dataset, None, None))
    partitions = {
        quad.object
        for quad in described
        if isinstance(quad.object, ox.NamedNode) and quad.object.value.startswith(iris.dataset + "#")
    }
    for partition in sorted(partitions, key=lambda node: node.value):
        described += quads.quads_for_pattern(partition, None, None)
    return described
