"""``bibgraph build --dataset DIR`` and ``bibgraph add DIR``: the store, the dumps and the views' derived data,
in one new version of a dataset directory.

The derived data is made by the domain (:mod:`bibgraph.graph.dataset.sitedata`), with no web stack loaded: the
paper-author incidence every map is computed from, the home charts, the default co-author and topic maps, each
area's and subarea's default co-author map, each area's topic map, the concepts' figures and the search index, in
the version's ``derived/`` files under the keys the web reads them by. So what a server reads later is exactly
what it would have derived, by the same functions, with the settings of the build.
"""

import gc
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyoxigraph as ox
from rdflib import FOAF

from bibgraph.graph.dataset import sitedata
from bibgraph.graph.dataset.add import add_lists, incidence_coauthors, papers_read
from bibgraph.graph.dataset.build import BuildReport
from bibgraph.graph.dataset.buildphases import describe, load_dumps, load_lists
from bibgraph.graph.dataset.derived import DerivedFiles, derived_key
from bibgraph.graph.dataset.directory import (
    DERIVED,
    DUMPS,
    STORE,
    DatasetDamaged,
    check_opened,
    checked_files,
    current_version,
    is_dataset,
    new_version,
    read_manifest,
    writing,
)
from bibgraph.graph.dataset.dumps import write_dataset_dumps
from bibgraph.graph.dataset.dumpsegments import continued_segments
from bibgraph.graph.dataset.opener import COMPLETE_MARKER, is_dump
from bibgraph.graph.dataset.sitedata import RolesMaker
from bibgraph.graph.dataset.void import void_quads
from bibgraph.graph.identity import numbering
from bibgraph.graph.ingest.inputs import find_input_files
from bibgraph.graph.networks.incidence import Incidence, incidence_of, incidence_part  # numpy, scipy: a build needs
from bibgraph.graph.networks.incidencemerge import merged
from bibgraph.graph.networks.spec import COAUTHORS, TOPICS, NetworkSpec
from bibgraph.graph.rdf.iris import Iris
from bibgraph.graph.serving import childprocess
from bibgraph.graph.serving.memory import fewer_collections, release_free_memory
from bibgraph.graph.site.conceptupdate import updated_index
from bibgraph.graph.site.homeupdate import Written, updated_home
from bibgraph.graph.site.roles import Roles, matches, roles_of
from bibgraph.graph.site.rolesupdate import AddedAuthorships, updated_roles
from bibgraph.graph.site.search import FILE_NAME, SearchIndexError
from bibgraph.graph.site.searchlayers import layers, open_search
from bibgraph.graph.site.searchupdate import update_search_index
from bibgraph.graph.stores.atomic import link_file
from bibgraph.graph.stores.store import OxigraphGraphStore
from bibgraph.web.settings import resolve

NAME = str(FOAF.name)
COUNTS = ("records", "papers", "authors", "authorships", "concepts", "triples")  # in the manifest


# The whole networks whose exports an add keeps: the topic network (one node per concept). The whole co-author
# network's (its layout of every author, four formats: minutes and a GB at 100,000 papers, whatever was added) is
# left to the first download that asks, made by the server in its fair share (web/maps/views.py), the same bytes.
ADDED_EXPORTS = (NetworkSpec(TOPICS),)


class DeriveError(RuntimeError):
    """The views' data of the new version could not be derived (nothing is published)."""


def build_dataset(inputs: Sequence[Path], root: Path, base: str) -> tuple[Path, BuildReport]:
    """Build ``inputs`` into a new version of the dataset ``root`` and switch to it; the version and the report
    (without its person map: written into the version). For large inputs the store's filling and its description
    each run in a child process that exits (:mod:`~bibgraph.graph.dataset.buildphases`,
    :func:`~.childprocess.phase_runner`), so the derive starts with neither's memory; small ones run here."""
    served = None
    if is_dataset(root):  # its person map, read whole by the load's child: as built
        served = current_version(root)
        checked_files(served, [served / name for name in numbering.files(served)])
    run = childprocess.phase_runner(sum(path.stat().st_size for path, _ in find_input_files(inputs)))
    # collections rare, as an add's: the derive holds the incidence, maps and search rows (full collections walked
    # them all again: 1.35 of the build's 1.64 CPU-s in the collector at 100,000 papers, finding 83,000 objects)
    with fewer_collections(), new_version(root, base) as (version, manifest):  # large inputs: a child per phase
        roles: RolesMaker = roles_of  # a dump loaded: no records to read them from, the store is asked
        if any(is_dump(path) for path in inputs):  # what a dump holds is not streamed: dumped from the store
            report, manifest["dumps"] = run(load_dumps, version, list(inputs), base)
        else:  # the N-Triples dump written as the data streams into the store, then the store described
            report = run(load_lists, version, list(inputs), base, served)
            report.triples, manifest["dumps"] = run(describe, version, base, report.void)
            roles = _kept_if_matching(report.roles)
        counts = {name: getattr(report, name) for name in COUNTS}
        report.roles = None  # held by ``roles`` until derived: the report goes back to the caller
        _complete(version, manifest, counts, sorted(str(path) for path in inputs), roles=roles)
    return root / manifest["name"], report


