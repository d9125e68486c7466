"""Every IRI bibgraph mints, and the reading of them back: one place for the IRI shapes.

A deployment mints under its own base IRI (``http://127.0.0.1:5000/`` by default); below it, the
kind of a resource is its first path segment (``paper/``, ``author/``, ``area/``...). The build mints,
the site reads an IRI back to the resource it names (or a URL path to its IRI), and the views accept
an area by its path or its slug: all of that is here, so a new kind of IRI changes this module only.
Keys are minted by :mod:`bibgraph.graph.ingest.names` and never hold ``/``, ``#`` or spaces.
"""

import re
from dataclasses import dataclass
from functools import lru_cache

from bibgraph.graph.rdf.ntriples import is_iri

DEFAULT_BASE = "http://127.0.0.1:5000/"  # what a build mints under when no --base is given
DUMP_STEM = "bibgraph"  # the dumps are BASE/download/bibgraph.{suffix}

# The first path segment of each kind of IRI (a subarea's is its area's: ``area/{area}/{subarea}``).
PAPER = "paper"
AUTHOR = "author"
AREA = "area"
SUBAREA = "subarea"  # a kind, not a segment
SCHEME = "areas"
DATASET = "dataset"
DUMP = "download"
ENDPOINT = "sparql"
_SEGMENT = re.compile(r"[^/#?\s]+")  # one key: what a minted key may hold, and what a URL path segment can


@dataclass(frozen=True)
class Minted:
    """What an IRI under the base names: its kind and its keys (``("theory", "complexity")`` for a subarea)."""

    kind: str
    keys: tuple[str, ...] = ()


class Iris:
    """The IRIs under one base IRI (so a deployment can mint its own)."""

    def __init__(self, base: str) -> None:
        if not re.fullmatch(r"https?://[^\s<>\"{}|\\^`]+/", base) or not is_iri(base):
            raise ValueError(f"base IRI must be an http(s) IRI ending in '/': {base!r}")
        self.base = base

    def paper(self, paper_id: str) -> str:
        return f"{self.base}{PAPER}/{paper_id}"

    def person(self, key: str) -> str:
        return f"{self.base}{AUTHOR}/{key}"

    def area(self, area_key: str) -> str:
        return f"{self.base}{AREA}/{area_key}"

    def subarea(self, area_key: str, subarea_key: str) -> str:
        return f"{self.base}{AREA}/{area_key}/{subarea_key}"

    @property
    def scheme(self) -> str:
        return f"{self.base}{SCHEME}"

    @property
    def dataset(self) -> str:
        return f"{self.base}{DATASET}"

    def identity_step(self, method: str) -> str:
        """The ``prov:Activity`` that formed the persons (``identity/bibgraph-identity-1``): kept apart from the
        dataset's IRI, whose triples are the VoID description."""
        return f"{self.base}identity/{method.replace('/', '-')}"

    @property
    def endpoint(self) -> str:
        return f"{self.base}{ENDPOINT}"

    def dump(self, suffix: str) -> str:
        """The dump in the format whose file suffix is ``suffix`` (``ttl``, ``nt.gz``...)."""
        return f"{self.base}{DUMP}/{DUMP_STEM}.{suffix}"

    def kinds(self) -> dict[str, str]:
        """The namespace of each kind of resource IRI (``paper`` → ``BASE/paper/``), e.g. to shorten IRIs with."""
        return {kind: f"{self.base}{kind}/" for kind in (PAPER, AUTHOR, AREA)}

    @staticmethod
    def authorship(paper_iri: str, position: int) -> str:
        return f"{paper_iri}#authorship-{position}"

    @staticmethod
    def source(paper_iri: str, index: int) -> str:
        return f"{paper_iri}#source-{index}"

    def parse(self, iri: str) -> Minted | None:
        """What ``iri`` names, when it is one we mint (``None`` for foreign IRIs and other shapes)."""
        path = self.path(iri)
        if path is None:
            return None
        if path in (SCHEME, DATASET, ENDPOINT):
            return Minted(path)
        kind, _, rest = path.partition("/")
        keys = tuple(rest.split("/"))
        if not rest or not all(_SEGMENT.fullmatch(key) for key in keys):
            return None
        if kind == AREA and len(keys) == 2:
            return Minted(SUBAREA, keys)
        if kind in (PAPER, AUTHOR, AREA) and len(keys) == 1:
            return Minted(kind, keys)
        if kind == DUMP and len(keys) == 1 and keys[0].startswith(f"{DUMP_STEM}."):
            return Minted(DUMP, (keys[0].removeprefix(f"{DUMP_STEM}."),))
        return None

    def path(self, iri: str) -> str | None:
        """The part of ``iri`` after the base (``paper/0123``), ``None`` for an IRI not under it."""
        return iri[len(self.base) :] if iri.startswith(self.base) else None

    def at_path(self, path: str) -> str | None:
        """The IRI the URL path ``path`` (leading slash or not) names; ``None`` when it makes no IRI
        (spaces, controls, ``<>"{}|^`\\``, or U+FFFD standing for undecodable bytes)."""
        iri = self.base + path.lstrip("/")
        return iri if is_iri(iri) else None

    def concept(self, value: str) -> str | None:
        """An area or subarea named as the site's URLs and filters show it: by its path (``area/theory``,
        ``/area/theory/sub``) or by its slug alone (``theory``, ``theory/sub``); ``None`` when it names none.
        A value starting with ``area/`` is a path: the subareas of an area keyed ``area`` are named by path. Read
        in lower case when ASCII (every key minted is: :func:`~bibgraph.graph.ingest.names.concept_key`), so
        ``Deep-Learning`` names the same area as ``deep-learning`` (it was another, empty, map and download)."""
        path = value.strip().strip("/")
        path = path.lower() if path.isascii() else path
        if not path.startswith(f"{AREA}/"):
            path = f"{AREA}/{path}"
        iri = self.at_path(path)
        if iri is None:
            return None
        minted = self.parse(iri)
        return iri if minted is not None and minted.kind in (AREA, SUBAREA) else None


@lru_cache(maxsize=16)
def iris(base: str) -> Iris:
    """The (checked) IRIs under ``base``, made once per base: the site asks for them on every request."""
    return Iris(base)
