"""Every authorship's position and its paper's list length, kept beside the incidence, and the papers it lacks.

An author's page shows each paper's role (sole, first, last, middle): the author's position on it and the length of
its list. The incidence holds who wrote what but not where in the list: the profile asked the store
(``author_paper_roles.rq``) for every paper of the author, 2-4 s on a cold store at a million papers (2,793 papers)
and 4.3 s through the Oxigraph server. A build keeps them here (:func:`keep_roles`): a position per authorship in
the incidence's by-author order, a list length per paper; and the papers the incidence leaves out (no named author),
so the papers' sitemaps are listed without walking the store. Read back only while it is the incidence's
(:func:`matches`): a version whose incidence an add extended keeps none, and its pages ask the store as before.
"""

import bisect
import zlib
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bibgraph.graph.rdf.vocab import SCHEMA
from bibgraph.graph.sparql.queries import bind, integer, named_query
from bibgraph.graph.stores.store import GraphStore

if TYPE_CHECKING:
    import numpy as np

    from bibgraph.graph.networks.incidence import Incidence, Strings

MAX_REPEATS = 255  # authorships of one author on one paper a file can hold (uint8): more, and none is kept


@dataclass
class Roles:
    """``repeats[i]``: how many times the author of the incidence's ``i``-th (author, paper) pair (by author, then
    paper: ``author_papers``' order) is listed on that paper (0: the pair has no authorship with a position);
    ``positions``: those authorships' positions, in that order, ascending within a pair; ``listed``: per incidence
    paper, ``bg:listedAuthorCount`` (-1: none); ``others``: every other paper (no named author), sorted;
    ``fingerprint``: :func:`fingerprint` of the incidence these are aligned with."""

    repeats: "np.ndarray"
    positions: "np.ndarray"
    listed: "np.ndarray"
    others: "Strings"
    fingerprint: int


def fingerprint(incidence: "Incidence") -> int:
    """A checksum of the incidence's authors' papers (their numbers and order): :class:`Roles` are read only with
    the incidence they were made from."""
    value = zlib.crc32(incidence.author_ptr.tobytes())
    value = zlib.crc32(incidence.author_papers.tobytes(), value)
    return zlib.crc32(str((len(incidence.papers), len(incidence.authors))).encode(), value)


def matches(roles: Roles, incidence: "Incidence") -> bool:
    return roles.fingerprint == fingerprint(incidence) and len(roles.listed) == len(incidence.papers)


def roles_of(store: GraphStore, incidence: "Incidence") -> Roles | None:
    """The roles of ``store``'s authorships, aligned with its ``incidence``; None when the store holds what these
    arrays cannot say as ``author_paper_roles.rq`` would (an authorship of a named author whose paper the incidence
    does not pair with them, a paper with two list lengths, an author listed over :data:`MAX_REPEATS` times on one
    paper): its pages then ask the store. Three triple patterns joined (about 3x the incidence's creator pass)."""
    import numpy as np

    paper_ids = {iri: number for number, iri in enumerate(incidence.papers)}
    author_ids = {iri: number for number, iri in enumerate(incidence.authors)}
    listed = np.full(len(incidence.papers), -1, dtype=np.int64)
    every_paper = bind(named_query("sitemap_resources").text, **{"class": str(SCHEMA.ScholarlyArticle)})
    others = [str(row["resource"]) for row in store.iter_select(every_paper) if str(row["resource"]) not in paper_ids]
    for row in store.iter_select(named_query("roles_listed").text):
        p = paper_ids.get(str(row["paper"]))
        if p is not None:
            if listed[p] != -1 or not 0 <= integer(row["listed"]) < 2**31:
                return None  # two lengths, or one these arrays cannot hold (-1 says "none")
            listed[p] = integer(row["listed"])
    rows = array("q")
    for row in store.iter_select(named_query("roles_positions").text):
        a, p = author_ids.get(str(row["author"])), paper_ids.get(str(row["paper"]))
        if a is not None:
            if p is None:
                return None
            rows.extend((a, p, integer(row["position"])))
    del paper_ids, author_ids
    found = np.frombuffer(rows, dtype=np.int64).reshape(-1, 3)
    found = found[np.lexsort((found[:, 2], found[:, 1], found[:, 0]))]
    width = max(len(incidence.papers), 1)
    owners = np.repeat(np.arange(len(incidence.authors), dtype=np.int64), np.diff(incidence.author_ptr))
    pairs = owners * width + incidence.author_papers
    keys = found[:, 0] * width + found[:, 1]
    at = np.minimum(np.searchsorted(pairs, keys), max(len(pairs) - 1, 0))
    if len(keys) and (not len(pairs) or not np.array_equal(pairs[at], keys)):
        return None
    repeats = np.bincount(at, minlength=len(pairs))
    if (
        repeats.max(initial=0) > MAX_REPEATS
        or not -(2**31) <= found[:, 2].min(initial=0) <= found[:, 2].max(initial=0) < 2**31
    ):
        return None
    from bibgraph.graph.networks.incidence import Strings

    return Roles(
        repeats.astype(np.uint8),
        found[:, 2].astype(np.int32),
        listed.astype(np.int32),
        Strings.of(sorted(others)),
        fingerprint(incidence),
    )


