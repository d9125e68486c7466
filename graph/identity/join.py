"""Identity's decisions held as integer arrays, so a million papers' persons fit in memory.

Authorships are numbered in reading order (record by record: ``starts[record] + position``). A name's
authorships are one run of a single sorted array (``np.lexsort`` by name id, then the paper id's order, then
position), a unit (the authorships one rule found to be one person) a run of that array, a person a run of
another (:mod:`~.found`). Python objects exist only per name that a rule of :mod:`~.cluster` may split and per
pair of forms of one block the join compares. At a million papers the dict-and-tuple version held 2.7 GB more
than the evidence; what the rules decide is unchanged.
"""

from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import connected_components

from bibgraph.graph.arrays.sets import distinct
from bibgraph.graph.identity import cluster as rules
from bibgraph.graph.identity.curation import Applied, Curation, CurationError, resolve
from bibgraph.graph.identity.features import Coauthors, Collected
from bibgraph.graph.identity.found import Authorships, Persons, written_forms
from bibgraph.graph.identity.keys import block_of, fold, parts_compatible, split_name
from bibgraph.graph.serving.memory import release_free_memory

Parts = tuple[tuple[str, ...], str]


class Commonness:
    """How common each written name is (its :class:`~.cluster.Frequency`), from two small count arrays:
    distinct (first given word, family name) keys counted by given word and by family name; a name is split
    again when asked (its split is cached a while), not held per name."""

    def __init__(self, written: Sequence[tuple[str, ...]]) -> None:
        self.given_ids: dict[str, int] = {}
        self.family_ids: dict[str, int] = {}
        keys = array("q")
        for name in {name for names in written for name in names}:
            first, family = self._ids(split_name(name), add=True)
            keys.append(first << 32 | family)
        pairs = distinct(np.frombuffer(keys, dtype=np.int64)) if keys else np.zeros(0, dtype=np.int64)
        self.given = np.bincount(pairs >> 32, minlength=len(self.given_ids))
        self.family = np.bincount(pairs & 0xFFFFFFFF, minlength=len(self.family_ids))
        self.names = len(pairs)

    def _ids(self, parts: Parts, add: bool = False) -> tuple[int, int]:
        given, family = parts
        first = given[0] if given else ""
        if add:
            return self.given_ids.setdefault(first, len(self.given_ids)), self.family_ids.setdefault(
                family, len(self.family_ids)
            )
        return self.given_ids[first], self.family_ids[family]

    def of(self, name: str) -> rules.Frequency:
        first, family = self._ids(split_name(name))
        return rules.Frequency(int(self.given[first]), int(self.family[family]), self.names)


@dataclass
class Units:
    """Authorships grouped into units: ``members[starts[u]:starts[u + 1]]``, each in reading order."""

    members: np.ndarray
    starts: np.ndarray  # one more than the units
    scores: dict[int, tuple[float, bool]]  # by a unit's first place in ``members``: score, split (default 1.0, no)
    apart: set[int]  # first places of units the evidence told apart from other units of their name
    alone: set[int] = field(default_factory=set)  # first places of units a curator keeps alone
    edges: list[tuple[int, int]] = field(default_factory=list)  # units a curator joined
    stated: list[str] = field(default_factory=list)  # where the curator stated each of ``edges``
    dropped: list[str] = field(default_factory=list)  # curated joins the cannot-link dropped: where, which forms

    def __len__(self) -> int:
        return len(self.starts) - 1

    def of_place(self, place: int) -> int:
        return int(np.searchsorted(self.starts, place, side="right")) - 1


def identify_collected(
    collected: Collected, curation: Curation | None = None, applied: Applied | None = None
) -> Persons:
    """Every person of the collected records, in a reading order independent of the input order."""
    authorships = Authorships(collected, collected.coauthors())
    commonness = Commonness(collected.written)
    lazy = _Lazy(collected, authorships.names)
    units = _units(authorships, commonness, lazy)
    applied = applied or Applied()
    if curation:
        _curate(units, authorships, curation, applied)
    authorships.names.forget()  # the join asks no co-authors by name: the answers kept and the names' lookup go
    release_free_memory(collect=False)
    component, touched = _join(units, authorships, lazy, commonness)
    applied.dropped = units.dropped
    del lazy, commonness  # what the rules read is done with: let go before the persons' arrays are made (the peak)
    split_name.cache_clear()
    fold.cache_clear()
    release_free_memory(collect=False)
    return _persons(units, authorships, component, touched)


