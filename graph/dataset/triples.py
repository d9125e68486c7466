"""The RDF data model: records become papers, people, authorships and concepts.

A :class:`Catalogue` makes the identity decisions (which records are the same paper, which
spellings the same person) while each record is turned into N-Triples lines as it is read. Emitting text
lets the Rust bulk loader of pyoxigraph parse it, which is much faster than building one Python
term object per node; the IRIs here are all minted by us, so only literals need escaping
(:mod:`bibgraph.graph.rdf.ntriples`).
"""

import time
from array import array
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rdflib import DCTERMS, OWL, PROV, RDF, RDFS, SKOS

from bibgraph.graph.dataset.searchspool import DocumentSpool
from bibgraph.graph.dataset.voidtally import VoidTally
from bibgraph.graph.identity.curation import Applied, Curation
from bibgraph.graph.identity.decide import persons_of
from bibgraph.graph.identity.features import Collected
from bibgraph.graph.identity.numbering import Numbering
from bibgraph.graph.identity.persons import activity_lines, description, person_keys, person_lines
from bibgraph.graph.ingest.authorline import CORRESPONDING_MARKS, EQUAL_CONTRIBUTION_MARKS
from bibgraph.graph.ingest.names import concept_key, person_key, tidy
from bibgraph.graph.ingest.plaintext import plain_text
from bibgraph.graph.ingest.records import Record, paper_id
from bibgraph.graph.networks.incidence import Concept, Incidence
from bibgraph.graph.networks.incidencebuild import Subjects, incidence_of_persons, subjects_of
from bibgraph.graph.rdf.iris import Iris
from bibgraph.graph.rdf.ntriples import literal as _literal
from bibgraph.graph.rdf.ntriples import typed as _typed
from bibgraph.graph.rdf.vocab import BG, SCHEMA
from bibgraph.graph.serving.memory import release_free_memory
from bibgraph.graph.site.roles import Roles
from bibgraph.graph.site.rolesbuild import roles_of_persons

if TYPE_CHECKING:  # the resolver reads paper ids from here
    from bibgraph.graph.identity.extend import Resolver

TRUNCATION_SUFFIX = " 等"
LABEL_WORDS_CHARS = 60
LEAD_CHARS = 30
_OPENING_WINDOW = 4 * LABEL_WORDS_CHARS  # how much of an abstract the label's text is taken from


def derived_label(record: Record) -> str:
    """A display label (never a title): first author, ``et al.``, and the abstract's opening words."""
    if record.authors:
        lead = record.authors[0] + (" et al." if len(record.authors) > 1 or record.truncated else "")
    else:  # an author line kept whole: its opening words
        lead = _shorten(record.author_list or "", LEAD_CHARS)
    return f"{lead}: {_shorten(_plain_opening(record.abstract), LABEL_WORDS_CHARS)}"


def _plain_opening(abstract: str) -> str:
    """``plain_text(tidy(abstract))``, or a prefix of it longer than the label shows.

    Converting a whole abstract to show sixty characters cost a twelfth of the build. Before the
    first ``$``, ``*`` or ``\\`` the conversion only collapses whitespace (every rule of
    :func:`plain_text` starts at one of them), so that stretch, when long enough, is the label's text.
    """
    head = abstract[:_OPENING_WINDOW]
    cut = min((i for i in (head.find("$"), head.find("*"), head.find("\\")) if i >= 0), default=len(head))
    if cut < len(abstract):
        opening = tidy(abstract[:cut])
        if len(opening) > LABEL_WORDS_CHARS + 1:
            return opening
    return plain_text(tidy(abstract))


def _shorten(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0].rstrip(",;:.") + "…"


