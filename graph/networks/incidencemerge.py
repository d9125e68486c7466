"""An incidence extended by an add, merged into the previous one's sorted arrays instead of read into dicts again.

Reading the previous incidence back into dicts of every paper and author IRI and numbering everything again took
20 of an add's s at a million papers (and missed the earlier papers of a person the add names for the first time:
that reader is gone). Here only the added rows are read; the new
papers and authors are put at their places in the previous sorted strings (a binary search each), the previous
numbers move up by the new ones before them (one ``searchsorted``, order kept), and the new pairs are inserted into
the previous sorted pair arrays: passes over arrays, no Python object per previous paper or author.

The result is the incidence of the whole store read again (tests/networks/test_incidencemerge.py), a person named
only by the add included (their earlier papers are asked for), a concept with two labels or areas included (one
entry each, as :func:`~.incidence.incidence_of` reads it). The one case it does not take (None: the caller reads
the whole store): a concept the previous incidence holds whose entries the store now gives otherwise, which no add
does (it never relabels a concept).
"""

import bisect
from collections import defaultdict
from collections.abc import Iterable, Iterator

import numpy as np
import pyoxigraph as ox

from bibgraph.graph.arrays.sets import distinct
from bibgraph.graph.networks.incidence import Concept, Incidence, Strings, concept_order, named_rows, shared_prefix
from bibgraph.graph.sparql.queries import bind, named_query
from bibgraph.graph.stores.store import GraphStore

BATCH = 500  # IRIs per VALUES block


def merged(previous: Incidence, added: GraphStore, store: GraphStore) -> Incidence | None:
    """``previous`` (the incidence of ``store`` before an add) with the papers of ``added`` (the part of the triples
    the add wrote that :func:`~.incidence.incidence_part` keeps), or None (the case not taken, above).

    Besides the added rows, the store is asked about the authors new to the incidence (their names, and their
    papers: a person named only now brings papers an earlier add wrote) and about the papers new to it (their
    subjects and cut lists): bounded by what is new, as the rows of ``added`` are."""
    creators = {(str(row["paper"]), str(row["author"])) for row in named_rows(added, "incidence_creators")}
    unknown = {author for _, author in creators} | {str(row["author"]) for row in named_rows(added, "incidence_names")}
    unknown = {author for author in unknown if previous.authors.find(author) is None}
    named: dict[str, str] = {}
    for row in _bound(store, "incidence_names", author=sorted(unknown)):
        named.setdefault(str(row["author"]), str(row["name"]))
    fresh = sorted(named)
    creators.update(
        (str(row["paper"]), str(row["author"])) for row in _bound(store, "incidence_creators", author=fresh)
    )
    pairs = sorted((paper, author) for paper, author in creators if author in named or author not in unknown)
    new_papers = sorted({paper for paper, _ in pairs if previous.papers.find(paper) is None})
    subjects = {(str(row["paper"]), str(row["concept"])) for row in named_rows(added, "incidence_subjects")}
    subjects.update((str(r["paper"]), str(r["concept"])) for r in _bound(store, "incidence_subjects", paper=new_papers))
    cut = {str(row["paper"]) for row in named_rows(added, "incidence_truncated")}
    cut.update(str(row["paper"]) for row in _bound(store, "incidence_truncated", paper=new_papers))
    before_authors, before_papers = reprefixed(previous.authors, fresh), reprefixed(previous.papers, new_papers)
    author_places, paper_places = _places(before_authors, fresh), _places(before_papers, new_papers)
    authors = inserted(before_authors, author_places, fresh)
    papers = inserted(before_papers, paper_places, new_papers)
    author_moved = _moved(len(previous.authors), author_places)
    paper_moved = _moved(len(previous.papers), paper_places)
    truncated = np.insert(previous.truncated, paper_places, False)
    truncated[[number for number in map(papers.find, cut) if number is not None]] = True
    in_incidence = sorted((paper, concept) for paper, concept in subjects if papers.find(paper) is not None)
    concepts = _concepts(previous.concepts, {concept for _, concept in in_incidence}, store)
    if concepts is None:
        return None
    concept_number = {c: number for number, c in enumerate(concepts)}
    entries: defaultdict[str, list[int]] = defaultdict(list)  # a concept's numbers: one per label, area, area label
    for c, concept_at in concept_number.items():
        entries[c.concept].append(concept_at)
    concept_moved = np.array([concept_number[c] for c in previous.concepts], dtype=np.int64)
    subject_rows = [(paper, at) for paper, concept in in_incidence for at in entries.get(concept, ())]

    def number(strings: Strings, iris: Iterable[str]) -> np.ndarray:
        return np.array([strings.find(iri) for iri in iris], dtype=np.int64).reshape(-1)

    new_ap = np.column_stack([number(papers, (p for p, _ in pairs)), number(authors, (a for _, a in pairs))])
    ap_paper, ap_author = _merge_pairs(
        paper_moved[previous.ap_paper], author_moved[previous.ap_author], new_ap, len(authors)
    )
    by_author = np.repeat(np.arange(len(previous.authors)), np.diff(previous.author_ptr))
    author_of, paper_of = _merge_pairs(
        author_moved[by_author], paper_moved[previous.author_papers], new_ap[:, ::-1], len(papers)
    )
    new_pc = np.column_stack(
        [number(papers, (p for p, _ in subject_rows)), np.array([at for _, at in subject_rows], dtype=np.int64)]
    ).reshape(-1, 2)
    pc_paper, pc_concept = _merge_pairs(
        paper_moved[previous.pc_paper], concept_moved[previous.pc_concept], new_pc, max(len(concepts), 1)
    )
    return Incidence(
        authors=authors,
        names=inserted(
            reprefixed(previous.names, [named[iri] for iri in fresh]), author_places, [named[iri] for iri in fresh]
        ),
        papers=papers,
        truncated=truncated,
        ap_paper=ap_paper,
        ap_author=ap_author,
        paper_ptr=np.searchsorted(ap_paper, np.arange(len(papers) + 1)).astype(np.int64),
        author_ptr=np.searchsorted(author_of, np.arange(len(authors) + 1)).astype(np.int64),
        author_papers=paper_of,
        pc_paper=pc_paper,
        pc_concept=pc_concept,
        concepts=concepts,
    )


