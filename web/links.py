"""Between the graph's IRIs and this app's URLs: an IRI under the base IRI is served at its path.

The IRI shapes themselves are :mod:`bibgraph.graph.iris`; this module only adds the app's base and HTTP errors.
"""

from flask import abort, current_app

from bibgraph.graph.iris import Iris, iris


def base_iri() -> str:
    return str(current_app.config["BIBGRAPH_BASE"])


def app_iris() -> Iris:
    """The IRIs this app serves (under its base IRI)."""
    return iris(base_iri())


def local_url(iri: str) -> str | None:
    """The app path of an IRI minted under the base (``None`` for foreign IRIs)."""
    path = app_iris().path(iri)
    return None if path is None else "/" + path


def iri_of(path: str, status: int = 404) -> str:
    """The IRI that the app path ``path`` (without leading slash) names.

    A path that makes no IRI (control characters, spaces, ``<>"{}|^`\\``, undecodable bytes, which
    arrive as U+FFFD) names nothing here: ``status`` (404 for a URL path, 400 for a query parameter).
    """
    iri = app_iris().at_path(path)
    if iri is None:
        abort(status, "not a key of this dataset")
    return iri


def concept_iri(value: str, status: int = 400) -> str:
    """The area or subarea ``value`` names, by path or slug (:meth:`Iris.concept`); else ``status``."""
    iri = app_iris().concept(value)
    if iri is None:
        abort(status, "not an area of this dataset")
    return iri
