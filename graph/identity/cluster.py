"""Who is who: authorships of one name split into persons, then variant forms joined, by evidence.

S2AND's shape, small: a pairwise probability that two authorships of one name are one person (a
logistic model over the evidence of :mod:`~bibgraph.graph.identity.features` and how common the name is,
its weights fitted on held-apart real lists by ``bench.identity --fit``), then average-linkage
clustering (scikit-learn) within the name, cut at even odds. A name seen once is one person, and a rare
name is never split (the model's prior says so; the split also needs two authorships that disagree).
Then forms of one block that :func:`~bibgraph.graph.identity.keys.compatible` allows are joined when
their persons share a co-author, or, for forms differing only in accents, case or hyphens, when their
texts agree; the union is igraph's connected components, so the result does not depend on order.
"""

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property

import igraph
import numpy as np
from scipy import sparse
from sklearn.cluster import AgglomerativeClustering

from bibgraph.graph.identity.curation import Applied, Curation, resolve
from bibgraph.graph.identity.features import Collected, View, pair_features, view
from bibgraph.graph.identity.keys import block_of, fold, parts_compatible, split_name

METHOD = "bibgraph-identity/1"
# Logistic weights over (shared co-authors, two hops, same area, same subarea, cosine, log commonness), bias.
WEIGHTS = (0.032, 0.606, 0.183, 0.064, 0.064, -1.402)
BIAS = 1.323
JOIN_COSINE = 0.15  # abstracts of two accent-only variants at least this alike: one person
COMMON_PARTS = 10  # a name whose given and family names both start this many names of the dataset is common:
# it is never joined to a form with more given names (``Xiang Li``, ``Xiang Lorraine Li``): its authorships are
# likely several people's, and only some of them the longer form's (``bibgraph authors`` lists the pair)
MAX_GROUP = 400  # authorships of one name compared pairwise at most (beyond: kept as one person, for now)
# A name at least this common (Frequency.expected; ``Yang Liu`` 0.71 in ACL 2020-22) is split further by co-author
# communities: groups of papers sharing co-authors within, none between. Chosen on the dev part of bench.identity
# (thresholds 0.2-0.6, sizes 2-3: the best homonym F1 with overall F1 >= 0.99, then the best overall F1).
COMMUNITY_COMMON = 0.6
COMMUNITY_MODULARITY = 0.3  # a co-author component is cut into communities this much more linked within than between
COMMUNITY_SIZE = 2  # a community of this many authorships at least is a person of its own; smaller ones (a paper
# sharing no co-author with the others says nothing of who wrote it) stay with the largest: no split without evidence
# A paper of a name at least this common leaves its person only on evidence of difference against every other paper
# of that person: no co-author shared, none at two hops, another area, and abstracts less alike than APART_COSINE.
# Chosen on the dev part of bench.identity (cosine 0.05-0.25, sizes 5-40, commonness 0.4-1, area / subarea / no
# concept as sameness: the best dev homonym F1, then the best dev overall F1, then the fewest splits).
APART_COMMON = 0.6
APART_MAX = 20  # a person of more authorships than this is not searched for such papers (a prolific person's field)
APART_COSINE = 0.15


@dataclass(frozen=True)
class Person:
    """One person: its authorships (record, position), the forms written and how it was formed."""

    mentions: tuple[tuple[int, int], ...]
    name: str  # the form written most often (ties: not in capitals, then the first in reading order)
    variants: tuple[str, ...]
    score: float  # the mean pairwise probability inside (1.0 for one authorship)
    split: bool  # its name was split between several persons
    joined: bool  # forms were joined into it
    curated: bool = False  # a curator's decision formed it (people.curation)


@dataclass(frozen=True)
class Frequency:
    """How common a name is in the dataset: the distinct names sharing its given name, its family name."""

    given: int
    family: int
    names: int  # distinct names in the dataset

    @property
    def expected(self) -> float:
        """How many persons the name is expected to hold (``Wei Wang``: many; ``Yoshua Bengio``: far below one)."""
        return self.given * self.family / max(self.names, 1)