def _kept_if_matching(roles: Roles | None) -> RolesMaker:
    """The build's own roles (:mod:`~bibgraph.graph.site.rolesbuild`), kept when they are the incidence's
    (:func:`~bibgraph.graph.site.roles.matches`; the build's own too, :mod:`~bibgraph.graph.networks.incidencebuild`):
    an incidence that says otherwise keeps none."""
    return lambda store, incidence: roles if roles is not None and matches(roles, incidence) else None


def add_to_dataset(root: Path, inputs: Sequence[Path]) -> tuple[Path, BuildReport]:
    """Add the lists ``inputs`` to the dataset ``root`` as a new version; the version and what was added.

    The store is copied with RocksDB's checkpoint (hard links to its immutable files, so the copy costs
    little whatever its size; their checksums are carried over, not computed again) and only the new
    records are written into the copy (:func:`add_lists`). The dumps are the previous version's segments (hard
    links) and a new one each, the added triples and the new VoID description
    (:mod:`bibgraph.graph.dataset.dumpsegments`); the
    search index is the previous one with the new records' papers and authors (:func:`update_search_index`).
    """
    with writing(root), fewer_collections():  # writing: from reading the version served to the switch (an add at
        return _add(root, inputs)  # once would drop this one's); collections: it holds the served version's arrays


def _add(root: Path, inputs: Sequence[Path]) -> tuple[Path, BuildReport]:
    served = current_version(root)
    before = read_manifest(served)
    base = before["base"]
    checked = _check_extended(served, before)
    with new_version(root, base) as (version, manifest):
        manifest["stats"] = checked  # the files hashed once as they were when checked: the next add need not hash them
        # in a function of its own: the store it writes is then held by no frame still running when a refusal
        # leaves this block, and is closed before the half-written version is removed (new_version)
        counts, added, report = _fill(version, manifest, served, before, inputs)
        _complete(version, manifest, counts, sorted([*before["inputs"], *(str(path) for path in inputs)]), added)
    return root / manifest["name"], report


def _fill(
    version: Path, manifest: dict[str, Any], served: Path, before: dict[str, Any], inputs: Sequence[Path]
) -> tuple[dict[str, int], "Added", BuildReport]:
    """Write the version an add makes of ``served`` (``before``, its manifest) and ``inputs``: the store, the dumps,
    the person map; its counts, what the derive needs of it, and the add's report."""
    base = before["base"]
    try:
        original = OxigraphGraphStore.disk(served / STORE, read_only=True)
    except (OSError, RuntimeError) as error:  # RocksDB's own words on a damaged store, in one line
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise DatasetDamaged(f"{served / STORE}: cannot open the store ({first}); run `bibgraph check`") from None
    original.store.backup(version / STORE)
    del original  # read-only: nothing to flush
    store = OxigraphGraphStore.disk(version / STORE)
    published = numbering.read_version(served)
    kept, previous = _served_files(served).load(derived_key("incidence"))  # extended by the derive
    previous = previous if kept else None
    coauthors = incidence_coauthors(previous) if previous is not None else None  # else: the store is asked
    mark = published.mark()  # what this add records and numbers is written alone
    additions = OxigraphGraphStore.memory()  # what the views' incidence reads of the added triples
    touched: set[str] = set()  # the papers of the records read: each record adds a source to its paper
    written = Written()  # what the home figures count of the added triples
    authorships = AddedAuthorships()  # what the roles read of them

    def keep(quads: list[ox.Quad]) -> None:
        additions.store.extend(incidence_part(quads))
        touched.update(papers_read(quads))
        written.observe(quads)
        authorships.observe(quads)

    number = int(manifest["name"].split("-")[1])
    if "dumps" in before:
        with continued_segments(served / DUMPS, version / DUMPS, before["dumps"], number) as dumps:

            def write(quads: list[ox.Quad]) -> None:
                dumps.append(quads)
                keep(quads)

            triples = before["counts"].get("triples")
            report = add_lists(store, inputs, base, write, published, triples, coauthors)
            manifest["dumps"] = dumps.finish(void_quads(store, Iris(base)))
    else:  # a version from before the dumps were continued: written whole this once
        report = add_lists(store, inputs, base, added=keep, numbering=published, coauthors=coauthors)
        manifest["dumps"] = write_dataset_dumps(store, version / DUMPS, void_quads(store, Iris(base)))
    _keep_person_map(served, version, published, mark, number)
    counts = {name: before["counts"][name] + getattr(report, name) for name in COUNTS}
    counts["concepts"], counts["triples"] = report.concepts, report.triples
    store.close()
    del store  # the last reference: RocksDB's files are released before the derivation opens them read-only
    return counts, Added(served, additions, touched, written, authorships, previous), report


