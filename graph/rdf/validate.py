"""SHACL validation of a built graph against ``ontology/shapes.ttl`` (pySHACL)."""

from pyshacl import validate as shacl_validate  # slow to load: only `bibgraph validate` imports this module
from rdflib import Graph

from bibgraph.ontology import ONTOLOGY_PATH, SHAPES_PATH


def validate(data: Graph) -> tuple[bool, str]:
    """Whether ``data`` conforms, and pySHACL's report text."""
    shapes = Graph().parse(str(SHAPES_PATH), format="turtle")
    ontology = Graph().parse(str(ONTOLOGY_PATH), format="turtle")
    conforms, _, text = shacl_validate(data, shacl_graph=shapes, ont_graph=ontology, advanced=True)
    return bool(conforms), str(text)
