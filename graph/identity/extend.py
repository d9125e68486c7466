"""``add`` against the persons a dataset already has: which person a new authorship of a known name is.

A name whose IRI was retired (a form joined into another person: ``owl:sameAs``) is written under the
survivor. A name several persons share (``bg:SharedName``) goes to the holder whose co-authors the new paper
names most; with no co-author in common, to the holder with the most papers (the likeliest). A form new to
the dataset joins a person whose name it may be (:func:`~.keys.compatible`) when the new paper names one of
that person's co-authors, as a build joins variants (most shared co-authors first; never a person on the same
paper; never a common short form, ``Xiang Li``, to a form of more given names, ``Xiang Lorraine Li``: how common
is counted over the dataset's persons of that given and family name); its own IRI is then retired into the
person (``owl:sameAs``). Only the names of the added records
and their co-authors' persons are looked up, so the cost follows what is added.
"""

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial

import pyoxigraph as ox
from rdflib import RDF

from bibgraph.graph.identity.cluster import COMMON_PARTS
from bibgraph.graph.identity.keys import compatible, split_name
from bibgraph.graph.identity.numbering import Numbering
from bibgraph.graph.ingest.nameparts import name_parts
from bibgraph.graph.ingest.names import normalise, person_key
from bibgraph.graph.ingest.records import Record, paper_id
from bibgraph.graph.rdf.iris import Iris
from bibgraph.graph.rdf.vocab import BG
from bibgraph.graph.sparql.queries import bind, integer, named_query
from bibgraph.graph.stores.store import GraphStore


@dataclass
class _Known:
    survivor: str | None = None
    holders: list[tuple[str, int, frozenset[str]]] = field(default_factory=list)  # key, papers, co-author names