def _check_extended(served: Path, manifest: dict[str, Any]) -> dict[str, list[int]]:
    """Refuse to extend a damaged version (:class:`DatasetDamaged`): an add copied what it found, and a new version's
    manifest then recorded its own checksums of what the damage gave. Its files are all there, none a link, none
    in ``derived/`` the manifest does not name (no file hashed: the derived values it reads are checked as they are
    read, the files it hard-links keep the checksums recorded); its person map's files and search layers (read
    whole, and by the concept placement and the index's update) are checked unless hashed already and not written
    since (:func:`checked_files`). What those files were when checked."""
    check_opened(served, hashed=False)
    search = layers(served / DERIVED) if (served / DERIVED / FILE_NAME).exists() else []
    return checked_files(served, [*(served / name for name in numbering.files(served)), *search])


def _keep_person_map(
    served: Path, version: Path, published: numbering.Numbering, mark: tuple[Any, Any], number: int
) -> None:
    """The person map of ``version``: the files of ``served``'s (hard links, never written again) and one more with
    what the add recorded and numbered since ``mark`` (:mod:`~bibgraph.graph.identity.numbering`); written whole
    when ``served`` has none (a version from before there was one)."""
    kept = numbering.files(served)
    if not kept:
        published.write(version / numbering.FILE_NAME)
        return
    for name in kept:
        link_file(served / name, version / name)
    published.since(mark).write(version / numbering.delta_name(number))


@dataclass(frozen=True)
class Added:
    """What :func:`derive` needs of an add: the version added to, the part of the added triples the incidence reads
    (:func:`~bibgraph.graph.networks.incidence.incidence_part`), the papers a record was read of
    (:func:`~bibgraph.graph.dataset.add.papers_read`), what the home figures and the roles read of the added
    triples, and the incidence the version added to kept (read once: the add's look-ups read it too)."""

    served: Path
    additions: OxigraphGraphStore
    papers: set[str]
    written: Written
    authorships: AddedAuthorships
    incidence: Incidence | None = None


def _complete(
    version: Path,
    manifest: dict[str, Any],
    counts: dict[str, int],
    inputs: list[str],
    previous: Added | None = None,
    roles: RolesMaker | None = None,
) -> None:
    """Mark the filled store (closed by the caller, its dumps written) complete, derive the views' data, and fill in
    the manifest; ``previous``, after an add, is what :func:`derive` needs of it; ``roles``, after a build, how its
    authorships' positions are made (:func:`~bibgraph.graph.dataset.sitedata.derive`). The callers drop their handle
    of the written store first: with it still open, a read-only open of the same store once failed under load on a table
    file gone (compaction of the open handle, presumably)."""
    release_free_memory()  # a cycle still holding the written store released; the build's pages back to the system
    (version / STORE / COMPLETE_MARKER).write_text("complete\n", encoding="utf-8")
    manifest["counts"], manifest["inputs"] = counts, inputs
    derive(version, manifest["base"], previous=previous, roles=roles)