def authorships(roles: Roles, incidence: "Incidence", author: int) -> list[tuple[int, int, int]]:
    """(paper number, position, list length) of each authorship of ``author`` (a number of the incidence), as
    ``author_paper_roles.rq`` gives them (a paper without list length left out), in paper then position order."""
    import numpy as np

    first, last = int(incidence.author_ptr[author]), int(incidence.author_ptr[author + 1])
    start = int(roles.repeats[:first].sum(dtype=np.int64))
    counts = roles.repeats[first:last].astype(np.int64)
    papers = np.repeat(incidence.author_papers[first:last], counts)
    positions = roles.positions[start : start + int(counts.sum())]
    lengths = roles.listed[papers]
    held = lengths >= 0
    return list(zip(papers[held].tolist(), positions[held].tolist(), lengths[held].tolist(), strict=True))


def papers_window(incidence: "Incidence", roles: Roles, start: int, stop: int) -> list[str]:
    """The papers ``start`` to ``stop`` (0-based, end excluded) of every paper in IRI order: the incidence's and
    :attr:`Roles.others` merged."""
    return merged_window(incidence.papers, roles.others, start, stop)


def merged_window(first: Sequence[str], second: Sequence[str], start: int, stop: int) -> list[str]:
    """Items ``start`` to ``stop`` of the sorted merge of the sorted, disjoint ``first`` and ``second``, reading
    at most ``stop - start`` items of each (a binary search finds where the window begins)."""

    def rank(i: int) -> int:  # the place of first[i] in the merge
        return i + bisect.bisect_left(second, first[i])

    i = bisect.bisect_left(range(len(first)), start, key=rank)
    j = start - i  # the items of second before the window
    size = max(stop - start, 0)
    return sorted(window(first, i, i + size) + window(second, j, j + size))[:size]


def window(items: Sequence[str], start: int, stop: int) -> list[str]:
    """``items[start:stop]`` as a list, a :class:`~bibgraph.graph.networks.incidence.Strings`' gathered at once."""
    stop = min(stop, len(items))
    if start >= stop:
        return []
    take = getattr(items, "take", None)
    if take is None:
        return list(items[start:stop])
    import numpy as np

    return list(take(np.arange(start, stop)))


def to_npz(roles: Roles) -> dict[str, Any]:
    """``roles`` as named arrays for ``numpy.savez`` (data only: read back running nothing)."""
    import numpy as np

    return {
        "repeats": roles.repeats,
        "positions": roles.positions,
        "listed": roles.listed,
        "others_blob": roles.others.blob,
        "others_offsets": roles.others.offsets,
        "others_prefix": np.array(roles.others.prefix),
        "fingerprint": np.array(roles.fingerprint, dtype=np.int64),
    }


def of_npz(arrays: Any) -> Roles:
    from bibgraph.graph.networks.incidence import Strings

    others = Strings(arrays["others_blob"], arrays["others_offsets"], str(arrays["others_prefix"]))
    return Roles(arrays["repeats"], arrays["positions"], arrays["listed"], others, int(arrays["fingerprint"]))
