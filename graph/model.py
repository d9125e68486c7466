"""The RDF data model: records become papers, people, authorships and concepts.

Records are first gathered into a :class:`Catalogue` (identity decisions: which records are the
same paper, which spellings the same person), then written as N-Triples lines. Emitting text
lets the Rust bulk loader of pyoxigraph parse it, which is much faster than building one Python
term object per node; the IRIs here are all minted by us, so only literals need escaping.
"""

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from rdflib import DCTERMS, FOAF, PROV, RDF, RDFS, SKOS, XSD

from .names import concept_key, normalise, person_key, short_hash, tidy
from .records import Record
from .vocab import BG, SCHEMA

TRUNCATION_SUFFIX = " 等"
LABEL_WORDS_CHARS = 60


class Iris:
    """Every IRI bibgraph mints, under one base IRI (so a deployment can mint its own)."""

    def __init__(self, base: str) -> None:
        if not re.fullmatch(r"https?://[^\s<>\"{}|\\^`]+/", base):
            raise ValueError(f"base IRI must be an http(s) IRI ending in '/': {base!r}")
        self.base = base

    def paper(self, paper_id: str) -> str:
        return f"{self.base}paper/{paper_id}"

    def person(self, key: str) -> str:
        return f"{self.base}author/{key}"

    def area(self, area_key: str) -> str:
        return f"{self.base}area/{area_key}"

    def subarea(self, area_key: str, subarea_key: str) -> str:
        return f"{self.base}area/{area_key}/{subarea_key}"

    @property
    def scheme(self) -> str:
        return f"{self.base}areas"

    @property
    def dataset(self) -> str:
        return f"{self.base}dataset"

    @staticmethod
    def authorship(paper_iri: str, position: int) -> str:
        return f"{paper_iri}#authorship-{position}"

    @staticmethod
    def source(paper_iri: str, index: int) -> str:
        return f"{paper_iri}#source-{index}"


def paper_id(record: Record) -> str:
    """Content-derived identifier: the same authors and abstract give the same paper anywhere."""
    authors = "\x1f".join(normalise(name) for name in record.authors)
    return short_hash(f"{authors}\x1e{normalise(record.abstract)}", 16)


def derived_label(record: Record) -> str:
    """A display label (never a title): first author, ``et al.``, and the abstract's opening words."""
    lead = record.authors[0] + (" et al." if len(record.authors) > 1 or record.truncated else "")
    text = tidy(record.abstract)
    if len(text) > LABEL_WORDS_CHARS:
        cut = text[:LABEL_WORDS_CHARS].rsplit(" ", 1)[0]
        text = cut.rstrip(",;:.") + "…"
    return f"{lead}: {text}"


@dataclass
class Paper:
    record: Record
    sources: list[tuple[str, int]] = field(default_factory=list)
    subjects: set[tuple[str, str | None]] = field(default_factory=set)


@dataclass
class Person:
    name: str
    variants: list[str] = field(default_factory=list)


@dataclass
class Catalogue:
    """What the records say once identities are resolved; independent of input order."""

    papers: dict[str, Paper] = field(default_factory=dict)
    people: dict[str, Person] = field(default_factory=dict)
    areas: dict[str, str] = field(default_factory=dict)
    subareas: dict[tuple[str, str], str] = field(default_factory=dict)
    records: int = 0

    @classmethod
    def from_records(cls, records: Iterable[Record]) -> "Catalogue":
        """First spellings win by (source file, line), so shuffling the input changes nothing."""
        catalogue = cls()
        for record in sorted(records, key=lambda r: (r.source, r.line)):
            catalogue._add(record)
        return catalogue

    def _add(self, record: Record) -> None:
        self.records += 1
        paper = self.papers.setdefault(paper_id(record), Paper(record))
        paper.sources.append((record.source, record.line))
        if record.area:
            area_key = concept_key(record.area)
            self.areas.setdefault(area_key, record.area)
            subarea_key = concept_key(record.subarea) if record.subarea else None
            if subarea_key:
                self.subareas.setdefault((area_key, subarea_key), record.subarea or "")
            paper.subjects.add((area_key, subarea_key))
        for name in record.authors:
            person = self.people.setdefault(person_key(name), Person(name))
            if name != person.name and name not in person.variants:
                person.variants.append(name)

    @property
    def duplicate_records(self) -> int:
        return self.records - len(self.papers)

    @property
    def truncated_papers(self) -> list[Paper]:
        return [paper for paper in self.papers.values() if paper.record.truncated]

    @property
    def merged_people(self) -> list[Person]:
        return [person for person in self.people.values() if person.variants]


_ESCAPES = str.maketrans({"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r"})


def _literal(text: str) -> str:
    return f'"{text.translate(_ESCAPES)}"'