def derive(version: Path, base: str, previous: Added | None = None, roles: RolesMaker | None = roles_of) -> None:
    """Derive the views' costly data of ``version`` (base IRI ``base``) into its ``derived/`` files, by the domain.

    ``previous``, after an add, is the version this one extends and what was added:
    the previous incidence is extended with it (:func:`~bibgraph.graph.networks.incidencemerge.merged`) instead of read
    again from the whole store, and so are the concepts' figures and paper orders (:func:`_update_concept_index`) and
    the search index (:func:`~bibgraph.graph.site.searchupdate.update_search_index`), both counting the touched
    authors' papers from that incidence. The default maps of the areas and subareas no added paper reaches are kept
    (:func:`_keep_unreached_maps`), those it reaches are left to the first request that shows one
    (:func:`whole_graph_map`); the roles are the previous version's updated with the added authorships
    (:func:`_update_roles`); the other derived data is derived again from the incidence and the store. ``roles``
    (a build): how the roles are made (:func:`~bibgraph.graph.dataset.sitedata.derive`; read from the store when
    not told).
    """
    (version / DERIVED).mkdir(exist_ok=True)
    max_view_nodes = int(resolve({"BIBGRAPH_BASE": base})["MAX_VIEW_NODES"])
    incidence = None  # an add's, kept: handed to sitedata.derive
    if previous is not None:
        served, additions = previous.served, previous.additions
        store = OxigraphGraphStore.disk(version / STORE, read_only=True)  # opened once for the updates
        try:
            incidences = _extend_incidence(version, previous.incidence, additions, store)
            if incidences is None:  # read from the whole store, as sitedata.derive would, and kept for it
                incidence = incidence_of(store)
                DerivedFiles.unpublished(version).save(derived_key("incidence"), incidence)
            else:
                incidence = incidences[1]
                _keep_unreached_maps(version, served, additions, *incidences, max_view_nodes)
            # Read by the placement and the update below: checked by _check_extended before the add began.
            kept = layers(served / DERIVED) if (served / DERIVED / FILE_NAME).exists() else []
            _update_concept_index(version, served, additions, store, incidence, kept)
            if incidences is not None:
                _update_home(version, served, previous, *incidences)
                _update_roles(version, served, previous, *incidences)
            if kept:  # else (an index from before it was a file): built whole
                update_search_index(store, kept, version / DERIVED, previous.papers, incidence)
        finally:
            del store  # read-only: nothing to flush
            gc.collect()  # release RocksDB's files before the derivation opens the store
    try:
        if previous is None:
            sitedata.derive(version, max_view_nodes, base=base, roles=roles)
        else:
            sitedata.derive(version, max_view_nodes, ADDED_EXPORTS, whole_graph_map, base, incidence=incidence)
    except Exception as error:  # any failure: the version is not published, and the user is told why
        raise DeriveError(f"deriving the views' data of {version} failed: {error}") from error


def _extend_incidence(
    version: Path, before: Incidence | None, additions: OxigraphGraphStore, store: OxigraphGraphStore
) -> tuple[Incidence, Incidence] | None:
    """Keep the incidence of ``version`` (its ``store``) as the previous version's, ``before``, extended by
    ``additions`` (when it kept one: merged into its arrays, :func:`~bibgraph.graph.networks.incidencemerge.merged`,
    else, in the one case the merge does not take, read from the whole store); the previous incidence and this one."""
    if before is None:  # derived from the whole store by the app, as by a build
        return None
    incidence = merged(before, additions, store) or incidence_of(store)
    DerivedFiles.unpublished(version).save(derived_key("incidence"), incidence)
    return before, incidence


def _served_files(served: Path) -> DerivedFiles:
    """The derived values of the version an add extends, each checked against its manifest's checksum as it is read:
    a damaged one read unchecked became the new version's value, with a checksum of its own."""
    return DerivedFiles.of_version(served, read_manifest(served)["checksums"])


def whole_graph_map(spec: NetworkSpec) -> bool:
    """Whether an add derives the default map ``spec`` again: the whole graph's co-author map and the topic maps (the
    home and topic pages show them), not an area's or subarea's. A random add of 1,000 papers reaches every area,
    and their maps took 3.5 of its 28.5 CPU-s at 100,000 papers (31 areas and subareas, about 0.1 s each): the first
    request that shows one derives it instead, once per server, through its derivation gate (``web/maps/cache.py``),
    the same map. The maps an add does not reach are the previous version's files (:func:`_keep_unreached_maps`).
    """
    return spec.kind != COAUTHORS or (spec.filters.subarea or spec.filters.area) is None