def _units(authorships: Authorships, commonness: Commonness, lazy: "_Lazy") -> Units:
    """Each name's authorships (a run of one sorted array) split by the rules where its commonness asks."""
    flat = authorships.names.flat
    members = np.lexsort((authorships.reading, flat))
    starts = np.flatnonzero(np.diff(flat[members])) + 1
    bounds = distinct(np.concatenate(([0], starts, [len(members)])).astype(np.int64))
    lengths = np.diff(bounds)
    cuts: list[int] = []
    scores: dict[int, tuple[float, bool]] = {}
    apart: set[int] = set()
    threshold = min(rules.COMMUNITY_COMMON, rules.APART_COMMON)
    # a name a paper lists twice (``王王, 王王``): its authorships of one paper are adjacent in the run
    record = authorships.record[members]
    twice = np.flatnonzero((flat[members][1:] == flat[members][:-1]) & (record[1:] == record[:-1])) + 1
    repeated = set((np.searchsorted(bounds, twice, side="right") - 1).tolist())
    ruled = set(np.flatnonzero((lengths > 1) & (lengths <= rules.MAX_GROUP)).tolist())
    for group in sorted(ruled | repeated):
        start, end = int(bounds[group]), int(bounds[group + 1])
        common = commonness.of(authorships.written(int(members[start]))).expected
        if group not in repeated and not (rules.splittable(common) or common >= threshold):
            continue
        mentions = [authorships.mention(int(m)) for m in members[start:end]]
        collected = authorships.collected
        if group in ruled and rules.splittable(common):
            views = [rules.view(r, p, collected, lazy.coauthors, lazy.matrix[r]) for r, p in mentions]
            groups, found = rules._split(views, common)
        else:
            groups, found = [list(range(len(mentions)))], [1.0]
        before = len(groups)
        if group in ruled and common >= rules.COMMUNITY_COMMON:
            groups, found = rules._by_communities(groups, found, mentions, collected)
        if group in ruled and common >= rules.APART_COMMON:
            groups, found = rules._by_difference(groups, found, mentions, collected, lazy)
        if group in repeated:
            groups, found = _one_per_paper(groups, found, mentions)
        run = members[start:end].copy()
        place = start
        for indices, score in zip(groups, found, strict=True):
            members[place : place + len(indices)] = run[indices]
            if place > start:
                cuts.append(place)
            scores[place] = (score, len(groups) > 1)
            if len(groups) > before:  # the join's text rule must not undo what the evidence told apart
                apart.add(place)
            place += len(indices)
    every = np.union1d(bounds, np.array(cuts, dtype=np.int64)).astype(np.int64)
    return Units(members, every, scores, apart)


def _one_per_paper(
    groups: list[list[int]], scores: list[float], mentions: list[tuple[int, int]]
) -> tuple[list[list[int]], list[float]]:
    """Two authorships of one paper are never one person (S2AND's cannot-link): in each group, a paper's first
    authorship of the name stays, each later one (the same paper, same co-authors, same text: no evidence says
    whose it is) becomes a person of its own. Groups in the order of their first authorship."""
    found: list[list[int]] = []
    kept: list[float] = []
    for group, score in zip(groups, scores, strict=True):
        seen: set[int] = set()
        stays: list[int] = []
        for index in group:
            record = mentions[index][0]
            if record in seen:
                found.append([index])
                kept.append(1.0)
            else:
                seen.add(record)
                stays.append(index)
        found.append(stays)
        kept.append(score)
    order = sorted(range(len(found)), key=lambda k: found[k])
    return [found[k] for k in order], [kept[k] for k in order]


