"""Who is who: the rules that split a name's authorships into persons and join variant forms, by evidence.

S2AND's shape, small: a pairwise probability that two authorships of one name are one person (a
logistic model over the evidence of :mod:`~bibgraph.graph.identity.features` and how common the name is,
its weights fitted on held-apart real lists by ``bench.persons.identity --fit``), then average-linkage
clustering (scikit-learn) within the name, cut at even odds. A name seen once is one person, and a rare
name is never split (the model's prior says so; the split also needs two authorships that disagree).
Then forms of one block that :func:`~bibgraph.graph.identity.keys.compatible` allows are joined when
their persons share a co-author, or, for forms differing only in accents, case or hyphens, when their
texts agree; the union is scipy's connected components, so the result does not depend on order.
"""

import math
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

import igraph
import numpy as np
from sklearn.cluster import AgglomerativeClustering

from bibgraph.graph.identity.features import Collected, Terms, View, pair_features, view

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
# communities: groups of papers sharing co-authors within, none between. Chosen on the dev part of
# bench.persons.identity
# (thresholds 0.2-0.6, sizes 2-3: the best homonym F1 with overall F1 >= 0.99, then the best overall F1).
COMMUNITY_COMMON = 0.6
COMMUNITY_MODULARITY = 0.3  # a co-author component is cut into communities this much more linked within than between
COMMUNITY_SIZE = 2  # a community of this many authorships at least is a person of its own; smaller ones (a paper
# sharing no co-author with the others says nothing of who wrote it) stay with the largest: no split without evidence
# A paper of a name at least this common leaves its person only on evidence of difference against every other paper
# of that person: no co-author shared, none at two hops, another area, and abstracts less alike than APART_COSINE.
# Chosen on the dev part of bench.persons.identity (cosine 0.05-0.25, sizes 5-40, commonness 0.4-1, area / subarea / no
# concept as sameness: the best dev homonym F1, then the best dev overall F1, then the fewest splits).
APART_COMMON = 0.6
APART_MAX = 20  # a person of more authorships than this is not searched for such papers (a prolific person's field)
APART_COSINE = 0.15


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


class _Lazy(Protocol):
    """What the rules read of the whole dataset, made when first asked for (:class:`~.join._Lazy`)."""

    @property
    def coauthors(self) -> Mapping[str, set[str]]: ...
    @property
    def matrix(self) -> Terms: ...