# The N-Triples form of every term the build writes, made once: rdflib's namespace lookups cost a
# microsecond each, and the build writes about forty terms per record.
_BG_AUTHORSHIP_CLASS = f"<{BG.Authorship}>"
_BG_SOURCE_RECORD = f"<{BG.SourceRecord}>"
_BG_AUTHOR_LIST = f"<{BG.authorList}>"
_BG_AUTHOR_LIST_TRUNCATED = f"<{BG.authorListTruncated}>"
_BG_AUTHOR_LIST_UNSPLIT = f"<{BG.authorListUnsplit}>"
_BG_AUTHOR_MARKS = f"<{BG.authorMarks}>"
_BG_AUTHOR_POSITION = f"<{BG.authorPosition}>"
_BG_AUTHORSHIP = f"<{BG.authorship}>"
_BG_CORRESPONDING_AUTHOR = f"<{BG.correspondingAuthor}>"
_BG_EQUAL_CONTRIBUTION = f"<{BG.equalContribution}>"
_BG_LISTED_AUTHOR_COUNT = f"<{BG.listedAuthorCount}>"
_BG_NAME_AS_WRITTEN = f"<{BG.nameAsWritten}>"
_BG_SOURCE_FILE = f"<{BG.sourceFile}>"
_BG_SOURCE_LINE = f"<{BG.sourceLine}>"
_DCTERMS_ABSTRACT = f"<{DCTERMS.abstract}>"
_DCTERMS_CREATOR = f"<{DCTERMS.creator}>"
_DCTERMS_SUBJECT = f"<{DCTERMS.subject}>"
_PROV_AGENT = f"<{PROV.agent}>"
_PROV_WAS_DERIVED_FROM = f"<{PROV.wasDerivedFrom}>"
_RDF_TYPE = f"<{RDF.type}>"
_RDFS_LABEL = f"<{RDFS.label}>"
_SCHEMA_SCHOLARLY_ARTICLE = f"<{SCHEMA.ScholarlyArticle}>"
_SKOS_CONCEPT = f"<{SKOS.Concept}>"
_SKOS_CONCEPT_SCHEME = f"<{SKOS.ConceptScheme}>"
_SKOS_BROADER = f"<{SKOS.broader}>"
_SKOS_HAS_TOP_CONCEPT = f"<{SKOS.hasTopConcept}>"
_SKOS_IN_SCHEME = f"<{SKOS.inScheme}>"
_SKOS_PREF_LABEL = f"<{SKOS.prefLabel}>"
_SKOS_TOP_CONCEPT_OF = f"<{SKOS.topConceptOf}>"


