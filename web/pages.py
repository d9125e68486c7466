"""HTML pages for the graph's resources (home, authors); every value is read through SPARQL."""

from flask import Blueprint, abort, render_template

from bibgraph.graph.pages import author_profile, dataset_summary

from .graphstore import get_store
from .links import iri_of, local_url

blueprint = Blueprint("pages", __name__)


@blueprint.route("/")
def home() -> str:
    return render_template("home.html", title="bibgraph", summary=dataset_summary(get_store()))


@blueprint.route("/author/<key>")
def author(key: str) -> str:
    profile = author_profile(get_store(), iri_of(f"author/{key}"))
    if profile is None:
        abort(404)
    return render_template("author.html", title=profile.name, profile=profile, local_url=local_url, key=key)
