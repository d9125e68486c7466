"""Between the graph's IRIs and this app's URLs: an IRI under the base IRI is served at its path."""

from flask import abort, current_app

from bibgraph.graph.ntriples import is_iri


def base_iri() -> str:
    return str(current_app.config["BIBGRAPH_BASE"])


def local_url(iri: str) -> str | None:
    """The app path of an IRI minted under the base (``None`` for foreign IRIs)."""
    base = base_iri()
    return "/" + iri[len(base) :] if iri.startswith(base) else None


def iri_of(path: str, status: int = 404) -> str:
    """The IRI that the app path ``path`` (without leading slash) names.

    A path that makes no IRI (control characters, spaces, ``<>"{}|^`\\``, undecodable bytes, which
    arrive as U+FFFD) names nothing here: ``status`` (404 for a URL path, 400 for a query parameter).
    """
    iri = base_iri() + path.lstrip("/")
    if not is_iri(iri):
        abort(status, "not a key of this dataset")
    return iri