class _Lazy:
    """The co-author sets and the TF-IDF matrix of the whole dataset, computed when first asked for; a unit's
    co-author names kept while its block is compared (:meth:`forget` between blocks)."""

    def __init__(self, collected: Collected, coauthors: Coauthors) -> None:
        self.collected = collected
        self.coauthors = coauthors
        self._near: dict[int, set[str]] = {}

    def near(self, unit: int, mentions: list[tuple[int, int]]) -> set[str]:
        """The co-author names of a unit's authorships."""
        found = self._near.get(unit)
        if found is None:
            names = self.collected.names
            found = {other for r, p in mentions for i, other in enumerate(names[r]) if i != p}
            self._near[unit] = found
        return found

    def forget(self) -> None:
        self._near.clear()

    @cached_property
    def matrix(self) -> sparse.csr_matrix:
        return self.collected.term_matrix(range(len(self.collected.names)))


def _curate(units: Units, authorships: Authorships, curation: Curation, applied: Applied) -> None:
    """Apply the curator's decisions to the units (an ``other`` authorship leaves its unit, to a unit of its own)."""
    collected = authorships.collected
    sizes = [len(names) for names in collected.names]
    starts = authorships.names.starts
    applied.files = list(curation.files)
    for reference in curation.other:
        record, position = resolve(reference, collected.where, sizes)
        authorship = int(starts[record]) + position
        place = int(np.flatnonzero(units.members == authorship)[0])
        unit = units.of_place(place)
        first, end = int(units.starts[unit]), int(units.starts[unit + 1])
        applied.decisions += 1
        if end - first > 1:
            applied.overruled += 1
            run = units.members[first:end]
            units.members[first:end] = np.concatenate((run[run != authorship], [authorship]))
            units.starts = np.insert(units.starts, unit + 1, end - 1)
            units.scores[end - 1] = (1.0, units.scores.get(first, (1.0, False))[1])
            first = end - 1
        units.alone.add(first)
    unit_of = np.repeat(np.arange(len(units), dtype=np.int64), np.diff(units.starts))
    place_of = np.empty(len(units.members), dtype=np.int64)
    place_of[units.members] = np.arange(len(units.members))

    def of(record: int, position: int) -> int:
        return int(unit_of[place_of[int(starts[record]) + position]])

    for group in curation.same:
        mentions = [resolve(reference, collected.where, sizes) for reference in group]
        for at, (record, _) in enumerate(mentions):
            if record in {r for r, _ in mentions[:at]} and mentions[at] not in mentions[:at]:
                raise CurationError(f"{group[at].stated_at}: two authorships of one paper are never one person")
        members = [of(*mention) for mention in mentions]
        applied.decisions += 1
        applied.overruled += len(set(members)) > 1
        joins = [(members[0], other) for other in members[1:] if other != members[0]]
        units.edges += joins
        units.stated += [group[0].stated_at] * len(joins)
    ids = authorships.names.ids
    name_of_unit = authorships.names.flat[units.members[units.starts[:-1]]]
    first_reading = authorships.reading[units.members[units.starts[:-1]]]
    for names, where in curation.same_names:
        wanted = np.array([ids[name] for name in names if name in ids], dtype=np.int64)
        members = np.flatnonzero(np.isin(name_of_unit, wanted)).tolist()
        members.sort(key=lambda unit: int(first_reading[unit]))  # the input's order never decides a dropped join
        applied.decisions += 1
        applied.overruled += len(members) > 1
        units.edges += [(members[0], other) for other in members[1:]]
        units.stated += [where] * (len(members) - 1)


def _join(units: Units, authorships: Authorships, lazy: _Lazy, commonness: Commonness) -> tuple[np.ndarray, set[int]]:
    """Forms of one block joined on evidence (igraph's components before: scipy's, the same partition): each
    unit's person (a component's label) and the units a curator's decision touched."""
    firsts = units.members[units.starts[:-1]]
    blocks: dict[str, int] = {}
    block = np.fromiter(
        (blocks.setdefault(block_of(split_name(authorships.written(int(m)))), len(blocks)) for m in firsts),
        dtype=np.int64,
        count=len(firsts),
    )
    del blocks
    by_block = np.argsort(block, kind="stable")
    cuts = distinct(np.concatenate(([0], np.flatnonzero(np.diff(block[by_block])) + 1, [len(block)])))
    alone = {units.of_place(place) for place in units.alone}
    apart = {units.of_place(place) for place in units.apart}
    flat = authorships.names.flat
    found: list[tuple[float, int, int]] = []  # evidence, units
    for at in np.flatnonzero(np.diff(cuts) > 1).tolist():
        comparing = _Block(by_block[cuts[at] : cuts[at + 1]].tolist(), units, authorships, lazy, commonness)
        for a, b in comparing.candidates():
            if a in alone or b in alone:
                continue
            if a in apart and b in apart and flat[firsts[a]] == flat[firsts[b]]:
                continue
            if evidence := comparing.joined(a, b):
                found.append((evidence, a, b))
        lazy.forget()
    pairs = np.array(_one_paper_one_person(units, authorships, found), dtype=np.int64).reshape(-1, 2)
    graph = sparse.coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(len(units), len(units)))
    component = connected_components(graph, directed=False)[1] if len(units) else np.zeros(0, dtype=np.int32)
    return component, alone | {unit for edge in units.edges for unit in edge}


