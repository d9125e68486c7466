"""The persons found, as N-Triples: IRIs dblp's way, who wrote what, and how each person was formed.

A person's IRI is its name's key (:func:`~bibgraph.graph.ingest.names.person_key` of the form written most
often). When several persons share that key, each gets the key and a four-digit number
(``jie-zhou-…-0001``), the numbers the dataset published kept (:mod:`~.numbering`; a first build
numbers in the order of the first paper's id, content-derived, so any input order numbers alike), and the
key's own IRI becomes a ``bg:SharedName`` naming each of them: the
disambiguation page. A name once numbered keeps its numbers (dblp's way); when one person is left
holding it, the name's IRI is ``owl:sameAs`` that person (the site answers 301), not a page of one. A form
joined into another person's keeps its IRI as ``owl:sameAs`` the person's, unless a person of its own holds it.
"""

from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from typing import overload

from rdflib import DCTERMS, FOAF, OWL, PROV, RDF, RDFS, SKOS, XSD

from bibgraph.graph.identity.cluster import METHOD
from bibgraph.graph.identity.decide import Persons
from bibgraph.graph.identity.features import Collected
from bibgraph.graph.identity.numbering import Assigned, Numbering, assign
from bibgraph.graph.ingest.nameparts import name_parts
from bibgraph.graph.ingest.names import person_key
from bibgraph.graph.rdf.iris import Iris
from bibgraph.graph.rdf.ntriples import literal
from bibgraph.graph.rdf.vocab import BG

# The terms as N-Triples text, made once: an rdflib namespace's attribute costs a lookup through its metaclass
# (0.8 CPU-s at 100,000 papers when made per person)
_A = f"<{RDF.type}>"
_PERSON = f"<{FOAF.Person}>"
_NAME = f"<{FOAF.name}>"
_GIVEN_NAME = f"<{FOAF.givenName}>"
_FAMILY_NAME = f"<{FOAF.familyName}>"
_ALT_LABEL = f"<{SKOS.altLabel}>"
_GENERATED_BY = f"<{PROV.wasGeneratedBy}>"
_CURATED_TRUE = f'<{BG.curated}> "true"^^<{XSD.boolean}>'
_SCORE = f"<{BG.identityScore}>"
_DECIMAL = f"<{XSD.decimal}>"


class Mentions(Sequence[list[str]]):
    """Each person's authorships as ``paperid#position``, made when asked for: the numbering reads a few persons'
    (or, given a published map, each person's once), and a list of them all held millions of strings."""

    def __init__(self, persons: Persons, order: Sequence[str]) -> None:
        self.persons, self.order = persons, order

    def __len__(self) -> int:
        return len(self.persons.names)

    @overload
    def __getitem__(self, index: int) -> list[str]: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[list[str]]: ...
    def __getitem__(self, index: int | slice) -> list[str] | Sequence[list[str]]:
        if isinstance(index, slice):
            return [self[i] for i in range(len(self))[index]]
        return [f"{self.order[r]}#{p}" for r, p in self.persons.mentions(index)]


def person_keys(persons: Persons, collected: Collected, previous: Numbering | None = None) -> Assigned:
    """Each person's IRI key, in the persons' order, keeping the keys ``previous`` (the dataset's map) published."""
    mentions = Mentions(persons, collected.order)
    return assign(persons.names, persons.variants, mentions, previous or Numbering())


def activity_lines(iris: Iris) -> Iterator[str]:
    """The identity step as a ``prov:Activity`` labelled with its method and version."""
    activity = f"<{iris.identity_step(METHOD)}>"
    yield f"{activity} {_A} <{PROV.Activity}> .\n"
    yield f"{activity} <{RDFS.label}> {literal(METHOD)} .\n"


def description(iri: str, name: str, variants: Iterable[str], score: float, curated: bool, iris: Iris) -> Iterator[str]:
    """One person's triples: names, variants, and how it was formed."""
    yield f"{iri} {_A} {_PERSON} .\n"
    yield f"{iri} {_NAME} {literal(name)} .\n"
    if parts := name_parts(name):
        yield f"{iri} {_GIVEN_NAME} {literal(parts[0])} .\n"
        yield f"{iri} {_FAMILY_NAME} {literal(parts[1])} .\n"
    for variant in variants:
        yield f"{iri} {_ALT_LABEL} {literal(variant)} .\n"
    yield f"{iri} {_GENERATED_BY} <{iris.identity_step(METHOD)}> .\n"
    if curated:
        yield f"{iri} {_CURATED_TRUE} .\n"
    # the canonical lexical form ("1", "0.953", as Oxigraph writes a decimal it holds): the streamed dump agrees
    yield f'{iri} {_SCORE} "{f"{score:.3f}".rstrip("0").rstrip(".")}"^^{_DECIMAL} .\n'


def person_lines(persons: Persons, collected: Collected, iris: Iris, assigned: Assigned) -> Iterator[str]:
    """Creators and authorship agents of every paper, then every person, shared name and retired form."""
    keys = assigned.keys
    opening = f"<{iris.person('')}"  # a person's IRI made where written: a string per person held 120 bytes
    creator, agent = f"<{DCTERMS.creator}>", f"<{PROV.agent}>"
    for record, paper_id in enumerate(collected.order):
        paper = iris.paper(paper_id)
        written: set[str] = set()
        for position, person in enumerate(persons.of.row(record)):
            who = f"{opening}{keys[person]}>"
            if who not in written:
                written.add(who)
                yield f"<{paper}> {creator} {who} .\n"
            yield f"<{Iris.authorship(paper, position + 1)}> {agent} {who} .\n"
    yield from activity_lines(iris)
    shared: dict[str, list[str]] = defaultdict(list)
    for key, base in zip(keys, assigned.bases, strict=True):
        if key != base:
            shared[base].append(f"{opening}{key}>")
    held = set(keys) | set(shared)
    for retired, index in assigned.same_as:  # a published key merged into another person
        held.add(retired)
        yield f"<{iris.person(retired)}> <{OWL.sameAs}> {opening}{keys[index]}> .\n"
    scores, curated = persons.scores.tolist(), persons.curated.tolist()
    for index, (name, key) in enumerate(zip(persons.names, keys, strict=True)):
        iri = f"{opening}{key}>"
        variants = persons.variants.get(index, ())
        yield from description(iri, name, variants, scores[index], curated[index], iris)
        for variant in (name, *variants):
            retired = person_key(variant)
            if retired not in held:
                held.add(retired)
                yield f"<{iris.person(retired)}> <{OWL.sameAs}> {iri} .\n"
    for base, members in sorted(shared.items()):
        node = f"<{iris.person(base)}>"
        if len(members) == 1:  # a name once shared, one holder left: it keeps its number, the name points to it
            yield f"{node} <{OWL.sameAs}> {members[0]} .\n"
            continue
        yield f"{node} {_A} <{BG.SharedName}> .\n"
        for member in members:
            yield f"{node} <{BG.nameOf}> {member} .\n"