Parts = dict[str, tuple[tuple[str, ...], str]]  # each distinct written name split once (split_name)


def name_parts_of(collected: Collected) -> Parts:
    """Every distinct written name, split: once per build (the split's cache is smaller than a large dataset's
    names, so asking it again in each pass recomputed most of them)."""
    return {name: split_name(name) for name in {name for names in collected.written for name in names}}


def frequencies(collected: Collected, parts: Parts | None = None) -> dict[str, Frequency]:
    """Each written name's :class:`Frequency`; forms of one name (``Steven P. Abney``, ``Steven Abney``)
    count once, by (first given word, family name)."""
    parts = parts if parts is not None else name_parts_of(collected)
    keys = {name: (given[0] if given else "", family) for name, (given, family) in parts.items()}
    distinct = set(keys.values())
    given_count: dict[str, int] = defaultdict(int)
    family_count: dict[str, int] = defaultdict(int)
    for first, family in distinct:
        given_count[first] += 1
        family_count[family] += 1
    by_key = {key: Frequency(given_count[key[0]], family_count[key[1]], len(distinct)) for key in distinct}
    return {name: by_key[key] for name, key in keys.items()}


def probability(features: tuple[float, ...], common: float) -> float:
    z = BIAS + sum(w * x for w, x in zip(WEIGHTS, (*features, math.log(max(common, 1e-3))), strict=True))
    return 1.0 / (1.0 + math.exp(-z))


def splittable(common: float) -> bool:
    """Whether any evidence could split a name this common: the probability with no evidence at all
    (every feature at its least; the weights of evidence are not negative) below even odds."""
    return probability((0.0, 0.0, 0.0, 0.0, 0.0), common) < 0.5