@dataclass
class Resolver:
    """The key each (name key, record) of the added records is written under; ``joined``: new forms' keys
    retired into a person of the dataset (the add states ``owl:sameAs`` for them)."""

    known: dict[str, _Known]
    persons: set[str]  # the keys among the added names that are persons already
    near: dict[str, dict[str, str]]  # a name's key -> the persons it wrote with: key -> name
    joined: dict[str, str] = field(default_factory=dict)
    doubled: set[str] = field(default_factory=set)  # names new to the dataset an added paper lists twice
    numbered: dict[str, int] = field(default_factory=dict)  # a shared name's highest number in the store
    numbering: Numbering = field(default_factory=Numbering)  # the numbers given, when no dataset map is given
    minted: dict[str, list[str]] = field(default_factory=dict)  # a name -> the persons the add numbered under it
    # each new paper's authorships: a person's key (rank 0), or a name and the rank of the number it is given
    # among the add's (1: the first), ranked in the papers' id order (:func:`_plan`): the input's order never decides
    plan: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    offsets: dict[str, int] = field(default_factory=dict)  # a name -> the highest number given before the add
    mains: set[str] = field(default_factory=set)  # doubled names whose first number holds their other authorships
    bearers: dict[str, tuple[int, int]] = field(default_factory=dict)  # a name part -> persons of that given, family

    def __call__(self, key: str, record: Record) -> str:
        """The person an authorship of ``key`` on ``record`` goes to, were it the paper's only one of that name."""
        entry = self.known.get(key)
        if entry is None:
            return self._variant(key, record) if key not in self.persons else key
        if entry.survivor is not None:
            return entry.survivor
        others = {normalise(name) for name in record.authors if person_key(name) != key}  # not the name itself
        ranked = sorted(entry.holders, key=lambda h: (-len(h[2] & others), -h[1], h[0]))
        return ranked[0][0] if ranked else key

    def keys(self, record: Record, numbering: Numbering | None) -> list[str]:
        """The person of each authorship of ``record``, a new paper: never one person twice (a later authorship
        a person of its own, numbered under its name; ``numbering``, the dataset's map, follows the new keys)."""
        numbering = self.numbering if numbering is None else numbering
        return [self._mint(key, rank, numbering) if rank else key for key, rank in self.plan[paper_id(record)]]

    def person(self, key: str, record: Record) -> tuple[str, int]:
        """As :meth:`keys` plans it: the person's key, or a name new to the dataset that a paper lists twice
        (rank 1: its first number)."""
        found = self(key, record)
        return (key, 1) if found == key and key in self.doubled else (found, 0)

    def _mint(self, base: str, rank: int, numbering: Numbering) -> str:
        """The person of ``base`` given the add's ``rank``-th number: after any the map or the store gave."""
        offset = self.offsets.setdefault(base, max(numbering.numbers.get(base, 0), self.numbered.get(base, 0)))
        numbering.numbers[base] = max(numbering.numbers.get(base, 0), offset + rank)
        key = f"{base}-{offset + rank:04d}"
        if key not in numbering.added:  # followed: a rebuild hands it back by its authorships
            numbering.added[key] = []
            self.minted.setdefault(base, []).append(key)
        return key

    def lines(self, iris: Iris) -> Iterator[str]:
        """The disambiguation pages of the names the add numbered: a name new to the dataset, or shared already."""
        for base, members in sorted(self.minted.items()):
            entry = self.known.get(base)
            if (base in self.mains and base not in self.joined) or (entry is not None and entry.holders):
                node = f"<{iris.person(base)}>"
                yield f"{node} <{RDF.type}> <{BG.SharedName}> .\n"
                yield from (f"{node} <{BG.nameOf}> <{iris.person(member)}> .\n" for member in sorted(members))

    def _variant(self, key: str, record: Record) -> str:
        """A new form's person: the compatible person most of the record's co-authors wrote with, or itself."""
        if key in self.joined:
            return self.joined[key]
        name = next(n for n in record.authors if person_key(n) == key)
        on_paper = {person_key(n) for n in record.authors}
        on_paper |= {self(other, record) for other in on_paper if other in self.known}  # never one person twice
        shared: dict[str, int] = defaultdict(int)
        names: dict[str, str] = {}
        for other in on_paper - {key}:
            for person, written in self.near.get(other, {}).items():
                if person not in on_paper and compatible(name, written) and not self._common_short(name, written):
                    shared[person] += 1
                    names[person] = written
        if not shared:
            return key
        self.joined[key] = min(shared, key=lambda person: (-shared[person], person))
        return self.joined[key]

    def _common_short(self, name: str, written: str) -> bool:
        """Whether one of two forms has fewer given names and is common (its given name and its family name each
        borne by ``COMMON_PARTS`` persons of the dataset or more): its papers are likely several people's."""
        if len(split_name(name)[0]) == len(split_name(written)[0]):
            return False
        parts = name_parts(name)
        if parts is None or not parts[0]:
            return False
        given, family = parts[0].split()[0], parts[1]
        return min(self.bearers.get(given, (0, 0))[0], self.bearers.get(family, (0, 0))[1]) >= COMMON_PARTS


# The papers and co-authors' names (normalised) of persons, by IRI (those of no paper left out): the store's, or
# the same figures read from elsewhere (an add's previous incidence: ``graph/dataset/add.py``).
Coauthors = Callable[[list[str]], dict[str, tuple[int, frozenset[str]]]]


