"""Identity over integer arrays (graph/identity/join.py) decides exactly what the dict-and-tuple version did.

The oracle is that version's orchestration, kept here in short (no curation: tests/identity/test_curation.py
covers it through the array path): a dict of (record, position) lists per name, units as lists, igraph's
components. Names come from pools where a given name and a family name are each borne by many names, so the
names are common enough for every rule to split them, and from variant forms the join may bring together.
"""

from collections import defaultdict

import igraph
import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from bibgraph.graph.identity import cluster as rules
from bibgraph.graph.identity.decide import persons_of
from bibgraph.graph.identity.features import Collected
from bibgraph.graph.identity.keys import block_of, fold, parts_compatible, split_name

FAMILIES = ["Wang", "Liu", "Zhou", "Zhang", "Li", "Chen"]
GIVENS = ["Wei", "Yang", "Jie", "Lei", "Xiang", "Min"]
FORMS = ["W. Wang", "Wei Wáng", "WEI WANG", "Wei-Min Wang", "Xiang Lorraine Li", "Y. Liu", "Yang  Liu", "Jie Zhou"]
WORDS = "graph parsing speech vision protein galaxy lattice enzyme theorem robot".split()
POOL = [f"{g} {f}" for g in GIVENS for f in FAMILIES if (g, f) < ("Lei", "Zhou")] + FORMS


class _Lazy:
    def __init__(self, collected: Collected) -> None:
        self.collected, self.coauthors, self.matrix = (
            collected,
            collected.coauthors(),
            collected.term_matrix(list(range(len(collected.names)))),
        )

    def near(self, mentions: list[tuple[int, int]]) -> set[str]:
        names = self.collected.names
        return {other for r, p in mentions for i, other in enumerate(names[r]) if i != p}


def _frequencies(collected: Collected) -> dict[str, rules.Frequency]:
    """Each written name's commonness as cf1f310 counted it with dicts (the oracle of :class:`join.Commonness`)."""
    keys = {}
    for name in {name for names in collected.written for name in names}:
        given, family = split_name(name)
        keys[name] = (given[0] if given else "", family)
    distinct = set(keys.values())
    given_count: dict[str, int] = defaultdict(int)
    family_count: dict[str, int] = defaultdict(int)
    for first, family in distinct:
        given_count[first] += 1
        family_count[family] += 1
    return {name: rules.Frequency(given_count[k[0]], family_count[k[1]], len(distinct)) for name, k in keys.items()}


def _old(collected: Collected) -> list[tuple[object, ...]]:
    """The persons as the dict-and-tuple version made them (cf1f310's identify_collected without curation)."""
    by_name: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for record, names in enumerate(collected.names):
        for position, name in enumerate(names):
            by_name[name].append((record, position))
    parts = {name: split_name(name) for names in collected.written for name in names}
    frequency = _frequencies(collected)
    common = {name: found.expected for name, found in frequency.items()}
    lazy = _Lazy(collected)
    units: list[tuple[list[tuple[int, int]], float, bool]] = []
    apart: set[int] = set()
    for key in sorted(by_name):
        mentions = sorted(by_name[key], key=lambda m: (collected.order[m[0]], m[1]))
        c = common[collected.written[mentions[0][0]][mentions[0][1]]]
        if not 1 < len(mentions) <= rules.MAX_GROUP or not (
            rules.splittable(c) or c >= min(rules.COMMUNITY_COMMON, rules.APART_COMMON)
        ):
            units.append((mentions, 1.0, False))
            continue
        if rules.splittable(c):
            views = [rules.view(r, p, collected, lazy.coauthors, lazy.matrix[r]) for r, p in mentions]
            groups, scores = rules._split(views, c)
        else:
            groups, scores = [list(range(len(mentions)))], [1.0]
        before = len(groups)
        if c >= rules.COMMUNITY_COMMON:
            groups, scores = rules._by_communities(groups, scores, mentions, collected)
        if c >= rules.APART_COMMON:
            groups, scores = rules._by_difference(groups, scores, mentions, collected, lazy)
        if len(groups) > before:
            apart.update(range(len(units), len(units) + len(groups)))
        units += [([mentions[i] for i in g], s, len(groups) > 1) for g, s in zip(groups, scores, strict=True)]
    written = collected.written
    blocks: dict[str, list[int]] = defaultdict(list)
    for index, (mentions, _, _) in enumerate(units):
        blocks[block_of(parts[written[mentions[0][0]][mentions[0][1]]])].append(index)
    edges = []
    for members in blocks.values():
        for i, a in enumerate(members):
            for b in members[i + 1 :]:
                first_a, first_b = (parts[written[units[u][0][0][0]][units[u][0][0][1]]][0] for u in (a, b))
                fa, fb = (first_a[0] if first_a else ""), (first_b[0] if first_b else "")
                if not (fa == fb or (len(fa) == 1 and len(fb) > 1 and fb[0] == fa)) and not (
                    len(fb) == 1 and len(fa) > 1 and fa[0] == fb
                ):
                    continue
                ma, mb = units[a][0], units[b][0]
                na, nb = written[ma[0][0]][ma[0][1]], written[mb[0][0]][mb[0][1]]
                if (
                    a in apart
                    and b in apart
                    and collected.names[ma[0][0]][ma[0][1]] == collected.names[mb[0][0]][mb[0][1]]
                ):
                    continue
                if _old_joined(ma, mb, na, nb, collected, lazy, frequency, parts):
                    edges.append((a, b))
    found = []
    for component in igraph.Graph(n=len(units), edges=edges).connected_components():
        mentions = sorted((m for i in component for m in units[i][0]), key=lambda m: (collected.order[m[0]], m[1]))
        forms = [written[r][p] for r, p in mentions]
        counts = {f: forms.count(f) for f in forms}
        name = max(counts, key=lambda f: (counts[f], not f.isupper(), -forms.index(f)))
        score = min(units[i][1] for i in component)
        split = any(units[i][2] for i in component)
        found.append((tuple(mentions), name, tuple(sorted(set(forms) - {name})), score, split, len(component) > 1))
    return sorted(found, key=lambda p: (collected.order[p[0][0][0]], p[0][0][1]))