def _one_paper_one_person(
    units: Units, authorships: Authorships, found: list[tuple[float, int, int]]
) -> list[tuple[int, int]]:
    """The joins kept: the curator's first (in the file's order), then the found ones, strongest evidence first
    (ties: in the reading order of the units' first authorships, so the input's order does not matter); a join
    is dropped when the two persons it would make one hold authorships of one paper: two authorships of one
    paper are never one person (S2AND's cannot-link), however the evidence chains (``A = B``, ``B = C``, ``A``
    and ``C`` on one paper)."""
    reading = authorships.reading[units.members[units.starts[:-1]]]
    ranked = sorted(found, key=lambda e: (-e[0], *sorted((int(reading[e[1]]), int(reading[e[2]])))))
    root: dict[int, int] = {}
    papers: dict[int, set[int]] = {}

    def find(unit: int) -> int:
        if unit not in root:
            root[unit] = unit
            run = units.members[units.starts[unit] : units.starts[unit + 1]]
            papers[unit] = set(authorships.record[run].tolist())
        while root[unit] != unit:
            root[unit] = root[root[unit]]
            unit = root[unit]
        return unit

    kept: list[tuple[int, int]] = []
    for at, (a, b) in enumerate([*units.edges, *((a, b) for _, a, b in ranked)]):
        ra, rb = find(a), find(b)
        if ra == rb:
            continue
        if len(papers[ra]) < len(papers[rb]):
            ra, rb = rb, ra
        if not papers[ra].isdisjoint(papers[rb]):
            if at < len(units.edges):  # a curator's join: said in the build report, never dropped silently
                a_name, b_name = (authorships.written(int(units.members[units.starts[u]])) for u in (a, b))
                units.dropped.append(f"{units.stated[at]}: {a_name} = {b_name}")
            continue
        root[rb] = ra
        papers[ra] |= papers.pop(rb)
        kept.append((a, b))
    return kept