@dataclass
class Catalogue:
    """Identity decisions, made record by record in (file, line) order.

    A record's paper triples are emitted as soon as it is read (``add``); only names, concepts
    and per-paper bookkeeping stay in memory, never abstracts. People and concepts are emitted
    at the end (``closing``), when every spelling has been seen: the first one wins. What is kept
    grows with papers and people, so it is kept small: strings and ints, paper ids as ints,
    one string per concept IRI, variant lists only for the few people who have variants.
    """

    people: dict[str, str] = field(default_factory=dict)  # person key -> the first spelling seen
    variants: dict[str, list[str]] = field(default_factory=dict)  # person key -> other spellings
    areas: dict[str, str] = field(default_factory=dict)
    subareas: dict[tuple[str, str], str] = field(default_factory=dict)
    sources: dict[int, int] = field(default_factory=dict)  # paper id (as an int) -> records seen
    subjects: dict[int, tuple[str, ...]] = field(default_factory=dict)  # paper id -> concept IRIs stated
    truncated: list[str] = field(default_factory=list)  # "file:line" of cut author lists
    records: int = 0
    authorships: int = 0
    _concept_iris: dict[str, str] = field(default_factory=dict)  # one string per concept IRI
    # With ``identity`` (a build), persons are decided from the evidence of every paper at the end
    # (graph.identity): the papers' creators and authorship agents are written then, not as read.
    identity: Collected | None = None
    curation: Curation | None = None
    curated: Applied = field(default_factory=Applied)
    persons: int = 0
    joined: list[tuple[str, list[str]]] = field(default_factory=list)  # persons with several written forms
    shared: int = 0  # persons whose name another person of the dataset holds too
    identity_seconds: float = 0.0  # what the identity step cost (evidence kept, persons decided, written)
    # The dataset's person keys as published (graph.identity.numbering): given, a build keeps them; after a build
    # or an add, the map the new version publishes.
    numbering: Numbering | None = None
    # With ``resolve`` (an add), a name's key goes to the person the store already has for it: the survivor of
    # a joined form, the holder of a shared name the record's co-authors point to (graph.identity.extend).
    resolve: "Resolver | None" = None
    retired: dict[str, str] = field(default_factory=dict)  # an add: new forms' keys joined into a person's
    _papers: int | None = None  # a build's papers, counted when ``sources`` is let go (at ``closing``)
    # A build for a dataset: the authorships' positions and lists' lengths (graph/site/roles.py), made once the
    # persons are decided (``roles``: None when they cannot be kept), and the incidence
    # (graph/networks/incidencebuild.py), handed to ``keep_incidence`` as soon as it is made and not held: the load's
    # last blocks and the persons' lines never meet it.
    keep_roles: bool = False
    roles: Roles | None = None
    keep_incidence: Callable[[Incidence], None] | None = None
    _truncated_papers: array = field(default_factory=lambda: array("Q"))  # their numbers (a build for a dataset)
    _subjects: Subjects | None = None  # ``subjects``, compact, when let go (a build for a dataset)
    # A build into an empty store: the VoID statistics tallied as the lines are written (graph/dataset/voidtally.py)
    tally: VoidTally | None = None
    search: DocumentSpool = field(default_factory=DocumentSpool)  # a dataset build's search texts (searchspool.py)

    def key(self, name: str, record: Record) -> str:
        """The person key ``name`` on ``record`` is written under."""
        key = person_key(name)
        return self.resolve(key, record) if self.resolve is not None else key

    def _keys(self, record: Record) -> list[str]:
        """The person keys of a new paper's authorships (an add): never one person twice on it."""
        if self.resolve is None:
            return [person_key(name) for name in record.authors]
        return self.resolve.keys(record, self.numbering)

    def add(self, record: Record, iris: Iris) -> list[str]:
        """Record what ``record`` says about identities and return its N-Triples lines."""
        self.records += 1
        pid = paper_id(record)
        paper_iri = iris.paper(pid)
        number = int(pid, 16)
        seen = self.sources.get(number, 0)
        self.sources[number] = seen + 1
        concept = self._concept(record, iris)
        keys: list[str] = []
        if self.identity is None:  # an add: a name is a person, its first spelling its name (a build decides later)
            keys = self._keys(record) if seen == 0 else [self.key(name, record) for name in record.authors]
            for name, key in zip(record.authors, keys, strict=True):
                first = self.people.setdefault(key, name)
                if name != first:
                    known = self.variants.setdefault(key, [])
                    if name not in known:
                        known.append(name)
        stated = self.subjects.get(number, ())
        new_subject = concept if concept and concept not in stated else None
        if new_subject:
            self.subjects[number] = (*stated, self._concept_iris.setdefault(new_subject, new_subject))
        if seen == 0:
            label = derived_label(record)
            self.authorships += len(record.authors)
            if record.truncated:
                self.truncated.append(f"{record.source}:{record.line}")
                if self.keep_incidence is not None:
                    self._truncated_papers.append(number)
            if self.identity is not None:
                start = time.perf_counter()
                area, subarea = record.area or "", record.subarea or ""
                self.identity.add(record.authors, area, subarea, record.abstract, pid, (record.source, record.line))
                self.identity_seconds += time.perf_counter() - start
                self.search.paper(paper_iri, record.abstract, label)  # persons written by ``closing``
                return _paper_lines(record, label, paper_iri, new_subject, iris, None, self.tally)
            if self.numbering is not None:  # an add: the map follows the new authorships
                for position, key in enumerate(keys):
                    self.numbering.record(key, f"{pid}#{position}")
            return _paper_lines(record, label, paper_iri, new_subject, iris, keys, self.tally)
        # The same paper again (same authors and abstract): only its new source and subject.
        return _duplicate_lines(record, paper_iri, seen + 1, new_subject, self.tally)

    def _concept(self, record: Record, iris: Iris) -> str | None:
        if not record.area:
            return None
        area_key = concept_key(record.area)
        self.areas.setdefault(area_key, record.area)
        if not record.subarea:
            return iris.area(area_key)
        subarea_key = concept_key(record.subarea)
        self.subareas.setdefault((area_key, subarea_key), record.subarea)
        return iris.subarea(area_key, subarea_key)

    def _concepts(self, iris: Iris) -> dict[str, Concept]:
        """Every concept by IRI, labelled as ``closing`` writes it, with its area (an area's: itself)."""
        found = {}
        for area_key, label in self.areas.items():
            iri = iris.area(area_key)
            found[iri] = Concept(iri, label, iri, label)
        for (area_key, subarea_key), label in self.subareas.items():
            found[iris.subarea(area_key, subarea_key)] = Concept(
                iris.subarea(area_key, subarea_key), label, iris.area(area_key), self.areas[area_key]
            )
        return found

    @property
    def papers(self) -> int:
        return len(self.sources) if self._papers is None else self._papers

    @property
    def duplicate_records(self) -> int:
        return self.records - self.papers

    def _persons(self, iris: Iris, identity: Collected) -> Iterator[str]:
        """The persons decided from every record's evidence, as lines; the evidence let go once decided."""
        start = time.perf_counter()
        identity.close()
        persons = persons_of(identity, self.curation, self.curated)
        identity.release()  # keys and lines read the paper ids alone
        release_free_memory(collect=False)  # deciding's arrays back to the system while the persons are written
        self.identity_seconds += time.perf_counter() - start  # deciding; writing persons is no new cost
        self.persons = len(persons.names)
        self.joined = [(persons.names[i], list(found)) for i, found in sorted(persons.variants.items())]
        assigned = person_keys(persons, identity, self.numbering)
        self.numbering = assigned.numbering
        numbered = Counter(base for key, base in zip(assigned.keys, assigned.bases, strict=True) if key != base)
        self.shared = sum(count for count in numbered.values() if count > 1)  # a number one holder keeps: no
        if self.keep_roles:  # before the persons' lines: the store's last blocks are not loading yet
            self.roles = roles_of_persons(identity.order, persons.starts, persons.of.array, assigned.keys, iris.paper)
        if self.keep_incidence is not None and self._subjects is not None:  # kept and let go before them too
            made = incidence_of_persons(
                identity.order,
                persons.starts,
                persons.of.array,
                assigned.keys,
                persons.names,
                self._truncated_papers,
                self._subjects,
                (iris.paper(""), iris.person("")),
            )
            self._subjects, self._truncated_papers = None, array("Q")  # its parts let go before it is written
            self.keep_incidence(made)
            del made  # this generator's frame lives on through the persons' lines
            release_free_memory(collect=False)  # its making's pages back before the persons' lines and last blocks
        yield from person_lines(persons, identity, iris, assigned)
        self.search.persons(persons.names, map(iris.person, assigned.keys), persons.variants)

    def closing(self, iris: Iris) -> Iterator[str]:
        """People and concepts, once every record has been added (tallied, with a tally: texts of many lines)."""
        lines = self._closing(iris)
        return lines if self.tally is None else self.tally.lines(lines)

    def _closing(self, iris: Iris) -> Iterator[str]:
        a = _RDF_TYPE
        if self.identity is not None:
            # the parse's bookkeeping is done with: its memory goes to deciding and writing the persons
            self._papers = len(self.sources)
            if self.keep_incidence is not None:  # the incidence's concepts, compact, before the pairs are let go
                self._subjects = subjects_of(self.subjects, self._concepts(iris))
            self.sources, self.subjects = {}, {}
            release_free_memory(collect=False)  # their pages back to the system, under deciding's peak
            yield from self._persons(iris, self.identity)
            self.identity = None  # nothing of the evidence alive while the store loads the last lines
        else:  # an add: a name is a person (graph.identity.extend sent known names to their persons)
            yield from activity_lines(iris)
            for old, key in sorted(self.retired.items()):
                yield f"<{iris.person(old)}> <{OWL.sameAs}> <{iris.person(key)}> .\n"
            if self.resolve is not None:  # names the add numbered (a paper listing one twice)
                yield from self.resolve.lines(iris)
            for key in sorted(self.people):
                iri = f"<{iris.person(key)}>"
                yield from description(iri, self.people[key], self.variants.get(key, ()), 1.0, False, iris)
        scheme = f"<{iris.scheme}>"
        yield f"{scheme} {a} {_SKOS_CONCEPT_SCHEME} .\n"
        yield f'{scheme} {_SKOS_PREF_LABEL} "Research areas" .\n'
        for area_key in sorted(self.areas):
            yield f"{scheme} {_SKOS_HAS_TOP_CONCEPT} <{iris.area(area_key)}> .\n"
        for area_key in sorted(self.areas):
            iri = f"<{iris.area(area_key)}>"
            yield f"{iri} {a} {_SKOS_CONCEPT} .\n"
            yield f"{iri} {_SKOS_PREF_LABEL} {_literal(self.areas[area_key])} .\n"
            yield f"{iri} {_SKOS_IN_SCHEME} {scheme} .\n"
            yield f"{iri} {_SKOS_TOP_CONCEPT_OF} {scheme} .\n"
        for (area_key, subarea_key), label in sorted(self.subareas.items()):
            iri = f"<{iris.subarea(area_key, subarea_key)}>"
            yield f"{iri} {a} {_SKOS_CONCEPT} .\n"
            yield f"{iri} {_SKOS_PREF_LABEL} {_literal(label)} .\n"
            yield f"{iri} {_SKOS_IN_SCHEME} {scheme} .\n"
            yield f"{iri} {_SKOS_BROADER} <{iris.area(area_key)}> .\n"
        self.search.concepts(self._concepts(iris).values())