def _split(views: list[View], common: float) -> tuple[list[list[int]], list[float]]:
    """Clusters of ``views`` (indices) and each cluster's mean pairwise probability."""
    n = len(views)
    if n == 1:
        return [list(range(n))], [1.0]
    prob = np.ones((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            prob[i, j] = prob[j, i] = probability(pair_features(views[i], views[j]), common)
    if prob.min() >= 0.5:
        return [list(range(n))], [float(prob[np.triu_indices(n, 1)].mean())]
    labels = AgglomerativeClustering(
        n_clusters=None, metric="precomputed", linkage="average", distance_threshold=0.5
    ).fit_predict(1.0 - prob)
    clusters: dict[int, list[int]] = defaultdict(list)
    for index, label in enumerate(labels):
        clusters[int(label)].append(index)
    groups = sorted(clusters.values())
    scores = [float(prob[np.ix_(g, g)][np.triu_indices(len(g), 1)].mean()) if len(g) > 1 else 1.0 for g in groups]
    return groups, scores


def communities(coauthors: list[set[str]]) -> list[list[int]]:
    """Authorships (indices) linked when they share a co-author, weighted by how many: igraph's connected
    components, each cut by igraph's greedy modularity (deterministic: no random seed) where its communities
    hold two authorships or more and their modularity reaches ``COMMUNITY_MODULARITY`` (one shared co-author
    bridging two persons' circles: ``Heng Ji`` wrote with two ``Yang Liu``s). Each sorted, in the order of
    their first authorship."""
    n = len(coauthors)
    links = {(i, j): len(coauthors[i] & coauthors[j]) for i in range(n) for j in range(i + 1, n)}
    links = {pair: weight for pair, weight in links.items() if weight}
    components = igraph.Graph(n=n, edges=list(links)).connected_components()
    inside: dict[int, list[tuple[tuple[int, int], int]]] = defaultdict(list)  # each component's links
    for pair, weight in links.items():
        inside[components.membership[pair[0]]].append((pair, weight))
    found = []
    for index, component in enumerate(components):
        members = sorted(component)
        if len(members) >= 4:
            local = {m: k for k, m in enumerate(members)}
            edges = [(local[a], local[b]) for (a, b), _ in inside[index]]
            graph = igraph.Graph(n=len(members), edges=edges)
            cut = graph.community_fastgreedy(weights=[w for _, w in inside[index]]).as_clustering()
            if cut.modularity >= COMMUNITY_MODULARITY and min(len(c) for c in cut) >= 2:
                found += [sorted(members[k] for k in c) for c in cut]
                continue
        found.append(members)
    return sorted(found)


def _by_communities(
    groups: list[list[int]], scores: list[float], mentions: list[tuple[int, int]], collected: Collected
) -> tuple[list[list[int]], list[float]]:
    """Each group split into its co-author communities of ``COMMUNITY_SIZE`` authorships or more; the
    authorships of smaller ones stay with the group's largest (the first of them on a tie)."""
    names = collected.names
    found: list[list[int]] = []
    kept: list[float] = []
    for group, score in zip(groups, scores, strict=True):
        coauthors = [{n for k, n in enumerate(names[mentions[i][0]]) if k != mentions[i][1]} for i in group]
        parts = communities(coauthors)
        large = [part for part in parts if len(part) >= COMMUNITY_SIZE]
        if len(large) < 2:
            found.append(group)
            kept.append(score)
            continue
        largest = max(large, key=len)
        rest = [i for part in parts if part not in large for i in part]
        for part in large:
            found.append(sorted(group[i] for i in (part + rest if part is largest else part)))
            kept.append(score)
    order = sorted(range(len(found)), key=lambda k: found[k])
    return [found[k] for k in order], [kept[k] for k in order]


def _alike(a: View, b: View) -> bool:
    """Whether anything says two authorships of one name may be one person: a co-author shared, even at two
    hops, the same area (when both have one), or abstracts at least ``APART_COSINE`` alike."""
    shared, two_hop, same_area, _, cosine = pair_features(a, b)
    return bool(shared or two_hop or same_area or cosine >= APART_COSINE)


def _by_difference(
    groups: list[list[int]],
    scores: list[float],
    mentions: list[tuple[int, int]],
    collected: Collected,
    lazy: "_Lazy",
) -> tuple[list[list[int]], list[float]]:
    """Each group of at most ``APART_MAX`` authorships cut into the components of :func:`_alike`: a paper
    leaves only when it differs from every other (no split without evidence of difference)."""
    found: list[list[int]] = []
    kept: list[float] = []
    for group, score in zip(groups, scores, strict=True):
        if len(group) > APART_MAX:
            found.append(group)
            kept.append(score)
            continue
        views = [view(*mentions[i], collected, lazy.coauthors, lazy.matrix[mentions[i][0]]) for i in group]
        edges = [(a, b) for a in range(len(group)) for b in range(a + 1, len(group)) if _alike(views[a], views[b])]
        for component in igraph.Graph(n=len(group), edges=edges).connected_components():
            found.append(sorted(group[k] for k in component))
            kept.append(score if len(component) > 1 else 1.0)
    order = sorted(range(len(found)), key=lambda k: found[k])
    return [found[k] for k in order], [kept[k] for k in order]


def identify_collected(
    collected: Collected, curation: Curation | None = None, applied: Applied | None = None
) -> list[Person]:
    """Every person of the collected records, in a reading order independent of the input order."""
    by_name: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for record, names in enumerate(collected.names):
        for position, name in enumerate(names):
            by_name[name].append((record, position))
    parts = name_parts_of(collected)
    frequency = frequencies(collected, parts)
    common = {name: found.expected for name, found in frequency.items()}
    lazy = _Lazy(collected)  # most datasets split no name: co-author sets and TF-IDF only when asked for
    units: list[tuple[list[tuple[int, int]], float, bool]] = []  # mentions, score, split
    apart: set[int] = set()  # units of one name its co-author communities split
    for key in sorted(by_name):
        mentions = sorted(by_name[key], key=lambda m: (collected.order[m[0]], m[1]))
        written = collected.written[mentions[0][0]][mentions[0][1]]
        if not 1 < len(mentions) <= MAX_GROUP or not (
            splittable(common.get(written, 0.0)) or common.get(written, 0.0) >= min(COMMUNITY_COMMON, APART_COMMON)
        ):
            units.append((mentions, 1.0, False))
            continue
        if splittable(common.get(written, 0.0)):
            views = [view(r, p, collected, lazy.coauthors, lazy.matrix[r]) for r, p in mentions]
            groups, scores = _split(views, common.get(written, 0.0))
        else:
            groups, scores = [list(range(len(mentions)))], [1.0]
        before = len(groups)
        if common.get(written, 0.0) >= COMMUNITY_COMMON:
            groups, scores = _by_communities(groups, scores, mentions, collected)
        if common.get(written, 0.0) >= APART_COMMON:
            groups, scores = _by_difference(groups, scores, mentions, collected, lazy)
        if len(groups) > before:  # the join's text rule must not undo what the evidence told apart
            apart.update(range(len(units), len(units) + len(groups)))
        for group, score in zip(groups, scores, strict=True):
            units.append(([mentions[i] for i in group], score, len(groups) > 1))
    curated = _curate(units, collected, curation, applied or Applied()) if curation else _Curated()
    return _join(units, collected, lazy, frequency, curated, parts, apart)


def _join(
    units: list[tuple[list[tuple[int, int]], float, bool]],
    collected: Collected,
    lazy: "_Lazy",
    frequency: dict[str, Frequency],
    curated: "_Curated",
    parts: Parts,
    apart: set[int],
) -> list[Person]:
    blocks: dict[str, list[int]] = defaultdict(list)
    for index, (mentions, _, _) in enumerate(units):
        record, position = mentions[0]
        blocks[block_of(parts[collected.written[record][position]])].append(index)
    edges: list[tuple[int, int]] = []
    for members in blocks.values():
        for a, b in _candidates(members, units, collected, parts):
            if a in curated.alone or b in curated.alone:
                continue
            if a in apart and b in apart and _name(units[a][0], collected) == _name(units[b][0], collected):
                continue
            if _joined(units[a][0], units[b][0], collected, lazy, frequency, parts):
                edges.append((a, b))
    graph = igraph.Graph(n=len(units), edges=edges + curated.edges)
    touched = curated.alone | {unit for edge in curated.edges for unit in edge}
    persons = []
    for component in graph.connected_components():
        mentions = sorted((m for i in component for m in units[i][0]), key=lambda m: (collected.order[m[0]], m[1]))
        forms = [collected.written[r][p] for r, p in mentions]
        counts: dict[str, int] = defaultdict(int)
        for form in forms:
            counts[form] += 1
        # the most written form; on a tie, one not in capitals (a list's habit), then the first in reading order
        name = max(counts, key=lambda f: (counts[f], not f.isupper(), -forms.index(f)))
        variants = tuple(sorted(set(forms) - {name}))
        score = min(units[i][1] for i in component)
        persons.append(
            Person(
                tuple(mentions),
                name,
                variants,
                score,
                any(units[i][2] for i in component),
                len(component) > 1,
                any(i in touched for i in component),
            )
        )
    persons.sort(key=lambda p: (collected.order[p.mentions[0][0]], p.mentions[0][1]))
    return persons


def _name(mentions: list[tuple[int, int]], collected: Collected) -> str:
    return collected.names[mentions[0][0]][mentions[0][1]]


class _Lazy:
    """The co-author sets and the TF-IDF matrix of the whole dataset, computed when first asked for."""

    def __init__(self, collected: Collected) -> None:
        self.collected = collected
        self._near: dict[tuple[int, int], set[str]] = {}

    def near(self, mentions: list[tuple[int, int]]) -> set[str]:
        """The co-author names of a unit's authorships (kept: a unit meets many forms of its block)."""
        found = self._near.get(mentions[0])
        if found is None:
            names = self.collected.names
            found = {other for r, p in mentions for i, other in enumerate(names[r]) if i != p}
            self._near[mentions[0]] = found
        return found

    @cached_property
    def coauthors(self) -> Mapping[str, set[str]]:
        return self.collected.coauthors()

    @cached_property
    def matrix(self) -> sparse.csr_matrix:
        return self.collected.term_matrix(list(range(len(self.collected.names))))


@dataclass
class _Curated:
    """The curation as the join sees it: units joined whatever the evidence, units no one joins."""

    edges: list[tuple[int, int]] = field(default_factory=list)
    alone: set[int] = field(default_factory=set)


def _curate(
    units: list[tuple[list[tuple[int, int]], float, bool]], collected: Collected, curation: Curation, applied: Applied
) -> _Curated:
    """Apply the curator's decisions to the units (in place: an ``other`` authorship leaves its unit)."""
    sizes = [len(names) for names in collected.names]
    found = _Curated()
    applied.files = list(curation.files)
    for reference in curation.other:
        mention = resolve(reference, collected.where, sizes)
        unit = next(i for i, u in enumerate(units) if mention in u[0])
        applied.decisions += 1
        if len(units[unit][0]) > 1:
            applied.overruled += 1
            units[unit] = ([m for m in units[unit][0] if m != mention], units[unit][1], units[unit][2])
            units.append(([mention], 1.0, units[unit][2]))
            unit = len(units) - 1
        found.alone.add(unit)
    of = {m: i for i, unit in enumerate(units) for m in unit[0]}
    for group in curation.same:
        members = [of[resolve(reference, collected.where, sizes)] for reference in group]
        applied.decisions += 1
        applied.overruled += len(set(members)) > 1
        found.edges += [(members[0], other) for other in members[1:] if other != members[0]]
    by_name: dict[str, list[int]] = defaultdict(list)
    for index, (mentions, _, _) in enumerate(units):
        record, position = mentions[0]
        by_name[collected.names[record][position]].append(index)
    for names, _ in curation.same_names:
        members = sorted({i for name in names for i in by_name.get(name, [])})
        applied.decisions += 1
        applied.overruled += len(members) > 1
        found.edges += [(members[0], other) for other in members[1:]]
    return found


def _candidates(
    members: list[int], units: list[tuple[list[tuple[int, int]], float, bool]], collected: Collected, parts: Parts
) -> Iterable[tuple[int, int]]:
    """The pairs of a block whose first given words could agree (equal, or one an initial of the other):
    a block of a common family name holds hundreds of forms, most of them plainly other people."""
    by_first: dict[str, list[int]] = defaultdict(list)
    for index in members:
        record, position = units[index][0][0]
        given, _ = parts[collected.written[record][position]]
        by_first[given[0] if given else ""].append(index)
    for first, group in by_first.items():
        for i, a in enumerate(group):
            yield from ((a, b) for b in group[i + 1 :])
        if len(first) == 1:  # an initial: every longer word it may stand for
            for other, more in by_first.items():
                if len(other) > 1 and other[0] == first:
                    yield from ((a, b) for a in group for b in more)


def _joined(
    a: list[tuple[int, int]],
    b: list[tuple[int, int]],
    collected: Collected,
    lazy: "_Lazy",
    frequency: dict[str, Frequency],
    parts: Parts,
) -> bool:
    name_a = collected.written[a[0][0]][a[0][1]]
    name_b = collected.written[b[0][0]][b[0][1]]
    if not parts_compatible(parts[name_a], parts[name_b]):
        return False
    shorter = min(name_a, name_b, key=lambda n: len(parts[n][0]))
    if len(parts[name_a][0]) != len(parts[name_b][0]):
        counts = frequency[shorter]
        if min(counts.given, counts.family) >= COMMON_PARTS:
            return False  # ``Xiang Li`` and ``Xiang Lorraine Li``: a common short form may be anyone
    if {r for r, _ in a} & {r for r, _ in b}:
        return False  # both forms on one paper: two people
    if lazy.near(a) & lazy.near(b):
        return True
    if fold(name_a) != fold(name_b):
        return False
    rows_a = np.asarray(lazy.matrix[[r for r, _ in a]].mean(axis=0)).ravel()
    rows_b = np.asarray(lazy.matrix[[r for r, _ in b]].mean(axis=0)).ravel()
    norm = float(np.linalg.norm(rows_a) * np.linalg.norm(rows_b))
    return norm > 0 and float(rows_a @ rows_b) / norm >= JOIN_COSINE