class _Block:
    """One block's units compared: their split forms kept while the block is."""

    def __init__(
        self, members: list[int], units: Units, authorships: Authorships, lazy: _Lazy, commonness: Commonness
    ) -> None:
        self.members, self.units, self.authorships, self.lazy, self.commonness = (
            members,
            units,
            authorships,
            lazy,
            commonness,
        )
        self.written = {u: authorships.written(int(units.members[units.starts[u]])) for u in members}
        self.parts = {u: split_name(self.written[u]) for u in members}

    def mentions(self, unit: int) -> list[tuple[int, int]]:
        run = self.units.members[self.units.starts[unit] : self.units.starts[unit + 1]]
        return [self.authorships.mention(int(m)) for m in run]

    def candidates(self) -> Iterator[tuple[int, int]]:
        """The pairs of a block whose first given words could agree (equal, or one an initial of the other):
        a block of a common family name holds hundreds of forms, most of them plainly other people."""
        by_first: dict[str, list[int]] = {}
        for index in self.members:
            given, _ = self.parts[index]
            by_first.setdefault(given[0] if given else "", []).append(index)
        for first, group in by_first.items():
            for i, a in enumerate(group):
                yield from ((a, b) for b in group[i + 1 :])
            if len(first) == 1:  # an initial: every longer word it may stand for
                for other, more in by_first.items():
                    if len(other) > 1 and other[0] == first:
                        yield from ((a, b) for a in group for b in more)

    def joined(self, a: int, b: int) -> float:
        """The evidence that units ``a`` and ``b`` are one person (0: none): their shared co-authors, else, for
        forms differing only in accents, case or hyphens, their texts' cosine when at least ``JOIN_COSINE``."""
        name_a, name_b = self.written[a], self.written[b]
        parts_a, parts_b = self.parts[a], self.parts[b]
        if not parts_compatible(parts_a, parts_b):
            return 0.0
        if len(parts_a[0]) != len(parts_b[0]):
            shorter = min(name_a, name_b, key=lambda n: len(split_name(n)[0]))
            counts = self.commonness.of(shorter)
            if min(counts.given, counts.family) >= rules.COMMON_PARTS:
                return 0.0  # ``Xiang Li`` and ``Xiang Lorraine Li``: a common short form may be anyone
        mentions_a, mentions_b = self.mentions(a), self.mentions(b)
        if {r for r, _ in mentions_a} & {r for r, _ in mentions_b}:
            return 0.0  # both forms on one paper: two people
        if shared := len(self.lazy.near(a, mentions_a) & self.lazy.near(b, mentions_b)):
            return float(shared)
        if fold(name_a) != fold(name_b):
            return 0.0
        rows_a = np.asarray(self.lazy.matrix[[r for r, _ in mentions_a]].mean(axis=0)).ravel()
        rows_b = np.asarray(self.lazy.matrix[[r for r, _ in mentions_b]].mean(axis=0)).ravel()
        norm = float(np.linalg.norm(rows_a) * np.linalg.norm(rows_b))
        cosine = float(rows_a @ rows_b) / norm if norm > 0 else 0.0
        return cosine if cosine >= rules.JOIN_COSINE else 0.0


def _persons(units: Units, authorships: Authorships, component: np.ndarray, touched: set[int]) -> Persons:
    """The components as persons: runs of one array in the order of their first authorship."""
    sizes = np.diff(units.starts)
    if not len(sizes):
        nothing = np.zeros(0, dtype=np.int64)
        empty = np.zeros(0, dtype=bool)
        of = np.zeros(0, dtype=np.int32)
        return Persons(authorships, nothing, np.zeros(1, dtype=np.int64), [], {}, np.ones(0), empty, empty, empty, of)
    # Each array of the authorships (4M at a million papers: 33 MB in int64) let go once read: this is deciding's peak.
    label = np.repeat(component, sizes)  # per place in ``members``
    reading = authorships.reading[units.members]
    first = np.full(int(component.max()) + 1, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first, label, reading)  # each component's first authorship, components in label order
    rank = np.empty(len(first), dtype=np.int32)
    rank[np.argsort(first)] = np.arange(len(first))
    person = rank[label]
    del label
    order = np.lexsort((reading, person))
    del reading
    members = units.members[order]
    person = person[order]
    del order
    bounds = np.concatenate(([0], np.flatnonzero(np.diff(person)) + 1, [len(person)])).astype(np.int64)
    of = np.empty(len(members), dtype=np.int32)
    of[members] = person
    unit_rank = rank[component]
    scores = np.ones(len(first))
    split = np.zeros(len(first), dtype=bool)
    for place, (score, was_split) in units.scores.items():
        unit = units.of_place(place)
        scores[unit_rank[unit]] = min(scores[unit_rank[unit]], score)
        split[unit_rank[unit]] |= was_split
    joined = np.bincount(unit_rank, minlength=len(first)) > 1
    curated = np.zeros(len(first), dtype=bool)
    curated[[int(unit_rank[u]) for u in touched]] = True
    names: list[str] = []
    variants: dict[int, tuple[str, ...]] = {}
    forms_of = written_forms(authorships, members)
    for index, size in enumerate(np.diff(bounds).tolist()):
        forms = [next(forms_of) for _ in range(size)]
        if size == 1 or len(set(forms)) == 1:
            names.append(forms[0])
            continue
        counts: dict[str, int] = {}
        for form in forms:
            counts[form] = counts.get(form, 0) + 1
        # the most written form; on a tie, one not in capitals (a list's habit), then the first in reading order
        name = max(counts, key=lambda f: (counts[f], not f.isupper(), -forms.index(f)))
        names.append(name)
        variants[index] = tuple(sorted(set(forms) - {name}))
    return Persons(authorships, members, bounds, names, variants, scores, split, joined, curated, of)