def _old_joined(ma, mb, na, nb, collected, lazy, frequency, parts) -> bool:
    if not parts_compatible(parts[na], parts[nb]):
        return False
    shorter = min(na, nb, key=lambda n: len(parts[n][0]))
    counts = frequency[shorter]
    if len(parts[na][0]) != len(parts[nb][0]) and min(counts.given, counts.family) >= rules.COMMON_PARTS:
        return False
    if {r for r, _ in ma} & {r for r, _ in mb}:
        return False
    if lazy.near(ma) & lazy.near(mb):
        return True
    if fold(na) != fold(nb):
        return False
    rows_a = np.asarray(lazy.matrix[[r for r, _ in ma]].mean(axis=0)).ravel()
    rows_b = np.asarray(lazy.matrix[[r for r, _ in mb]].mean(axis=0)).ravel()
    norm = float(np.linalg.norm(rows_a) * np.linalg.norm(rows_b))
    return norm > 0 and float(rows_a @ rows_b) / norm >= rules.JOIN_COSINE


papers = st.lists(
    st.tuples(
        st.lists(st.sampled_from(POOL), min_size=1, max_size=4, unique=True),
        st.sampled_from(["", "A", "B"]),
        st.lists(st.sampled_from(WORDS), min_size=2, max_size=6),
        st.integers(0, 10**6),
    ),
    min_size=1,
    max_size=40,
)


@settings(max_examples=60, deadline=None)
@given(papers)
def test_the_arrays_decide_what_the_dicts_did(drawn: list[tuple[list[str], str, list[str], int]]) -> None:
    collected = Collected()
    for n, (authors, area, words, pid) in enumerate(drawn):
        collected.add(tuple(authors), area, "", " ".join(words), f"{pid:08x}-{n}", ("l.txt", n + 1))
    expected = _old(collected)
    # where the old version made one person of two authorships of one paper, the arrays differ on purpose
    # (cannot-link: test_decide's test_two_authorships_of_one_paper_are_never_one_person)
    assume(all(len({r for r, _ in p[0]}) == len(p[0]) for p in expected))
    found = persons_of(collected)
    made = [
        (
            tuple(found.mentions(i)),
            name,
            found.variants.get(i, ()),
            float(found.scores[i]),
            found.split[i],
            found.joined[i],
        )
        for i, name in enumerate(found.names)
    ]
    assert made == expected
    assert {m: found.of[m] for m in found.of} == {m: i for i, p in enumerate(expected) for m in p[0]}
    assert not found.curated.any()
