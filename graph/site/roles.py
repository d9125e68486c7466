"""Every authorship's position and its paper's list length, kept beside the incidence, and the papers it lacks.

An author's page shows each paper's role (sole, first, last, middle): the author's position on it and the length of
its list. The incidence holds who wrote what but not where in the list: the profile asked the store
(``author_paper_roles.rq``) for every paper of the author, 2-4 s on a cold store at a million papers (2,793 papers)
and 4.3 s through the Oxigraph server. A dataset keeps them here: a position per authorship in the incidence's
by-author order, a list length per paper; and the papers the incidence leaves out (no named author), so the papers'
sitemaps are listed without walking the store. A build makes them from its own pass (:mod:`.rolesbuild`: the
records' list lengths and the persons it decided), an add from the previous version's and what it wrote
(:mod:`.rolesupdate`); :func:`roles_of` reads them from a store, for a build that loads dumps (no records to read).
All three end in :func:`of_rows`. Read back only while they are the incidence's (:func:`matches`).
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
    return pairs_fingerprint(incidence.author_ptr, incidence.author_papers, len(incidence.papers))


def pairs_fingerprint(author_ptr: "np.ndarray", author_papers: "np.ndarray", papers: int) -> int:
    """:func:`fingerprint` of an incidence with these authors' papers (``author_papers`` as the incidence holds it,
    ``int32``) and ``papers`` papers: a build checks its own pairs against the incidence read from its store."""
    value = zlib.crc32(author_ptr.tobytes())
    value = zlib.crc32(author_papers.tobytes(), value)
    return zlib.crc32(str((papers, len(author_ptr) - 1)).encode(), value)


def matches(roles: Roles, incidence: "Incidence") -> bool:
    return roles.fingerprint == fingerprint(incidence) and len(roles.listed) == len(incidence.papers)


def of_rows(
    author_ptr: "np.ndarray",
    author_papers: "np.ndarray",
    keys: "np.ndarray",
    positions: "np.ndarray",
    listed: "np.ndarray",
    others: "Strings",
) -> Roles | None:
    """The roles of the authorships ``keys`` (``author * papers + paper`` of each, numbers of the incidence whose
    authors' papers are ``author_ptr`` and ``author_papers``) at ``positions``, the rows sorted by key then position;
    ``listed`` per paper (-1: none). None when these arrays cannot say what ``author_paper_roles.rq`` would: an
    authorship whose pair the incidence lacks, an author listed over :data:`MAX_REPEATS` times on one paper, a
    position or length past ``int32``. The one constructor: the build's, an add's and the store's rows end here."""
    import numpy as np

    width = max(len(listed), 1)
    pairs = np.repeat(np.arange(len(author_ptr) - 1, dtype=np.int64), np.diff(author_ptr))  # each pair's author
    pairs *= width  # then its key, in place (a million papers: 4.4M pairs, 36 MB a copy)
    pairs += author_papers
    at = np.searchsorted(pairs, keys)
    np.minimum(at, max(len(pairs) - 1, 0), out=at)
    if len(keys) and (not len(pairs) or not np.array_equal(pairs[at], keys)):
        return None
    repeats = np.bincount(at, minlength=len(pairs))
    del at, pairs
    if (
        repeats.max(initial=0) > MAX_REPEATS
        or not -(2**31) <= positions.min(initial=0) <= positions.max(initial=0) < 2**31
        or not -1 <= listed.min(initial=0) <= listed.max(initial=0) < 2**31
    ):
        return None
    return Roles(
        repeats.astype(np.uint8),
        positions.astype(np.int32),
        listed.astype(np.int32),
        others,
        pairs_fingerprint(author_ptr, author_papers, len(listed)),
    )


def roles_of(store: GraphStore, incidence: "Incidence") -> Roles | None:
    """The roles of ``store``'s authorships, aligned with its ``incidence``, read by three queries (about 3x the
    incidence's creator pass: 343.6 CPU-s at a million papers): for a store loaded from dumps, whose build read no
    records. None when the store holds what these arrays cannot say (:func:`of_rows`; and a paper with two list
    lengths, or one below 0): its pages then ask the store."""
    import numpy as np

    from bibgraph.graph.networks.incidence import Strings

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
    keys = found[:, 0] * max(len(incidence.papers), 1) + found[:, 1]
    return of_rows(incidence.author_ptr, incidence.author_papers, keys, found[:, 2], listed, Strings.of(sorted(others)))


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
