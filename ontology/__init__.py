"""The bibgraph ontology (OWL, Turtle) and the SHACL shapes a built graph satisfies."""

from importlib.resources import files

ONTOLOGY_PATH = files(__name__) / "bibgraph.ttl"
SHAPES_PATH = files(__name__) / "shapes.ttl"