_TRUE = _typed(True)
_FALSE = _typed(False)
_EQUAL_MARKS = frozenset(EQUAL_CONTRIBUTION_MARKS)
_CORRESPONDING_MARKS = frozenset(CORRESPONDING_MARKS)


def _paper_lines(
    record: Record,
    label: str,
    paper_iri: str,
    subject: str | None,
    iris: Iris,
    keys: list[str] | None,
    tally: VoidTally | None,
) -> list[str]:
    """A new paper's lines, in a list: the build writes forty lines a paper, and a generator's step per line cost as
    much as formatting it. ``label``: its :func:`derived_label`; ``keys``: its authors' person keys, or None when the
    persons are decided (their creator and agent lines written once every record is read); ``tally``: told them."""
    iri = f"<{paper_iri}>"
    if record.author_list is not None:  # kept whole: verbatim, no persons stated
        names = record.author_list
    else:
        names = ", ".join(record.authors) + (TRUNCATION_SUFFIX if record.truncated else "")
    values = [
        _SCHEMA_SCHOLARLY_ARTICLE,
        _literal(label),
        _literal(record.abstract),
        _literal(names),
        _typed(len(record.authors)),
        _TRUE if record.truncated else _FALSE,
    ]
    lines = [
        f"{iri} {_RDF_TYPE} {values[0]} .\n",
        f"{iri} {_RDFS_LABEL} {values[1]} .\n",
        f"{iri} {_DCTERMS_ABSTRACT} {values[2]} .\n",
        f"{iri} {_BG_AUTHOR_LIST} {values[3]} .\n",
        f"{iri} {_BG_LISTED_AUTHOR_COUNT} {values[4]} .\n",
        f"{iri} {_BG_AUTHOR_LIST_TRUNCATED} {values[5]} .\n",
    ]
    add = lines.append
    value = values.append
    if record.author_list is not None:
        add(f"{iri} {_BG_AUTHOR_LIST_UNSPLIT} {_TRUE} .\n")
        value(_TRUE)
    if subject:
        add(f"{iri} {_DCTERMS_SUBJECT} <{subject}> .\n")
        value(f"<{subject}>")
    people_now = keys is not None
    people = [f"<{iris.person(key)}>" for key in keys] if keys is not None else [""] * len(record.authors)
    authorships = [f"<{iris.authorship(paper_iri, position)}>" for position in range(1, len(people) + 1)]
    creators = set()  # a person listed twice is one creator (each triple written once: the dump is the stream)
    for person, node in zip(people, authorships, strict=True):
        if people_now and person not in creators:
            creators.add(person)
            add(f"{iri} {_DCTERMS_CREATOR} {person} .\n")
        add(f"{iri} {_BG_AUTHORSHIP} {node} .\n")
    source = f"<{Iris.source(paper_iri, 1)}>"
    add(f"{iri} {_PROV_WAS_DERIVED_FROM} {source} .\n")
    # Each node's triples stay together so that Turtle writers can group them under one subject.
    credits = zip(record.names_as_written, record.author_marks, people, authorships, strict=True)
    marked = equal = corresponding = 0
    for position, (name, marks, person, node) in enumerate(credits, 1):
        number, written = _typed(position), _literal(name)
        add(f"{node} {_RDF_TYPE} {_BG_AUTHORSHIP_CLASS} .\n")
        if people_now:
            add(f"{node} {_PROV_AGENT} {person} .\n")
        add(f"{node} {_BG_AUTHOR_POSITION} {number} .\n")
        add(f"{node} {_BG_NAME_AS_WRITTEN} {written} .\n")
        values += (number, written)
        if marks:
            marked += 1
            add(f"{node} {_BG_AUTHOR_MARKS} {_literal(marks)} .\n")
            value(_literal(marks))
            if not _EQUAL_MARKS.isdisjoint(marks):
                equal += 1
                add(f"{node} {_BG_EQUAL_CONTRIBUTION} {_TRUE} .\n")
                value(_TRUE)
            if not _CORRESPONDING_MARKS.isdisjoint(marks):
                corresponding += 1
                add(f"{node} {_BG_CORRESPONDING_AUTHOR} {_TRUE} .\n")
                value(_TRUE)
    lines += _source_lines(source, record, values)
    if tally is not None:
        unsplit = record.author_list is not None
        shape = (len(people), len(creators), unsplit, bool(subject), marked, equal, corresponding)
        values += authorships
        values += creators
        value(source)
        if people_now:
            values += people
        if authorships:
            value(_BG_AUTHORSHIP_CLASS)
        nodes = [iri, *authorships, source]  # each one typed here
        tally.record(shape, lines, nodes, nodes, values)
    return lines


def _duplicate_lines(
    record: Record, paper_iri: str, index: int, subject: str | None, tally: VoidTally | None
) -> list[str]:
    source = f"<{Iris.source(paper_iri, index)}>"
    iri = f"<{paper_iri}>"
    lines = [f"{iri} {_PROV_WAS_DERIVED_FROM} {source} .\n"]
    values = [source]
    if subject:
        lines.append(f"{iri} {_DCTERMS_SUBJECT} <{subject}> .\n")
        values.append(f"<{subject}>")
    lines += _source_lines(source, record, values)
    if tally is not None:
        tally.record(("again", bool(subject)), lines, [iri, source], [source], values)
    return lines


def _source_lines(node: str, record: Record, values: list[str]) -> list[str]:
    """A source's lines; their objects added to ``values``."""
    written = (_BG_SOURCE_RECORD, _literal(record.source), _typed(record.line))
    values += written
    return [
        f"{node} {_RDF_TYPE} {written[0]} .\n",
        f"{node} {_BG_SOURCE_FILE} {written[1]} .\n",
        f"{node} {_BG_SOURCE_LINE} {written[2]} .\n",
    ]
