"""A map's request arguments: its filters read as their fields of ``Filters`` say, the arguments it passes on, the
cap it is drawn at, the weighting of its links (one reading for every map view and download)."""

from typing import Any

from flask import abort, current_app, request
from werkzeug.datastructures import MultiDict

from bibgraph.graph.networks import Filters
from bibgraph.graph.networks.filters import CONCEPT, drawn, read_number, user_filters, weight_attribute
from bibgraph.web.links import app_iris, concept_iri


def number(name: str, metadata: Any, default: Any) -> Any:
    """The request's number ``name`` read as ``metadata`` (a filter field's) says; ``default`` when not given."""
    value = request.args.get(name, "")
    if not value.strip():
        return default
    try:
        return read_number(value, metadata)
    except ValueError:
        abort(400, f"{name} must be a {'whole number' if metadata['read'] != 'float' else 'number'}")


def whole_number(name: str, default: int | None, low: int = 1, high: int = 1_000_000) -> int | None:
    """The request's whole number ``name`` (an ego map's ``top``, a path's bounds), clamped to ``low``..``high``."""
    value: int | None = number(name, {"read": "int", "low": low, "high": high}, default)
    return value


def concept_path(value: str) -> str:
    """An area or subarea as the site's URLs show it (its path), however the request named it; a
    value that names none is shown as given (the filters refuse it)."""
    iri = app_iris().concept(value)
    return value if iri is None else (app_iris().path(iri) or value)


WEIGHTING_ARG = "weighting"  # not a filter (it weighs the links drawn) but passed on with them
# The map filters a request sets: the fields of Filters a user sets (so the arguments a map passes on are the ones
# it reads), and the weighting.
FILTER_ARGS = (*(f.name for f in user_filters()), WEIGHTING_ARG)


def filter_args() -> dict[str, Any]:
    """The request's map filters alone (other arguments, e.g. ``kind`` or ``_external``, are not ours to pass on)."""
    return {name: request.args[name] for name in FILTER_ARGS if request.args.get(name)}


def shown_args() -> MultiDict[str, str]:
    """The request's arguments as the filter forms show them (areas by path, so the menus select them)."""
    args = request.args.copy()
    for name in ("area", "subarea"):
        if args.get(name):
            args[name] = concept_path(args[name])
    return args


def filters_from_request() -> Filters:
    """The request's map filters, each read as its field of Filters says."""

    def read(field: Any) -> Any:
        if field.metadata["read"] == CONCEPT:
            return concept_iri(request.args[field.name]) if request.args.get(field.name) else None
        return number(field.name, field.metadata, field.default)

    return Filters(**{field.name: read(field) for field in user_filters()})


def capped(filters: Filters) -> tuple[Filters, int | None]:
    """The filters actually drawn (:func:`~bibgraph.graph.networks.filters.drawn`, at most ``MAX_VIEW_NODES``)."""
    return drawn(filters, int(current_app.config["MAX_VIEW_NODES"]))


def weight_of_links() -> str:
    """The edge attribute that weighs a drawing or a VOSviewer map: ``weight`` (full) or ``fractional``."""
    return weight_attribute(request.args.get(WEIGHTING_ARG))