def _concepts(previous: list[Concept], wanted: set[str], store: GraphStore) -> list[Concept] | None:
    """``previous`` with the entries of the concepts of ``wanted`` it lacks, labelled from the store (one per label,
    area and area label, as :func:`~.incidence.incidence_of` reads them; a concept without a label has none), in the
    incidence's order (:func:`~.incidence.concept_order`); None when the store gives a concept ``previous`` holds
    other entries than it had (no add does: it never relabels a concept; its earlier papers would need the new ones)."""
    known: defaultdict[str, set[Concept]] = defaultdict(set)
    for concept in previous:
        known[concept.concept].add(concept)
    found: defaultdict[str, set[Concept]] = defaultdict(set)  # every concept's: a few dozen, looked up at once
    for row in _bound(store, "incidence_concepts", concept=sorted(wanted | known.keys())):
        labels = str(row["conceptLabel"]), str(row["area"]), str(row["areaLabel"])
        found[str(row["concept"])].add(Concept(str(row["concept"]), *labels))
    if any(concept in known and entries != known[concept] for concept, entries in found.items()):
        return None
    return sorted({*previous, *(entry for entries in found.values() for entry in entries)}, key=concept_order)


def _bound(store: GraphStore, name: str, **values: list[str]) -> Iterator[dict]:
    """The rows of the query ``name`` with a variable bound to each block of ``BATCH`` of the given IRIs."""
    ((variable, iris),) = values.items()
    for start in range(0, len(iris), BATCH):
        block = [ox.NamedNode(iri) for iri in iris[start : start + BATCH]]
        yield from store.iter_select(bind(named_query(name).text, **{variable: block}))


def _places(strings: Strings, iris: list[str]) -> np.ndarray:
    """Where each of ``iris`` (sorted, none in ``strings``) goes in ``strings``."""
    return np.array([bisect.bisect_left(strings, iri) for iri in iris], dtype=np.int64)


def reprefixed(strings: Strings, texts: list[str]) -> Strings:
    """``strings`` held under the prefix they share with ``texts`` too (shorter when one of these lacks theirs)."""
    prefix = shared_prefix([strings.prefix, *texts]) if len(strings) else ""
    extra = np.frombuffer(strings.prefix[len(prefix) :].encode("utf-8"), dtype=np.uint8)
    if not len(extra):
        return strings
    starts = np.repeat(strings.offsets[:-1], len(extra))
    blob = np.insert(strings.blob, starts, np.tile(extra, len(strings)))
    return Strings(blob, strings.offsets + len(extra) * np.arange(len(strings) + 1), prefix)


def inserted(strings: Strings, places: np.ndarray, texts: list[str]) -> Strings:
    """``strings`` with ``texts[k]`` inserted before index ``places[k]`` (both in order)."""
    encoded = [text[len(strings.prefix) :].encode("utf-8") for text in texts]
    lengths = np.diff(strings.offsets)
    sizes = np.array([len(data) for data in encoded], dtype=np.int64)
    blob = np.insert(
        strings.blob, np.repeat(strings.offsets[places], sizes), np.frombuffer(b"".join(encoded), dtype=np.uint8)
    )
    offsets = np.zeros(len(lengths) + len(texts) + 1, dtype=np.int64)
    np.cumsum(np.insert(lengths, places, sizes), out=offsets[1:])
    return Strings(blob, offsets, strings.prefix)


def _moved(count: int, places: np.ndarray) -> np.ndarray:
    """Each previous number's new one, once the new entries are inserted at ``places``."""
    return np.arange(count, dtype=np.int64) + np.searchsorted(places, np.arange(count), side="right")


def _merge_pairs(first: np.ndarray, second: np.ndarray, new: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct (first, second) pairs, sorted, of the previous ones (sorted, distinct) and ``new`` ones."""
    keys = first.astype(np.int64) * width + second
    added = distinct(new[:, 0].astype(np.int64) * width + new[:, 1])
    at = np.searchsorted(keys, added)
    fresh = (
        (at == len(keys)) | (keys[np.minimum(at, len(keys) - 1)] != added)
        if len(keys)
        else np.ones(len(at), dtype=bool)
    )
    keys = np.insert(keys, at[fresh], added[fresh])
    return (keys // width).astype(np.int32), (keys % width).astype(np.int32)
