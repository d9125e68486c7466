"""The search index after an add: the earlier layers kept (hard links), one new layer with what the add brought,
and, when the layers would be more than SQLite attaches, the newest add layers merged into one.

A version's index is the build's file and the add layers after it (:mod:`.searchlayers`). SQLite attaches at most
:data:`~.searchlayers.MAX_LAYERS` files to a connection; when an add finds that many, it merges the newest add layers
into one file (:func:`merge_layers`) before writing its own: the newest one and the one before it, then each earlier
one no larger than those taken together (so merged layers grow geometrically: an add layer is merged again a few
times, not at every add). The build's file is never merged: a merge costs what the merged layers hold (the adds
since the build), never what the dataset holds (writing the whole index again from the store took ~408 CPU-s at a
million papers). A merged layer holds the same items under the same numbers, its ``removed`` the numbers of the
earlier layers' items it replaces: the answers are those of the layers it replaces (tested)."""

import sqlite3
from collections.abc import Iterable, Sequence
from contextlib import closing
from itertools import chain
from pathlib import Path

from bibgraph.graph.networks.incidence import Incidence
from bibgraph.graph.site.authorcounts import area_counts
from bibgraph.graph.site.search import SearchIndexError, open_index
from bibgraph.graph.site.searchbuild import (
    SCHEMA,
    bound_rows,
    build_search_index,
    create_indexes,
    open_for_writing,
    publish_file,
    store_documents,
    store_names,
    temporary_path,
    write_layer,
)
from bibgraph.graph.site.searchlayers import MAX_LAYERS, layer_name, masked_numbers
from bibgraph.graph.stores.atomic import link_file
from bibgraph.graph.stores.store import GraphStore


def update_search_index(
    store: GraphStore, previous: Sequence[Path], directory: Path, papers: Iterable[str], incidence: Incidence
) -> None:
    """Give the version whose ``derived/`` is ``directory`` the search index of the version before (its layer files
    ``previous``, :func:`~.searchlayers.layers`) plus what an add wrote into ``store``: the earlier layers are hard
    links (never written again) and one new layer holds what the add brought (:func:`~.searchbuild.write_layer`).
    ``papers`` are those it read a record of (:func:`~.add.papers_read`: new ones, and those seen again, maybe under
    a new area). They are indexed if new, every author of one of them is indexed again (new, or with a new spelling,
    paper count or area) in place of the earlier entry, and new areas are indexed. The work is proportional to what
    was added; a paper already indexed keeps its entry (a record seen again changes no text). The authors' papers per
    area are counted from ``incidence``, that of ``store`` (:func:`~.authorcounts.area_counts`). With
    :data:`~.searchlayers.MAX_LAYERS` layers already, the newest add layers are merged first (:func:`merged_from`);
    layers an older bibgraph wrote (no words kept) cannot be merged: the index is written whole again, once."""
    layers = list(previous)
    start = merged_from(layers) if len(layers) >= MAX_LAYERS else len(layers)
    if start is None:
        build_search_index(store, directory / layer_name(0), incidence)
        return
    for number, path in enumerate(layers[:start]):
        link_file(path, directory / layer_name(number))
    if start < len(layers):
        merge_layers(layers[start:], directory / layer_name(start))
        layers = [directory / layer_name(number) for number in range(start + 1)]
    papers = sorted(set(papers))
    authors = sorted({str(r["author"]) for r in bound_rows(store, "paper_creators", "paper", papers)})
    concepts = [
        (str(r["item"]), str(r["kind"]), str(r["text"]), str(r["title"]))
        for r in bound_rows(store, "search_concepts", "", None)
    ]
    kept = {iri for _, iri in masked_numbers(layers, papers + [c[0] for c in concepts])}
    fresh = (row for row in store_documents(store, papers + authors) if row[0] not in kept)
    documents = chain((c for c in concepts if c[0] not in kept), fresh)
    write_layer(
        layers,
        directory / layer_name(len(layers)),
        authors,
        documents,
        area_counts(incidence, authors),
        store_names(store, authors),
    )


def merged_from(layers: Sequence[Path]) -> int | None:
    """Where the add layers to merge start among ``layers`` (the build's file first): the newest two, then each
    earlier add layer no larger than those taken so far; None when one of them keeps no words (an older bibgraph's
    layer: it cannot be merged) or there are not two add layers."""
    if len(layers) < 3:
        return None
    start, size = len(layers) - 2, layers[-1].stat().st_size + layers[-2].stat().st_size
    while start > 1 and layers[start - 1].stat().st_size <= size:
        start -= 1
        size += layers[start].stat().st_size
    return start if all(map(_keeps_words, layers[start:])) else None


def _keeps_words(path: Path) -> bool:
    """Whether every item of the layer ``path`` keeps its words (a layer this module can merge)."""
    with closing(open_index(path)) as db:
        return db.execute("SELECT 1 FROM items WHERE body IS NULL LIMIT 1").fetchone() is None


def merge_layers(layers: Sequence[Path], path: Path) -> None:
    """Write at ``path`` (atomically) one layer holding what the consecutive add layers ``layers`` (the newest last)
    hold together: their items not replaced by one of them (same numbers, same words, spellings, facts), every name,
    and in ``removed`` the numbers they replace in the layers before them."""
    temporary = temporary_path(path)
    try:
        with closing(open_for_writing(temporary)) as db:
            db.executescript(SCHEMA)
            db.execute("CREATE TABLE removed (id INTEGER PRIMARY KEY)")
            schemas = [f"m{i}" for i in range(len(layers))]
            for schema, layer in zip(schemas, layers, strict=True):
                db.execute(f"ATTACH DATABASE ? AS {schema}", (f"{layer.resolve().as_uri()}?mode=ro&immutable=1",))
            db.execute("CREATE TEMP TABLE gone (id INTEGER PRIMARY KEY)")
            for schema in schemas:
                db.execute(f"INSERT OR IGNORE INTO temp.gone SELECT id FROM {schema}.removed")
            for schema in schemas:
                db.execute(f"INSERT INTO main.items SELECT * FROM {schema}.items WHERE id NOT IN temp.gone")
                db.execute(
                    f"INSERT INTO main.spellings (item, name) SELECT item, name FROM {schema}.spellings"
                    " WHERE item NOT IN temp.gone ORDER BY id"
                )
                db.execute(f"INSERT OR IGNORE INTO main.names SELECT key, name FROM {schema}.names")
                db.execute(f"DELETE FROM temp.gone WHERE id IN (SELECT id FROM {schema}.items)")
            db.execute("INSERT INTO main.removed SELECT id FROM temp.gone")
            db.execute("INSERT INTO words (rowid, body) SELECT id, body FROM main.items ORDER BY id")
            db.execute("INSERT INTO spelling_words (rowid, name) SELECT id, name FROM main.spellings ORDER BY id")
            create_indexes(db)
            numbers = db.execute(f"SELECT value FROM {schemas[-1]}.meta WHERE key = 'numbers'").fetchone()[0]
            db.execute("INSERT INTO meta VALUES ('numbers', ?)", (numbers,))
            db.execute("INSERT INTO words (words) VALUES ('optimize')")
            db.commit()
            for schema in schemas:
                db.execute(f"DETACH DATABASE {schema}")
        publish_file(temporary, path)
    except sqlite3.DatabaseError as error:
        raise SearchIndexError(f"{path}: the search index layers cannot be merged: {error}") from error
    finally:
        temporary.unlink(missing_ok=True)