def _typed(value: int | bool) -> str:
    if isinstance(value, bool):
        return f'"{str(value).lower()}"^^<{XSD.boolean}>'
    return f'"{value}"^^<{XSD.integer}>'


def ntriples(catalogue: Catalogue, iris: Iris) -> Iterator[str]:
    """The catalogue as N-Triples lines, subjects in a stable order."""
    a = f"<{RDF.type}>"
    for key in sorted(catalogue.people):
        person = catalogue.people[key]
        iri = f"<{iris.person(key)}>"
        yield f"{iri} {a} <{FOAF.Person}> .\n"
        yield f"{iri} <{FOAF.name}> {_literal(person.name)} .\n"
        for variant in person.variants:
            yield f"{iri} <{SKOS.altLabel}> {_literal(variant)} .\n"
    scheme = f"<{iris.scheme}>"
    yield f"{scheme} {a} <{SKOS.ConceptScheme}> .\n"
    yield f'{scheme} <{SKOS.prefLabel}> "Research areas" .\n'
    for area_key in sorted(catalogue.areas):
        yield f"{scheme} <{SKOS.hasTopConcept}> <{iris.area(area_key)}> .\n"
    for area_key in sorted(catalogue.areas):
        iri = f"<{iris.area(area_key)}>"
        yield f"{iri} {a} <{SKOS.Concept}> .\n"
        yield f"{iri} <{SKOS.prefLabel}> {_literal(catalogue.areas[area_key])} .\n"
        yield f"{iri} <{SKOS.inScheme}> {scheme} .\n"
        yield f"{iri} <{SKOS.topConceptOf}> {scheme} .\n"
    for (area_key, subarea_key), label in sorted(catalogue.subareas.items()):
        iri = f"<{iris.subarea(area_key, subarea_key)}>"
        yield f"{iri} {a} <{SKOS.Concept}> .\n"
        yield f"{iri} <{SKOS.prefLabel}> {_literal(label)} .\n"
        yield f"{iri} <{SKOS.inScheme}> {scheme} .\n"
        yield f"{iri} <{SKOS.broader}> <{iris.area(area_key)}> .\n"
    for pid in sorted(catalogue.papers):
        yield from _paper_triples(catalogue.papers[pid], iris.paper(pid), iris)


def _paper_triples(paper: Paper, paper_iri: str, iris: Iris) -> Iterator[str]:
    record = paper.record
    iri = f"<{paper_iri}>"
    names = ", ".join(record.authors) + (TRUNCATION_SUFFIX if record.truncated else "")
    yield f"{iri} <{RDF.type}> <{SCHEMA.ScholarlyArticle}> .\n"
    yield f"{iri} <{RDFS.label}> {_literal(derived_label(record))} .\n"
    yield f"{iri} <{DCTERMS.abstract}> {_literal(record.abstract)} .\n"
    yield f"{iri} <{BG.authorList}> {_literal(names)} .\n"
    yield f"{iri} <{BG.listedAuthorCount}> {_typed(len(record.authors))} .\n"
    yield f"{iri} <{BG.authorListTruncated}> {_typed(record.truncated)} .\n"
    for area_key, subarea_key in sorted(paper.subjects, key=lambda s: (s[0], s[1] or "")):
        concept = iris.subarea(area_key, subarea_key) if subarea_key else iris.area(area_key)
        yield f"{iri} <{DCTERMS.subject}> <{concept}> .\n"
    people = [f"<{iris.person(person_key(name))}>" for name in record.authors]
    authorships = [f"<{iris.authorship(paper_iri, position)}>" for position in range(1, len(people) + 1)]
    sources = [f"<{iris.source(paper_iri, index)}>" for index in range(1, len(paper.sources) + 1)]
    for person, node in zip(people, authorships, strict=True):
        yield f"{iri} <{DCTERMS.creator}> {person} .\n"
        yield f"{iri} <{BG.authorship}> {node} .\n"
    for node in sources:
        yield f"{iri} <{PROV.wasDerivedFrom}> {node} .\n"
    # Each node's triples stay together so that Turtle writers can group them under one subject.
    for position, (name, person, node) in enumerate(zip(record.authors, people, authorships, strict=True), 1):
        yield f"{node} <{RDF.type}> <{BG.Authorship}> .\n"
        yield f"{node} <{PROV.agent}> {person} .\n"
        yield f"{node} <{BG.authorPosition}> {_typed(position)} .\n"
        yield f"{node} <{BG.nameAsWritten}> {_literal(name)} .\n"
    for node, (source, line) in zip(sources, sorted(paper.sources), strict=True):
        yield f"{node} <{RDF.type}> <{BG.SourceRecord}> .\n"
        yield f"{node} <{BG.sourceFile}> {_literal(source)} .\n"
        yield f"{node} <{BG.sourceLine}> {_typed(line)} .\n"
