"""Between the graph's IRIs and this app's URLs: an IRI under the base IRI is served at its path."""

from flask import current_app


def base_iri() -> str:
    return str(current_app.config["BIBGRAPH_BASE"])


def local_url(iri: str) -> str | None:
    """The app path of an IRI minted under the base (``None`` for foreign IRIs)."""
    base = base_iri()
    return "/" + iri[len(base) :] if iri.startswith(base) else None


def iri_of(path: str) -> str:
    """The IRI that the app path ``path`` (without leading slash) names."""
    return base_iri() + path.lstrip("/")