def resolver(store: GraphStore, iris: Iris, records: Iterable[Record], coauthors: Coauthors | None = None) -> Resolver:
    """The :class:`Resolver` of the added ``records``: what the store holds of their names; ``coauthors``, the
    shared names' persons' papers and co-authors' names (:func:`holder_coauthors` when not given: asked of the
    store, whose rows grow with those persons' papers: 2.5 CPU-s for 500 names at a million papers)."""
    records = list(records)
    forms = {name for record in records for name in record.authors}
    keys = {person_key(name) for name in forms}
    known: dict[str, _Known] = {}
    persons: set[str] = set()
    near: dict[str, dict[str, str]] = defaultdict(dict)
    nodes = [iris.person(key) for key in sorted(keys)]
    holders_of: dict[str, list[str]] = defaultdict(list)  # a shared name's key -> its persons' IRIs
    for start in range(0, len(nodes), 500):
        query = bind(named_query("added_name_persons").text, node=nodes[start : start + 500])
        for row in store.select(query):
            key = str(row["node"]).rsplit("/", 1)[1]
            if row.get("survivor"):
                known.setdefault(key, _Known()).survivor = str(row["survivor"]).rsplit("/", 1)[1]
            elif row.get("holder"):
                holders_of[key].append(str(row["holder"]))
        for row in store.select(bind(named_query("added_name_is_person").text, node=nodes[start : start + 500])):
            persons.add(str(row["node"]).rsplit("/", 1)[1])
    figures = (coauthors or partial(holder_coauthors, store))(
        sorted({iri for iri_list in holders_of.values() for iri in iri_list})
    )
    for key, holders in holders_of.items():
        for iri in holders:
            if iri in figures:  # a person of no paper is no holder to go to
                papers, names = figures[iri]
                known.setdefault(key, _Known()).holders.append((iri.rsplit("/", 1)[1], papers, names))
    # The persons a name wrote with are read only by a new form's co-authors on its paper (Resolver._variant): for
    # the others (at 100,000 papers, every author of 1,000 papers: 171,000 rows, 7.6 CPU-s) they are not looked up.
    new = {key for key in keys if key not in known and key not in persons}
    beside = sorted(
        iris.person(person_key(name))
        for record in records
        if any(person_key(name) in new for name in record.authors)
        for name in record.authors
    )
    for start in range(0, len(beside), 500):
        for row in store.select(bind(named_query("added_name_variants").text, node=beside[start : start + 500])):
            near[str(row["node"]).rsplit("/", 1)[1]][str(row["person"]).rsplit("/", 1)[1]] = str(row["name"])
    found = Resolver(known, persons, dict(near))
    for record in records:
        twice = {key for key, count in Counter(map(person_key, record.authors)).items() if count > 1}
        found.doubled |= twice - set(known) - persons
    for base, entry in known.items():
        for held in [entry.survivor or "", *(holder for holder, _, _ in entry.holders)]:
            head, _, tail = held.rpartition("-")
            if head == base and tail.isdigit():
                found.numbered[base] = max(found.numbered.get(base, 0), int(tail))
    split = [parts for parts in map(name_parts, forms) if parts is not None]
    words = sorted({word for given, family in split for word in [*given.split()[:1], family]})
    for start in range(0, len(words), 500):
        chunk = [ox.Literal(word) for word in words[start : start + 500]]
        for row in store.select(bind(named_query("added_name_commonness").text, part=chunk)):
            found.bearers[str(row["part"])] = (integer(row["givens"]), integer(row["families"]))
    _plan(found, records, store, iris)
    return found


def holder_coauthors(store: GraphStore, holders: list[str]) -> dict[str, tuple[int, frozenset[str]]]:
    """Each of ``holders`` (person IRIs) with a paper: its papers and its co-authors' names, normalised."""
    found: dict[str, tuple[int, frozenset[str]]] = {}
    for start in range(0, len(holders), 500):
        for row in store.select(bind(named_query("added_holder_coauthors").text, holder=holders[start : start + 500])):
            names = frozenset(normalise(n) for n in str(row.get("conames") or "").split("\x1f") if n)
            found[str(row["holder"])] = (integer(row["papers"]), names)
    return found


def _plan(found: Resolver, records: list[Record], store: GraphStore, iris: Iris) -> None:
    """Each new paper's persons (:attr:`Resolver.plan`), decided in the papers' id order (a new form's join too):
    a later authorship of a person on one paper is given the name's next number, unless the store holds the paper
    (an add writes no persons for it)."""
    first: dict[str, Record] = {}
    for record in records:
        first.setdefault(paper_id(record), record)
    people = {pid: [found.person(person_key(name), first[pid]) for name in first[pid].authors] for pid in sorted(first)}
    twice = [iris.paper(pid) for pid, persons in people.items() if len(set(persons)) < len(persons)]
    held: set[str] = set()
    for start in range(0, len(twice), 500):
        held |= {
            str(row["node"])
            for row in store.select(bind(named_query("added_papers_held").text, node=twice[start : start + 500]))
        }
    found.mains = {key for persons in people.values() for key, rank in persons if rank == 1}
    ranks = Counter(dict.fromkeys(found.mains, 1))  # the first number: the name's person on its other papers
    for pid, persons in people.items():
        planned: list[tuple[str, int]] = []
        for at, (name, person) in enumerate(zip(first[pid].authors, persons, strict=True)):
            if person in persons[:at] and iris.paper(pid) not in held:
                key = person_key(name)
                ranks[key] += 1
                person = (key, ranks[key])
            planned.append(person)
        found.plan[pid] = planned