def _keep_unreached_maps(
    version: Path,
    served: Path,
    additions: OxigraphGraphStore,
    known: Incidence,
    incidence: Incidence,
    max_view_nodes: int,
) -> None:
    """Keep as they were (hard links) the default maps of the areas and subareas no added triple reaches.

    A co-author map of an area or subarea is made from the papers under it alone (their authors, counted and
    named under it, their links): an add changes it only if it gives a paper under it an author, a concept or a
    cut list, since it never renames a person it knew. A name given to a known author changes every map: none is
    kept then. The maps of the whole graph and the topic maps are derived again (:func:`sitedata.derive`), the others
    by the first request that shows one (:func:`whole_graph_map`)."""
    before, after = _served_files(served), DerivedFiles.unpublished(version)
    found, topics = before.load(derived_key("network", NetworkSpec(TOPICS)))
    if not found or any(
        quad.predicate.value == NAME and known.author_id(quad.subject.value) is not None for quad in additions.store
    ):
        return
    papers = [incidence.papers.find(quad.subject.value) for quad in additions.store if quad.predicate.value != NAME]
    rows = np.isin(incidence.pc_paper, np.array([p for p in papers if p is not None], dtype=np.int64))
    under = [incidence.concepts[number] for number in set(incidence.pc_concept[rows].tolist())]
    reached = {concept.concept for concept in under} | {concept.area for concept in under}
    for spec in sitedata.default_maps(topics, max_view_nodes):
        concept = spec.filters.subarea or spec.filters.area
        if concept is None or concept in reached:
            continue
        for key in (derived_key("network", spec), derived_key("layout", spec), derived_key("summary", spec)):
            try:
                after.link(before, key)
            except FileNotFoundError:
                continue  # not kept by the previous version either: derived at first request


def _update_home(version: Path, served: Path, added: Added, before: Incidence, incidence: Incidence) -> None:
    """Keep the home figures of ``version`` as the previous version's updated with what was added
    (:func:`~bibgraph.graph.site.homeupdate.updated_home`), when it kept them and the concepts' figures were
    updated. Else they are derived in full (:func:`sitedata.derive`)."""
    home, figures_key = derived_key("page", None, sitedata.HOME), derived_key("page", None, sitedata.CONCEPT_FIGURES)
    kept, previous = _served_files(served).load(home)
    after = DerivedFiles.unpublished(version)
    found, figures = after.load(figures_key)
    if kept and found:
        updated = updated_home(previous, added.written, before, incidence, added.additions.store, figures)
        if updated is not None:
            after.save(home, updated)


def _update_roles(version: Path, served: Path, added: Added, before: Incidence, incidence: Incidence) -> None:
    """Keep the roles of ``version`` as the previous version's updated with the added authorships
    (:func:`~bibgraph.graph.site.rolesupdate.updated_roles`), when it kept them. Else (or when the added triples do
    not account for what is new to the incidence) it keeps none: its pages ask the store, no read of every
    authorship is paid here."""
    kept, previous = _served_files(served).load(derived_key("roles"))
    if kept:
        updated = updated_roles(previous, before, incidence, added.authorships)
        if updated is not None:
            DerivedFiles.unpublished(version).save(derived_key("roles"), updated)


def _update_concept_index(
    version: Path,
    served: Path,
    additions: OxigraphGraphStore,
    store: OxigraphGraphStore,
    incidence: Incidence,
    search_layers: list[Path],
) -> None:
    """Keep the concepts' figures and paper orders of ``version`` as the previous version's updated with
    ``additions`` (:func:`~bibgraph.graph.site.conceptupdate.updated_index`), when it kept them: the pieces of an order
    before its first new paper are hard links to the previous ones. Else the app derives them from the whole store.
    The figures are written last, so a version whose update failed half-way has its orders derived again in full."""
    before, after = _served_files(served), DerivedFiles.unpublished(version)
    kept, figures = before.load(derived_key("page", None, sitedata.CONCEPT_FIGURES))
    if not kept:
        return

    def piece(iri: str, number: int) -> list[str]:
        found, part = before.load(sitedata.order_piece_key(iri, number))
        if not found:
            raise LookupError(f"the previous version kept no piece {number} of the order of {iri}")
        return part

    try:  # its titles (checked layers) are the previous papers' labels: the placement's probes
        titles = open_search(search_layers)
    except SearchIndexError:  # none, or damaged: the store is asked
        titles = None

    def labels(iris: list[str]) -> dict[str, str]:
        """Those the previous search index holds; none when it cannot be read (the store is asked)."""
        try:
            return titles.titles(iris) if titles is not None else {}
        except SearchIndexError:
            return {}

    try:
        updated = {}

        for update in updated_index(figures, piece, sitedata.ORDER_CHUNK, additions, store, incidence, labels):
            iri = update.figures.iri
            for number in range(update.kept):
                after.link(before, sitedata.order_piece_key(iri, number))
            for start in range(0, len(update.tail), sitedata.ORDER_CHUNK):
                after.save(
                    sitedata.order_piece_key(iri, update.kept + start // sitedata.ORDER_CHUNK),
                    update.tail[start : start + sitedata.ORDER_CHUNK],
                )
            updated[iri] = update.figures
        after.save(derived_key("page", None, sitedata.CONCEPT_FIGURES), updated)
    except (LookupError, FileNotFoundError):
        return  # a previous version missing a piece: derived in full by the app
    finally:
        if titles is not None:
            titles.close()
